"""GRADE's drone as data: its config, its resolved spec, and a body of one joint per DOF.

Joints, in kinematic order: slides x, y, z (world axes), then hinges yaw (z), pitch (y),
roll (x), so the body rotation is Rz(yaw)·Ry(pitch)·Rx(roll) and qpos reads as a pose.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field

from twinsim.model.body import ActuatorSpec, BodySpec, JointSpec, LinkGeomSpec, LinkSpec
from twinsim.model.scene import RobotSpec
from twinsim.robots.base import RobotConfig
from twinsim.robots.common.pose_joints import POSE_AXES, POSE_IS_SLIDE, POSE_JOINTS

JOINT_NAMES = POSE_JOINTS  # the drone's joints are its pose, each driven by a motor
HALF_SIZE = (0.18, 0.18, 0.05)  # a 0.36 × 0.36 × 0.10 m frame
ROOT_LINK = "robot"


class DroneConfig(RobotConfig):
    """GRADE's UAV: one joint per DOF, PID joint control, speed and angle limits (REFERENCE.md)."""

    kind: Literal["drone"] = "drone"
    mass_kg: float = Field(1.5, gt=0.0)
    horizontal: bool = False
    max_speed_mps: float = Field(0.5, gt=0.0)
    max_roll_pitch_deg: float = Field(25.0, ge=0.0, le=90.0)
    max_roll_pitch_rate_dps: float = Field(40.0, gt=0.0)
    max_yaw_rate_dps: float = Field(30.0, gt=0.0)
    flight_height_m: float = Field(1.3, gt=0.2)
    clearance_m: float = Field(0.45, gt=0.0)
    min_rooms_visited: int = Field(3, ge=1)  # where the world has rooms; else aisles/points


class DroneSpec(RobotSpec):
    """The drone of a run: body, limits and the planned flight (format 1's `robot` entry)."""

    kind: Literal["drone"] = "drone"
    mass_kg: float
    inertia: tuple[float, float, float]
    half_size: tuple[float, float, float]
    horizontal: bool = False
    max_speed_mps: float
    max_roll_pitch_rate_dps: float
    max_yaw_rate_dps: float
    max_roll_pitch_deg: float
    rooms_visited: tuple[int, ...] = ()


def box_inertia(mass_kg: float, half_size: tuple[float, float, float]) -> tuple[float, ...]:
    """Principal moments of a solid box with the given half extents."""
    a, b, c = (2 * h for h in half_size)
    m = mass_kg
    return (m * (b * b + c * c) / 12, m * (a * a + c * c) / 12, m * (a * a + b * b) / 12)


def drone_body(spec: DroneSpec) -> BodySpec:
    """One link carrying the six pose joints (pitch and roll limited), a motor on each."""
    limit = float(np.deg2rad(spec.max_roll_pitch_deg))
    joints = tuple(
        JointSpec(
            name=name,
            type="slide" if slide else "hinge",
            axis=axis,
            range=(-limit, limit) if name in ("pitch", "roll") else None,
            armature=1e-4,
        )
        for name, axis, slide in zip(POSE_JOINTS, POSE_AXES, POSE_IS_SLIDE, strict=True)
    )
    link = LinkSpec(
        name=ROOT_LINK,
        mass_kg=spec.mass_kg,
        inertia=spec.inertia,
        joints=joints,
        geoms=(LinkGeomSpec(name="robot_frame", type="box", size=spec.half_size),),
    )
    actuators = tuple(ActuatorSpec(name=f"motor_{j}", joint=j) for j in JOINT_NAMES)
    return BodySpec(links=(link,), actuators=actuators, mount=ROOT_LINK)


def pose_to_qpos(pos, yaw: float, pitch: float = 0.0, roll: float = 0.0) -> np.ndarray:
    """Joint positions for a body pose (the joints are the pose's coordinates)."""
    return np.array([pos[0], pos[1], pos[2], yaw, pitch, roll], dtype=float)
