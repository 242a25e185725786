"""GRADE's drone as data: one joint per degree of freedom, a rigid body, and its limits.

Joints, in kinematic order: slides x, y, z (world axes), then hinges yaw (z), pitch (y),
roll (x), so the body rotation is Rz(yaw)·Ry(pitch)·Rx(roll) and qpos reads as a pose.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from twinsim.config import RobotConfig

JOINT_NAMES: tuple[str, ...] = ("x", "y", "z", "yaw", "pitch", "roll")
JOINT_AXES: tuple[tuple[float, float, float], ...] = (
    (1, 0, 0),
    (0, 1, 0),
    (0, 0, 1),
    (0, 0, 1),
    (0, 1, 0),
    (1, 0, 0),
)
JOINT_IS_SLIDE: tuple[bool, ...] = (True, True, True, False, False, False)


@dataclass(frozen=True)
class DroneBody:
    """Mass properties of a small indoor quadrotor (a ~0.4 m frame, solid-box inertia)."""

    mass_kg: float
    half_size: tuple[float, float, float]

    @property
    def inertia(self) -> tuple[float, float, float]:
        """Principal moments of a solid box with the body's half extents."""
        a, b, c = (2 * h for h in self.half_size)
        m = self.mass_kg
        return (m * (b * b + c * c) / 12, m * (a * a + c * c) / 12, m * (a * a + b * b) / 12)


def drone_body(cfg: RobotConfig) -> DroneBody:
    """The drone body for a config: a 0.36 × 0.36 × 0.10 m frame of the configured mass."""
    return DroneBody(mass_kg=cfg.mass_kg, half_size=(0.18, 0.18, 0.05))


def pose_to_qpos(pos, yaw: float, pitch: float = 0.0, roll: float = 0.0) -> np.ndarray:
    """Joint positions for a body pose (the joints are the pose's coordinates)."""
    return np.array([pos[0], pos[1], pos[2], yaw, pitch, roll], dtype=float)
