"""Furniture: primitive-geometry builders, a per-room-type catalogue, and collision-free placement.

Object frame convention (every builder): origin at the centre of the footprint on the floor
(z = 0 is the floor, geometry above it), +x is the object's front (the side you use or face: a
sofa's seat, a bed's foot, cabinet doors, a screen), the back is at -x, +y is to its left.
`FurnitureItem.half_extents` are the footprint half sizes along x (depth) and y (width).

Placement puts items back-to-wall (yaw a multiple of 90°, +x pointing into the room) or in the
room's interior, with no footprint overlaps, clear of a keep-out box on both sides of every
door, and with every part taller than `CORE_MAX_HEIGHT` clear of a free core in the room's
centre so a drone can fly through (in corridors whole footprints stay off the centre strip).
Flat items (rugs) form their own layer: other furniture may stand on them, but rugs never
overlap each other or a door keep-out.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from shapely.geometry import Polygon

from twinsim.geometry import primitive_half_extents, unit_quat_wxyz_to_matrix
from twinsim.scene.layout import Rect
from twinsim.scene.spec import DoorSpec, GeomSpec, ObjectSpec, Quat, RoomType

DOOR_KEEPOUT_DEPTH = 1.0
DOOR_KEEPOUT_MARGIN = 0.1
CORE_MAX_HEIGHT = 0.8
WALL_GAP = 0.02
ITEM_GAP = 0.03
_ATTEMPTS = 40
_REBUILD_EVERY = 8
_S = math.sqrt(0.5)
_AXIS_QUAT: dict[str, Quat] = {
    "z": (1.0, 0.0, 0.0, 0.0),
    "x": (_S, 0.0, _S, 0.0),
    "y": (_S, _S, 0.0, 0.0),
}


@dataclass(frozen=True)
class Palette:
    """Material names a room's furniture is made of (created by the apartment generator)."""

    wood: str
    fabric: str
    paint: str
    metal: str
    ceramic: str
    dark: str
    foliage: str
    pot: str
    soil: str
    shade: str
    rug: str
    books: tuple[str, ...]


@dataclass(frozen=True)
class FurnitureItem:
    """Geoms in the object frame, footprint half extents (x = depth, y = width) and height.

    `tall_box` (x0, y0, x1, y1) bounds the parts rising above `CORE_MAX_HEIGHT` (None if none):
    only those must stay out of a room's free core.
    """

    semantic_class: str
    geoms: tuple[GeomSpec, ...]
    half_extents: tuple[float, float]
    height: float
    tall_box: tuple[float, float, float, float] | None
    flat: bool = False


@dataclass(frozen=True)
class Placement:
    """A furniture item standing at (x, y) on the floor, turned by `yaw` (multiple of π/2)."""

    item: FurnitureItem
    x: float
    y: float
    yaw: float

    def _turned(self, x0: float, y0: float, x1: float, y1: float) -> Rect:
        """An object-frame rectangle in the world (axis-aligned, as yaw is a multiple of 90°)."""
        c, s = round(math.cos(self.yaw)), round(math.sin(self.yaw))
        corners = [(x, y) for x in (x0, x1) for y in (y0, y1)]
        xs = [self.x + c * x - s * y for x, y in corners]
        ys = [self.y + s * x + c * y for x, y in corners]
        return Rect(min(xs), min(ys), max(xs), max(ys))

    def bounds(self) -> Rect:
        """World-frame footprint."""
        hx, hy = self.item.half_extents
        return self._turned(-hx, -hy, hx, hy)

    def tall_bounds(self) -> Rect | None:
        """World-frame footprint of the parts above `CORE_MAX_HEIGHT`, if any."""
        box = self.item.tall_box
        return None if box is None else self._turned(*box)


def geoms_bounds(geoms: Sequence[GeomSpec]) -> tuple[np.ndarray, np.ndarray]:
    """Axis-aligned (min, max) corners of a set of geoms in their common frame."""
    lo = np.full(3, np.inf)
    hi = np.full(3, -np.inf)
    for g in geoms:
        ext = np.abs(unit_quat_wxyz_to_matrix(g.quat)) @ primitive_half_extents(g.type, g.size)
        lo = np.minimum(lo, np.asarray(g.pos) - ext)
        hi = np.maximum(hi, np.asarray(g.pos) + ext)
    return lo, hi


def object_footprint(obj: ObjectSpec) -> Polygon:
    """The object's 2D footprint in the world: its geoms' bounding rectangle, turned and moved."""
    lo, hi = geoms_bounds(obj.geoms)
    corners = np.array([[lo[0], lo[1], 0], [hi[0], lo[1], 0], [hi[0], hi[1], 0], [lo[0], hi[1], 0]])
    world = corners @ unit_quat_wxyz_to_matrix(obj.quat).T + np.asarray(obj.pos)
    return Polygon(world[:, :2])


def door_keepout(door: DoorSpec, depth: float = DOOR_KEEPOUT_DEPTH) -> Rect:
    """The box that must stay clear around a door: its width plus a margin, `depth` each side."""
    half = door.width / 2 + DOOR_KEEPOUT_MARGIN
    cx, cy = door.center
    if door.axis == "x":
        return Rect(cx - half, cy - depth, cx + half, cy + depth)
    return Rect(cx - depth, cy - half, cx + depth, cy + half)


