"""Path planning on the scene graph (Kimera's hierarchy) and flat A* on the occupancy grid.

Hierarchical: A* over rooms (edges through doors), then A* over the places of the chosen rooms,
then shortcut smoothing (a segment is kept when it holds the clearance on the grid). Flat: A*
over every free cell of the same clearance grid, 8-connected. Both keep the same clearance, so
their lengths compare directly.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass

import numpy as np
import spark_dsg as dsg
from scipy.spatial import cKDTree

from twinsim.dsg import layers
from twinsim.dsg.errors import DsgError
from twinsim.dsg.places import FreeGrid
from twinsim.dsg.queries import SceneGraphQueries

_SNAP_CANDIDATES = 8


class NoPathError(DsgError):
    """Start or goal is not in free space, or no path joins them."""


@dataclass(frozen=True)
class PlanResult:
    """A path (N, 2) in world xy, its length, the rooms it crosses, and the nodes A* expanded."""

    path_xy: np.ndarray
    length_m: float
    rooms: tuple[int, ...]
    expanded: int


def _fmt(xy) -> str:
    return f"({float(xy[0]):.2f}, {float(xy[1]):.2f})"


def _require_clear(grid: FreeGrid, name: str, xy: np.ndarray, min_clearance_m: float):
    """The (iy, ix) cell of xy; NoPathError when it is off the grid or too close to obstacles."""
    iy, ix = grid.cells(xy)
    inside = np.all(
        (xy >= grid.origin)
        & (xy < grid.origin + grid.cell_m * np.array(grid.clearance_m.shape[::-1]))
    )
    if not inside or grid.clearance_m[iy, ix] < min_clearance_m:
        raise NoPathError(
            f"{name} {_fmt(xy)} has less than {min_clearance_m} m clearance (inside or next to an "
            "obstacle or wall, or outside the floor)"
        )
    return int(iy), int(ix)


def path_length(path_xy: np.ndarray) -> float:
    return float(np.linalg.norm(np.diff(path_xy, axis=0), axis=1).sum())


def smooth(path_xy: np.ndarray, grid: FreeGrid, min_clearance_m: float) -> np.ndarray:
    """Greedy shortcutting: from each kept point jump to the farthest point still in clear sight."""
    out, i = [path_xy[0]], 0
    while i < len(path_xy) - 1:
        rest = path_xy[i + 1 :]
        clear = grid.segment_clearance(np.broadcast_to(path_xy[i], rest.shape), rest)
        ok = np.flatnonzero(clear >= min_clearance_m)
        i = i + 1 + (int(ok[-1]) if len(ok) else 0)
        out.append(path_xy[i])
    return np.array(out)


def astar(start, goal, neighbours, heuristic) -> tuple[list, int]:
    """A* from start to goal; `neighbours(n)` yields (node, cost). Returns (path, expanded)."""
    cost, parent, done = {start: 0.0}, {start: start}, set()
    heap = [(heuristic(start), 0, start)]
    tie = 1
    while heap:
        _, _, n = heapq.heappop(heap)
        if n in done:
            continue
        if n == goal:
            path = [n]
            while path[-1] != start:
                path.append(parent[path[-1]])
            return path[::-1], len(done)
        done.add(n)
        for m, w in neighbours(n):
            new = cost[n] + w
            if m not in done and new < cost.get(m, math.inf):
                cost[m], parent[m] = new, n
                heapq.heappush(heap, (new + heuristic(m), tie, m))
                tie += 1
    raise NoPathError(f"no path from {start} to {goal}")


class HierarchicalPlanner:
    """Room-level, then place-level A* on a scene graph, smoothed on the clearance grid."""

    def __init__(self, graph: dsg.DynamicSceneGraph, grid: FreeGrid, min_clearance_m: float):
        self.grid = grid
        self.min_clearance_m = min_clearance_m
        self.queries = SceneGraphQueries(graph)
        self.centre = {
            rid: np.array(r.polygon.centroid.coords[0]) for rid, r in self.queries.rooms.items()
        }
        doors = {}
        for node in graph.get_layer("STRUCTURES").nodes:
            meta = node.attributes.metadata.get()
            if meta.get("class") == layers.DOOR_LABEL:
                doors[meta["door_id"]] = np.array(node.attributes.position[:2])
        self.room_edges: dict[int, list[tuple[int, float]]] = {r: [] for r in self.centre}
        for edge in graph.get_layer(layers.ROOMS).edges:
            a = int(dsg.NodeSymbol(edge.source).category_id)
            b = int(dsg.NodeSymbol(edge.target).category_id)
            cost = min(
                np.linalg.norm(self.centre[a] - doors[d])
                + np.linalg.norm(doors[d] - self.centre[b])
                for d in edge.info.metadata.get()["doors"]
            )
            self.room_edges[a].append((b, float(cost)))
            self.room_edges[b].append((a, float(cost)))
        places = graph.get_layer(layers.PLACES)
        ids = sorted(int(n.id.category_id) for n in places.nodes)
        index = {p: k for k, p in enumerate(ids)}
        self.place_xy = np.zeros((len(ids), 2))
        self.place_room = np.zeros(len(ids), dtype=int)
        for node in places.nodes:
            k = index[int(node.id.category_id)]
            self.place_xy[k] = node.attributes.position[:2]
            self.place_room[k] = node.attributes.metadata.get()["room_id"]
        self.place_edges: list[list[tuple[int, float]]] = [[] for _ in ids]
        for edge in places.edges:
            a = index[int(dsg.NodeSymbol(edge.source).category_id)]
            b = index[int(dsg.NodeSymbol(edge.target).category_id)]
            self.place_edges[a].append((b, edge.info.weight))
            self.place_edges[b].append((a, edge.info.weight))
        self._room_list = self.place_room.tolist()
        self._tree = cKDTree(self.place_xy)

    def _room(self, xy: np.ndarray) -> int:
        room = self.queries.room_at(xy)
        if room is None:
            raise NoPathError(f"point {_fmt(xy)} is in no room of the scene graph")
        return room.room_id

    def _snap(self, xy: np.ndarray, allowed: set[int]) -> list[tuple[int, float]]:
        """(place, distance) of places of the allowed rooms in clear sight of xy, nearest first."""
        k = min(len(self.place_xy), _SNAP_CANDIDATES * 4)
        _, idx = self._tree.query(xy, k=k)
        cand = [int(i) for i in np.atleast_1d(idx) if self.place_room[i] in allowed]
        if not cand:
            return []
        pts = self.place_xy[cand]
        clear = self.grid.segment_clearance(np.broadcast_to(xy, pts.shape), pts)
        dist = np.linalg.norm(pts - xy, axis=1)
        ok = clear >= self.min_clearance_m
        keep = [(c, float(d)) for c, d, good in zip(cand, dist, ok, strict=True) if good]
        return keep[:_SNAP_CANDIDATES]

    def plan(self, start_xy, goal_xy) -> PlanResult:
        """A smoothed path from start to goal (world xy) through the rooms A* chooses."""
        start, goal = np.asarray(start_xy, float), np.asarray(goal_xy, float)
        for name, xy in (("start", start), ("goal", goal)):
            _require_clear(self.grid, name, xy, self.min_clearance_m)
        a, b = self._room(start), self._room(goal)
        try:
            rooms, expanded = astar(
                a,
                b,
                self.room_edges.__getitem__,
                lambda r: float(np.linalg.norm(self.centre[r] - self.centre[b])),
            )
        except NoPathError:
            names = self.queries.rooms[a].name, self.queries.rooms[b].name
            raise NoPathError(
                f"no path from {_fmt(start)} in room {names[0]} to {_fmt(goal)} in room "
                f"{names[1]}: no door or passage joins them"
            ) from None
        for allowed in (set(rooms), set(self.centre)):  # the chosen rooms, else every room
            found = self._place_path(start, goal, allowed)
            if found is not None:
                path = smooth(found[0], self.grid, self.min_clearance_m)
                return PlanResult(path, path_length(path), tuple(rooms), expanded + found[1])
        raise NoPathError(f"no place path from {_fmt(start)} to {_fmt(goal)}")

    def _place_path(
        self, start: np.ndarray, goal: np.ndarray, allowed: set[int]
    ) -> tuple[np.ndarray, int] | None:
        """A* over the places of the allowed rooms: (raw path, expanded), or None if cut off."""
        n = len(self.place_xy)
        xy = np.vstack([self.place_xy, start, goal])  # start = n, goal = n + 1
        first = dict(self._snap(start, allowed))
        last = dict(self._snap(goal, allowed))
        room = self._room_list

        def neighbours(p: int):
            if p == n:
                return first.items()
            out = [(q, w) for q, w in self.place_edges[p] if room[q] in allowed]
            return [*out, (n + 1, last[p])] if p in last else out

        px, py = xy[:, 0].tolist(), xy[:, 1].tolist()
        gx, gy = float(goal[0]), float(goal[1])
        try:
            nodes, count = astar(n, n + 1, neighbours, lambda p: math.hypot(px[p] - gx, py[p] - gy))
        except NoPathError:
            return None
        return xy[nodes], count


_STEPS = [(dy, dx) for dy in (-1, 0, 1) for dx in (-1, 0, 1) if dy or dx]


def plan_flat(grid: FreeGrid, start_xy, goal_xy, min_clearance_m: float) -> PlanResult:
    """8-connected A* over every grid cell with at least `min_clearance_m` clearance."""
    ny, nx_ = grid.clearance_m.shape
    free = np.zeros((ny + 2, nx_ + 2), dtype=bool)  # a blocked border: no bounds checks
    free[1:-1, 1:-1] = grid.clearance_m >= min_clearance_m
    width = nx_ + 2
    free_flat = free.ravel().tolist()
    cells = []
    for name, xy in (("start", start_xy), ("goal", goal_xy)):
        iy, ix = _require_clear(grid, name, np.asarray(xy, float), min_clearance_m)
        cells.append((iy + 1) * width + ix + 1)
    s, g = cells
    gy, gx = divmod(g, width)
    steps = [(dy * width + dx, math.hypot(dy, dx)) for dy, dx in _STEPS]
    cost = {s: 0.0}
    parent = {s: s}
    heap = [(0.0, s)]
    done = set()
    while heap:
        _, c = heapq.heappop(heap)
        if c in done:
            continue
        if c == g:
            break
        done.add(c)
        base = cost[c]
        for off, w in steps:
            n = c + off
            if not free_flat[n] or n in done:
                continue
            new = base + w
            if new < cost.get(n, math.inf):
                cost[n] = new
                parent[n] = c
                y, x = divmod(n, width)
                heapq.heappush(heap, (new + math.hypot(y - gy, x - gx), n))
    if g not in parent:
        raise NoPathError(f"no free-cell path from {_fmt(start_xy)} to {_fmt(goal_xy)}")
    chain = [g]
    while chain[-1] != s:
        chain.append(parent[chain[-1]])
    iy, ix = np.divmod(np.array(chain[::-1]), width)
    path = grid.centres(iy - 1, ix - 1)
    path[0], path[-1] = np.asarray(start_xy, float), np.asarray(goal_xy, float)
    return PlanResult(path, path_length(path), (), len(done))
