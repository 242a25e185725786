"""The quadruped's trot: the gait schedule (a pure function of time), the swing foot's path and
the Raibert foothold it lands on.

The schedule starts with `stand_s` on all four feet, then trots: the diagonal pairs (FL, RR)
and (FR, RL) alternate, each foot in stance for `duty` of the period and swinging for the
rest, so with a duty above one half all four feet stand for a moment at each change. A swing
goes from where the foot lifted off to the foothold, horizontally along a raised cosine and
vertically up `height` over the higher end and down again, so it leaves and meets the floor
with zero vertical speed (Raibert, "Legged robots that balance", 1986, for the foothold).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: each leg's phase offset in the trot (LEGS order: FL, FR, RL, RR)
TROT_OFFSETS = np.array([0.0, 0.5, 0.5, 0.0])
#: the part of a swing in which the foot moves across: it then comes straight down
ACROSS = 0.8


@dataclass(frozen=True)
class TrotGait:
    """A trot of `period_s` with stance fraction `duty`, after `stand_s` standing."""

    period_s: float
    duty: float
    stand_s: float = 0.25

    @property
    def stance_s(self) -> float:
        return self.duty * self.period_s

    @property
    def swing_s(self) -> float:
        return (1.0 - self.duty) * self.period_s

    def phase(self, t_s: float) -> float:
        """The gait's phase in [0, 1) at t (0 while standing)."""
        if t_s < self.stand_s:
            return 0.0
        return float(((t_s - self.stand_s) / self.period_s) % 1.0)

    def leg_phases(self, t_s: float) -> np.ndarray:
        """(4,) each leg's phase in [0, 1): stance below `duty`, then swing."""
        if t_s < self.stand_s:
            return np.zeros(4)
        return (self.phase(t_s) + TROT_OFFSETS) % 1.0

    def stance(self, t_s: float) -> np.ndarray:
        """(4,) bool: the planned contact state of each foot at t."""
        return self.leg_phases(t_s) < self.duty

    def swing_progress(self, t_s: float) -> np.ndarray:
        """(4,) how far each swinging foot is through its swing, in [0, 1) (0 in stance)."""
        phases = self.leg_phases(t_s)
        return np.where(phases < self.duty, 0.0, (phases - self.duty) / (1.0 - self.duty))


def swing_foot(
    start: np.ndarray, target: np.ndarray, progress: np.ndarray, height: float, swing_s: float
) -> tuple[np.ndarray, np.ndarray]:
    """Position and velocity (n, 3) of swinging feet `progress` (n,) of the way from `start`
    to `target` (n, 3, world frame), lifted `height` above the higher end mid-swing."""
    u = np.clip(progress, 0.0, 1.0)[:, None]
    # across in the first `ACROSS` of the swing, so the foot comes down on its foothold
    h = np.clip(u / ACROSS, 0.0, 1.0)
    s = 0.5 * (1.0 - np.cos(np.pi * h))
    ds = np.where(h < 1.0, 0.5 * np.pi * np.sin(np.pi * h) / (ACROSS * swing_s), 0.0)
    pos = start + (target - start) * s
    vel = (target - start) * ds
    top = np.maximum(start[:, 2], target[:, 2])[:, None] + height
    # up along a raised cosine to `top` at mid-swing, then down to the target's height
    up = u < 0.5
    w = np.where(up, 2.0 * u, 2.0 * u - 1.0)
    lift = 0.5 * (1.0 - np.cos(np.pi * w))
    dlift = np.pi * np.sin(np.pi * w) / swing_s
    z_from = np.where(up, start[:, 2:3], top)
    z_to = np.where(up, top, target[:, 2:3])
    pos[:, 2:3] = z_from + (z_to - z_from) * lift
    vel[:, 2:3] = (z_to - z_from) * dlift
    return pos, vel


def raibert_foothold(
    hip_td: np.ndarray,
    hip_vel: np.ndarray,
    hip_vel_cmd: np.ndarray,
    stance_s: float,
    gain: float,
) -> np.ndarray:
    """(n, 2) footholds: the hips' positions at touchdown `hip_td` (n, 2), ahead by half the
    stance's travel at the hips' velocity, plus `gain` times its excess over the command."""
    return hip_td + 0.5 * stance_s * hip_vel + gain * (hip_vel - hip_vel_cmd)
