"""Flight planning: free space at flight altitude, a tour of rooms through door centres, a
shortcut and smoothed path, an open-view start pose, and its timing (`plan_flight`).

Geometry is checked exactly against obstacle footprints (shapely); a 2D grid with a distance
transform gives a conservative clearance field for the graph search. Paths are grid shortest
paths (scipy.sparse.csgraph.dijkstra, costlier near obstacles), pruned by exact line-of-sight
and smoothed by G2 cubic Bezier corner blends that are shrunk until they keep the clearance.
"""

from __future__ import annotations

import itertools
import logging
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import shapely
from scipy import ndimage
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components, dijkstra
from scipy.spatial.transform import Rotation

from twinsim.errors import TwinsimError
from twinsim.robots.drone import DroneConfig
from twinsim.robots.trajectory import Curve, MotionLimits, Trajectory, parametrize
from twinsim.scene.spec import (
    DoorSpec,
    GeomSpec,
    ObjectSpec,
    PathPoint,
    RoomSpec,
    geom_local_box,
)

_ROUND_TYPES = ("cylinder", "capsule", "sphere", "ellipsoid")
_N_POLY = 16
_UNIT_POLY = np.stack(
    [
        np.cos(np.arange(_N_POLY) * 2 * np.pi / _N_POLY),
        np.sin(np.arange(_N_POLY) * 2 * np.pi / _N_POLY),
    ],
    axis=1,
) / math.cos(math.pi / _N_POLY)  # circumscribes the unit circle
_BOX_CORNERS = np.array(list(itertools.product((-1.0, 1.0), repeat=3)))
_CURVE_DS_M = 0.005
_MAX_TURN_RAD = math.radians(135.0)
_CUSP_RAD = math.radians(150.0)  # sharper corners: stop and turn on the spot


log = logging.getLogger(__name__)

StartFilter = Callable[[np.ndarray], np.ndarray]


class PlanningError(TwinsimError):
    """No flight satisfies the request in this scene (unreachable rooms, no free space, ...)."""


@dataclass(frozen=True)
class PlannerOptions:
    """Planner tunables; the defaults suit GRADE's indoor drone (a 0.36 m square frame).

    Doors are crossed straight along their normal through the centre, between two approach
    points; only on that crossing may the clearance drop, to `door_clearance_m` (the frame's
    circumradius 0.25 m + margin), when the opening is narrower than twice the robot's
    clearance_m. Everywhere else the path keeps clearance_m.
    """

    cell_m: float = 0.05  # grid cell for the search
    clearance_z_m: float = 0.3  # half height of the band whose obstacles count
    door_clearance_m: float = 0.3  # least clearance on a door crossing
    margin_m: float = 0.03  # kept on top of clearance_m by polylines (half of it by blends)
    comfort_m: float = 0.25  # shortcuts keep clearance_m + this where the grid path did
    approach_m: tuple[float, ...] = (0.7, 0.55, 0.4)  # straight run either side of a door
    max_accel_mps2: float = 0.5
    max_lateral_accel_mps2: float = 0.5
    dt_s: float = 0.05  # spacing of the stored path points
    start_margin_m: float = 0.15  # start clearance on top of clearance_m
    min_view_m: float = 1.5  # free view ahead at the start
    via_candidates: int = 6  # routes through a room tried on the grid
    tour_attempts: int = 4  # tours tried before too few rooms is an error


@dataclass(frozen=True)
class StartPose:
    """Start position (x, y) and heading (rad) of the drone."""

    xy: np.ndarray
    yaw: float


@dataclass(frozen=True)
class FlightPlan:
    """The planned flight: start pose, timed path (for RobotSpec.path) and what it passes.

    `rooms_visited` lists the rooms entered within the requested duration, in order, the start
    room first (revisits repeat); `door_ids` the doors crossed to enter them. The path itself
    ends at rest a few seconds after the requested duration (`duration_s`).
    """

    start_pos: tuple[float, float, float]
    start_yaw: float
    path: tuple[PathPoint, ...]
    rooms_visited: list[int]
    door_ids: list[int]
    duration_s: float


# ---------------------------------------------------------------------------------- free space


def _rotation(quat: Sequence[float]) -> np.ndarray:
    return Rotation.from_quat(np.asarray(quat, dtype=float), scalar_first=True).as_matrix()


def geom_footprint(obj: ObjectSpec, geom: GeomSpec) -> tuple[shapely.Polygon, float, float]:
    """World xy footprint of a geom (exact for upright boxes, else conservative) and z range."""
    rot_obj = _rotation(obj.quat)
    rot = rot_obj @ _rotation(geom.quat)
    centre = np.asarray(obj.pos, dtype=float) + rot_obj @ np.asarray(geom.pos, dtype=float)
    _, half = geom_local_box(geom)
    if geom.type == "sphere":
        z_half, outline = half[0], _UNIT_POLY * half[0]
    else:
        z_half = float(np.abs(rot[2]) @ half)
        if geom.type in _ROUND_TYPES and abs(rot[2, 2]) > 1.0 - 1e-9:
            outline = (_UNIT_POLY * half[:2]) @ rot[:2, :2].T
        else:
            outline = (_BOX_CORNERS * half) @ rot[:2, :].T
    poly = shapely.convex_hull(shapely.multipoints(outline + centre[:2]))
    return poly, centre[2] - z_half, centre[2] + z_half