def free_core(rect: Rect, room_type: RoomType, wall_thickness: float) -> Rect:
    """The central area kept free of tall furniture (a centre strip along a corridor)."""
    inner = rect.shrink(wall_thickness / 2)
    cx, cy = inner.center
    if room_type == "corridor":
        if inner.width >= inner.depth:
            half = max(0.3, inner.depth / 2 - 0.35)
            return Rect(inner.x0, cy - half, inner.x1, cy + half)
        half = max(0.3, inner.width / 2 - 0.35)
        return Rect(cx - half, inner.y0, cx + half, inner.y1)
    half = min(0.6, 0.2 * min(inner.width, inner.depth))
    return Rect(cx - half, cy - half, cx + half, cy + half)


# --------------------------------------------------------------------------- geometry helpers


def _r3(v: float) -> float:
    return round(float(v), 3)


def _box(hx: float, hy: float, hz: float, x: float, y: float, z: float, mat: str) -> GeomSpec:
    return GeomSpec(
        type="box", size=(_r3(hx), _r3(hy), _r3(hz)), pos=(_r3(x), _r3(y), _r3(z)), material=mat
    )


def _cyl(r: float, hh: float, x: float, y: float, z: float, mat: str, axis: str = "z") -> GeomSpec:
    return GeomSpec(
        type="cylinder",
        size=(_r3(r), _r3(hh)),
        pos=(_r3(x), _r3(y), _r3(z)),
        quat=_AXIS_QUAT[axis],
        material=mat,
    )


def _cap(r: float, hh: float, x: float, y: float, z: float, mat: str, axis: str = "z") -> GeomSpec:
    return GeomSpec(
        type="capsule",
        size=(_r3(r), _r3(hh)),
        pos=(_r3(x), _r3(y), _r3(z)),
        quat=_AXIS_QUAT[axis],
        material=mat,
    )


def _sph(r: float, x: float, y: float, z: float, mat: str) -> GeomSpec:
    return GeomSpec(type="sphere", size=(_r3(r),), pos=(_r3(x), _r3(y), _r3(z)), material=mat)


def _ell(rx: float, ry: float, rz: float, x: float, y: float, z: float, mat: str) -> GeomSpec:
    return GeomSpec(
        type="ellipsoid",
        size=(_r3(rx), _r3(ry), _r3(rz)),
        pos=(_r3(x), _r3(y), _r3(z)),
        material=mat,
    )


def _item(cls: str, geoms: list[GeomSpec], flat: bool = False) -> FurnitureItem:
    """Recentre geoms on their footprint centre and measure footprint and height."""
    lo, hi = geoms_bounds(geoms)
    cx, cy = _r3((lo[0] + hi[0]) / 2), _r3((lo[1] + hi[1]) / 2)
    moved = tuple(
        g.model_copy(update={"pos": (_r3(g.pos[0] - cx), _r3(g.pos[1] - cy), g.pos[2])})
        for g in geoms
    )
    lo, hi = geoms_bounds(moved)
    half = (float(max(-lo[0], hi[0])), float(max(-lo[1], hi[1])))
    tall = [g for g in moved if geoms_bounds([g])[1][2] > CORE_MAX_HEIGHT]
    tall_box = None
    if tall:
        tlo, thi = geoms_bounds(tall)
        tall_box = (float(tlo[0]), float(tlo[1]), float(thi[0]), float(thi[1]))
    return FurnitureItem(cls, moved, half, float(hi[2]), tall_box, flat)


def _u(rng: np.random.Generator, lo: float, hi: float) -> float:
    return float(rng.uniform(lo, hi))


# --------------------------------------------------------------------------- builders


def bed(rng: np.random.Generator, pal: Palette) -> FurnitureItem:
    """Bed: frame, mattress, headboard at the back (-x), pillows, a blanket over the foot end."""
    length = _u(rng, 1.95, 2.1)
    width = float(rng.choice([0.9, 1.2, 1.4, 1.6, 1.8]))
    head_h = _u(rng, 0.8, 1.1)
    g = [
        _box(length / 2, width / 2, 0.15, 0, 0, 0.15, pal.wood),
        _box(length / 2 - 0.04, width / 2 - 0.03, 0.1, 0.02, 0, 0.4, pal.fabric),
        _box(0.03, width / 2 + 0.02, head_h / 2, -length / 2 + 0.03, 0, head_h / 2, pal.wood),
        _box(0.32 * length, width / 2 + 0.01, 0.02, 0.17 * length, 0, 0.51, pal.rug),
    ]
    n_pillows = 1 if width < 1.1 else 2
    for k in range(n_pillows):
        y = 0.0 if n_pillows == 1 else (k - 0.5) * width / 2
        g.append(_ell(0.14, min(0.3, width / 2.4), 0.07, -length / 2 + 0.25, y, 0.55, pal.paint))
    return _item("bed", g)


