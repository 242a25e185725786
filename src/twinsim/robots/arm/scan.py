"""The arm's scan: which table it scans, where its base stands, and the camera's viewpoints
with the joint angles reaching them (IK in `twinsim.engine.kinematics`).

The object is the first of the world's static objects of the config's `targets` classes (in
that order of preference, shuffled within a class by the run's generator) whose top is in
reach (`TOP_RANGE_M`) and beside which the base finds a place: on the floor, facing the top's
centre from `BASE_DISTANCES_M` off one of its sides (straight out or turned by
`BEARING_TURNS_DEG`), its footprint clear of the furniture (the
world's generic free space) and of what `start_allowed` rejects. The camera looks at the
top's centre from `scan_radius_m`, sweeping `arc_span_deg` of azimuth about the direction of
the base at each elevation in turn (back and forth, stepping up between passes); every
viewpoint must be reached by IK, and the joint path between them (`JointPath`) keeps every
link `clearance_m` from the furniture and apart from the arm's other links.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from twinsim.errors import TwinsimError
from twinsim.geometry import geoms_box, matrix_to_quat_wxyz, quat_wxyz_to_matrix
from twinsim.model.base import Quat, Vec3
from twinsim.model.scene import ObjectSpec
from twinsim.robots.arm.controller import JointPath
from twinsim.robots.arm.spec import (
    BASE_RADIUS_M,
    DEFAULT_CAMERA_POS,
    JOINT_NAMES,
    READY_Q,
    ArmConfig,
    arm_body_at,
)
from twinsim.robots.base import StartFilter
from twinsim.scene.free_space import FreeSpaceError, build_free_space, floor_region
from twinsim.sensors.rig import R_BODY_OPTICAL_FORWARD, resolve_sensors

TOP_RANGE_M = (0.3, 1.1)  # heights of the tops the arm scans
SHOULDER_ABOVE_TOP_M = 0.2  # where the pedestal puts the shoulder (joint 2) by default
SHOULDER_M = 0.333  # the shoulder above the base link
BASE_DISTANCES_M = (0.75, 0.8, 0.85, 0.7)  # base from the top's centre, tried in turn
BEARING_TURNS_DEG = (0.0, 25.0, -25.0)  # the base's bearing from a side's normal, in turn
STEP_DEG = 5.0  # between viewpoints, in azimuth or elevation
SELF_GAP_M = 0.005  # kept between links that are not adjacent
RAMP_S = 1.0  # the scan speeds up from rest and slows to rest over this
_CHECKS_PER_SEGMENT = 3  # joint-path samples checked for clearance between viewpoints
_SPEED_CHECK_HZ = 100
_SKIPPED_CLASSES = ("floor",)


class ArmPlanError(TwinsimError):
    """The world has no object the arm can scan (none of its classes, none in reach or no
    place for its base), or the run is too short for its scan."""


@dataclass(frozen=True)
class ScanPlan:
    """A planned scan: the base's pose and pedestal, the object, and per viewpoint its time,
    joint angles and camera pose (x, y, z, qw, qx, qy, qz of T_world_cam)."""

    base_pos: Vec3
    base_yaw: float
    pedestal_height_m: float
    target: ObjectSpec
    target_point: Vec3
    t_s: np.ndarray
    q: np.ndarray
    camera: np.ndarray


def camera_tool(cfg: ArmConfig) -> tuple[Vec3, Quat]:
    """The optical frame of the arm's first camera on the hand (the IK's tool frame); the
    default camera's where it has none."""
    cams = [s for s in resolve_sensors(cfg.sensors) if s.type == "camera"]
    if cams:
        return cams[0].pos, cams[0].quat
    return DEFAULT_CAMERA_POS, matrix_to_quat_wxyz(R_BODY_OPTICAL_FORWARD)


def look_at(eye: np.ndarray, centre: np.ndarray) -> np.ndarray:
    """T_world_cam of an OpenCV camera at `eye` looking at `centre`, its image x level."""
    z = (centre - eye) / np.linalg.norm(centre - eye)
    x = np.cross(z, (0.0, 0.0, 1.0))
    x /= np.linalg.norm(x)
    T = np.eye(4)
    T[:3, :3] = np.stack([x, np.cross(z, x), z], axis=1)
    T[:3, 3] = eye
    return T