def _door_normal(door: DoorSpec) -> np.ndarray:
    return np.array([0.0, 1.0]) if door.axis == "x" else np.array([1.0, 0.0])


def _door_gap(door: DoorSpec, depth_m: float = 0.5) -> shapely.Polygon:
    """The opening of a door as a rectangle across the wall (bridges wall gaps between rooms)."""
    along = np.array([1.0, 0.0]) if door.axis == "x" else np.array([0.0, 1.0])
    half = along * door.width / 2 + _door_normal(door) * depth_m / 2
    lo = np.asarray(door.center) - np.abs(half)
    hi = np.asarray(door.center) + np.abs(half)
    return shapely.box(lo[0], lo[1], hi[0], hi[1])


class FreeSpace:
    """Where the drone's centre can be at flight altitude.

    `region` is the free area (rooms and door openings minus obstacle footprints, not inflated);
    exact clearances come from an STRtree of its boundary. `grid_clearance` is a conservative
    per-cell lower bound of the clearance (distance transform), used for graph search.
    """

    def __init__(
        self, region: shapely.Geometry, rooms: Sequence[RoomSpec], clearance_m: float, cell_m: float
    ) -> None:
        if region.is_empty:
            raise PlanningError("no free space at flight height: every room is blocked")
        self.region = region
        self.clearance_m = clearance_m
        self.cell_m = cell_m
        shapely.prepare(region)
        rings = shapely.get_rings(shapely.get_parts(region))
        segs = [
            np.stack([c[:-1], c[1:]], axis=1) for c in (shapely.get_coordinates(r) for r in rings)
        ]
        self._segments = shapely.linestrings(np.concatenate(segs))
        self._tree = shapely.STRtree(self._segments)

        polys = [shapely.Polygon(r.polygon) for r in rooms]
        bounds = np.array([p.bounds for p in polys])
        self.origin = bounds[:, :2].min(axis=0) - 2 * cell_m
        size = bounds[:, 2:].max(axis=0) + 2 * cell_m - self.origin
        self.shape = (math.ceil(size[1] / cell_m), math.ceil(size[0] / cell_m))  # (ny, nx)
        xs = self.origin[0] + (np.arange(self.shape[1]) + 0.5) * cell_m
        ys = self.origin[1] + (np.arange(self.shape[0]) + 0.5) * cell_m
        gx, gy = np.meshgrid(xs, ys)
        # a cell is blocked if any part of it is outside the free region: test its centre
        # against the region eroded by half a cell diagonal; EDT then under-estimates by <= that.
        half_diag = cell_m / math.sqrt(2.0)
        inside = shapely.contains_xy(region.buffer(-half_diag), gx, gy)
        self.grid_clearance = ndimage.distance_transform_edt(inside) * cell_m - half_diag
        self.room_of_cell = np.full(self.shape, -1, dtype=int)
        for room, poly in zip(rooms, polys, strict=True):
            hit = shapely.contains_xy(poly, gx, gy) & (self.room_of_cell < 0)
            self.room_of_cell[hit] = room.room_id

    def cell_index(self, xy: np.ndarray) -> int:
        """Flat index of the grid cell containing xy."""
        ix, iy = np.floor((np.asarray(xy) - self.origin) / self.cell_m).astype(int)
        return int(np.ravel_multi_index((iy, ix), self.shape))

    def cell_xy(self, flat: np.ndarray) -> np.ndarray:
        """Centres (N, 2) of grid cells given by flat indices."""
        iy, ix = np.unravel_index(np.asarray(flat), self.shape)
        return self.origin + (np.stack([ix, iy], axis=-1) + 0.5) * self.cell_m

    def clearance_at(self, xy: np.ndarray) -> float | np.ndarray:
        """Exact distance to the nearest obstacle or room boundary; negative inside obstacles."""
        pts = np.asarray(xy, dtype=float)
        flat = pts.reshape(-1, 2)
        _, dist = self._tree.query_nearest(
            shapely.points(flat), return_distance=True, all_matches=False
        )
        inside = shapely.contains_xy(self.region, flat[:, 0], flat[:, 1])
        out = np.where(inside, dist, -dist).reshape(pts.shape[:-1])
        return float(out) if out.ndim == 0 else out

    def is_free(self, xy: np.ndarray) -> bool | np.ndarray:
        """Whether the drone's centre may be at xy (clearance >= the robot's clearance_m)."""
        return np.asarray(self.clearance_at(xy)) >= self.clearance_m

    def segments_clear(
        self, a: np.ndarray, b: np.ndarray, min_clearance: float | np.ndarray
    ) -> np.ndarray:
        """Exactly whether each segment a->b[i] keeps at least `min_clearance` everywhere."""
        b = np.atleast_2d(np.asarray(b, dtype=float))
        a = np.broadcast_to(np.asarray(a, dtype=float), b.shape)
        lines = shapely.linestrings(np.stack([a, b], axis=1))
        dist = np.broadcast_to(np.asarray(min_clearance, dtype=float), (len(lines),))
        hit = self._tree.query(lines, predicate="dwithin", distance=dist)[0]
        ok = shapely.contains_xy(self.region, a[:, 0], a[:, 1])
        ok[hit] = False
        return ok

    def ray_lengths(self, xy: np.ndarray, yaws: np.ndarray, max_m: float = 10.0) -> np.ndarray:
        """Free length of rays from xy along each heading, up to the first obstacle (<= max_m)."""
        yaws = np.asarray(yaws, dtype=float)
        ends = np.asarray(xy) + max_m * np.stack([np.cos(yaws), np.sin(yaws)], axis=1)
        rays = shapely.linestrings(np.stack([np.broadcast_to(xy, ends.shape), ends], axis=1))
        ray_idx, seg_idx = self._tree.query(rays, predicate="intersects")
        hits = shapely.intersection(rays[ray_idx], self._segments[seg_idx])
        out = np.full(len(yaws), max_m)
        np.minimum.at(out, ray_idx, shapely.distance(shapely.points(xy), hits))
        return out