def sofa(rng: np.random.Generator, pal: Palette, seats: int | None = None) -> FurnitureItem:
    """Sofa: base, seat cushions, back rest at -x, two arm rests."""
    seats = seats or int(rng.integers(2, 4))
    depth = _u(rng, 0.8, 0.95)
    seat_w = _u(rng, 0.55, 0.7)
    arm = _u(rng, 0.08, 0.18)
    width = seats * seat_w + 2 * arm
    back_h = _u(rng, 0.8, 0.95)
    g = [
        _box(depth / 2, width / 2 - arm, 0.12, 0, 0, 0.16, pal.fabric),
        _box(
            0.1,
            width / 2 - arm,
            back_h / 2 - 0.02,
            -depth / 2 + 0.1,
            0,
            back_h / 2 + 0.02,
            pal.fabric,
        ),
        _box(depth / 2, arm / 2, 0.3, 0, width / 2 - arm / 2, 0.3, pal.fabric),
        _box(depth / 2, arm / 2, 0.3, 0, -width / 2 + arm / 2, 0.3, pal.fabric),
    ]
    for k in range(seats):
        y = -width / 2 + arm + seat_w * (k + 0.5)
        g.append(_box(depth / 2 - 0.12, seat_w / 2 - 0.01, 0.07, 0.08, y, 0.35, pal.fabric))
        zc = (0.42 + back_h - 0.04) / 2
        hz = (back_h - 0.04 - 0.42) / 2
        g.append(_box(0.05, seat_w / 2 - 0.02, hz, -depth / 2 + 0.25, y, zc, pal.fabric))
    for sx in (-1, 1):
        for sy in (-1, 1):
            g.append(
                _cyl(0.025, 0.02, sx * (depth / 2 - 0.06), sy * (width / 2 - 0.06), 0.02, pal.wood)
            )
    return _item("sofa", g)


def armchair(rng: np.random.Generator, pal: Palette) -> FurnitureItem:
    """Armchair: a one-seat sofa."""
    return _item("armchair", list(sofa(rng, pal, seats=1).geoms))


def table(rng: np.random.Generator, pal: Palette, coffee: bool = False) -> FurnitureItem:
    """Table: rectangular (top + four legs) or round (top + pedestal); `coffee` makes it low."""
    height = _u(rng, 0.38, 0.46) if coffee else _u(rng, 0.72, 0.77)
    if not coffee and rng.uniform() < 0.3:
        r = _u(rng, 0.45, 0.6)
        g = [
            _cyl(r, 0.015, 0, 0, height - 0.015, pal.wood),
            _cyl(0.04, (height - 0.03) / 2, 0, 0, (height - 0.03) / 2, pal.metal),
            _cyl(0.25, 0.01, 0, 0, 0.01, pal.metal),
        ]
        return _item("table", g)
    depth = _u(rng, 0.5, 0.65) if coffee else _u(rng, 0.8, 1.0)
    width = _u(rng, 0.9, 1.2) if coffee else _u(rng, 1.2, 1.8)
    leg_h = (height - 0.03) / 2
    g = [_box(depth / 2, width / 2, 0.015, 0, 0, height - 0.015, pal.wood)]
    for sx in (-1, 1):
        for sy in (-1, 1):
            g.append(
                _cyl(
                    0.025, leg_h, sx * (depth / 2 - 0.06), sy * (width / 2 - 0.06), leg_h, pal.wood
                )
            )
    if coffee:
        g.append(_box(depth / 2 - 0.06, width / 2 - 0.06, 0.01, 0, 0, 0.12, pal.wood))
    return _item("table", g)


def chair(rng: np.random.Generator, pal: Palette) -> FurnitureItem:
    """Chair: seat, four legs, back rest at -x; the sitter faces +x."""
    w = _u(rng, 0.2, 0.24)
    seat_h = _u(rng, 0.43, 0.47)
    back_h = _u(rng, 0.38, 0.5)
    mat = pal.wood if rng.uniform() < 0.6 else pal.paint
    g = [
        _box(w, w, 0.02, 0, 0, seat_h, mat),
        _box(0.015, w, back_h / 2, -w + 0.015, 0, seat_h + back_h / 2, mat),
    ]
    for sx in (-1, 1):
        for sy in (-1, 1):
            g.append(
                _cyl(
                    0.015,
                    seat_h / 2 - 0.01,
                    sx * (w - 0.03),
                    sy * (w - 0.03),
                    seat_h / 2 - 0.01,
                    mat,
                )
            )
    return _item("chair", g)


def desk(rng: np.random.Generator, pal: Palette) -> FurnitureItem:
    """Desk: top, side panel, drawer unit with handles, and a monitor at the back."""
    depth = _u(rng, 0.6, 0.75)
    width = _u(rng, 1.2, 1.6)
    h = 0.75
    g = [
        _box(depth / 2, width / 2, 0.015, 0, 0, h - 0.015, pal.wood),
        _box(
            depth / 2 - 0.02, 0.015, (h - 0.03) / 2, 0, width / 2 - 0.015, (h - 0.03) / 2, pal.wood
        ),
        _box(depth / 2 - 0.02, 0.2, (h - 0.03) / 2, 0, -width / 2 + 0.2, (h - 0.03) / 2, pal.paint),
    ]
    for k in range(3):
        z = (k + 0.5) * (h - 0.03) / 3
        g.append(_cap(0.008, 0.05, depth / 2 - 0.005, -width / 2 + 0.2, z, pal.metal, axis="y"))
    if rng.uniform() < 0.7:
        sw = _u(rng, 0.25, 0.35)
        g.append(_box(0.015, sw, sw * 0.3, -depth / 2 + 0.15, 0, h + 0.15 + sw * 0.3, pal.dark))
        g.append(_box(0.08, 0.1, 0.006, -depth / 2 + 0.15, 0, h + 0.006, pal.dark))
        g.append(_cyl(0.015, 0.075, -depth / 2 + 0.12, 0, h + 0.08, pal.dark))
    return _item("desk", g)


