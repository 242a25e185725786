"""Floor plans: a rectangular footprint cut into rectangular rooms, typed rooms, doors, walls.

Conventions: room rectangles meet on wall centre lines (a `RoomSpec.polygon` is the
rectangle between wall centre lines; the free floor is that rectangle shrunk by half the wall
thickness). The footprint is centred on the world origin. Coordinates are rounded to 1 cm, so
rooms that share a wall share the exact same coordinate. Every room is reachable from every
other through doors: doors are the edges of a random spanning tree of the "can hold a door"
adjacency graph, plus a few extra ones (never into a bathroom).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from twinsim.model.scene import DoorSpec, RoomSpec, RoomType

WALL_THICKNESS = 0.1
DOOR_HEIGHT = 2.05
MIN_ROOM_SIDE = 2.4
CORRIDOR_WIDTH = (1.4, 1.8)
MAX_ASPECT = 2.6
DOOR_WIDTH = (0.9, 1.0)
DOOR_CORNER_CLEARANCE = 0.6
_EPS = 1e-6
_MAX_ATTEMPTS = 200


@dataclass(frozen=True)
class Rect:
    """An axis-aligned rectangle [x0, x1] × [y0, y1] in metres."""

    x0: float
    y0: float
    x1: float
    y1: float

    @property
    def width(self) -> float:
        return self.x1 - self.x0

    @property
    def depth(self) -> float:
        return self.y1 - self.y0

    @property
    def area(self) -> float:
        return self.width * self.depth

    @property
    def center(self) -> tuple[float, float]:
        return (0.5 * (self.x0 + self.x1), 0.5 * (self.y0 + self.y1))

    def shrink(self, d: float) -> Rect:
        """The rectangle moved inwards by `d` on every side."""
        return Rect(self.x0 + d, self.y0 + d, self.x1 - d, self.y1 - d)


@dataclass(frozen=True)
class SharedWall:
    """The segment two rooms share: a wall along `axis` at `coord`, spanning [lo, hi]."""

    axis: Literal["x", "y"]
    coord: float
    lo: float
    hi: float

    @property
    def length(self) -> float:
        return self.hi - self.lo


@dataclass(frozen=True)
class WallPiece:
    """One straight wall between two sides (room ids, None = outside), with door openings.

    The wall runs along `axis` at `coord` from `start` to `end` (already extended or trimmed at
    junctions so that walls meet without gaps or overlapping volumes). `neg_room` lies on the
    side of smaller coordinate across the wall, `pos_room` on the larger side.
    """

    axis: Literal["x", "y"]
    coord: float
    start: float
    end: float
    neg_room: int | None
    pos_room: int | None
    doors: tuple[DoorSpec, ...]


@dataclass(frozen=True)
class FloorPlan:
    """Rooms (ids 0..N-1), doors and the footprint they tile."""

    footprint: Rect
    rooms: tuple[RoomSpec, ...]
    doors: tuple[DoorSpec, ...]


def room_rect(room: RoomSpec) -> Rect:
    """The axis-aligned rectangle (between wall centre lines) of a rectangular room."""
    xs = [p[0] for p in room.polygon]
    ys = [p[1] for p in room.polygon]
    return Rect(min(xs), min(ys), max(xs), max(ys))


def shared_wall(a: Rect, b: Rect) -> SharedWall | None:
    """The wall segment two rooms share, or None when they only touch at a corner or not at all."""
    for coord_a, coord_b, axis in ((a.y1, b.y0, "x"), (a.y0, b.y1, "x")):
        if abs(coord_a - coord_b) < _EPS:
            lo, hi = max(a.x0, b.x0), min(a.x1, b.x1)
            if hi - lo > _EPS:
                return SharedWall(axis, coord_a, lo, hi)
    for coord_a, coord_b in ((a.x1, b.x0), (a.x0, b.x1)):
        if abs(coord_a - coord_b) < _EPS:
            lo, hi = max(a.y0, b.y0), min(a.y1, b.y1)
            if hi - lo > _EPS:
                return SharedWall("y", coord_a, lo, hi)
    return None


def _r(x: float) -> float:
    """Round to 1 cm so coordinates produced twice compare equal."""
    return round(float(x), 2)


def _split(rect: Rect, n: int, rng: np.random.Generator) -> list[Rect] | None:
    """Recursively cut `rect` into `n` rooms by guillotine cuts; None if the sizes don't work."""
    if n == 1:
        short, long_ = sorted((rect.width, rect.depth))
        ok = short >= MIN_ROOM_SIDE - _EPS and long_ / short <= MAX_ASPECT
        return [rect] if ok else None
    n1 = int(rng.integers(1, n))
    along_x = rect.width >= rect.depth
    if rng.uniform() < 0.2:
        along_x = not along_x
    length = rect.width if along_x else rect.depth
    cut = length * (n1 / n) * rng.uniform(0.8, 1.2)
    if along_x:
        x = _r(rect.x0 + cut)
        first, second = Rect(rect.x0, rect.y0, x, rect.y1), Rect(x, rect.y0, rect.x1, rect.y1)
    else:
        y = _r(rect.y0 + cut)
        first, second = Rect(rect.x0, rect.y0, rect.x1, y), Rect(rect.x0, y, rect.x1, rect.y1)
    a = _split(first, n1, rng)
    if a is None:
        return None
    b = _split(second, n - n1, rng)
    return None if b is None else a + b