def build_free_space(
    rooms: Sequence[RoomSpec],
    doors: Sequence[DoorSpec],
    objects: Sequence[ObjectSpec],
    *,
    flight_height_m: float,
    clearance_m: float,
    clearance_z_m: float = 0.3,
    cell_m: float = 0.05,
) -> FreeSpace:
    """Free space in the band flight_height +- clearance_z: rooms and door gaps minus footprints.

    Obstacles are the geoms of every static object except floors and ceilings whose z range
    overlaps the band; dynamic objects (actors) are ignored.
    """
    z_lo, z_hi = flight_height_m - clearance_z_m, flight_height_m + clearance_z_m
    room_ids = {r.room_id for r in rooms}
    areas = [shapely.Polygon(r.polygon) for r in rooms]
    areas += [_door_gap(d) for d in doors if set(d.rooms) <= room_ids]
    blocks = []
    for obj in objects:
        if obj.dynamic or obj.semantic_class in ("floor", "ceiling"):
            continue
        for geom in obj.geoms:
            poly, z_min, z_max = geom_footprint(obj, geom)
            if z_max > z_lo and z_min < z_hi:
                blocks.append(poly)
    region = shapely.difference(shapely.union_all(areas), shapely.union_all(blocks))
    return FreeSpace(region, rooms, clearance_m, cell_m)


# ------------------------------------------------------------------------------- start pose


def open_heading(
    free_space: FreeSpace, xy: np.ndarray, preferred_yaw: float, min_view_m: float = 1.5
) -> float | None:
    """The heading closest to `preferred_yaw` whose free ray is at least min_view_m long."""
    offsets = np.radians(np.arange(0, 181, 5))
    yaws = preferred_yaw + np.stack([offsets, -offsets], axis=1).ravel()
    ok = free_space.ray_lengths(xy, yaws) >= min_view_m
    return float(math.remainder(yaws[np.argmax(ok)], 2 * math.pi)) if ok.any() else None


def choose_start(
    free_space: FreeSpace,
    rng: np.random.Generator,
    *,
    candidates: np.ndarray | None = None,
    preferred_yaw: float | None = None,
    margin_m: float = 0.15,
    min_view_m: float = 1.5,
    max_tries: int = 200,
) -> StartPose:
    """A random start with clearance >= clearance_m + margin_m whose view ray is >= min_view_m.

    `candidates` (N, 2) restricts the positions (default: every grid cell in a room); the yaw is
    the open heading closest to `preferred_yaw`, or a random open heading.
    """
    if candidates is None:
        flat = np.flatnonzero(free_space.room_of_cell >= 0)
        candidates = free_space.cell_xy(flat)
    clear = free_space.clearance_at(candidates) if len(candidates) else np.zeros(0)
    pool = candidates[clear >= free_space.clearance_m + margin_m]
    for i in rng.permutation(len(pool))[:max_tries]:
        wish = float(rng.uniform(-math.pi, math.pi)) if preferred_yaw is None else preferred_yaw
        yaw = open_heading(free_space, pool[i], wish, min_view_m)
        if yaw is not None:
            return StartPose(xy=pool[i].copy(), yaw=yaw)
    raise PlanningError(
        f"no start position with clearance >= {free_space.clearance_m + margin_m:.2f} m and a "
        f"{min_view_m} m open view ({len(pool)} of {len(candidates)} candidates are clear)"
    )


# ------------------------------------------------------------------------------------ graphs