def shelf(rng: np.random.Generator, pal: Palette) -> FurnitureItem:
    """Bookshelf: sides, back, boards, and rows of books of random sizes and colours."""
    depth = _u(rng, 0.26, 0.4)
    width = _u(rng, 0.7, 1.2)
    height = _u(rng, 1.6, 2.0)
    levels = int(rng.integers(4, 6))
    g = [
        _box(depth / 2, 0.012, height / 2, 0, width / 2 - 0.012, height / 2, pal.wood),
        _box(depth / 2, 0.012, height / 2, 0, -width / 2 + 0.012, height / 2, pal.wood),
        _box(0.006, width / 2 - 0.024, height / 2, -depth / 2 + 0.006, 0, height / 2, pal.wood),
    ]
    pitch = (height - 0.04) / levels
    inner_w = width - 0.05
    for k in range(levels + 1):
        g.append(
            _box(depth / 2 - 0.006, width / 2 - 0.024, 0.01, 0.006, 0, 0.01 + k * pitch, pal.wood)
        )
    for k in range(levels):
        if rng.uniform() < 0.2:
            continue
        z0 = 0.02 + k * pitch
        y = -inner_w / 2 + _u(rng, 0.0, 0.15)
        for _ in range(8):
            bw = _u(rng, 0.02, 0.06)
            if y + bw > inner_w / 2:
                break
            bh = min(pitch - 0.04, _u(rng, 0.16, 0.3))
            bd = min(depth - 0.04, _u(rng, 0.14, 0.24))
            mat = pal.books[int(rng.integers(len(pal.books)))]
            g.append(
                _box(
                    bd / 2,
                    bw / 2,
                    bh / 2,
                    -depth / 2 + 0.012 + bd / 2,
                    y + bw / 2,
                    z0 + bh / 2,
                    mat,
                )
            )
            y += bw + (_u(rng, 0.0, 0.1) if rng.uniform() < 0.3 else 0.003)
    return _item("shelf", g)


def _doored_box(
    rng: np.random.Generator,
    depth: float,
    width: float,
    height: float,
    n_doors: int,
    body: str,
    front: str,
    handle: str,
    plinth: float = 0.0,
) -> list[GeomSpec]:
    """A carcass with `n_doors` door fronts on +x, vertical handles, and an optional plinth."""
    g = [
        _box(
            depth / 2 - 0.01,
            width / 2,
            (height - plinth) / 2,
            -0.01,
            0,
            plinth + (height - plinth) / 2,
            body,
        )
    ]
    if plinth > 0:
        g.append(_box(depth / 2 - 0.06, width / 2 - 0.03, plinth / 2, -0.02, 0, plinth / 2, handle))
    door_w = width / n_doors
    handle_len = min(0.12, (height - plinth) / 4)
    for k in range(n_doors):
        y = -width / 2 + door_w * (k + 0.5)
        g.append(
            _box(
                0.008,
                door_w / 2 - 0.004,
                (height - plinth) / 2 - 0.006,
                depth / 2 - 0.012,
                y,
                plinth + (height - plinth) / 2,
                front,
            )
        )
        side = 1 if k % 2 == 0 else -1
        hy = y + side * (door_w / 2 - 0.05) if n_doors > 1 else y + door_w / 2 - 0.05
        g.append(
            _cap(
                0.008,
                handle_len / 2,
                depth / 2 + 0.006,
                hy,
                plinth + (height - plinth) * _u(rng, 0.55, 0.7),
                handle,
            )
        )
    return g


def cabinet(rng: np.random.Generator, pal: Palette) -> FurnitureItem:
    """Low cabinet / sideboard with doors, handles and a slightly overhanging top."""
    depth = _u(rng, 0.35, 0.5)
    width = _u(rng, 0.6, 1.4)
    height = _u(rng, 0.6, 0.9)
    n = max(1, round(width / 0.45))
    g = _doored_box(
        rng, depth, width, height - 0.02, n, pal.wood, pal.paint, pal.metal, plinth=0.06
    )
    g.append(_box(depth / 2 + 0.01, width / 2 + 0.01, 0.01, 0, 0, height - 0.01, pal.wood))
    return _item("cabinet", g)


def wardrobe(rng: np.random.Generator, pal: Palette) -> FurnitureItem:
    """Tall wardrobe with two or three doors and long handles."""
    depth = _u(rng, 0.55, 0.65)
    width = _u(rng, 1.0, 1.8)
    height = _u(rng, 1.9, 2.1)
    n = 2 if width < 1.3 else 3
    g = _doored_box(rng, depth, width, height, n, pal.wood, pal.wood, pal.metal, plinth=0.08)
    return _item("wardrobe", g)


def counter(rng: np.random.Generator, pal: Palette) -> FurnitureItem:
    """Kitchen counter run: base cabinets, stone top, wall-side splash strip, maybe a tap."""
    depth = 0.62
    width = _u(rng, 1.2, 2.4)
    n = max(2, round(width / 0.6))
    g = _doored_box(rng, depth - 0.02, width, 0.86, n, pal.paint, pal.paint, pal.metal, plinth=0.1)
    g.append(_box(depth / 2, width / 2, 0.02, 0, 0, 0.88, pal.ceramic))
    if rng.uniform() < 0.5:
        y = _u(rng, -width / 2 + 0.3, width / 2 - 0.3)
        g.append(_box(0.2, 0.25, 0.004, 0.0, y, 0.902, pal.metal))
        g.append(_cap(0.012, 0.12, -depth / 2 + 0.06, y, 1.02, pal.metal))
        g.append(_cap(0.01, 0.08, -depth / 2 + 0.14, y, 1.13, pal.metal, axis="x"))
    return _item("counter", g)


