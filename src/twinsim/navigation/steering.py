"""Map-free steering by the free distance per bearing, shared by the reactive methods: the
bearings in view in 3° bins, the free distance per bin from obstacle points (widened by the
robot's radius), and the command towards the free bearing nearest the goal's, turning on the
spot when none is free or the goal lies outside the view (a point-goal sensor: the goal's
distance and bearing from the robot's pose, as in habitat's PointNav). Each method only says
where its obstacles are.
"""

from __future__ import annotations

import math

import numpy as np

from twinsim.closedloop.observations import Observations
from twinsim.closedloop.tasks import TaskError, TaskInfo, body_yaw
from twinsim.navigation.api import NavContext
from twinsim.robots.common.live_reference import BaseLimits
from twinsim.sensors.camera import intrinsics

BIN_RAD = math.radians(3.0)
YAW_GAIN = 2.0  # 1/s per radian of heading error


def bearing_bins(half_fov: float) -> np.ndarray:
    """Centres of the bearing bins (rad, body frame, left positive) spanning ±`half_fov`."""
    n = math.ceil(2 * half_fov / BIN_RAD)
    return -half_fov + (np.arange(n) + 0.5) * (2 * half_fov / n)


def free_by_bearing(
    points: np.ndarray, T_world_body: np.ndarray, bearings: np.ndarray, radius: float
) -> np.ndarray:
    """Distance from the body to the nearest obstacle point (world, (N, 3)) per bearing bin,
    widened by the robot's radius: a point blocks every bearing passing within the radius of
    it. Inf where nothing blocks."""
    free = np.full(len(bearings), np.inf)
    if not len(points):
        return free
    body = (points - T_world_body[:3, 3]) @ T_world_body[:3, :3]
    rng = np.hypot(body[:, 0], body[:, 1])
    angle = np.arctan2(body[:, 1], body[:, 0])
    ahead = rng > 1e-3
    rng, angle = rng[ahead], angle[ahead]
    spread = np.arcsin(np.clip(radius / np.maximum(rng, radius), 0.0, 1.0))
    for i, b in enumerate(bearings):
        hit = np.abs(np.remainder(angle - b + math.pi, 2 * math.pi) - math.pi) <= spread
        if hit.any():
            free[i] = float(rng[hit].min())
    return free


class BearingSteering:
    """The velocity command towards `goal` (world x, y) given the free distance per bearing:
    heads for the bearing nearest the goal's that stays free for `clear_m` (or up to the goal),
    at a speed slowing with the room ahead (`slow_m`) and near the goal; turns on the spot
    when nothing in view is free or the goal is out of view."""

    def __init__(
        self,
        half_fov: float,
        limits: BaseLimits,
        fields: tuple[str, ...],
        goal: np.ndarray,
        clear_m: float,
        slow_m: float,
    ) -> None:
        self.half_fov, self.limits, self.fields = half_fov, limits, fields
        self.goal = np.asarray(goal, float)
        self.clear_m, self.slow_m = clear_m, slow_m
        self.bearings = bearing_bins(half_fov)

    def command(self, free: np.ndarray | None, T_world_body: np.ndarray) -> dict:
        """The base's velocity command (`{"velocity": {field: value}}`) for the robot at
        `T_world_body`; `free` is None before the first frame (nothing counts as free)."""
        offset = self.goal - T_world_body[:2, 3]
        distance = float(np.linalg.norm(offset))
        goal_bearing = math.remainder(
            math.atan2(offset[1], offset[0]) - body_yaw(T_world_body), 2 * math.pi
        )
        limit = min(self.clear_m, distance)
        ok = np.zeros(len(self.bearings), bool) if free is None else free >= limit
        if not ok.any() or abs(goal_bearing) > self.half_fov:
            return self._velocity(0.0, 0.0, self._yaw_rate(goal_bearing if ok.any() else 1.0))
        bearings = self.bearings
        heading = float(bearings[ok][np.argmin(np.abs(bearings[ok] - goal_bearing))])
        room = float(free[np.argmin(np.abs(bearings - heading))])
        speed = self.limits.max_speed_mps * min(1.0, room / self.slow_m, distance / 0.5)
        wz = self._yaw_rate(heading)
        if self.limits.holonomic:
            return self._velocity(speed * math.cos(heading), speed * math.sin(heading), wz)
        return self._velocity(speed * max(0.0, math.cos(heading)) ** 2, 0.0, wz)

    def _yaw_rate(self, error: float) -> float:
        return float(np.clip(YAW_GAIN * error, -1.0, 1.0)) * self.limits.max_yaw_rate_radps

    def _velocity(self, vx: float, vy: float, wz: float) -> dict:
        values = {"vx": vx, "vy": vy, "vz": 0.0, "wz": wz}
        return {"velocity": {f: float(values[f]) for f in self.fields}}


class BearingNavigator:
    """A map-free navigator: each frame of the robot's first camera gives obstacle points (the
    method's own `obstacle_points`), whose free distance per bearing `BearingSteering` steers
    by towards the goal, keeping `clear_m` free ahead. `name` is the registered method's."""

    name = "bearing"

    def __init__(self, clear_m: float, slow_m: float) -> None:
        self.clear_m, self.slow_m = clear_m, slow_m

    def reset(self, context: NavContext) -> None:
        """Take the first camera's intrinsics and the base's limits."""
        if context.camera is None or context.goal is None or context.limits is None:
            raise TaskError(f"method {self.name!r} needs a camera, a mobile base and a goal task")
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
            points = self.obstacle_points(frame)
            self.free = free_by_bearing(
                points, robot.T_world_body, self.steering.bearings, self.radius
            )
        return self.steering.command(self.free, robot.T_world_body)

    def obstacle_points(self, frame) -> np.ndarray:
        """World points (N, 3) where this method sees obstacles in `frame`."""
        raise NotImplementedError