class _RoomGraph:
    """Free cells of one room as an 8-connected graph, costlier near obstacles; cached searches."""

    def __init__(self, fs: FreeSpace, room_id: int, node_min: float, prefer_m: float) -> None:
        mask = (fs.room_of_cell == room_id) & (fs.grid_clearance >= node_min)
        self.cells = np.flatnonzero(mask)
        self.xy = fs.cell_xy(self.cells)
        self.clear = fs.grid_clearance.ravel()[self.cells]
        ids = np.full(mask.shape, -1)
        ids.ravel()[self.cells] = np.arange(len(self.cells))
        ny, nx = mask.shape
        src, dst, cost = [], [], []
        for dy, dx in ((0, 1), (1, 0), (1, 1), (1, -1)):
            a = ids[: ny - dy, max(0, -dx) : nx - max(0, dx)].ravel()
            b = ids[dy:, max(0, dx) : nx - max(0, -dx)].ravel()
            keep = (a >= 0) & (b >= 0)
            a, b = a[keep], b[keep]
            low = np.minimum(self.clear[a], self.clear[b])
            near = np.clip((prefer_m - low) / (prefer_m - node_min), 0.0, 1.0)
            src.append(a)
            dst.append(b)
            cost.append(math.hypot(dy, dx) * fs.cell_m * (1.0 + 2.0 * near))
        n = len(self.cells)
        self.graph = csr_matrix(
            (np.concatenate(cost), (np.concatenate(src), np.concatenate(dst))), shape=(n, n)
        )
        _, self.comp = connected_components(self.graph, directed=False)
        self._pred: dict[int, np.ndarray] = {}

    def node_at(self, fs: FreeSpace, xy: np.ndarray) -> int:
        """Node id of the (free) cell containing xy."""
        return int(np.searchsorted(self.cells, fs.cell_index(xy)))

    def snap(self, fs: FreeSpace, xy: np.ndarray, min_clear: float) -> int | None:
        """Nearest node joined to xy by a clear straight segment, if any within 0.5 m."""
        d = np.linalg.norm(self.xy - xy, axis=1)
        near = np.argsort(d)[:40]
        near = near[d[near] <= 0.5]
        if len(near) == 0:
            return None
        ok = fs.segments_clear(xy, self.xy[near], min_clear)
        return int(near[np.argmax(ok)]) if ok.any() else None

    def path(self, a: int, b: int) -> np.ndarray:
        """Node ids of the cheapest path a -> b (empty if there is none)."""
        if b in self._pred and a not in self._pred:
            return self.path(b, a)[::-1]
        if a not in self._pred:
            _, self._pred[a] = dijkstra(
                self.graph, directed=False, indices=a, return_predecessors=True
            )
        pred = self._pred[a]
        out = [b]
        while out[-1] != a:
            if pred[out[-1]] < 0:
                return np.zeros(0, dtype=int)
            out.append(int(pred[out[-1]]))
        return np.array(out[::-1])


@dataclass(frozen=True)
class _Anchor:
    """A hard point of the route (door centre, start or via point) and its grid node.

    For a door, `approach` is the point in front of it on this room's side, on the door normal.
    """

    point: np.ndarray
    node: int
    approach: np.ndarray | None = None
    door_id: int | None = None


Place = tuple[int, int]  # (room id, connected component of the room's free grid)


@dataclass
class _TourState:
    """The route built so far: legs (polylines), where it stands and what it visited."""

    place: Place
    entry: _Anchor
    legs: list[np.ndarray] = field(default_factory=list)
    rooms: list[int] = field(default_factory=list)
    doors: list[int] = field(default_factory=list)
    visits: dict[int, int] = field(default_factory=dict)
    length_m: float = 0.0


def _turn_angles(pts: np.ndarray) -> np.ndarray:
    d = np.diff(pts, axis=0)
    ang = np.arctan2(d[:, 1], d[:, 0])
    return np.abs(np.remainder(np.diff(ang) + np.pi, 2 * np.pi) - np.pi)


def _length(pts: np.ndarray) -> float:
    return float(np.linalg.norm(np.diff(pts, axis=0), axis=1).sum())


def _split_at_cusps(route: np.ndarray) -> list[np.ndarray]:
    """Pieces of a polyline between corners too sharp to fly round (turned on the spot)."""
    cusps = np.flatnonzero(_turn_angles(route) > _CUSP_RAD) + 1
    bounds = [0, *cusps.tolist(), len(route) - 1]
    return [route[a : b + 1] for a, b in itertools.pairwise(bounds)]


