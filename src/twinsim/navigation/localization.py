"""Where a navigator believes it is: the ground truth, or an estimator running on the live
sensor stream (GRADE's active SLAM, with the estimator's drift reported).

A `Localizer` (registry `LOCALIZERS`) is reset with the episode's first observations, whose
pose is the known start (the estimate's map frame is the world), and updated every step; it
estimates the body's pose at its readings (a camera frame, a LiDAR sweep). Between readings,
and from a reading's stamp to the end of the step, the estimate is carried forward by the
body's twist (`RobotObservations.velocity`, what wheel odometry or an IMU gives a real robot),
as ROS's map → odom → base_link chain does. `run_episode(localizer=...)` then hands the
navigator the step's observations as the estimator sees them: the robot's pose, every camera
frame's and LiDAR sweep's pose become the estimate (carried to the reading's stamp) through
each sensor's mounting (`T_body_sensor`); the images, depth and points are the sensors' own.
The task and its metrics keep the ground truth, and a `DriftLog` compares the two each step
(`EpisodeResult.summary["localization"]`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from twinsim.closedloop.observations import Observations, RobotObservations
from twinsim.closedloop.tasks import TaskError, body_yaw
from twinsim.eval.methods.base import ReferenceChain
from twinsim.eval.methods.kiss_icp import (
    MIN_POINTS,
    kiss_icp_pipeline,
    pose_stamp,
    scan_points,
    scan_reach,
)
from twinsim.eval.methods.rgbd_odometry import rgbd_tracker
from twinsim.geometry import make_T, quat_wxyz_to_matrix
from twinsim.sensors.camera import intrinsics

if TYPE_CHECKING:
    from collections.abc import Callable

    from twinsim.navigation.api import NavContext

#: the name of the localizer that hands the navigator the ground truth (no estimator)
GROUND_TRUTH = "ground_truth"


class Localizer(Protocol):
    """An estimator of one robot's pose from its live readings."""

    def reset(self, context: NavContext, first: RobotObservations) -> None: ...

    def update(self, robot: RobotObservations) -> tuple[np.ndarray, int] | None:
        """The estimated T_world_body at the step's newest reading it used, and that reading's
        stamp (ns); None when the step brought none."""


@dataclass(frozen=True)
class LocalizerEntry:
    """A registered localizer: its factory (keyword settings), the sensor type it reads
    (`camera`, `lidar`; empty: none) and a line saying what it is."""

    factory: Callable[..., Localizer | None]
    sensor: str
    summary: str


def mountings(context: NavContext) -> dict[str, np.ndarray]:
    """Each sensor of the robot by name → its mounting, T_body_sensor, from the scene."""
    return {
        s.name: make_T(quat_wxyz_to_matrix(s.quat), s.pos)
        for s in context.session.scene.sensors
        if s.robot == context.robot
    }


def first_sensor(context: NavContext, kind: str, method: str) -> str:
    """The name of the robot's first sensor of `kind`; a `TaskError` naming `method` without."""
    for name, sensor in context.config.robots[context.robot].sensors.items():
        if sensor.kind == kind:
            return name
    raise TaskError(f"localizer {method!r} needs a {kind} on robot {context.robot!r}")


def as_estimated(
    robot: RobotObservations, T_world_body: np.ndarray, t_ns: int, mounts: dict[str, np.ndarray]
) -> RobotObservations:
    """`robot`'s readings with its pose replaced by `T_world_body` (the estimate at `t_ns`, the
    step's end) and each frame's and sweep's pose by that estimate carried back to the reading's
    own stamp by the body's twist, then through its sensor's mounting (`mounts`: sensor →
    T_body_sensor): a frame taken a control period earlier is not placed where the robot is
    now."""

    def at(stamp: int) -> np.ndarray:
        return T_world_body @ twist_motion(robot.velocity, (int(stamp) - t_ns) / 1e9)

    def moved(items: dict[str, list], field: str) -> dict[str, list]:
        out = {}
        for name, readings in items.items():
            mount = mounts.get(name)
            out[name] = (
                readings
                if mount is None
                else [replace(r, **{field: at(r.t_ns) @ mount}) for r in readings]
            )
        return out

    return replace(
        robot,
        T_world_body=T_world_body,
        frames=moved(robot.frames, "T_world_cam"),
        scans=moved(robot.scans, "T_world_lidar"),
    )


class RgbdOdometryLocalizer:
    """Dense RGB-D odometry (`cv2.Odometry`, the `rgbd_odometry` benchmark method's) on the
    robot's first camera, frame to frame from the start pose; a frame it cannot track gives no
    estimate (the twist carries the last one on)."""

    sensor = "camera"

    def __init__(
        self, max_depth_m: float = 8.0, max_depth_diff_m: float = 0.2, reanchor_after: int = 3
    ) -> None:
        self.max_depth_m, self.max_depth_diff_m = max_depth_m, max_depth_diff_m
        self.reanchor_after = reanchor_after

    def reset(self, context: NavContext, first: RobotObservations) -> None:
        self.camera = first_sensor(context, "camera", "rgbd_odometry")
        cam = context.config.robots[context.robot].sensors[self.camera]
        K = intrinsics(cam.width, cam.height, cam.hfov_deg)
        self.observe, track = rgbd_tracker(K, self.max_depth_m, self.max_depth_diff_m)
        self.chain = ReferenceChain(track, self.reanchor_after)
        self.T_cam_body = np.linalg.inv(mountings(context)[self.camera])
        self.start: np.ndarray | None = None  # the first frame's camera pose: the map frame

    def update(self, robot: RobotObservations) -> tuple[np.ndarray, int] | None:
        estimate = None
        for frame in robot.frames.get(self.camera) or []:
            if self.start is None:
                self.start = frame.T_world_cam.copy()
            pose, _ = self.chain.add(self.observe(frame))
            if pose is not None:
                estimate = (self.start @ pose @ self.T_cam_body, int(frame.t_ns))
        return estimate


