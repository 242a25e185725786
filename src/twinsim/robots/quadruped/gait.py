"""The quadruped's trot: the gait schedule (a pure function of time), the swing foot's path and
the Raibert foothold it lands on.

The schedule starts with `stand_s` on all four feet, then trots: the diagonal pairs (FL, RR)
and (FR, RL) alternate, each foot in stance for `duty` of the period and swinging for the
rest, so with a duty above one half all four feet stand for a moment at each change. A swing
goes from where the foot lifted off to the foothold, horizontally along a raised cosine; it
leaves the floor with zero vertical speed, rises `height` over the higher end by `APEX` of the
swing and comes down to `LANDING_M` above its end by `LAND`, then covers that last stretch at
a constant, walking-pace speed, so the foot meets the floor (or a rug up to a centimetre
higher) gently wherever in that stretch the floor is: a descent at full speed to the floor
drove the feet up to 7 mm into it within one 240 Hz step (Raibert, "Legged robots that
balance", 1986, for the foothold).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: each leg's phase offset in the trot (LEGS order: FL, FR, RL, RR)
TROT_OFFSETS = np.array([0.0, 0.5, 0.5, 0.0])
#: the part of a swing in which the foot moves across: it then comes straight down
ACROSS = 0.8
#: the swing's highest point and the start of its landing stretch, as parts of the swing
APEX, LAND = 0.45, 0.75
#: the landing stretch: a rug's centimetre, the swing's end below the floor, and a little
LANDING_M = 0.014


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
    to `target` (n, 3, world frame), lifted `height` above the higher end at `APEX`, landing
    over the last `LANDING_M` at constant speed from `LAND` on."""
    u = np.clip(progress, 0.0, 1.0)[:, None]
    # across in the first `ACROSS` of the swing, so the foot comes down on its foothold
    h = np.clip(u / ACROSS, 0.0, 1.0)
    s = 0.5 * (1.0 - np.cos(np.pi * h))
    ds = np.where(h < 1.0, 0.5 * np.pi * np.sin(np.pi * h) / (ACROSS * swing_s), 0.0)
    pos = start + (target - start) * s
    vel = (target - start) * ds
    z, dz = _swing_height(start[:, 2], target[:, 2], u[:, 0], height, swing_s)
    pos[:, 2], vel[:, 2] = z, dz
    return pos, vel


def _swing_height(
    z0: np.ndarray, z1: np.ndarray, u: np.ndarray, height: float, swing_s: float
) -> tuple[np.ndarray, np.ndarray]:
    """Height and vertical speed (n,) of feet `u` of the way through swings from `z0` to `z1`:
    a raised cosine up to the top, a cubic (Hermite) down to `LANDING_M` above the end that
    arrives at the landing speed, then that constant speed to the end."""
    top = np.maximum(z0, z1) + height
    rise = np.clip(u / APEX, 0.0, 1.0)
    z_up = z0 + (top - z0) * 0.5 * (1.0 - np.cos(np.pi * rise))
    dz_up = (top - z0) * 0.5 * np.pi * np.sin(np.pi * rise) / (APEX * swing_s)
    landing_s = (1.0 - LAND) * swing_s
    speed = LANDING_M / landing_s
    fall_s = (LAND - APEX) * swing_s
    w = np.clip((u - APEX) / (LAND - APEX), 0.0, 1.0)
    drop = top - (z1 + LANDING_M)
    # Hermite from (top, at rest) to (z1 + LANDING_M, -speed) over fall_s
    z_fall = z1 + LANDING_M + drop * (2 * w**3 - 3 * w**2 + 1) - speed * fall_s * (w**3 - w**2)
    dz_fall = (drop * (6 * w**2 - 6 * w) - speed * fall_s * (3 * w**2 - 2 * w)) / fall_s
    left = np.clip((1.0 - u) * swing_s, 0.0, landing_s)
    z_land, dz_land = z1 + speed * left, np.full_like(u, -speed)
    z = np.where(u < APEX, z_up, np.where(u < LAND, z_fall, z_land))
    dz = np.where(u < APEX, dz_up, np.where(u < LAND, dz_fall, dz_land))
    return z, dz


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