class _Planner:
    """Room graphs, passable doors, and the construction of the tour and its legs."""

    def __init__(
        self,
        fs: FreeSpace,
        rooms: Sequence[RoomSpec],
        doors: Sequence[DoorSpec],
        cfg: DroneConfig,
        opt: PlannerOptions,
    ) -> None:
        self.fs, self.opt = fs, opt
        self.c_min = cfg.clearance_m + opt.margin_m
        self.door_min = min(self.c_min, opt.door_clearance_m)
        self.comfort = cfg.clearance_m + opt.comfort_m
        self.speed, self.yaw_rate = cfg.max_speed_mps, math.radians(cfg.max_yaw_rate_dps)
        node_min = self.c_min + opt.cell_m / math.sqrt(2.0)
        self.graphs = {
            r.room_id: _RoomGraph(fs, r.room_id, node_min, node_min + 0.5) for r in rooms
        }
        self.polygons = {r.room_id: shapely.Polygon(r.polygon) for r in rooms}
        self.problems = [
            f"room {r} has no free space at flight height (too cluttered or too small)"
            for r, g in self.graphs.items()
            if len(g.cells) == 0
        ]
        self.door_centres = {d.door_id: np.asarray(d.center, dtype=float) for d in doors}
        self.anchors: dict[tuple[int, int], _Anchor] = {}
        self.exits: dict[Place, list[tuple[int, Place]]] = {}
        for door in doors:
            self._add_door(door)

    def _add_door(self, door: DoorSpec) -> None:
        a, b = door.rooms
        if a not in self.graphs or b not in self.graphs:
            return
        centre = np.asarray(door.center, dtype=float)
        gap = self.fs.clearance_at(centre)
        if gap < self.door_min:
            self.problems.append(
                f"door {door.door_id} between rooms {a} and {b} is too narrow: {door.width:.2f} m "
                f"wide leaves {gap:.2f} m clearance at its centre, needs {self.door_min:.2f} m"
            )
            return
        sides = {}
        for room in (a, b):
            sides[room] = self._door_anchor(door, room, centre)
            if sides[room] is None:
                self.problems.append(
                    f"door {door.door_id} between rooms {a} and {b}: no free space "
                    f"(clearance {self.c_min:.2f} m) in front of it in room {room}"
                )
                return
        for room, other in ((a, b), (b, a)):
            self.anchors[door.door_id, room] = sides[room]
            here = (room, int(self.graphs[room].comp[sides[room].node]))
            there = (other, int(self.graphs[other].comp[sides[other].node]))
            self.exits.setdefault(here, []).append((door.door_id, there))

    def _door_anchor(self, door: DoorSpec, room: int, centre: np.ndarray) -> _Anchor | None:
        """Approach point on the door normal in `room`, joined to the room's grid, if any."""
        normal = _door_normal(door)
        if not shapely.contains_xy(self.polygons[room], *(centre + 0.3 * normal)):
            normal = -normal
        for dist in self.opt.approach_m:
            approach = centre + dist * normal
            if self.fs.clearance_at(approach) < self.c_min:
                continue
            if not self.fs.segments_clear(centre, approach, self.door_min)[0]:
                continue
            node = self.graphs[room].snap(self.fs, approach, self.c_min)
            if node is not None:
                return _Anchor(point=centre, node=node, approach=approach, door_id=door.door_id)
        return None

    def reachable_rooms(self, place: Place) -> set[int]:
        """Rooms reachable from `place` through passable doors (including its own)."""
        seen, todo = {place}, [place]
        while todo:
            for _, nxt in self.exits.get(todo.pop(), []):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return {room for room, _ in seen}

    def _first_hops(self, place: Place, visited: set[int]) -> set[int]:
        """Doors out of `place` that begin a fewest-doors way to an unvisited room."""
        hops: dict[Place, set[int]] = {place: set()}
        layer, found = [place], set()
        while layer and not found:
            nxt_layer: dict[Place, set[int]] = {}
            for cur in layer:
                for door_id, nxt in self.exits.get(cur, []):
                    if nxt in hops:
                        continue
                    via = {door_id} if cur == place else hops[cur]
                    nxt_layer.setdefault(nxt, set()).update(via)
                    if nxt[0] not in visited:
                        found |= via
            hops.update(nxt_layer)
            layer = list(nxt_layer)
        return found

    def _next_door(
        self, state: _TourState, need: int, rng: np.random.Generator
    ) -> tuple[int, Place]:
        """Door to take: towards unvisited rooms (the nearest while fewer than `need` are
        visited, else a random one); once all are visited, to a least-visited room, not back."""
        exits = self.exits[state.place]
        toward_new = self._first_hops(state.place, set(state.rooms))
        if toward_new:
            options = [e for e in exits if e[0] in toward_new]
            if len(set(state.rooms)) < need:
                dist = [
                    np.linalg.norm(self.door_centres[e[0]] - state.entry.point) for e in options
                ]
                return options[int(np.argmin(dist))]
        else:
            came_from = state.rooms[-2] if len(state.rooms) > 1 else None
            options = [e for e in exits if e[1][0] != came_from] or exits
            least = min(state.visits.get(e[1][0], 0) for e in options)
            options = [e for e in options if state.visits.get(e[1][0], 0) == least]
        return options[rng.integers(len(options))]

    def _link(
        self, graph: _RoomGraph, a: np.ndarray, a_node: int, b: np.ndarray, b_node: int
    ) -> np.ndarray | None:
        """Pruned polyline a -> b through the room's grid (a and b joined to their nodes)."""
        if np.array_equal(a, b):
            return a[None]
        nodes = graph.path(a_node, b_node)
        if len(nodes) == 0:
            return None
        pts = np.vstack([a, graph.xy[nodes], b])
        pts = pts[np.concatenate([[True], np.any(np.diff(pts, axis=0) != 0.0, axis=1)])]
        return self._prune(pts, self.fs.clearance_at(pts))

    def _chain(
        self, graph: _RoomGraph, entry: _Anchor, vias: list[int], exit_: _Anchor | None
    ) -> np.ndarray | None:
        """Polyline entry -> vias -> exit door, or None if a part is unreachable.

        Door crossings run straight from the door centre to its approach point; between
        approach points and vias the route follows pruned grid paths.
        """
        first = entry.approach if entry.approach is not None else entry.point
        stops = [(first, entry.node), *((graph.xy[v], v) for v in vias)]
        if exit_ is not None:
            stops.append((exit_.approach, exit_.node))
        out = [entry.point[None], first[None]] if entry.approach is not None else [first[None]]
        for (a, a_node), (b, b_node) in itertools.pairwise(stops):
            link = self._link(graph, a, a_node, b, b_node)
            if link is None:
                return None
            out.append(link[1:])
        if exit_ is not None:
            out.append(exit_.point[None])
        return np.concatenate(out)

    def _prune(self, pts: np.ndarray, clear: np.ndarray) -> np.ndarray:
        """Line-of-sight shortcuts that keep min(comfort, the skipped part's clearance)."""
        keep, i = [0], 0
        while i < len(pts) - 1:
            js = np.arange(i + 1, min(len(pts), i + 400))
            low = np.minimum.accumulate(np.minimum(clear[js], clear[i]))
            need = np.clip(low - 1e-6, self.c_min, max(self.comfort, self.c_min))
            need[js == len(pts) - 1] = self.c_min  # reach the end point directly if at all clear
            ok = self.fs.segments_clear(pts[i], pts[js], need)
            ok[0] = True  # neighbours on the route are joined by clear segments already
            i = int(js[np.flatnonzero(ok)[-1]])
            keep.append(i)
        return pts[keep]

    def _cost(self, pts: np.ndarray) -> tuple[bool, float]:
        """(has a corner sharper than 135 deg, rough flight time) of a polyline."""
        pts = pts[np.concatenate([[True], np.any(np.diff(pts, axis=0) != 0.0, axis=1)])]
        turns = _turn_angles(pts)
        stops = np.count_nonzero(turns > _CUSP_RAD)
        time_s = _length(pts) / self.speed + turns.sum() / self.yaw_rate + 3.0 * stops
        return bool(turns.max(initial=0.0) > _MAX_TURN_RAD), time_s

    def leg(
        self, state: _TourState, exit_: _Anchor | None, rng: np.random.Generator
    ) -> tuple[np.ndarray, int | None]:
        """Polyline through the current room and its last via node.

        Rooms entered by a door are crossed via a random roomy point (or two forming a loop, if
        left by the same door), ranked among random candidates by the rough flight time of the
        straight-line route, avoiding sharp corners, then checked on the real route; the start
        leg goes straight to the exit door.
        """
        room, comp = state.place
        graph, entry = self.graphs[room], state.entry
        prev = state.legs[-1][-2] if state.legs else None
        if entry.door_id is None and exit_ is not None:
            options: list[list[int]] = [[]]
        else:
            members = np.flatnonzero(graph.comp == comp)
            far = np.linalg.norm(graph.xy[members] - graph.xy[entry.node], axis=1) > 1.0
            roomy = far & (graph.clear[members] >= self.comfort)
            pool = members[roomy] if roomy.any() else members[far] if far.any() else members
            picks = [int(v) for v in pool[rng.permutation(len(pool))[:12]]]
            same_door = exit_ is not None and exit_.door_id == entry.door_id
            options = [[v] for v in picks]  # out and back if left by the same door
            if same_door:  # or a loop, if one fits
                options += [
                    [a, b]
                    for a, b in itertools.permutations(picks, 2)
                    if np.linalg.norm(graph.xy[a] - graph.xy[b]) >= 1.0
                ]
            head = [entry.point, entry.approach if entry.approach is not None else entry.point]
            head = [prev, *head] if prev is not None else head
            tail = [exit_.approach, exit_.point] if exit_ is not None else []
            options = sorted(
                options, key=lambda vias: self._cost(np.vstack([*head, graph.xy[vias], *tail]))
            )[: self.opt.via_candidates]
            if exit_ is not None and not same_door:
                options.append([])
        best, best_cost = None, (True, math.inf)
        for vias in options:
            pts = self._chain(graph, entry, vias, exit_)
            if pts is None:
                continue
            cost = self._cost(pts if prev is None else np.vstack([prev, pts]))
            if cost < best_cost:
                best, best_cost = (pts, vias[-1] if vias else None), cost
            if not cost[0]:
                break
        if best is None:
            raise PlanningError(f"room {room}: no free path from its entry to its exit")
        return best

    def extend(
        self, state: _TourState, target_m: float, need: int, rng: np.random.Generator
    ) -> None:
        """Add legs through further rooms until the route is long enough and visits `need` rooms."""
        while state.length_m < target_m or len(set(state.rooms)) < need:
            if len(state.legs) >= 1000:
                raise PlanningError("route does not converge (1000 legs)")
            if state.place not in self.exits:  # a closed room: wander between via points
                pts, via = self.leg(state, None, rng)
                state.entry = _Anchor(point=pts[-1], node=via)
            else:
                door_id, nxt = self._next_door(state, need, rng)
                pts, _ = self.leg(state, self.anchors[door_id, state.place[0]], rng)
                state.place, state.entry = nxt, self.anchors[door_id, nxt[0]]
                state.rooms.append(nxt[0])
                state.doors.append(door_id)
                state.visits[nxt[0]] = state.visits.get(nxt[0], 0) + 1
            state.legs.append(pts)
            state.length_m += _length(pts)

    def finish(self, state: _TourState, rng: np.random.Generator) -> np.ndarray:
        """The whole route: the legs so far and a last leg to a via point of the current room."""
        last, _ = self.leg(state, None, rng)
        parts = [*state.legs, last]
        return np.concatenate([parts[0]] + [p[1:] for p in parts[1:]])