def viewpoints(cfg: ArmConfig, centre: np.ndarray, bearing: float) -> np.ndarray:
    """The camera poses (N, 4, 4) of the scan: arcs about `centre` at each elevation, centred
    on the azimuth `bearing` (towards the base), every `STEP_DEG` along the way."""
    half = 0.5 * cfg.arc_span_deg
    n = max(2, math.ceil(cfg.arc_span_deg / STEP_DEG) + 1)
    az, el = [], []
    for i, e in enumerate(cfg.elevations_deg):
        sweep = np.linspace(-half, half, n) * (1 if i % 2 == 0 else -1)
        if i:  # step up (or down) to the new elevation at the end of the last pass
            k = max(1, math.ceil(abs(e - el[-1]) / STEP_DEG))
            el += list(np.linspace(el[-1], e, k + 1)[1:-1])
            az += [az[-1]] * (k - 1)
        az += list(sweep)
        el += [e] * n
    a = bearing + np.radians(az)
    e = np.radians(el)
    rays = np.stack([np.cos(e) * np.cos(a), np.cos(e) * np.sin(a), np.sin(e)], axis=1)
    return np.array([look_at(centre + cfg.scan_radius_m * r, centre) for r in rays])


def waypoint_times(q: np.ndarray, duration_s: float) -> np.ndarray:
    """Times of the joint waypoints over [0, duration_s]: the path (measured by its largest
    joint move) at a steady pace after a smooth start from rest, before a smooth stop."""
    steps = np.abs(np.diff(q, axis=0)).max(axis=1) + 1e-9
    u = np.concatenate([[0.0], np.cumsum(steps)]) / steps.sum()
    t = np.linspace(0.0, duration_s, 2001)
    ramp = min(RAMP_S, 0.25 * duration_s)
    pace = np.clip(np.minimum(t, duration_s - t) / ramp, 0.0, 1.0)
    pace = 0.5 - 0.5 * np.cos(math.pi * pace)
    s = np.concatenate([[0.0], np.cumsum(0.5 * (pace[1:] + pace[:-1]) * np.diff(t))])
    return np.interp(u, s / s[-1], t)


def plan_scan(
    cfg: ArmConfig,
    world,
    duration_s: float,
    rng: np.random.Generator,
    start_allowed: StartFilter | None = None,
) -> ScanPlan:
    """The scan of the first scannable object of `world` (a layout or a `SceneSpec`) lasting
    `duration_s`; `ArmPlanError` when there is none or the run is too short for it."""
    from twinsim.engine.kinematics import ArmKinematics

    tool = camera_tool(cfg)
    obstacles = [
        o for o in world.objects if not o.dynamic and o.semantic_class not in _SKIPPED_CLASSES
    ]
    tried = 0
    for obj in _candidates(cfg, world.objects, rng):
        tried += 1
        centre, sides, top = _top(obj)
        h = cfg.pedestal_height_m
        if h is None:
            h = max(0.0, top + SHOULDER_ABOVE_TOP_M - SHOULDER_M)
        places = _base_places(world, centre, sides, h, rng, start_allowed)
        for xy in places:
            base = (float(xy[0]), float(xy[1]), float(h))
            yaw = math.atan2(centre[1] - xy[1], centre[0] - xy[0])
            kin = ArmKinematics(arm_body_at(base, yaw, h), tool, obstacles)
            targets = viewpoints(cfg, centre, yaw + math.pi)
            posture = np.array(READY_Q)
            sol = kin.solve(targets, posture, posture)
            if not sol.reached:
                continue
            t = waypoint_times(sol.q, duration_s)
            if not _clear(kin, JointPath(t, sol.q), cfg.clearance_m):
                continue
            _check_speed(cfg, JointPath(t, sol.q), duration_s)
            camera = np.array(
                [[*T[:3, 3], *matrix_to_quat_wxyz(T[:3, :3])] for T in targets], dtype=float
            )
            return ScanPlan(base, yaw, float(h), obj, tuple(centre), t, sol.q, camera)
    classes = ", ".join(cfg.targets)
    raise ArmPlanError(
        f"arm: no reachable object to scan in this world ({tried} of class {classes} with a "
        f"top {TOP_RANGE_M[0]}-{TOP_RANGE_M[1]} m high tried; none had a clear place for "
        "the base from which every viewpoint is reached): add classes to robot.targets or "
        "narrow robot.arc_span_deg"
    )


