"""PID joint controllers, one per joint, taking position or velocity setpoints (GRADE's UAV).

Gains act on accelerations and are scaled by each joint's effective mass or inertia, so the
same tuning holds for any drone mass; a feed-forward term carries the reference acceleration
and, for the vertical slide, the weight.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from twinsim.robots.common.limits import clip_float


@dataclass
class JointPid:
    """PID over n joints (gains and limits as arrays) with output limits and anti-windup."""

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
        return np.array(self.accelerations(q, qd, q_ref, qd_ref, position_mode, dt))

    def accelerations(self, q, qd, q_ref, qd_ref, position_mode, dt: float) -> list[float]:
        """`update` joint by joint on floats (arrays or lists in), the same bits as NumPy's
        elementwise version without its cost per call, which dominates on a few joints."""
        lim = self.integral_limit
        kp, ki, kd = self.kp.tolist(), self.ki.tolist(), self.kd.tolist()
        integral, modes = _floats(self.integral), _floats(position_mode)
        q, qd, q_ref, qd_ref = _floats(q), _floats(qd), _floats(q_ref), _floats(qd_ref)
        out = []
        for j, position in enumerate(modes):
            err = q_ref[j] - q[j] if position else 0.0
            i = integral[j] = clip_float(integral[j] + err * dt, -lim, lim)
            out.append(
                kp[j] * err + ki[j] * i + (kd[j] if position else kp[j]) * (qd_ref[j] - qd[j])
            )
        self.integral = np.array(integral)
        return out


def _floats(values) -> list:
    """An array's or a sequence's entries as Python scalars."""
    return values.tolist() if isinstance(values, np.ndarray) else list(values)
