"""Pure-pursuit path following: a planar path becomes the velocity command of the robot's kind.

The robot steers at a look-ahead point on the path, slows down near the path's end, and turns
to face its way of travel; a base that cannot move sideways (`BaseLimits.holonomic` false)
turns on the spot first when the look-ahead point is far off its heading. Commands stay within
the base's limits.
"""

from __future__ import annotations

import math

import numpy as np

from twinsim.robots.common.commands import CommandSpace
from twinsim.robots.common.live_reference import BaseLimits

TURN_IN_PLACE_RAD = math.radians(40.0)  # a unicycle turns on the spot beyond this heading error
YAW_GAIN = 2.0  # 1/s: yaw rate per radian of heading error
STOP_GAIN = 1.2  # 1/s: speed per metre left near the end of the path


class PathFollower:
    """Velocity commands that follow a path (N, 2) of world points."""

    def __init__(
        self, limits: BaseLimits, commands: CommandSpace, lookahead_m: float = 0.5
    ) -> None:
        mode = commands.modes.get("velocity")
        if mode is None:
            raise ValueError(f"the robot takes no velocity commands: {commands.describe()}")
        self.fields = mode.fields
        self.limits = limits
        self.lookahead_m = lookahead_m

    def command(self, xy: np.ndarray, yaw: float, path: np.ndarray) -> dict:
        """The command at planar position `xy` and heading `yaw` for `path` (its last point the
        goal); zero once at the goal."""
        target, left = self._lookahead(np.asarray(xy, float), np.asarray(path, float))
        offset = target - xy
        distance = float(np.linalg.norm(offset))
        if distance < 1e-6:
            return self._velocity(0.0, 0.0, 0.0)
        c, s = math.cos(yaw), math.sin(yaw)
        forward, left_of = c * offset[0] + s * offset[1], -s * offset[0] + c * offset[1]
        error = math.atan2(left_of, forward)
        speed = min(self.limits.max_speed_mps, STOP_GAIN * left)
        wz = float(np.clip(YAW_GAIN * error, -1.0, 1.0)) * self.limits.max_yaw_rate_radps
        if self.limits.holonomic:
            return self._velocity(speed * forward / distance, speed * left_of / distance, wz)
        if abs(error) > TURN_IN_PLACE_RAD:
            return self._velocity(0.0, 0.0, wz)
        return self._velocity(speed * math.cos(error), 0.0, wz)

    def _lookahead(self, xy: np.ndarray, path: np.ndarray) -> tuple[np.ndarray, float]:
        """The point `lookahead_m` along the path past the point nearest to `xy`, and the path
        length left from that nearest point."""
        if len(path) == 1:
            return path[0], float(np.linalg.norm(path[0] - xy))
        a, b = path[:-1], path[1:]
        seg = b - a
        length = np.linalg.norm(seg, axis=1)
        u = np.clip(np.einsum("ij,ij->i", xy - a, seg) / np.maximum(length**2, 1e-12), 0, 1)
        nearest = a + u[:, None] * seg
        i = int(np.argmin(np.linalg.norm(nearest - xy, axis=1)))
        along = np.concatenate([[0.0], np.cumsum(length)])
        here = along[i] + u[i] * length[i]
        left = float(along[-1] - here)
        reach = min(along[-1], here + self.lookahead_m)
        j = min(int(np.searchsorted(along, reach, side="right")) - 1, len(seg) - 1)
        t = (reach - along[j]) / max(length[j], 1e-12)
        return a[j] + min(t, 1.0) * seg[j], left

    def _velocity(self, vx: float, vy: float, wz: float) -> dict:
        values = {"vx": vx, "vy": vy, "vz": 0.0, "wz": wz}
        return {"velocity": {f: float(values[f]) for f in self.fields}}
