"""The tour of a robot: free cells of each area as a graph, door crossings, and the legs of a
route through rooms (through door centres) or, in a world without rooms, between via points
spread over the free floor (`TourPlanner`, used by `twinsim.robots.common.planner.plan_tour`).

Paths are grid shortest paths (scipy.sparse.csgraph.dijkstra, costlier near obstacles), pruned
by exact line-of-sight against the free region (`twinsim.scene.free_space.FreeSpace`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import shapely
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components, dijkstra

from twinsim.errors import PlanningError
from twinsim.model.scene import DoorSpec
from twinsim.scene.free_space import FreeSpace, door_normal

_MAX_TURN_RAD = math.radians(135.0)
CUSP_RAD = math.radians(150.0)  # sharper corners: stop and turn on the spot
SPREAD_M = 2.5  # in a world without rooms, via points keep this far from the route so far
MAX_LEGS = 1000  # a route has at most this many legs: what bounds a tour's length


class RouteTooLongError(PlanningError):
    """The route would need more than `legs` (MAX_LEGS) legs, which reach `length_m`."""

    def __init__(self, legs: int, length_m: float) -> None:
        super().__init__(f"route longer than {legs} legs ({length_m:.0f} m)")
        self.legs, self.length_m = legs, length_m


@dataclass(frozen=True)
class TourRequest:
    """What a tour is planned for, whatever the robot: the band of heights its body occupies
    (`band_centre_m` ± `band_half_m`: obstacles overlapping it count), the clearance its
    centre keeps from them, its speed and yaw-rate limits, the height of the reference point
    its path gives (`path_z_m`) and how many rooms it should enter where the world has rooms.
    """

    band_centre_m: float
    band_half_m: float
    clearance_m: float
    max_speed_mps: float
    max_yaw_rate_dps: float
    path_z_m: float
    min_rooms_visited: int = 1


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


# ------------------------------------------------------------------------------------ graphs


class AreaGraph:
    """Free cells of one area (a room) as an 8-connected graph, costlier near obstacles; cached
    searches."""

    def __init__(self, fs: FreeSpace, area_id: int, node_min: float, prefer_m: float) -> None:
        mask = (fs.room_of_cell == area_id) & (fs.grid_clearance >= node_min)
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
class Anchor:
    """A hard point of the route (door centre, start or via point) and its grid node.

    For a door, `approach` is the point in front of it on this room's side, on the door normal.
    """

    point: np.ndarray
    node: int
    approach: np.ndarray | None = None
    door_id: int | None = None


Place = tuple[int, int]  # (area id, connected component of the area's free grid)


@dataclass
class TourState:
    """The route built so far: legs (polylines), where it stands and what it visited."""

    place: Place
    entry: Anchor
    legs: list[np.ndarray] = field(default_factory=list)
    rooms: list[int] = field(default_factory=list)
    doors: list[int] = field(default_factory=list)
    visits: dict[int, int] = field(default_factory=dict)
    length_m: float = 0.0


def turn_angles(pts: np.ndarray) -> np.ndarray:
    """Absolute turn (rad) at each inner corner of a polyline."""
    d = np.diff(pts, axis=0)
    ang = np.arctan2(d[:, 1], d[:, 0])
    return np.abs(np.remainder(np.diff(ang) + np.pi, 2 * np.pi) - np.pi)


def path_length(pts: np.ndarray) -> float:
    """Length of a polyline."""
    return float(np.linalg.norm(np.diff(pts, axis=0), axis=1).sum())


def split_at_cusps(route: np.ndarray) -> list[np.ndarray]:
    """Pieces of a polyline between corners too sharp to fly round (turned on the spot)."""
    cusps = np.flatnonzero(turn_angles(route) > CUSP_RAD) + 1
    bounds = [0, *cusps.tolist(), len(route) - 1]
    return [route[a : b + 1] for a, b in itertools.pairwise(bounds)]


class TourPlanner:
    """Area graphs, passable doors, and the construction of the tour and its legs.

    `areas` are (id, polygon) pairs: the rooms, or the whole floor of a world without rooms;
    with `spread`, via points keep away from the route so far (a tour over open floor).
    """

    def __init__(
        self,
        fs: FreeSpace,
        areas: Sequence[tuple[int, shapely.Geometry]],
        doors: Sequence[DoorSpec],
        cfg: TourRequest,
        opt: PlannerOptions,
        spread: bool = False,
    ) -> None:
        self.fs, self.opt, self.spread = fs, opt, spread
        self.c_min = cfg.clearance_m + opt.margin_m
        self.door_min = min(self.c_min, opt.door_clearance_m)
        self.comfort = cfg.clearance_m + opt.comfort_m
        self.speed, self.yaw_rate = cfg.max_speed_mps, math.radians(cfg.max_yaw_rate_dps)
        node_min = self.c_min + opt.cell_m / math.sqrt(2.0)
        self.graphs = {a: AreaGraph(fs, a, node_min, node_min + 0.5) for a, _ in areas}
        self.polygons = dict(areas)
        self.problems = [
            f"room {r} has no free space for the robot (too cluttered or too small)"
            for r, g in self.graphs.items()
            if len(g.cells) == 0
        ]
        self.door_centres = {d.door_id: np.asarray(d.center, dtype=float) for d in doors}
        self.anchors: dict[tuple[int, int], Anchor] = {}
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

    def _door_anchor(self, door: DoorSpec, room: int, centre: np.ndarray) -> Anchor | None:
        """Approach point on the door normal in `room`, joined to the room's grid, if any."""
        normal = door_normal(door)
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
                return Anchor(point=centre, node=node, approach=approach, door_id=door.door_id)
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
        self, state: TourState, need: int, rng: np.random.Generator
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
        self, graph: AreaGraph, a: np.ndarray, a_node: int, b: np.ndarray, b_node: int
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
        self, graph: AreaGraph, entry: Anchor, vias: list[int], exit_: Anchor | None
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
        turns = turn_angles(pts)
        stops = np.count_nonzero(turns > CUSP_RAD)
        time_s = path_length(pts) / self.speed + turns.sum() / self.yaw_rate + 3.0 * stops
        return bool(turns.max(initial=0.0) > _MAX_TURN_RAD), time_s

    def leg(
        self, state: TourState, exit_: Anchor | None, rng: np.random.Generator
    ) -> tuple[np.ndarray, int | None]:
        """Polyline through the current room and its last via node.

        Rooms entered by a door are crossed via a random roomy point (or two forming a loop, if
        left by the same door), ranked among random candidates by the rough flight time of the
        straight-line route, avoiding sharp corners, then checked on the real route; the start
        leg goes straight to the exit door. With `spread` (open floor), candidates keep
        SPREAD_M from the route so far while any is left.
        """
        room, comp = state.place
        graph, entry = self.graphs[room], state.entry
        prev = state.legs[-1][-2] if state.legs and len(state.legs[-1]) > 1 else None
        if entry.door_id is None and exit_ is not None:
            options: list[list[int]] = [[]]
        else:
            members = np.flatnonzero(graph.comp == comp)
            far = np.linalg.norm(graph.xy[members] - graph.xy[entry.node], axis=1) > 1.0
            roomy = far & (graph.clear[members] >= self.comfort)
            pool = members[roomy] if roomy.any() else members[far] if far.any() else members
            if self.spread:
                pool = self._away_from_route(graph, pool, state)
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

    def _away_from_route(self, graph: AreaGraph, pool: np.ndarray, state: TourState) -> np.ndarray:
        """The nodes of `pool` at least SPREAD_M from the route so far (all of them if none is),
        so a tour over open floor moves on to places it has not seen."""
        pts = np.concatenate([state.entry.point[None], *state.legs])
        route = shapely.linestrings(pts) if len(pts) > 1 else shapely.points(pts[0])
        away = pool[shapely.distance(shapely.points(graph.xy[pool]), route) >= SPREAD_M]
        return away if len(away) else pool

    def extend(
        self, state: TourState, target_m: float, need: int, rng: np.random.Generator
    ) -> None:
        """Add legs through further rooms until the route is long enough and visits `need` rooms."""
        while state.length_m < target_m or len(set(state.rooms)) < need:
            if len(state.legs) >= MAX_LEGS and state.length_m < target_m:
                raise RouteTooLongError(len(state.legs), state.length_m)
            if len(state.legs) >= MAX_LEGS:
                raise PlanningError(
                    f"the route enters {len(set(state.rooms))} of the {need} rooms it must "
                    f"visit in {MAX_LEGS} legs"
                )
            if state.place not in self.exits:  # a closed room: wander between via points
                pts, via = self.leg(state, None, rng)
                state.entry = Anchor(point=pts[-1], node=via)
            else:
                door_id, nxt = self._next_door(state, need, rng)
                pts, _ = self.leg(state, self.anchors[door_id, state.place[0]], rng)
                state.place, state.entry = nxt, self.anchors[door_id, nxt[0]]
                state.rooms.append(nxt[0])
                state.doors.append(door_id)
                state.visits[nxt[0]] = state.visits.get(nxt[0], 0) + 1
            state.legs.append(pts)
            state.length_m += path_length(pts)

    def finish(self, state: TourState, rng: np.random.Generator) -> np.ndarray:
        """The whole route: the legs so far and a last leg to a via point of the current room."""
        last, _ = self.leg(state, None, rng)
        parts = [*state.legs, last]
        return np.concatenate([parts[0]] + [p[1:] for p in parts[1:]])