def tv(rng: np.random.Generator, pal: Palette) -> FurnitureItem:
    """Flat-screen TV on a floor stand (base plate, column, screen facing +x)."""
    width = _u(rng, 0.9, 1.4)
    sh = width * 9 / 16
    zc = _u(rng, 1.0, 1.2)
    g = [
        _box(0.15, 0.28, 0.01, 0, 0, 0.01, pal.metal),
        _cyl(0.025, (zc - 0.02) / 2, -0.05, 0, 0.02 + (zc - 0.02) / 2, pal.metal),
        _box(0.025, width / 2, sh / 2, 0.0, 0, zc, pal.dark),
        _box(0.002, width / 2 - 0.02, sh / 2 - 0.02, 0.026, 0, zc, pal.metal),
    ]
    return _item("tv", g)


def lamp(rng: np.random.Generator, pal: Palette) -> FurnitureItem:
    """Floor lamp: base disc, pole, and a cylindrical or round shade."""
    h = _u(rng, 1.4, 1.8)
    g = [
        _cyl(_u(rng, 0.12, 0.17), 0.012, 0, 0, 0.012, pal.metal),
        _cyl(0.012, h / 2, 0, 0, h / 2, pal.metal),
    ]
    if rng.uniform() < 0.5:
        g.append(_cyl(_u(rng, 0.15, 0.22), 0.12, 0, 0, h, pal.shade))
    else:
        g.append(_ell(0.2, 0.2, 0.14, 0, 0, h, pal.shade))
    return _item("lamp", g)


def plant(rng: np.random.Generator, pal: Palette) -> FurnitureItem:
    """Potted plant: pot, soil, stems, and a cluster of foliage ellipsoids."""
    r = _u(rng, 0.1, 0.2)
    ph = _u(rng, 0.2, 0.45)
    g = [_cyl(r, ph / 2, 0, 0, ph / 2, pal.pot), _cyl(r - 0.015, 0.005, 0, 0, ph, pal.soil)]
    for _ in range(int(rng.integers(3, 8))):
        a = _u(rng, 0, 2 * math.pi)
        d = _u(rng, 0.0, r + 0.08)
        z = ph + _u(rng, 0.1, 0.3 + 2 * r)
        fr = _u(rng, 0.07, 0.12 + r * 0.5)
        x, y = d * math.cos(a), d * math.sin(a)
        g.append(_cap(0.008, (z - ph) / 2, x / 2, y / 2, ph + (z - ph) / 2, pal.foliage))
        g.append(_ell(fr, fr * _u(rng, 0.6, 1.0), fr * _u(rng, 0.5, 0.9), x, y, z, pal.foliage))
    return _item("plant", g)


def nightstand(rng: np.random.Generator, pal: Palette) -> FurnitureItem:
    """Bedside table with two drawers and knobs."""
    d, w, h = _u(rng, 0.35, 0.45), _u(rng, 0.4, 0.5), _u(rng, 0.45, 0.6)
    g = [_box(d / 2 - 0.01, w / 2, h / 2, -0.01, 0, h / 2, pal.wood)]
    for k in range(2):
        z = h * (0.27 + 0.46 * k)
        g.append(_box(0.008, w / 2 - 0.02, h * 0.21, d / 2 - 0.012, 0, z, pal.paint))
        g.append(_sph(0.015, d / 2 + 0.005, 0, z, pal.metal))
    return _item("nightstand", g)


def refrigerator(rng: np.random.Generator, pal: Palette) -> FurnitureItem:
    """Fridge-freezer: body, two doors on +x, long vertical handles."""
    d, w, h = _u(rng, 0.6, 0.7), _u(rng, 0.58, 0.72), _u(rng, 1.75, 1.95)
    split = h * _u(rng, 0.3, 0.4)
    mat = pal.paint if rng.uniform() < 0.5 else pal.metal
    g = [
        _box(d / 2 - 0.02, w / 2, h / 2, -0.02, 0, h / 2, mat),
        _box(0.015, w / 2 - 0.005, split / 2 - 0.01, d / 2 - 0.025, 0, split / 2 + 0.02, mat),
        _box(
            0.015,
            w / 2 - 0.005,
            (h - split) / 2 - 0.02,
            d / 2 - 0.025,
            0,
            split + (h - split) / 2,
            mat,
        ),
        _cap(0.012, split / 2 - 0.1, d / 2 + 0.002, w / 2 - 0.06, split * 0.55, pal.dark),
        _cap(
            0.012,
            (h - split) / 4,
            d / 2 + 0.002,
            w / 2 - 0.06,
            split + (h - split) * 0.35,
            pal.dark,
        ),
    ]
    return _item("refrigerator", g)


