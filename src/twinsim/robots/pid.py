"""PID joint controllers, one per joint, taking position or velocity setpoints (GRADE's UAV).

Gains act on accelerations and are scaled by each joint's effective mass or inertia, so the
same tuning holds for any drone mass; a feed-forward term carries the reference acceleration
and, for the vertical slide, the weight.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class JointPid:
    """Vectorised PID over n joints with output limits and anti-windup."""

    kp: np.ndarray
    ki: np.ndarray
    kd: np.ndarray
    effort_limit: np.ndarray
    integral_limit: float = 0.5
    integral: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        self.integral = np.zeros_like(self.kp, dtype=float)

    def reset(self) -> None:
        self.integral[:] = 0.0

    def update(
        self,
        q: np.ndarray,
        qd: np.ndarray,
        q_ref: np.ndarray,
        qd_ref: np.ndarray,
        position_mode: np.ndarray,
        dt: float,
    ) -> np.ndarray:
        """Acceleration command: PID on position where `position_mode`, P on velocity elsewhere."""
        err = np.where(position_mode, q_ref - q, 0.0)
        self.integral = np.clip(self.integral + err * dt, -self.integral_limit, self.integral_limit)
        vel_gain = np.where(position_mode, self.kd, self.kp)
        return self.kp * err + self.ki * self.integral + vel_gain * (qd_ref - qd)