# ------------------------------------------------------------------------------ smoothing


def _bezier(t1: np.ndarray, v: np.ndarray, t2: np.ndarray, n: int) -> tuple[np.ndarray, ...]:
    """Samples of the cubic Bezier (t1, v, v, t2): points, first and second derivatives."""
    u = np.linspace(0.0, 1.0, n)[:, None]
    p = (1 - u) ** 3 * t1 + 3 * (1 - u) * u * v + u**3 * t2
    d1 = 3 * (1 - u) ** 2 * (v - t1) + 3 * u**2 * (t2 - v)
    d2 = 6 * (1 - u) * (t1 - v) + 6 * u * (t2 - v)
    return p, d1, d2


def smooth_path(fs: FreeSpace, poly: np.ndarray, min_clear: float, guaranteed: float) -> Curve:
    """G2 curve: each polyline corner replaced by a cubic Bezier blend keeping >= min_clear.

    The blend (T1, V, V, T2) is tangent to both legs with zero end curvature and stays within
    its tangent length L of the corner V, so L <= `guaranteed` (corner clearance minus
    min_clear) always passes; longer blends are checked exactly and halved until they pass.
    """
    poly = poly[np.concatenate([[True], np.linalg.norm(np.diff(poly, axis=0), axis=1) > 1e-9])]
    seg_len = np.linalg.norm(np.diff(poly, axis=0), axis=1)
    unit = np.diff(poly, axis=0) / seg_len[:, None]
    corners = np.flatnonzero(_turn_angles(poly) > 1e-6) + 1
    tangent = np.minimum(np.minimum(seg_len[corners - 1], seg_len[corners]) * 0.5, 1.5)
    pieces = [(poly[:1], unit[:1], np.zeros(1))]
    for k, c in enumerate(corners):
        while True:
            t_len = tangent[k]
            n = int(300 * t_len) + 16
            p, d1, d2 = _bezier(
                poly[c] - t_len * unit[c - 1], poly[c], poly[c] + t_len * unit[c], n
            )
            if t_len <= guaranteed or np.min(fs.clearance_at(p)) >= min_clear:
                break
            tangent[k] = max(guaranteed, 0.5 * t_len)
        cross = d1[:, 0] * d2[:, 1] - d1[:, 1] * d2[:, 0]
        pieces.append((p, d1, cross / np.linalg.norm(d1, axis=1) ** 3))
    pieces.append((poly[-1:], unit[-1:], np.zeros(1)))
    xy, tan, curv = (np.concatenate(parts) for parts in zip(*pieces, strict=True))
    sel = np.concatenate([[True], np.linalg.norm(np.diff(xy, axis=0), axis=1) > 1e-12])
    xy, tan, curv = xy[sel], tan[sel], curv[sel]
    s = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(xy, axis=0), axis=1))])
    heading = np.unwrap(np.arctan2(tan[:, 1], tan[:, 0]))
    s_u = np.linspace(0.0, s[-1], max(2, math.ceil(s[-1] / _CURVE_DS_M) + 1))
    return Curve(
        s=s_u,
        xy=np.stack([np.interp(s_u, s, xy[:, 0]), np.interp(s_u, s, xy[:, 1])], axis=1),
        heading=np.interp(s_u, s, heading),
        curvature=np.interp(s_u, s, curv),
    )