def stove(rng: np.random.Generator, pal: Palette) -> FurnitureItem:
    """Cooker: body, hob with four burners, oven door window, handle and knobs."""
    d, w, h = 0.6, _u(rng, 0.5, 0.6), 0.88
    g = [
        _box(d / 2, w / 2, h / 2 - 0.01, 0, 0, h / 2 - 0.01, pal.metal),
        _box(d / 2, w / 2, 0.01, 0, 0, h - 0.01, pal.dark),
        _box(0.005, w / 2 - 0.06, 0.16, d / 2 + 0.002, 0, 0.38, pal.dark),
        _cap(0.012, w / 2 - 0.1, d / 2 + 0.04, 0, 0.6, pal.metal, axis="y"),
    ]
    for sx in (-1, 1):
        for sy in (-1, 1):
            g.append(_cyl(_u(rng, 0.06, 0.09), 0.006, sx * d / 4, sy * w / 4, h + 0.004, pal.metal))
    for k in range(4):
        g.append(_cyl(0.02, 0.012, d / 2 + 0.012, (k - 1.5) * w / 5, h - 0.08, pal.dark, axis="x"))
    return _item("stove", g)


def toilet(rng: np.random.Generator, pal: Palette) -> FurnitureItem:
    """Toilet: cistern at the back, bowl, seat, pedestal."""
    d = _u(rng, 0.62, 0.7)
    w = _u(rng, 0.36, 0.42)
    g = [
        _box(0.09, w / 2, 0.19, -d / 2 + 0.09, 0, 0.6, pal.ceramic),
        _ell(0.25, w / 2 - 0.01, 0.16, d / 2 - 0.25, 0, 0.26, pal.ceramic),
        _box(0.15, w / 2 - 0.07, 0.1, -d / 2 + 0.3, 0, 0.1, pal.ceramic),
        _ell(0.24, w / 2 - 0.02, 0.02, d / 2 - 0.25, 0, 0.43, pal.paint),
    ]
    return _item("toilet", g)


def bathtub(rng: np.random.Generator, pal: Palette) -> FurnitureItem:
    """Bathtub along the wall: hollow shell (floor, four rims) and a tap at one end."""
    d = _u(rng, 0.68, 0.8)
    length = _u(rng, 1.5, 1.8)
    h = _u(rng, 0.5, 0.6)
    rim = 0.06
    g = [
        _box(d / 2, length / 2, 0.05, 0, 0, 0.05, pal.ceramic),
        _box(
            rim / 2, length / 2, (h - 0.1) / 2, d / 2 - rim / 2, 0, 0.1 + (h - 0.1) / 2, pal.ceramic
        ),
        _box(
            rim / 2,
            length / 2,
            (h - 0.1) / 2,
            -d / 2 + rim / 2,
            0,
            0.1 + (h - 0.1) / 2,
            pal.ceramic,
        ),
        _box(
            d / 2 - rim,
            rim / 2,
            (h - 0.1) / 2,
            0,
            length / 2 - rim / 2,
            0.1 + (h - 0.1) / 2,
            pal.ceramic,
        ),
        _box(
            d / 2 - rim,
            rim / 2,
            (h - 0.1) / 2,
            0,
            -length / 2 + rim / 2,
            0.1 + (h - 0.1) / 2,
            pal.ceramic,
        ),
        _cap(0.015, 0.06, -d / 2 + 0.03, length / 2 - 0.2, h + 0.06, pal.metal),
        _cap(0.012, 0.05, -d / 2 + 0.08, length / 2 - 0.2, h + 0.12, pal.metal, axis="x"),
    ]
    return _item("bathtub", g)


def sink(rng: np.random.Generator, pal: Palette) -> FurnitureItem:
    """Wash basin on a pedestal or a vanity unit, with a tap."""
    d = _u(rng, 0.4, 0.5)
    w = _u(rng, 0.45, 0.65)
    top = _u(rng, 0.8, 0.88)
    if rng.uniform() < 0.5:
        g = [_cyl(0.08, (top - 0.12) / 2, -d / 2 + 0.15, 0, (top - 0.12) / 2, pal.ceramic)]
    else:
        g = _doored_box(rng, d, w, top - 0.12, 2, pal.wood, pal.paint, pal.metal, plinth=0.05)
    g += [
        _box(d / 2, w / 2, 0.06, 0, 0, top - 0.06, pal.ceramic),
        _box(d / 2 - 0.08, w / 2 - 0.06, 0.003, 0.02, 0, top + 0.003, pal.metal),
        _cap(0.012, 0.06, -d / 2 + 0.05, 0, top + 0.06, pal.metal),
        _cap(0.01, 0.04, -d / 2 + 0.09, 0, top + 0.12, pal.metal, axis="x"),
    ]
    return _item("sink", g)


def rug(rng: np.random.Generator, pal: Palette) -> FurnitureItem:
    """Flat rug (1 cm); other furniture may stand on it."""
    d, w = _u(rng, 1.0, 2.0), _u(rng, 1.4, 2.8)
    return _item("rug", [_box(d / 2, w / 2, 0.005, 0, 0, 0.005, pal.rug)], flat=True)


def ceiling_lamp(rng: np.random.Generator, pal: Palette) -> FurnitureItem:
    """Ceiling light fixture hanging below z = 0 (its object origin is on the ceiling)."""
    r = _u(rng, 0.15, 0.28)
    g = [_cyl(0.04, 0.01, 0, 0, -0.01, pal.metal), _cyl(r, 0.025, 0, 0, -0.045, pal.shade)]
    return _item("lamp", g)


Builder = Callable[[np.random.Generator, Palette], FurnitureItem]

