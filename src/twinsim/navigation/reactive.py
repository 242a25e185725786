"""The reactive baseline: depth only, no map. Each camera frame, the depth points in the robot's
height band become the free distance per bearing in view; the robot heads for the bearing
closest to the goal's that stays free for `clear_m`, turning on the spot towards the goal when
no bearing in view is free or the goal lies outside the view (a point-goal sensor: goal
distance and bearing from the robot's pose, as in habitat's PointNav).
"""

from __future__ import annotations

import math

import numpy as np

from twinsim.closedloop.observations import Observations
from twinsim.closedloop.tasks import TaskError, TaskInfo, body_yaw
from twinsim.navigation.api import NavContext
from twinsim.sensors.camera import backproject, intrinsics

BIN_RAD = math.radians(3.0)
YAW_GAIN = 2.0  # 1/s per radian of heading error


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
        self.half_fov = math.radians(cam.hfov_deg) / 2
        self.camera, self.robot = context.camera, context.robot
        self.limits, self.goal = context.limits, np.asarray(context.goal, float)
        self.fields = context.command_space.modes["velocity"].fields
        self.radius = float(getattr(context.spec, "footprint_radius_m", 0.25))
        self.free: np.ndarray | None = None  # free distance per bearing bin in view

    def act(self, obs: Observations, info: TaskInfo) -> dict:
        """Head for the free bearing nearest the goal's; turn to the goal when none is free."""
        robot = obs.robots[self.robot]
        T = robot.T_world_body
        frame = robot.latest_frame(self.camera)
        if frame is not None:
            self.free = self._free_by_bearing(frame.depth, frame.T_world_cam, T)
        offset = self.goal - T[:2, 3]
        distance = float(np.linalg.norm(offset))
        goal_bearing = math.remainder(math.atan2(offset[1], offset[0]) - body_yaw(T), 2 * math.pi)
        bearings = self._bearings()
        ok = self.free is not None and self.free >= np.minimum(self.clear_m, distance)
        if self.free is None or not ok.any() or abs(goal_bearing) > self.half_fov:
            return self._velocity(0.0, 0.0, self._yaw_rate(goal_bearing if ok.any() else 1.0))
        heading = float(bearings[ok][np.argmin(np.abs(bearings[ok] - goal_bearing))])
        room = float(self.free[np.argmin(np.abs(bearings - heading))])
        speed = self.limits.max_speed_mps * min(1.0, room / self.slow_m, distance / 0.5)
        wz = self._yaw_rate(heading)
        if self.limits.holonomic:
            return self._velocity(speed * math.cos(heading), speed * math.sin(heading), wz)
        return self._velocity(speed * max(0.0, math.cos(heading)) ** 2, 0.0, wz)

    def _bearings(self) -> np.ndarray:
        n = math.ceil(2 * self.half_fov / BIN_RAD)
        return -self.half_fov + (np.arange(n) + 0.5) * (2 * self.half_fov / n)

    def _free_by_bearing(
        self, depth: np.ndarray, T_world_cam: np.ndarray, T_world_body: np.ndarray
    ):
        """Distance to the nearest depth point in the height band, per bearing bin, widened by
        the robot's radius (a point blocks every bearing passing within the radius of it)."""
        points = backproject(depth, self.K, T_world_cam).reshape(-1, 3)
        points = points[(points[:, 2] >= self.band_m[0]) & (points[:, 2] <= self.band_m[1])]
        bearings = self._bearings()
        free = np.full(len(bearings), np.inf)
        if not len(points):
            return free
        body = (points - T_world_body[:3, 3]) @ T_world_body[:3, :3]
        rng = np.hypot(body[:, 0], body[:, 1])
        angle = np.arctan2(body[:, 1], body[:, 0])
        ahead = rng > 1e-3
        rng, angle = rng[ahead], angle[ahead]
        spread = np.arcsin(np.clip(self.radius / np.maximum(rng, self.radius), 0.0, 1.0))
        for i, b in enumerate(bearings):
            hit = np.abs(np.remainder(angle - b + math.pi, 2 * math.pi) - math.pi) <= spread
            if hit.any():
                free[i] = float(rng[hit].min())
        return free

    def _yaw_rate(self, error: float) -> float:
        return float(np.clip(YAW_GAIN * error, -1.0, 1.0)) * self.limits.max_yaw_rate_radps

    def _velocity(self, vx: float, vy: float, wz: float) -> dict:
        values = {"vx": vx, "vy": vy, "vz": 0.0, "wz": wz}
        return {"velocity": {f: float(values[f]) for f in self.fields}}