def _footprint(n: int, rng: np.random.Generator) -> Rect:
    """A footprint of about 13–20 m² per room, 40–140 m² up to 8 rooms (at most 16 m² per room
    above), centred on the origin, wider than deep."""
    top = max(139.7, n * 16.0 - 0.3)  # large apartments (9–12 rooms) grow past 140 m²
    area = float(np.clip(n * rng.uniform(13.0, 20.0), 40.3, top))  # margin for 1 cm rounding
    aspect = rng.uniform(1.0, 1.7)
    w = _r(np.sqrt(area * aspect))
    d = _r(area / w)
    return Rect(_r(-w / 2), _r(-d / 2), _r(w - w / 2), _r(d - d / 2))


def _corridor_layout(fp: Rect, n: int, rng: np.random.Generator) -> tuple[list[Rect], int] | None:
    """Living room across one end, then a corridor strip with rooms on both sides (n ≥ 5).

    Returns the rooms and the index of the corridor (the living room is index 0).
    """
    c = _r(rng.uniform(*CORRIDOR_WIDTH))
    side_depth = fp.depth - c
    if side_depth < 2 * MIN_ROOM_SIDE:
        return None
    living_w = _r(fp.width * rng.uniform(0.28, 0.4))
    if living_w < MIN_ROOM_SIDE or fp.depth / living_w > MAX_ASPECT:
        return None
    west = rng.uniform() < 0.5
    if west:
        living = Rect(fp.x0, fp.y0, _r(fp.x0 + living_w), fp.y1)
        rest_x0, rest_x1 = living.x1, fp.x1
    else:
        living = Rect(_r(fp.x1 - living_w), fp.y0, fp.x1, fp.y1)
        rest_x0, rest_x1 = fp.x0, living.x0
    south_d = _r(MIN_ROOM_SIDE + rng.uniform(0.0, side_depth - 2 * MIN_ROOM_SIDE))
    y_c0 = _r(fp.y0 + south_d)
    y_c1 = _r(y_c0 + c)
    corridor = Rect(rest_x0, y_c0, rest_x1, y_c1)
    k_south = int(rng.integers(1, n - 2))
    south = _split(Rect(rest_x0, fp.y0, rest_x1, y_c0), k_south, rng)
    north = _split(Rect(rest_x0, y_c1, rest_x1, fp.y1), n - 2 - k_south, rng)
    if south is None or north is None:
        return None
    return [living, corridor, *south, *north], 1


def _door_capable(a: Rect, b: Rect) -> SharedWall | None:
    """The shared wall if it is long enough for the widest door with its corner clearances."""
    wall = shared_wall(a, b)
    need = 2 * max(DOOR_CORNER_CLEARANCE, DOOR_WIDTH[1] / 2 + 0.25)
    return wall if wall is not None and wall.length >= need else None


def _connected(n: int, edges: list[tuple[int, int]]) -> bool:
    """Whether the undirected graph on nodes 0..n-1 with `edges` is connected."""
    seen = {0}
    stack = [0]
    while stack:
        i = stack.pop()
        for a, b in edges:
            j = b if a == i else a if b == i else None
            if j is not None and j not in seen:
                seen.add(j)
                stack.append(j)
    return len(seen) == n