# ------------------------------------------------------------------------------ top level


def plan_flight(
    *,
    rooms: Sequence[RoomSpec],
    doors: Sequence[DoorSpec],
    objects: Sequence[ObjectSpec],
    wall_height: float,
    robot_cfg: DroneConfig,
    duration_s: float,
    rng: np.random.Generator,
    options: PlannerOptions | None = None,
    start_allowed: StartFilter | None = None,
) -> FlightPlan:
    """Plan a collision-free flight of at least duration_s through >= min_rooms_visited rooms.

    A flight too short to reach that many rooms enters as many as fit (a warning is logged;
    `FlightPlan.rooms_visited` says which). `start_allowed` (N, 2) → (N,) bool keeps the start
    away from places it must avoid, such as people's walking traces.

    The drone starts at rest at flight height facing open space (>= min_view_m), turns on the
    spot if that differs from the route's first direction (and at corners too sharp to fly
    round), and flies through door centres facing where it goes. All randomness is from `rng`.
    """
    opt = options or PlannerOptions()
    if not rooms:
        raise PlanningError("the scene has no rooms to fly in")
    h, cz = robot_cfg.flight_height_m, opt.clearance_z_m
    lowest_door = min((d.height for d in doors), default=wall_height)
    if h - cz <= 0.0 or h + cz >= min(wall_height, lowest_door):
        raise PlanningError(
            f"flight band {h - cz:.2f}..{h + cz:.2f} m must lie between the floor and "
            f"min(ceiling {wall_height:.2f} m, lowest door {lowest_door:.2f} m)"
        )
    fs = build_free_space(
        rooms,
        doors,
        objects,
        flight_height_m=h,
        clearance_m=robot_cfg.clearance_m,
        clearance_z_m=cz,
        cell_m=opt.cell_m,
    )
    planner = _Planner(fs, rooms, doors, robot_cfg, opt)
    need = min(robot_cfg.min_rooms_visited, len(rooms))
    best: FlightPlan | None = None
    for _ in range(opt.tour_attempts):
        plan = _fly(fs, planner, robot_cfg, opt, need, duration_s, rng, start_allowed)
        if len(set(plan.rooms_visited)) >= need:
            return plan
        if best is None or len(set(plan.rooms_visited)) > len(set(best.rooms_visited)):
            best = plan
    # A flight too short for the requested tour still flies: it enters as many rooms as fit.
    log.warning(
        "in %s s the flight enters %d of the %d rooms requested (each 90 deg turn takes >= %.0f s)",
        duration_s,
        len(set(best.rooms_visited)),
        need,
        90 / robot_cfg.max_yaw_rate_dps,
    )
    return best