BUILDERS: dict[str, Builder] = {
    "bed": bed,
    "sofa": sofa,
    "armchair": armchair,
    "table": table,
    "chair": chair,
    "desk": desk,
    "shelf": shelf,
    "cabinet": cabinet,
    "wardrobe": wardrobe,
    "counter": counter,
    "tv": tv,
    "lamp": lamp,
    "plant": plant,
    "nightstand": nightstand,
    "refrigerator": refrigerator,
    "stove": stove,
    "toilet": toilet,
    "bathtub": bathtub,
    "sink": sink,
    "rug": rug,
}

# (item, probability at density 1, slots, where): "wall" = back to a wall, "interior" = free
# standing, "center" = near the room centre (rugs)
CATALOGUE: dict[str, tuple[tuple[str, float, int, str], ...]] = {
    "living_room": (
        ("sofa", 1.0, 1, "wall"),
        ("tv", 0.9, 1, "wall"),
        ("shelf", 0.7, 2, "wall"),
        ("armchair", 0.6, 2, "wall"),
        ("cabinet", 0.5, 1, "wall"),
        ("table", 0.5, 1, "interior"),
        ("lamp", 0.7, 2, "wall"),
        ("plant", 0.8, 3, "wall"),
        ("rug", 0.7, 1, "center"),
    ),
    "kitchen": (
        ("counter", 1.0, 1, "wall"),
        ("stove", 0.95, 1, "wall"),
        ("refrigerator", 0.95, 1, "wall"),
        ("counter", 0.8, 1, "wall"),
        ("table", 0.7, 1, "interior"),
        ("cabinet", 0.4, 1, "wall"),
        ("shelf", 0.3, 1, "wall"),
        ("plant", 0.4, 1, "wall"),
    ),
    "bedroom": (
        ("bed", 1.0, 1, "wall"),
        ("wardrobe", 0.8, 1, "wall"),
        ("desk", 0.3, 1, "wall"),
        ("shelf", 0.4, 1, "wall"),
        ("cabinet", 0.3, 1, "wall"),
        ("armchair", 0.2, 1, "wall"),
        ("lamp", 0.5, 1, "wall"),
        ("plant", 0.5, 2, "wall"),
        ("rug", 0.5, 1, "center"),
    ),
    "bathroom": (
        ("bathtub", 0.7, 1, "wall"),
        ("toilet", 1.0, 1, "wall"),
        ("sink", 1.0, 1, "wall"),
        ("cabinet", 0.4, 1, "wall"),
        ("plant", 0.3, 1, "wall"),
        ("rug", 0.4, 1, "center"),
    ),
    "office": (
        ("desk", 1.0, 2, "wall"),
        ("shelf", 0.9, 2, "wall"),
        ("cabinet", 0.6, 1, "wall"),
        ("armchair", 0.3, 1, "wall"),
        ("lamp", 0.5, 1, "wall"),
        ("plant", 0.6, 2, "wall"),
        ("rug", 0.3, 1, "center"),
    ),
    "corridor": (
        ("shelf", 0.4, 1, "wall"),
        ("cabinet", 0.4, 1, "wall"),
        ("plant", 0.6, 2, "wall"),
        ("rug", 0.5, 1, "center"),
    ),
}

KITCHENETTE: tuple[tuple[str, float, int, str], ...] = (
    ("counter", 1.0, 1, "wall"),
    ("refrigerator", 1.0, 1, "wall"),
    ("stove", 1.0, 1, "wall"),
)


# --------------------------------------------------------------------------- placement


def _overlap(a: Rect, b: Rect, margin: float = 0.0) -> bool:
    """Whether two rectangles overlap with positive area, or come closer than `margin`."""
    return (
        a.x0 < b.x1 + margin
        and b.x0 < a.x1 + margin
        and a.y0 < b.y1 + margin
        and b.y0 < a.y1 + margin
    )