def _assign_types(
    rects: list[Rect], corridor: int | None, living: int | None, rng: np.random.Generator
) -> list[RoomType]:
    """Living room = the given or largest room, bathroom = the smallest, then kitchen, bedrooms…"""
    n = len(rects)
    types: list[RoomType | None] = [None] * n
    if corridor is not None:
        types[corridor] = "corridor"
    free = [i for i in range(n) if types[i] is None]
    if living is None:
        living = max(free, key=lambda i: (rects[i].area, -i))
    types[living] = "living_room"
    free.remove(living)
    bath = min(free, key=lambda i: (rects[i].area, i))
    types[bath] = "bathroom"
    free.remove(bath)
    wanted: list[RoomType] = ["bedroom", "kitchen", "office", "bedroom", "bedroom", "office"]
    wanted += ["bedroom", "office", "bathroom", "bedroom"]  # only apartments above 8 rooms
    wanted = wanted[: len(free)]
    if "kitchen" in wanted:
        near = [i for i in free if _door_capable(rects[i], rects[living]) is not None]
        pool = near or free
        kitchen = pool[int(rng.integers(len(pool)))]
        types[kitchen] = "kitchen"
        free.remove(kitchen)
        wanted.remove("kitchen")
    # bedrooms take the larger remaining rooms, offices the smaller
    wanted.sort(key=lambda t: t != "bedroom")
    for i, t in zip(sorted(free, key=lambda i: (-rects[i].area, i)), wanted, strict=True):
        types[i] = t
    return [t for t in types if t is not None]


def _choose_doors(
    candidates: list[tuple[int, int]], types: list[RoomType], rng: np.random.Generator
) -> list[tuple[int, int]]:
    """A random spanning tree of the door-capable adjacency graph plus a few extra doors.

    Hubs (living room, corridor) are favoured, and bathrooms get a single door when possible.
    """
    n = len(types)
    bonus = {"corridor": -1.0, "living_room": -0.4, "bathroom": 10.0}

    def weight(e: tuple[int, int]) -> float:
        return rng.uniform() + sum(bonus.get(types[i], 0.0) for i in e)

    weights = [weight(e) for e in candidates]
    order = sorted(range(len(candidates)), key=lambda k: (weights[k], k))
    parent = list(range(n))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    tree: list[tuple[int, int]] = []
    rest: list[tuple[int, int]] = []
    for k in order:
        a, b = candidates[k]
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[ra] = rb
            tree.append((a, b))
        elif "bathroom" not in (types[a], types[b]):
            rest.append((a, b))
    n_extra = min(len(rest), int(rng.integers(0, 3)))
    extra = [rest[int(k)] for k in rng.permutation(len(rest))[:n_extra]]
    return sorted(tree + extra)


def _make_door(
    door_id: int, pair: tuple[int, int], wall: SharedWall, rng: np.random.Generator
) -> DoorSpec:
    """A door at a random position along the shared wall, clear of the wall's ends."""
    width = _r(rng.uniform(*DOOR_WIDTH))
    margin = max(DOOR_CORNER_CLEARANCE, width / 2 + 0.25)
    s = _r(rng.uniform(wall.lo + margin, wall.hi - margin))
    center = (s, wall.coord) if wall.axis == "x" else (wall.coord, s)
    return DoorSpec(
        door_id=door_id, rooms=pair, center=center, width=width, height=DOOR_HEIGHT, axis=wall.axis
    )


