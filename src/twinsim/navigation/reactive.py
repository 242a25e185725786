"""The reactive baseline: depth only, no map. Each camera frame, the depth points in the robot's
height band become the free distance per bearing in view; `BearingSteering` (steering.py)
heads for the bearing closest to the goal's that stays free for `clear_m`.
"""

from __future__ import annotations

import math

import numpy as np

from twinsim.closedloop.observations import Observations
from twinsim.closedloop.tasks import TaskError, TaskInfo
from twinsim.navigation.api import NavContext
from twinsim.navigation.steering import BearingSteering, free_by_bearing
from twinsim.sensors.camera import backproject, intrinsics


def depth_points(
    depth: np.ndarray, K: np.ndarray, T_world_cam: np.ndarray, band_m: tuple[float, float]
) -> np.ndarray:
    """World points (N, 3) of a z-depth image whose height lies in `band_m`: the obstacles."""
    points = backproject(depth, K, T_world_cam).reshape(-1, 3)
    return points[(points[:, 2] >= band_m[0]) & (points[:, 2] <= band_m[1])]


class ReactiveDepthNavigator:
    """Steers by the latest depth frame towards the goal, keeping `clear_m` free ahead."""

    def __init__(
        self, clear_m: float = 0.7, band_m: tuple[float, float] = (0.05, 0.9), slow_m: float = 1.5
    ) -> None:
        self.clear_m, self.band_m, self.slow_m = clear_m, band_m, slow_m

    def reset(self, context: NavContext) -> None:
        """Take the first camera's intrinsics and the base's limits."""
        if context.camera is None or context.goal is None or context.limits is None:
            raise TaskError("method 'reactive_depth' needs a camera, a mobile base and a goal task")
        cam = context.camera_config
        self.K = intrinsics(cam.width, cam.height, cam.hfov_deg)
        self.camera, self.robot = context.camera, context.robot
        self.steering = BearingSteering(
            math.radians(cam.hfov_deg) / 2,
            context.limits,
            context.command_space.modes["velocity"].fields,
            context.goal,
            self.clear_m,
            self.slow_m,
        )
        self.radius = float(getattr(context.spec, "footprint_radius_m", 0.25))
        self.free: np.ndarray | None = None  # free distance per bearing bin in view

    def act(self, obs: Observations, info: TaskInfo) -> dict:
        """Head for the free bearing nearest the goal's; turn to the goal when none is free."""
        robot = obs.robots[self.robot]
        frame = robot.latest_frame(self.camera)
        if frame is not None:
            points = depth_points(frame.depth, self.K, frame.T_world_cam, self.band_m)
            self.free = free_by_bearing(
                points, robot.T_world_body, self.steering.bearings, self.radius
            )
        return self.steering.command(self.free, robot.T_world_body)
