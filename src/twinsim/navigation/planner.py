"""The map-based baseline: shortest paths on the ground-truth free space, followed by pure
pursuit.

It is the oracle of the benchmark: it knows the world's static layout (the task's
`GeodesicGrid`, built from the scene), not the people. The path to the goal is read off one
shortest-path tree rooted at the goal (Dijkstra over the 8-connected free cells, exact like
A* and computed once per episode), shortened by line of sight, and re-read from wherever the
robot is every `replan_s` or when it is pushed more than `off_path_m` off it.
"""

from __future__ import annotations

import math

import numpy as np

from twinsim.closedloop.observations import Observations
from twinsim.closedloop.tasks import TaskError, TaskInfo, body_yaw
from twinsim.navigation.api import NavContext
from twinsim.navigation.follower import PathFollower


class ShortestPathNavigator:
    """Follows the shortest path on the ground-truth free space to the task's goal."""

    def __init__(
        self, lookahead_m: float = 0.5, replan_s: float = 1.0, off_path_m: float = 0.4
    ) -> None:
        self.lookahead_m, self.replan_s, self.off_path_m = lookahead_m, replan_s, off_path_m

    def reset(self, context: NavContext) -> None:
        """Root the shortest-path tree at the goal on the task's free-space grid."""
        grid = getattr(context.task, "grid", None)
        if grid is None or context.goal is None:
            raise TaskError(
                f"method 'planner' needs a goal task with a grid, not {context.task.name!r}"
            )
        if context.limits is None:
            raise TaskError(f"robot {context.robot!r} has no mobile base to plan for")
        self.grid, self.goal = grid, np.asarray(context.goal, float)
        self.follower = PathFollower(context.limits, context.command_space, self.lookahead_m)
        _, self._towards_goal = grid.distances(self.goal)
        self._goal_node = grid.node(self.goal)
        self._every = max(1, round(self.replan_s * context.control_hz))
        self._steps = 0
        self.path: np.ndarray | None = None
        self.robot = context.robot

    def act(self, obs: Observations, info: TaskInfo) -> dict:
        """The follower's command on the current path (re-read when due or off the path)."""
        T = obs.robots[self.robot].T_world_body
        xy = T[:2, 3]
        if self.path is None or self._steps % self._every == 0 or self._off_path(xy):
            self.path = self._path_from(xy)
        self._steps += 1
        return self.follower.command(xy, body_yaw(T), self.path)

    def _path_from(self, xy: np.ndarray) -> np.ndarray:
        """The shortest path from xy to the goal, shortened by line of sight."""
        nodes = [self.grid.node(xy)]
        while nodes[-1] != self._goal_node and nodes[-1] >= 0:
            nodes.append(int(self._towards_goal[nodes[-1]]))
        if nodes[-1] < 0:  # pushed where the goal is not reachable: head straight for it
            return np.vstack([xy, self.goal])
        return self.grid.pulled(np.vstack([xy, self.grid.xy(nodes), self.goal]))

    def _off_path(self, xy: np.ndarray) -> bool:
        a, b = self.path[:-1], self.path[1:]
        seg = b - a
        u = np.clip(
            np.einsum("ij,ij->i", xy - a, seg) / np.maximum(np.einsum("ij,ij->i", seg, seg), 1e-12),
            0.0,
            1.0,
        )
        gap = np.linalg.norm(a + u[:, None] * seg - xy, axis=1).min() if len(seg) else math.inf
        return bool(gap > self.off_path_m)
