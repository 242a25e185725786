"""Frontier exploration: map what the camera sees, drive to the nearest reachable frontier.

`FrontierExplorer` builds its own occupancy grid (`navigation.occupancy`) from the depth frames
of the robot's first camera. It localises with the ground-truth pose (the camera frames' poses
and the body pose of the observations): it is a mapping-and-planning baseline, not SLAM. At
`replan_hz`, or when its path gets blocked, it picks the nearest frontier (known-free cells
next to an unknown region of at least `min_unknown_m2` the robot could enter) reachable on its
map inflated by the robot's footprint (the widest of `margins_m` that reaches one), plans a
shortest path there (Dijkstra on the 8-connected grid) and follows it with velocity commands
within the base's limits (`navigation.follower`); with no frontier left it turns on the spot.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from scipy import ndimage
from scipy.sparse.csgraph import dijkstra

from twinsim.closedloop.observations import Observations
from twinsim.closedloop.tasks import _grid_graph, body_yaw
from twinsim.navigation.api import NavContext
from twinsim.navigation.follower import PathFollower
from twinsim.navigation.occupancy import OCCUPIED, OccupancyGrid, disc, frontier
from twinsim.sensors.camera import intrinsics

STUCK_S = 5.0  # a target is dropped when the robot moved less than STUCK_M in this long
STUCK_M = 0.15
ESCAPE_M = 1.0  # farthest the start of a plan snaps to a traversable cell


class FrontierExplorer:
    """Nearest-frontier exploration on a map of its own (ground-truth localisation)."""

    def __init__(
        self,
        cell_m: float = 0.05,
        map_size_m: float = 30.0,
        max_range_m: float = 4.0,
        band_m: tuple[float, float] = (0.05, 0.9),
        margins_m: tuple[float, ...] = (0.15, 0.05),
        replan_hz: float = 2.0,
        min_unknown_m2: float = 0.25,
        reached_m: float = 0.4,
        stride: int = 2,
    ) -> None:
        self.cell_m, self.map_size_m, self.max_range_m = cell_m, map_size_m, max_range_m
        self.band_m, self.margins_m, self.replan_hz = tuple(band_m), tuple(margins_m), replan_hz
        self.min_unknown_m2, self.reached_m, self.stride = min_unknown_m2, reached_m, stride
        self.map: OccupancyGrid | None = None
        self.path: np.ndarray | None = None

    def reset(self, context: NavContext) -> None:
        """Start an episode: no map yet."""
        if context.camera is None or context.limits is None:
            raise ValueError("the frontier explorer needs a camera and a mobile base")
        self.context = context
        cam = context.camera_config
        self.K = intrinsics(cam.width, cam.height, cam.hfov_deg)
        self.radius_m = float(context.spec.footprint_radius())
        self.follower = PathFollower(context.limits, context.command_space, lookahead_m=0.3)
        self.map, self.path, self.target = None, None, None
        self.dropped: list[np.ndarray] = []
        self.steps, self.next_plan = 0, 0
        self.track: list[tuple[float, np.ndarray]] = []

    def act(self, obs: Observations, info: Any) -> Mapping[str, Mapping[str, float]]:
        """Update the map with this step's frames, replan when due, follow the path."""
        robot = obs.robots[self.context.robot]
        xy, yaw = robot.T_world_body[:2, 3].copy(), body_yaw(robot.T_world_body)
        if self.map is None:
            self.map = OccupancyGrid(xy, self.map_size_m, self.cell_m)
        for frame in robot.frames.get(self.context.camera) or []:
            self.map.integrate(
                frame.depth, self.K, frame.T_world_cam, self.band_m, self.max_range_m, self.stride
            )
        self.map.mark_disc_free(xy, self.radius_m)
        t = self.steps / self.context.control_hz
        self.steps += 1
        self._watch_progress(t, xy)
        if self.steps >= self.next_plan or self._blocked():
            self.path = self._plan_any(xy)
            self.next_plan = self.steps + max(1, round(self.context.control_hz / self.replan_hz))
        if self.path is None:
            return self._spin()
        return self.follower.command(xy, yaw, self.path)

    def _spin(self) -> dict:
        """Turn on the spot at the base's yaw rate."""
        wz = self.context.limits.max_yaw_rate_radps
        return {"velocity": {f: wz if f == "wz" else 0.0 for f in self.follower.fields}}

    def _watch_progress(self, t: float, xy: np.ndarray) -> None:
        """Drop the target when the robot has hardly moved for STUCK_S seconds."""
        self.track.append((t, xy))
        while self.track[0][0] < t - STUCK_S:
            self.track.pop(0)
        moved = float(np.linalg.norm(self.track[0][1] - xy))
        if self.target is not None and t - self.track[0][0] >= 0.99 * STUCK_S and moved < STUCK_M:
            self.dropped.append(self.target)
            self.track = [(t, xy)]
            self.path, self.target, self.next_plan = None, None, self.steps

    def _blocked(self) -> bool:
        """Whether an obstacle has appeared within the planned clearance of the path."""
        if self.path is None:
            return False
        reach = math.ceil(self.clearance_m / self.cell_m)
        offsets = (np.argwhere(disc(self.clearance_m / self.cell_m)) - reach) * self.cell_m
        points = (self.path[1:, None, :] + offsets[None, :, ::-1]).reshape(-1, 2)
        flat, _ = self.map.cells(points)
        return bool(np.any(self.map.state.ravel()[flat] == OCCUPIED))

    def _plan_any(self, xy: np.ndarray) -> np.ndarray | None:
        """A path to a frontier keeping the widest margin that reaches one, or None."""
        for margin in self.margins_m:
            self.clearance_m = self.radius_m + margin
            path = self._plan(xy, *self.map.traversable(self.clearance_m))
            if path is not None:
                return path
        return None

    def _plan(self, xy: np.ndarray, free: np.ndarray, unknown: np.ndarray) -> np.ndarray | None:
        """A path (N, 2) from xy to the nearest reachable frontier cell, or None."""
        start = self._start_cell(xy, free)
        if start is None:
            return None
        edge = frontier(free, unknown, round(self.min_unknown_m2 / self.cell_m**2))
        graph, cells = _grid_graph(free, self.cell_m)
        node_of = np.full(free.size, -1)
        node_of[cells] = np.arange(len(cells))
        dist, pred = dijkstra(
            graph, directed=False, indices=node_of[start], return_predecessors=True
        )
        goals = node_of[np.flatnonzero(edge.ravel())]
        goals = goals[np.isfinite(dist[goals])]
        goal_xy = self.map.xy(cells[goals])
        keep = np.linalg.norm(goal_xy - xy, axis=1) > self.reached_m
        for point in self.dropped:
            keep &= np.linalg.norm(goal_xy - point, axis=1) > self.reached_m
        if not keep.any():
            self.target = None
            return None
        goal = int(goals[keep][np.argmin(dist[goals[keep]])])
        nodes = [goal]
        while nodes[-1] != node_of[start]:
            nodes.append(int(pred[nodes[-1]]))
        self.target = self.map.xy(cells[goal])
        return np.vstack([xy, self.map.xy(cells[nodes[::-1]])])

    def _start_cell(self, xy: np.ndarray, free: np.ndarray) -> int | None:
        """The traversable cell nearest to xy (within ESCAPE_M: a robot too near an obstacle
        first leaves it), flat, or None."""
        if not free.any():
            return None
        dist, nearest = ndimage.distance_transform_edt(~free, return_indices=True)
        flat, inside = self.map.cells(xy[None])
        if not inside[0]:
            return None
        iy, ix = np.unravel_index(flat[0], free.shape)
        if dist[iy, ix] * self.cell_m > ESCAPE_M:
            return None
        return int(np.ravel_multi_index((nearest[0, iy, ix], nearest[1, iy, ix]), free.shape))