def _candidates(cfg: ArmConfig, objects: Sequence[ObjectSpec], rng) -> list[ObjectSpec]:
    """Static objects of the target classes with a top in reach, by class preference, each
    class in a random order."""
    out = []
    for cls in cfg.targets:
        found = [o for o in objects if o.semantic_class == cls and not o.dynamic]
        found = [o for o in found if TOP_RANGE_M[0] <= _top(o)[2] <= TOP_RANGE_M[1]]
        out += [found[i] for i in rng.permutation(len(found))]
    return out


def _top(obj: ObjectSpec) -> tuple[np.ndarray, list[tuple[np.ndarray, float]], float]:
    """The centre of the object's top (world), its four sides (outward xy normal, half
    extent along it) and the top's height."""
    local_centre, half = geoms_box(obj.geoms)
    R = quat_wxyz_to_matrix(obj.quat)
    c = np.asarray(obj.pos) + R @ local_centre
    top = float(c[2] + np.abs(R[2]) @ half)
    sides = []
    for axis in (0, 1):
        n = R[:2, axis] / np.linalg.norm(R[:2, axis])
        sides += [(n, float(half[axis])), (-n, float(half[axis]))]
    return np.array([c[0], c[1], top]), sides, top


def _base_places(world, centre, sides, h: float, rng, start_allowed) -> list[np.ndarray]:
    """Where the base may stand (xy), side by side in a random order, then by bearing and
    distance: on the floor, its footprint clear of the furniture (the object included) up
    to above the pedestal."""
    band = (0.03, h + 0.25)  # above rugs, up to the base's top
    try:
        free = build_free_space(
            floor_region(world),
            world.objects,
            flight_height_m=0.5 * (band[0] + band[1]),
            clearance_z_m=0.5 * (band[1] - band[0]),
            clearance_m=BASE_RADIUS_M,
        )
    except FreeSpaceError:
        return []
    places = []
    for i in rng.permutation(len(sides)):
        normal, half = sides[i]
        for turn in np.radians(BEARING_TURNS_DEG):
            c, s = math.cos(turn), math.sin(turn)
            away = np.array([c * normal[0] - s * normal[1], s * normal[0] + c * normal[1]])
            places += [centre[:2] + d * away for d in BASE_DISTANCES_M if d * c >= half]
    if not places:
        return []
    xy = np.array(places)
    ok = np.asarray(free.clearance_at(xy)) >= BASE_RADIUS_M
    if start_allowed is not None:
        ok &= start_allowed(xy)
    return list(xy[ok])


def _clear(kin, path: JointPath, clearance_m: float) -> bool:
    """Whether the joint path keeps every link `clearance_m` from the furniture and
    `SELF_GAP_M` from the arm's other links, at and between the viewpoints."""
    t = path.t_s
    fractions = np.arange(_CHECKS_PER_SEGMENT) / _CHECKS_PER_SEGMENT
    samples = np.concatenate([t[:-1, None] + np.diff(t)[:, None] * fractions, [[t[-1]]]], None)
    furniture, own = kin.clearances(path.sample(samples)[0])
    return bool(furniture.min() >= clearance_m and own.min() >= SELF_GAP_M)


def _check_speed(cfg: ArmConfig, path: JointPath, duration_s: float) -> None:
    """The scan keeps every joint under `max_joint_speed_dps`; else the run is too short."""
    t = np.linspace(0.0, duration_s, max(2, round(duration_s * _SPEED_CHECK_HZ)))
    speed = np.degrees(np.abs(path.sample(t)[1])).max(axis=0)
    worst = int(np.argmax(speed))
    if speed[worst] > cfg.max_joint_speed_dps:
        needed = duration_s * speed[worst] / cfg.max_joint_speed_dps
        raise ArmPlanError(
            f"arm: the scan needs {JOINT_NAMES[worst]} at {speed[worst]:.0f} deg/s, over "
            f"robot.max_joint_speed_dps={cfg.max_joint_speed_dps:g}: record at least "
            f"{needed:.1f} s in all (bootstrap included) or narrow robot.arc_span_deg"
        )