class _Placer:
    """Rejection-sampling placement inside one room, tracking what is already placed."""

    def __init__(
        self,
        rect: Rect,
        room_type: RoomType,
        doors: Sequence[DoorSpec],
        wall_thickness: float,
        rng: np.random.Generator,
    ) -> None:
        self.inner = rect.shrink(wall_thickness / 2)
        self.keepouts = [door_keepout(d) for d in doors]
        self.core = free_core(rect, room_type, wall_thickness)
        self.corridor = room_type == "corridor"
        self.rng = rng
        self.placed: list[Placement] = []

    def fits(self, p: Placement) -> bool:
        """Inside the room, out of door keep-outs and other items; tall parts out of the core."""
        b = p.bounds()
        inner = self.inner
        if b.x0 < inner.x0 - 1e-9 or b.y0 < inner.y0 - 1e-9:
            return False
        if b.x1 > inner.x1 + 1e-9 or b.y1 > inner.y1 + 1e-9:
            return False
        if any(_overlap(b, k) for k in self.keepouts):
            return False
        if self.corridor and not p.item.flat and _overlap(b, self.core):
            return False
        tall = p.tall_bounds()
        if tall is not None and _overlap(tall, self.core):
            return False
        return not any(
            _overlap(b, q.bounds(), ITEM_GAP) for q in self.placed if q.item.flat == p.item.flat
        )

    def _pose(self, item: FurnitureItem, where: str) -> tuple[float, float, float] | None:
        """A random candidate pose for `item`, or None if it cannot fit that way at all."""
        inner, rng = self.inner, self.rng
        hx, hy = item.half_extents
        if where == "wall":
            lengths = np.array([inner.depth, inner.depth, inner.width, inner.width])
            side = int(rng.choice(4, p=lengths / lengths.sum()))
            if side < 2:
                lo, hi = inner.y0 + hy, inner.y1 - hy
                if hi < lo:
                    return None
                along = _u(rng, lo, hi)
                if side == 0:
                    return (inner.x0 + WALL_GAP + hx, along, 0.0)
                return (inner.x1 - WALL_GAP - hx, along, math.pi)
            lo, hi = inner.x0 + hy, inner.x1 - hy
            if hi < lo:
                return None
            along = _u(rng, lo, hi)
            if side == 2:
                return (along, inner.y0 + WALL_GAP + hx, math.pi / 2)
            return (along, inner.y1 - WALL_GAP - hx, -math.pi / 2)
        yaw = float(rng.integers(4)) * math.pi / 2 - math.pi / 2
        ex, ey = (hy, hx) if round(yaw / (math.pi / 2)) % 2 else (hx, hy)
        cx, cy = inner.center
        if where == "center":
            return (cx + _u(rng, -0.4, 0.4), cy + _u(rng, -0.4, 0.4), yaw)
        margin = 0.5
        x_lo, x_hi = inner.x0 + ex + margin, inner.x1 - ex - margin
        y_lo, y_hi = inner.y0 + ey + margin, inner.y1 - ey - margin
        if x_hi < x_lo or y_hi < y_lo:
            return None
        return (_u(rng, x_lo, x_hi), _u(rng, y_lo, y_hi), yaw)

    def place(self, build: Callable[[], FurnitureItem], where: str) -> Placement | None:
        """Try random poses (rebuilding the item now and then) until one fits; None if none does."""
        item = build()
        for attempt in range(_ATTEMPTS):
            if attempt and attempt % _REBUILD_EVERY == 0:
                item = build()
            pose = self._pose(item, where)
            if pose is None:
                continue
            p = Placement(item, round(pose[0], 3), round(pose[1], 3), pose[2])
            if self.fits(p):
                self.placed.append(p)
                return p
        return None

    def place_relative(
        self, parent: Placement, item: FurnitureItem, dx: float, dy: float, dyaw: float
    ) -> None:
        """Place `item` at (dx, dy) in the parent's frame, turned by `dyaw`, if it fits."""
        c, s = math.cos(parent.yaw), math.sin(parent.yaw)
        x = parent.x + c * dx - s * dy
        y = parent.y + s * dx + c * dy
        yaw = math.remainder(parent.yaw + dyaw, 2 * math.pi)
        if abs(yaw + math.pi) < 1e-9:
            yaw = math.pi
        p = Placement(item, round(x, 3), round(y, 3), yaw)
        if self.fits(p):
            self.placed.append(p)


def _companions(placer: _Placer, name: str, parent: Placement, pal: Palette, p_keep: float) -> None:
    """Items that belong with a placed parent: nightstands, chairs, a coffee table."""
    rng = placer.rng
    phx, phy = parent.item.half_extents
    if name == "bed":
        for side in (-1, 1):
            if rng.uniform() < p_keep * 0.8:
                ns = nightstand(rng, pal)
                hx, hy = ns.half_extents
                placer.place_relative(parent, ns, -phx + hx, side * (phy + 0.05 + hy), 0.0)
    elif name == "desk" and rng.uniform() < p_keep:
        ch = chair(rng, pal)
        placer.place_relative(parent, ch, phx + 0.1 + ch.half_extents[0], 0.0, math.pi)
    elif name == "sofa" and rng.uniform() < p_keep * 0.6:
        ct = table(rng, pal, coffee=True)
        placer.place_relative(parent, ct, phx + 0.35 + ct.half_extents[0], 0.0, 0.0)
    elif name == "table" and parent.item.height > 0.6:
        ch = chair(rng, pal)
        chx = ch.half_extents[0]
        per_side = 2 if phy > 0.7 else 1
        for side in (-1, 1):
            for k in range(per_side):
                dy = 0.0 if per_side == 1 else (k - 0.5) * phy
                if rng.uniform() < p_keep * 0.85:
                    dyaw = math.pi if side > 0 else 0.0
                    placer.place_relative(parent, ch, side * (phx + 0.08 + chx), dy, dyaw)
            if rng.uniform() < p_keep * 0.4:
                dyaw = -math.pi / 2 if side > 0 else math.pi / 2
                placer.place_relative(parent, ch, 0.0, side * (phy + 0.08 + chx), dyaw)


def furnish_room(
    rect: Rect,
    room_type: RoomType,
    doors: Sequence[DoorSpec],
    pal: Palette,
    density: float,
    wall_thickness: float,
    rng: np.random.Generator,
    kitchenette: bool = False,
) -> list[Placement]:
    """Choose and place a room's furniture from the catalogue; items that don't fit are skipped.

    `doors` are the doors in this room's walls; `density` scales how many optional items are
    tried (0 = empty room); `kitchenette` adds kitchen items (for apartments without a kitchen).
    """
    placer = _Placer(rect, room_type, doors, wall_thickness, rng)
    entries = CATALOGUE[room_type] + (KITCHENETTE if kitchenette else ())
    for name, prob, slots, where in entries:
        p_keep = min(1.0, prob * density)
        n_slots = max(1, round(slots * max(1.0, density)))
        for _ in range(n_slots):
            if rng.uniform() >= p_keep:
                continue
            placed = placer.place(lambda name=name: BUILDERS[name](rng, pal), where)
            if placed is not None:
                _companions(placer, name, placed, pal, min(1.0, density))
    return placer.placed