def generate_floor_plan(n_rooms: int, rng: np.random.Generator) -> FloorPlan:
    """Cut a random footprint into `n_rooms` typed rooms and connect them all with doors."""
    if not 3 <= n_rooms <= 12:
        raise ValueError(f"n_rooms={n_rooms} must be between 3 and 12")
    for _ in range(_MAX_ATTEMPTS):
        fp = _footprint(n_rooms, rng)
        corridor = living = None
        rects: list[Rect] | None = None
        if n_rooms >= 5 and rng.uniform() < 0.5:
            got = _corridor_layout(fp, n_rooms, rng)
            if got is not None:
                rects, corridor = got
                living = 0
        if rects is None:
            rects = _split(fp, n_rooms, rng)
        if rects is None:
            continue
        n = len(rects)
        edges = [
            (i, j)
            for i in range(n)
            for j in range(i + 1, n)
            if _door_capable(rects[i], rects[j]) is not None
        ]
        if not _connected(n, edges):
            continue
        types = _assign_types(rects, corridor, living, rng)
        pairs = _choose_doors(edges, types, rng)
        counts: dict[str, int] = {}
        rooms = []
        for i, (rect, t) in enumerate(zip(rects, types, strict=True)):
            k = counts.get(t, 0)
            counts[t] = k + 1
            poly = ((rect.x0, rect.y0), (rect.x1, rect.y0), (rect.x1, rect.y1), (rect.x0, rect.y1))
            rooms.append(RoomSpec(room_id=i, type=t, name=f"{t}_{k}", polygon=poly))
        doors = []
        for k, (a, b) in enumerate(pairs):
            wall = shared_wall(rects[a], rects[b])
            assert wall is not None
            doors.append(_make_door(k, (a, b), wall, rng))
        return FloorPlan(footprint=fp, rooms=tuple(rooms), doors=tuple(doors))
    raise RuntimeError(f"could not lay out {n_rooms} rooms in {_MAX_ATTEMPTS} attempts")


def _segments(plan: FloorPlan) -> list[tuple[str, float, float, float, int | None, int | None]]:
    """Every wall segment with one room (or the outside) on each side, before junction trimming."""
    rects = [room_rect(r) for r in plan.rooms]
    fp = plan.footprint
    segs: list[tuple[str, float, float, float, int | None, int | None]] = []
    for i, a in enumerate(rects):
        for j in range(i + 1, len(rects)):
            w = shared_wall(a, rects[j])
            if w is not None:
                below = i if abs((a.y1 if w.axis == "x" else a.x1) - w.coord) < _EPS else j
                above = j if below == i else i
                segs.append((w.axis, w.coord, w.lo, w.hi, below, above))
        if abs(a.y0 - fp.y0) < _EPS:
            segs.append(("x", a.y0, a.x0, a.x1, None, i))
        if abs(a.y1 - fp.y1) < _EPS:
            segs.append(("x", a.y1, a.x0, a.x1, i, None))
        if abs(a.x0 - fp.x0) < _EPS:
            segs.append(("y", a.x0, a.y0, a.y1, None, i))
        if abs(a.x1 - fp.x1) < _EPS:
            segs.append(("y", a.x1, a.y0, a.y1, i, None))
    return segs


def wall_pieces(plan: FloorPlan, thickness: float = WALL_THICKNESS) -> tuple[WallPiece, ...]:
    """The plan's walls, each shared wall once, trimmed so that junctions are filled exactly once.

    At every junction the t×t square is owned by the line that runs straight through it (the
    x-running wall if both or neither do); the other walls stop at its face or extend to fill it.
    """
    segs = _segments(plan)

    def key(x: float, y: float) -> tuple[int, int]:
        return (round(x * 1000), round(y * 1000))

    arms: dict[tuple[int, int], set[str]] = {}
    for axis, c, lo, hi, _, _ in segs:
        if axis == "x":
            arms.setdefault(key(lo, c), set()).add("+x")
            arms.setdefault(key(hi, c), set()).add("-x")
        else:
            arms.setdefault(key(c, lo), set()).add("+y")
            arms.setdefault(key(c, hi), set()).add("-y")
    h = thickness / 2

    def extension(axis: str, point: tuple[int, int]) -> float:
        """How far a wall ending at `point` reaches past it: +h fills the square, -h stops short."""
        here = arms[point]
        x_straight = {"+x", "-x"} <= here
        y_straight = {"+y", "-y"} <= here
        x_owns = x_straight or not y_straight
        if axis == "x":
            return 0.0 if x_straight else (-h if y_straight else h)
        has_x = bool({"+x", "-x"} & here)
        return -h if x_owns and has_x else 0.0

    pieces = []
    for axis, c, lo, hi, neg, pos in segs:
        p_lo = key(lo, c) if axis == "x" else key(c, lo)
        p_hi = key(hi, c) if axis == "x" else key(c, hi)
        start = lo - extension(axis, p_lo)
        end = hi + extension(axis, p_hi)
        pair = {neg, pos}
        doors = tuple(
            d
            for d in plan.doors
            if set(d.rooms) == pair
            and d.axis == axis
            and abs((d.center[1] if axis == "x" else d.center[0]) - c) < _EPS
        )
        pieces.append(WallPiece(axis, c, start, end, neg, pos, doors))
    return tuple(pieces)
