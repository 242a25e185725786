"""Object-goal navigation: "go to a chair in the kitchen", from the world's object and room
layers (what the ground-truth scene graph holds: each object's class, room and footprint).

The goal is every instance of a class (in rooms of one type, when a room is named). The robot
succeeds once its centre is within `success_radius_m` of one of their footprints beyond its own
clearance (its footprint radius plus the margin: it can come no closer). Distances are geodesic
on the same ground-truth free space as the point goal, to the nearest cell that succeeds.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import shapely
from pydantic import Field
from scipy.sparse.csgraph import dijkstra

from twinsim.closedloop.observations import Observations
from twinsim.closedloop.tasks import (
    GeodesicGrid,
    PointGoalConfig,
    PointGoalTask,
    TaskError,
    TaskInfo,
)
from twinsim.scene.free_space import geom_footprint
from twinsim.scene.overlay import union_all

#: classes that are the building, not goals
STRUCTURE = frozenset({"wall", "floor", "ceiling", "door_frame", "rug"})
GOAL_BAND_M = (0.05, 2.0)  # an object is a goal where it stands in this height band


class ObjectGoalConfig(PointGoalConfig):
    """An object goal: a class and optionally a room type (both drawn when unset: an object
    whose nearest approach lies `min_distance_m`..`max_distance_m` from the start)."""

    object_class: str | None = None
    room: str | None = None
    success_radius_m: float = Field(0.5, gt=0.0)
    max_distance_m: float = Field(12.0, gt=0.0)


def _footprint(obj) -> shapely.Geometry | None:
    """The object's footprint where it stands in the goal band (None above or below it)."""
    parts = []
    for geom in obj.geoms:
        poly, z0, z1 = geom_footprint(obj, geom)
        if z1 > GOAL_BAND_M[0] and z0 < GOAL_BAND_M[1]:
            parts.append(poly)
    return union_all(parts) if parts else None


class ObjectGoalTask(PointGoalTask):
    """Reach any instance of an object class (in a room type): `object_class`, `room` and
    `instances` say which, after reset."""

    name = "objectgoal"

    def __init__(self, config: ObjectGoalConfig | None = None, robot: str | None = None) -> None:
        super().__init__(config or ObjectGoalConfig(), robot)
        self.object_class: str | None = None
        self.room: str | None = None
        self.instances: tuple[int, ...] = ()

    def reset(self, session, obs: Observations, rng: np.random.Generator) -> np.ndarray:
        """Pick the goal class and room (drawn by `rng` when the config leaves them open);
        returns the nearest cell that succeeds, the goal a planner can head for."""
        cfg = self.config
        self.robot = self.robot or session.robots[0]
        spec = next(r for r in session.scene.robots if r.name == self.robot)
        self.grid = GeodesicGrid(self._free_space(session.scene, spec))
        self.reach_m = self.grid.fs.clearance_m + cfg.success_radius_m
        start = obs.robots[self.robot].T_world_body[:2, 3].copy()
        from_start, _ = self.grid.distances(start)
        rooms = {r.room_id: r.type for r in session.scene.rooms}
        candidates = []  # (object, room type, footprint, approach nodes, nearest approach)
        for obj in session.scene.objects:
            footprint = None if obj.semantic_class in STRUCTURE else _footprint(obj)
            if footprint is None:
                continue
            nodes = self._approach(footprint)
            reach = from_start[nodes] if len(nodes) else np.array([np.inf])
            if np.isfinite(reach).any():
                room = rooms.get(obj.room_id)
                candidates.append((obj, room, footprint, nodes, float(reach.min())))
        chosen = self._choose(candidates, rng)
        self.object_class = chosen[0].semantic_class
        drawn = cfg.object_class is None and cfg.room is None
        self.room = chosen[1] if drawn else cfg.room
        goals = [c for c in candidates if c[0].semantic_class == self.object_class]
        goals = [c for c in goals if self.room is None or c[1] == self.room]
        self.instances = tuple(c[0].instance_id for c in goals)
        self.footprint = union_all([c[2] for c in goals])
        targets = np.unique(np.concatenate([c[3] for c in goals]))
        self._to_goal, pred, _ = dijkstra(
            self.grid.graph,
            directed=False,
            indices=targets,
            return_predecessors=True,
            min_only=True,
        )
        nodes = [self.grid.node(start)]
        while pred[nodes[-1]] >= 0:
            nodes.append(int(pred[nodes[-1]]))
        self.goal = self.grid.xy(nodes[-1])
        self.path = self.grid.pulled(np.vstack([start, self.grid.xy(nodes)]))
        self.geodesic_m = float(np.linalg.norm(np.diff(self.path, axis=0), axis=1).sum())
        self._t0_ns = obs.t_ns
        return self.goal.copy()

    def step(self, obs: Observations) -> TaskInfo:
        """The point-goal state towards the nearest approach, with success by the footprints."""
        info = super().step(obs)
        gap = float(shapely.distance(self.footprint, shapely.Point(info.position[:2])))
        return dataclasses.replace(info, success=gap <= self.reach_m)

    def distance_to_goal(self, xy: np.ndarray) -> float:
        """Geodesic distance to the nearest cell that succeeds (0 within reach)."""
        if float(shapely.distance(self.footprint, shapely.Point(xy))) <= self.reach_m:
            return 0.0
        node = self.grid.node(xy)
        return float(self._to_goal[node] + np.linalg.norm(self.grid.xy(node) - xy))

    def _approach(self, footprint: shapely.Geometry) -> np.ndarray:
        """Graph nodes whose cell centre is within reach of the footprint."""
        near = footprint.buffer(self.reach_m)
        xy = self.grid.xy(np.arange(len(self.grid.cells)))
        return np.flatnonzero(shapely.contains_xy(near, xy[:, 0], xy[:, 1]))

    def _choose(self, candidates: list, rng: np.random.Generator) -> tuple:
        """The configured class (and room), or an object drawn in the distance range."""
        cfg = self.config
        if cfg.object_class is not None or cfg.room is not None:
            fits = [
                c
                for c in candidates
                if cfg.object_class in (None, c[0].semantic_class) and cfg.room in (None, c[1])
            ]
            if not fits:
                there = sorted({f"{c[0].semantic_class} ({c[1]})" for c in candidates})
                raise TaskError(
                    f"no reachable {cfg.object_class or 'object'} in a {cfg.room or 'room'} "
                    f"of this world; reachable: {', '.join(there)}"
                )
            return min(fits, key=lambda c: c[4])[:2]
        fits = [c for c in candidates if cfg.min_distance_m <= c[4] <= cfg.max_distance_m]
        if not fits:
            raise TaskError(
                f"no object {cfg.min_distance_m}..{cfg.max_distance_m} m from the start"
            )
        return fits[int(rng.integers(len(fits)))][:2]
