"""Wheel odometry: the planar pose and twist a wheeled robot dead-reckons from its wheel
encoders, with its nominal wheel radius and track.

Each sample integrates the change of the left and right wheel angles since the last one
(exact for an arc: the heading at the arc's middle), from the body's ground-truth planar pose
at the first sample; the twist is the encoders' rates. Nothing is added: the estimate drifts
from the ground truth only as the physics makes the wheels slip, skid in turns, or touch the
floor away from their nominal contact, as a real robot's does. The robot names its wheels and
their nominal geometry in its spec (`wheel_joints`, `wheel_radius_m`, `track_m`: a
`diff_drive`).
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from pydantic import Field

from twinsim.errors import TwinsimError
from twinsim.model.sensors import SensorSpec
from twinsim.registries import ROBOTS
from twinsim.sensors.base import (
    RecordingContext,
    SensorConfig,
    SensorKind,
    SensorRecorder,
    base_metadata,
)
from twinsim.sensors.rig import body_mounted
from twinsim.sequence.stream_checks import StreamCheck, check_table

#: planar pose in the world frame (yaw unwrapped, rad) and the body-frame twist
COLUMNS = ("x", "y", "yaw", "vx", "wz")


class WheelOdometryConfig(SensorConfig):
    """Wheel odometry at `rate_hz` (GRADE's odometry rate by default), of the body frame."""

    kind: Literal["wheel_odometry"] = "wheel_odometry"
    rate_hz: int = Field(60, gt=0)
    pos: tuple[float, float, float] = (0.0, 0.0, 0.0)


class WheelOdometryRecorder(SensorRecorder):
    """Integrates the robot's wheel encoder angles into a pose and writes it with the twist."""

    def __init__(self, sensor: SensorSpec, ctx: RecordingContext) -> None:
        robot = ctx.world.spec
        wheels = getattr(robot, "wheel_joints", None)
        if wheels is None:
            raise TwinsimError(
                f"{sensor.name}: wheel_odometry needs a robot with wheel encoders "
                f"(a diff_drive); robot {robot.name!r} is a {robot.kind}"
            )
        joints = ROBOTS.get(robot.kind).joint_names(robot)
        self.wheels = np.array([joints.index(j) for j in wheels])
        self.radius, self.track = robot.wheel_radius_m, robot.track_m
        self.sensor, self.ctx = sensor, ctx
        self.period = ctx.physics_hz // sensor.rate_hz
        self.pose: np.ndarray | None = None
        self.angles = np.zeros(2)
        ctx.writer.add_table(sensor.name, COLUMNS)

    resumable = True

    def checkpoint(self) -> dict[str, np.ndarray]:
        """The dead-reckoned pose (none before the first sample) and the wheel angles it saw."""
        pose = {} if self.pose is None else {"pose": self.pose.copy()}
        return {"angles": self.angles.copy(), **pose}

    def restore(self, state: dict[str, np.ndarray]) -> None:
        self.angles = np.array(state["angles"], float)
        self.pose = np.array(state["pose"], float) if "pose" in state else None

    def before_step(self, k: int, t_ns: int, q: np.ndarray) -> None:
        if k % self.period:
            return
        angles = q[self.wheels]
        if self.pose is None:
            T = self.ctx.world.T_world_body()
            self.pose = np.array([T[0, 3], T[1, 3], math.atan2(T[1, 0], T[0, 0])])
        else:
            left, right = (angles - self.angles) * self.radius
            ds, turn = 0.5 * (left + right), (right - left) / self.track
            mid = self.pose[2] + 0.5 * turn
            self.pose = self.pose + np.array([ds * math.cos(mid), ds * math.sin(mid), turn])
        self.angles = angles
        rate_left, rate_right = self.ctx.world.qvel()[self.wheels] * self.radius
        twist = [0.5 * (rate_left + rate_right), (rate_right - rate_left) / self.track]
        self.ctx.writer.append(self.sensor.name, t_ns, np.concatenate([self.pose, twist]))


class WheelOdometry(SensorKind):
    """The `wheel_odometry` kind: a table of dead-reckoned planar pose and twist."""

    type = "wheel_odometry"
    config_model = WheelOdometryConfig

    def spec(self, name: str, cfg: WheelOdometryConfig) -> SensorSpec:
        return SensorSpec(name=name, type="wheel_odometry", **body_mounted(cfg))

    def mounts(self, sensor: SensorSpec) -> tuple:
        return ()

    def metadata(self, sensor: SensorSpec) -> dict:
        return base_metadata(sensor) | {
            "frame": "world x, y and unwrapped yaw (rad) of the body frame, dead-reckoned from "
            "the wheel encoders from the ground-truth pose at the first row; vx (m/s) and wz "
            "(rad/s) in the body frame",
            "model": "the robot's nominal wheel radius and track (its spec in scene.json)",
        }

    def recorder(self, sensor: SensorSpec, ctx: RecordingContext) -> WheelOdometryRecorder:
        return WheelOdometryRecorder(sensor, ctx)

    def validate_stream(self, check: StreamCheck) -> None:
        """A table whose columns this kind fixes."""
        check_table(check, COLUMNS)
