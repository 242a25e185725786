"""The traffic of a world with a road network, made once when the world is assembled: walkers
on its sidewalks and crosswalks (`pedestrians`), then vehicles on its lanes (`traffic`) that
give way to them and to the robots' planned drives; vehicles become moving objects of
`scene.json` (keyframes every `traffic.KEY_EVERY` steps), so every motion stays a pure
function of time and twins replay it as they replay flying objects."""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from twinsim.actors.pedestrians import CLOCK_HZ, make_pedestrians, people_on_crossings
from twinsim.actors.traffic.clear import CrossingTrack, EgoTrack
from twinsim.actors.traffic.lane_paths import lane_paths, lanes_along
from twinsim.actors.traffic.simulation import DT_S, simulate_traffic
from twinsim.actors.traffic.vehicles import CLASSES, lamp_materials, vehicle_body
from twinsim.model.people import PersonSpec
from twinsim.model.roads import RoadNetworkSpec
from twinsim.model.scene import FlyingObjectSpec, Keyframe, MaterialSpec, TextureSpec

log = logging.getLogger(__name__)

VEHICLE_PREFIX = "vehicle_"


@dataclass(frozen=True)
class PlannedBox:
    """A robot's planned footprint as a box over time: `at(t)` gives its centre x, y (N, 2)
    at the times `t` (N,); half length and width of the box about it."""

    at: Callable[[np.ndarray], np.ndarray]
    half_length_m: float
    half_width_m: float


@dataclass(frozen=True)
class TownTraffic:
    """The walkers and vehicles made for a town, what they bring, and the counts asked."""

    walkers: tuple[PersonSpec, ...]
    vehicles: tuple[FlyingObjectSpec, ...]
    materials: tuple[MaterialSpec, ...]
    textures: tuple[TextureSpec, ...]
    next_id: int


def _headings(xy: np.ndarray) -> np.ndarray:
    """The direction of travel along sampled positions (N, 2), held where it stands still."""
    d = np.diff(xy, axis=0)
    moving = np.linalg.norm(d, axis=1) > 1e-4
    yaw = np.arctan2(d[:, 1], d[:, 0])
    out = np.zeros(len(xy))
    last = float(yaw[moving][0]) if moving.any() else 0.0
    for k in range(len(xy) - 1):
        last = float(yaw[k]) if moving[k] else last
        out[k] = last
    out[-1] = last
    return out


def _ego_track(network: RoadNetworkSpec, robot: PlannedBox, t: np.ndarray, paths) -> EgoTrack:
    xy = np.asarray(robot.at(t), float)
    yaw = _headings(xy)
    lanes = lanes_along(network, paths, xy, yaw)
    return EgoTrack(xy, yaw, lanes, robot.half_length_m, robot.half_width_m)


def _keyframes(times: np.ndarray, poses: np.ndarray) -> tuple[Keyframe, ...]:
    """Keyframes of a vehicle's centre on the ground, yaw unwrapped so slerp turns the short way."""
    yaw = np.unwrap(poses[:, 3])
    return tuple(
        Keyframe(
            t_s=round(float(t), 4),
            pos=(round(float(x), 4), round(float(y), 4), round(float(z), 4)),
            quat=(round(math.cos(h / 2), 6), 0.0, 0.0, round(math.sin(h / 2), 6)),
        )
        for t, (x, y, z), h in zip(times, poses[:, :3], yaw, strict=True)
    )


def make_town_traffic(
    vehicles: int,
    walkers: int,
    speed_factor: tuple[float, float],
    class_weights: dict[str, float],
    network: RoadNetworkSpec,
    robots: Sequence[PlannedBox],
    people: Sequence[PersonSpec],
    total_s: float,
    rng: np.random.Generator,
    first_instance_id: int,
    first_person_id: int,
) -> TownTraffic:
    """`walkers` pedestrians and `vehicles` vehicles for the town of `network` over `total_s`,
    keeping clear of the `robots`' planned drives and of the world's other `people`; instance
    ids from `first_instance_id` (two per walker, then one per vehicle)."""
    walk_rng, drive_rng = rng.spawn(2)
    walk_t = np.arange(math.ceil(total_s * CLOCK_HZ) + 1) / CLOCK_HZ
    walks = make_pedestrians(
        network,
        walkers,
        total_s,
        walk_rng,
        first_instance_id,
        first_person_id,
        egos_xy=[np.asarray(r.at(walk_t), float) for r in robots],
    )
    if len(walks.people) < walkers:
        log.warning(
            "traffic: %d of %d walkers placed (the town has no sidewalks)",
            len(walks.people),
            walkers,
        )
    next_id = first_instance_id + 2 * len(walks.people)
    if not vehicles:
        return TownTraffic(walks.people, (), walks.materials, walks.textures, next_id)
    paths = lane_paths(network)
    t = np.arange(math.ceil(total_s / DT_S) + 1) * DT_S
    egos = [_ego_track(network, r, t, paths) for r in robots]
    occupied, people_xy = people_on_crossings(network, (*people, *walks.people), t)
    result = simulate_traffic(
        network,
        vehicles,
        speed_factor,
        class_weights,
        total_s,
        drive_rng,
        egos=egos,
        crossings=CrossingTrack(occupied, people_xy),
    )
    objects, materials = [], list(walks.materials)
    for k, (cls, poses) in enumerate(zip(result.classes, result.poses, strict=True)):
        name = f"{VEHICLE_PREFIX}{k}_{cls}"
        geoms, mats = vehicle_body(CLASSES[cls], drive_rng, name)
        objects.append(
            FlyingObjectSpec(
                instance_id=next_id + k,
                name=name,
                semantic_class=cls,
                geoms=geoms,
                keyframes=_keyframes(result.times, poses),
            )
        )
        materials += mats
    if any(cls != "bicycle" for cls in result.classes):
        materials += lamp_materials()
    return TownTraffic(
        walks.people, tuple(objects), tuple(materials), walks.textures, next_id + len(objects)
    )