def _fly(
    fs: FreeSpace,
    planner: _Planner,
    cfg: DroneConfig,
    opt: PlannerOptions,
    need: int,
    duration_s: float,
    rng: np.random.Generator,
    start_allowed: StartFilter | None,
) -> FlightPlan:
    """One random tour from a random start, timed and cut after duration_s; rooms entered."""
    state = _start_state(fs, planner, need, opt, rng, start_allowed)
    limits = MotionLimits(
        max_speed_mps=cfg.max_speed_mps,
        max_yaw_rate_dps=cfg.max_yaw_rate_dps,
        max_accel_mps2=opt.max_accel_mps2,
        max_lateral_accel_mps2=opt.max_lateral_accel_mps2,
    )
    target_m = 0.8 * cfg.max_speed_mps * duration_s
    for _ in range(10):
        planner.extend(state, target_m, need, rng)
        route = planner.finish(state, rng)
        curves = [
            smooth_path(fs, piece, cfg.clearance_m + opt.margin_m / 2, opt.margin_m / 2)
            for piece in _split_at_cusps(route)
        ]
        first = route[1] - route[0]
        yaw = open_heading(fs, route[0], math.atan2(first[1], first[0]), opt.min_view_m)
        if yaw is None:  # the start was chosen with an open view, so this cannot be None
            raise PlanningError(f"start {route[0]} lost its open view")
        points = parametrize(
            curves,
            limits,
            z_m=cfg.flight_height_m,
            start_yaw=yaw,
            dt_s=opt.dt_s,
            stop_after_s=duration_s,
        )
        if points[-1].t_s >= duration_s:
            break
        target_m = state.length_m + (duration_s - points[-1].t_s + 2.0) * cfg.max_speed_mps
    else:
        raise PlanningError(f"could not make a route lasting {duration_s} s")
    traj = Trajectory(points)
    t = np.arange(0.0, traj.duration_s, 0.02)
    xy = traj.sample(t).pos[:, :2]
    crossed = [planner.door_centres[d] for d in state.doors]
    _verify(fs, xy, cfg.clearance_m, planner.door_min, crossed, opt)
    n_doors = _doors_crossed(xy[t <= duration_s], crossed)
    return FlightPlan(
        start_pos=points[0].pos,
        start_yaw=points[0].yaw,
        path=points,
        rooms_visited=state.rooms[: n_doors + 1],
        door_ids=state.doors[:n_doors],
        duration_s=points[-1].t_s,
    )


def _doors_crossed(xy: np.ndarray, centres: list[np.ndarray]) -> int:
    """How many of the route's door crossings, in order, the positions pass (within 2 cm)."""
    i = 0
    for k, centre in enumerate(centres):
        dist = np.linalg.norm(xy[i:] - centre, axis=1)
        hits = np.flatnonzero(dist <= 0.02)
        if len(hits) == 0:
            return k
        away = np.flatnonzero(dist[hits[0] :] > 0.3)  # leave the doorway before the next one
        i += int(hits[0] + (away[0] if len(away) else len(dist)))
    return len(centres)


def _start_state(
    fs: FreeSpace,
    planner: _Planner,
    need: int,
    opt: PlannerOptions,
    rng: np.random.Generator,
    start_allowed: StartFilter | None,
) -> _TourState:
    """Pick the start among places from which `need` rooms are reachable; the tour's origin."""
    pool, best = [], set()
    for room_id, graph in planner.graphs.items():
        for comp in np.unique(graph.comp):
            reach = planner.reachable_rooms((room_id, int(comp)))
            best = max(best, reach, key=len)
            if len(reach) >= need:
                pool.append(graph.xy[graph.comp == comp])
    if not pool:
        raise PlanningError(
            f"cannot visit {need} rooms: at most {len(best)} are connected ({sorted(best)}); "
            + "; ".join(planner.problems)
        )
    pool_xy = np.concatenate(pool)
    doorways = np.array(list(planner.door_centres.values())).reshape(-1, 2)
    if len(doorways):  # keep the start out of doorways and their approach lines
        near = np.linalg.norm(pool_xy[:, None] - doorways[None], axis=2).min(axis=1) < 1.0
        pool_xy = pool_xy[~near] if not near.all() else pool_xy
    if start_allowed is not None:
        allowed = start_allowed(pool_xy)
        if not allowed.any():
            raise PlanningError("no start position is clear of the people's walking traces")
        pool_xy = pool_xy[allowed]
    start = choose_start(
        fs,
        rng,
        candidates=pool_xy,
        margin_m=opt.start_margin_m,
        min_view_m=opt.min_view_m,
    )
    room = int(fs.room_of_cell.ravel()[fs.cell_index(start.xy)])
    graph = planner.graphs[room]
    node = graph.node_at(fs, start.xy)
    return _TourState(
        place=(room, int(graph.comp[node])),
        entry=_Anchor(point=graph.xy[node], node=node),
        rooms=[room],
        visits={room: 1},
    )


def _verify(
    fs: FreeSpace,
    xy: np.ndarray,
    clearance_m: float,
    door_min: float,
    door_centres: list[np.ndarray],
    opt: PlannerOptions,
) -> None:
    """Check sampled reference positions keep their clearance; a failure is a planner bug."""
    need = np.full(len(xy), clearance_m)
    for centre in door_centres:  # door crossings may be narrower (5 mm for spline sampling)
        near = np.linalg.norm(xy - centre, axis=1) <= max(opt.approach_m) + 0.01
        need[near] = min(clearance_m, door_min - 0.005)
    clear = fs.clearance_at(xy)
    if np.any(clear < need):
        k = int(np.argmin(clear - need))
        raise PlanningError(
            f"planned path passes {clear[k]:.3f} m from an obstacle at {xy[k]} "
            f"(needs {need[k]:.3f} m)"
        )
