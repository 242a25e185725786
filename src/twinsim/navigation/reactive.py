"""The reactive baseline: depth only, no map. Each camera frame, the depth points in the robot's
height band become the free distance per bearing in view; `BearingSteering` (steering.py)
heads for the bearing closest to the goal's that stays free for `clear_m`.
"""

from __future__ import annotations

import numpy as np

from twinsim.navigation.steering import BearingNavigator
from twinsim.sensors.camera import backproject


def depth_points(
    depth: np.ndarray, K: np.ndarray, T_world_cam: np.ndarray, band_m: tuple[float, float]
) -> np.ndarray:
    """World points (N, 3) of a z-depth image whose height lies in `band_m`: the obstacles."""
    points = backproject(depth, K, T_world_cam).reshape(-1, 3)
    return points[(points[:, 2] >= band_m[0]) & (points[:, 2] <= band_m[1])]


class ReactiveDepthNavigator(BearingNavigator):
    """Steers by the latest depth frame towards the goal, keeping `clear_m` free ahead."""

    name = "reactive_depth"

    def __init__(
        self, clear_m: float = 0.7, band_m: tuple[float, float] = (0.05, 0.9), slow_m: float = 1.5
    ) -> None:
        super().__init__(clear_m, slow_m)
        self.band_m = band_m

    def obstacle_points(self, frame) -> np.ndarray:
        """The depth points in the robot's height band."""
        return depth_points(frame.depth, self.K, frame.T_world_cam, self.band_m)
