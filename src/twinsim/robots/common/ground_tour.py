"""Ground robots' tours: the drone's tour planner (`twinsim.robots.common.planner.plan_tour`) on the
floor, for a robot with a round footprint.

A ground robot occupies the band of heights from its underside to its top: obstacles reaching
into that band count (lower ones, such as 1 cm rugs, it passes over), and its centre keeps its
footprint radius plus a margin from them, on the world's generic free space
(`twinsim.scene.free_space`). The tour goes through rooms where the world has rooms and over
the free floor where it has none; the path lies at the height of the robot's body frame.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from pydantic import Field, SerializerFunctionWrapHandler, model_serializer

from twinsim.model.scene import RobotSpec
from twinsim.robots.base import RobotConfig, StartFilter
from twinsim.robots.common.planner import FlightPlan, PlannerOptions, TourRequest, plan_tour


class GroundConfig(RobotConfig):
    """What every ground robot's tour needs: speed limits, the margin kept on top of the
    footprint radius, and how many rooms to enter where the world has rooms."""

    max_speed_mps: float = Field(0.5, gt=0.0)
    max_yaw_rate_dps: float = Field(30.0, gt=0.0)
    max_accel_mps2: float = Field(0.5, gt=0.0)
    clearance_margin_m: float = Field(0.05, ge=0.0)
    min_rooms_visited: int = Field(3, ge=1)


class GroundSpec(RobotSpec):
    """What every ground robot's spec keeps of its tour: footprint, limits and the rooms it
    enters. In `scene.json` these come after the kind's own fields (`json_last` after them),
    where each kind wrote them before they were gathered here."""

    footprint_radius_m: float
    max_speed_mps: float
    max_yaw_rate_dps: float
    max_accel_mps2: float
    rooms_visited: tuple[int, ...] = ()

    #: fields written last, after the ground fields (a kind may add its own before the rooms)
    json_last: ClassVar[tuple[str, ...]] = ("rooms_visited",)

    def footprint_radius(self) -> float:
        return self.footprint_radius_m

    @model_serializer(mode="wrap")
    def _ground_fields_after_own(self, handler: SerializerFunctionWrapHandler) -> dict:
        data = handler(self)
        ground = [f for f in GroundSpec.model_fields if f not in RobotSpec.model_fields]
        tail = [f for f in ground if f not in self.json_last] + list(self.json_last)
        head = [k for k in data if k not in tail]
        return {k: data[k] for k in head + tail if k in data}


@dataclass(frozen=True)
class GroundShape:
    """A ground robot's extent for planning: footprint radius, underside and top above the
    floor, and the height of its body frame (where its path lies)."""

    footprint_radius_m: float
    underside_m: float
    top_m: float
    body_z_m: float


def ground_request(cfg: GroundConfig, shape: GroundShape) -> TourRequest:
    """The tour request of a ground robot: its height band, footprint + margin, limits."""
    return TourRequest(
        band_centre_m=0.5 * (shape.underside_m + shape.top_m),
        band_half_m=0.5 * (shape.top_m - shape.underside_m),
        clearance_m=shape.footprint_radius_m + cfg.clearance_margin_m,
        max_speed_mps=cfg.max_speed_mps,
        max_yaw_rate_dps=cfg.max_yaw_rate_dps,
        path_z_m=shape.body_z_m,
        min_rooms_visited=cfg.min_rooms_visited,
    )


def ground_options(cfg: GroundConfig, shape: GroundShape) -> PlannerOptions:
    """Planner options for a ground robot: its acceleration limits, and door crossings that
    keep the footprint plus half the margin (doorways are narrower than the rooms)."""
    return PlannerOptions(
        door_clearance_m=shape.footprint_radius_m + 0.5 * cfg.clearance_margin_m,
        max_accel_mps2=cfg.max_accel_mps2,
        max_lateral_accel_mps2=cfg.max_accel_mps2,
    )


def plan_ground_tour(
    cfg: GroundConfig,
    shape: GroundShape,
    world,
    duration_s: float,
    rng: np.random.Generator,
    start_allowed: StartFilter | None = None,
) -> FlightPlan:
    """A collision-free ground tour of `world` (a layout or a `SceneSpec`) lasting
    `duration_s`, from a start `start_allowed` accepts; all randomness from `rng`."""
    return plan_tour(
        rooms=world.rooms,
        doors=world.doors,
        objects=world.objects,
        wall_height=world.wall_height,
        request=ground_request(cfg, shape),
        duration_s=duration_s,
        rng=rng,
        options=ground_options(cfg, shape),
        start_allowed=start_allowed,
    )


def tour_fields(cfg: GroundConfig, plan: FlightPlan) -> dict:
    """The fields every ground robot's spec takes from its config's limits and its planned
    tour: start pose, limits, path and the rooms it enters."""
    return {
        "start_pos": tuple(plan.start_pos),
        "start_yaw": plan.start_yaw,
        "max_speed_mps": cfg.max_speed_mps,
        "max_yaw_rate_dps": cfg.max_yaw_rate_dps,
        "max_accel_mps2": cfg.max_accel_mps2,
        "path": plan.path,
        "rooms_visited": tuple(plan.rooms_visited),
    }