class KissIcpLocalizer:
    """KISS-ICP (the `kiss_icp` benchmark method's pipeline, deskewing with per-point times) on
    the robot's first LiDAR, from the start pose, one estimate per sweep (at its latest point,
    where KISS-ICP's deskewing puts the sweep)."""

    sensor = "lidar"

    def __init__(self, max_range_m: float = 10.0) -> None:
        self.max_range_m = max_range_m

    def reset(self, context: NavContext, first: RobotObservations) -> None:
        self.lidar = first_sensor(context, "lidar", "kiss_icp")
        self.T_lidar_body = np.linalg.inv(mountings(context)[self.lidar])
        self.pipeline: Any = None
        self.start: np.ndarray | None = None

    def update(self, robot: RobotObservations) -> tuple[np.ndarray, int] | None:
        estimate = None
        for scan in robot.scans.get(self.lidar) or []:
            points, offsets = scan_points(scan, remove_dynamic=False)
            if len(points) < MIN_POINTS:
                continue
            if self.pipeline is None:
                self.pipeline = kiss_icp_pipeline(scan_reach(scan, self.max_range_m))
                self.start = scan.T_world_lidar.copy()
            self.pipeline.register_frame(points, offsets)
            T = self.start @ self.pipeline.last_pose @ self.T_lidar_body
            estimate = (T, pose_stamp(scan, offsets))
        return estimate


class DriftLog:
    """The estimate against the ground truth, step by step: how far the estimator drifted."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.errors: list[float] = []
        self.yaw_errors: list[float] = []
        self.path_m = 0.0
        self._last: np.ndarray | None = None

    def update(self, T_true: np.ndarray, T_estimate: np.ndarray) -> None:
        """Log one step's position error (m, 3D) and heading error (rad)."""
        self.errors.append(float(np.linalg.norm(T_estimate[:3, 3] - T_true[:3, 3])))
        yaw = math.remainder(body_yaw(T_estimate) - body_yaw(T_true), 2 * math.pi)
        self.yaw_errors.append(abs(yaw))
        if self._last is not None:
            self.path_m += float(np.linalg.norm(T_true[:3, 3] - self._last))
        self._last = T_true[:3, 3].copy()

    def summary(self) -> dict:
        """The localizer's name, final and largest position error (m), RMS error over the
        episode (m, the ATE with the start pose shared, no alignment), final error per metre
        driven (%) and final heading error (deg)."""
        errors = np.asarray(self.errors or [0.0])
        final = float(errors[-1])
        return {
            "localizer": self.name,
            "drift_m": final,
            "max_drift_m": float(errors.max()),
            "ate_rmse_m": float(np.sqrt(np.mean(errors**2))),
            "drift_pct": 100.0 * final / self.path_m if self.path_m > 0 else 0.0,
            "yaw_drift_deg": math.degrees(self.yaw_errors[-1]) if self.yaw_errors else 0.0,
            "path_length_m": self.path_m,
        }


def twist_motion(twist: np.ndarray, dt_s: float) -> np.ndarray:
    """The body's motion (T_before_after) over `dt_s` at a constant body twist (vx, vy, vz,
    wx, wy, wz in its own axes): SE(3)'s exponential of twist × dt."""
    v, w = np.asarray(twist[:3], float) * dt_s, np.asarray(twist[3:6], float) * dt_s
    angle = float(np.linalg.norm(w))
    W = np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])
    if angle < 1e-9:
        R, V = np.eye(3) + W, np.eye(3) + W / 2
    else:
        a, b = math.sin(angle) / angle, (1 - math.cos(angle)) / angle**2
        R = np.eye(3) + a * W + b * W @ W
        V = np.eye(3) + b * W + (1 - a) / angle**2 * W @ W
    return make_T(R, V @ v)


class Localized:
    """One episode's localizer over one robot: `observe(obs)` → the observations the navigator
    gets, with that robot's poses at the estimate (the localizer's at its readings, carried to
    the step's end by the body's twist); logs the drift."""

    def __init__(self, name: str, localizer: Localizer, context: NavContext, obs: Observations):
        self.robot, self.localizer = context.robot, localizer
        robot = obs.robots[self.robot]
        localizer.reset(context, robot)
        self.mounts = mountings(context)
        self.drift = DriftLog(name)
        self.T, self.t_ns = robot.T_world_body.copy(), int(obs.t_ns)  # the known start

    def observe(self, obs: Observations) -> Observations:
        robot = obs.robots[self.robot]
        estimate = self.localizer.update(robot)
        if estimate is not None:
            self.T, self.t_ns = estimate[0], estimate[1]
        self.T = self.T @ twist_motion(robot.velocity, (obs.t_ns - self.t_ns) / 1e9)
        self.t_ns = int(obs.t_ns)
        self.drift.update(robot.T_world_body, self.T)
        robots = dict(obs.robots)
        robots[self.robot] = as_estimated(robot, self.T, self.t_ns, self.mounts)
        return replace(obs, robots=robots)
