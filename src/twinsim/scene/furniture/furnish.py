"""Furnishing a room: items from the catalogue placed by rejection sampling, collision-free.

Placement puts items back-to-wall (yaw a multiple of 90°, +x pointing into the room) or in the
room's interior, with no footprint overlaps, clear of a keep-out box on both sides of every
door, and with every part taller than `CORE_MAX_HEIGHT` clear of a free core in the room's
centre so a drone can fly through (in corridors whole footprints stay off the centre strip).
Flat items (rugs) form their own layer: other furniture may stand on them, but rugs never
overlap each other or a door keep-out. Standing items keep a room's doors joined by 1 m
passages (`twinsim.scene.furniture.passages`), so ground robots cross every room.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from twinsim.model.scene import DoorSpec, RoomType
from twinsim.scene.furniture.catalogue import BUILDERS, CATALOGUE, KITCHENETTE
from twinsim.scene.furniture.kit import FurnitureItem, Palette, uniform
from twinsim.scene.furniture.living import chair, table
from twinsim.scene.furniture.passages import Passages
from twinsim.scene.furniture.storage import nightstand
from twinsim.scene.layout import Rect

DOOR_KEEPOUT_DEPTH = 1.0
DOOR_KEEPOUT_MARGIN = 0.1
WALL_GAP = 0.02
ITEM_GAP = 0.03
_ATTEMPTS = 40
_REBUILD_EVERY = 8


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


def _overlap(a: Rect, b: Rect, margin: float = 0.0) -> bool:
    """Whether two rectangles overlap with positive area, or come closer than `margin`."""
    return (
        a.x0 < b.x1 + margin
        and b.x0 < a.x1 + margin
        and a.y0 < b.y1 + margin
        and b.y0 < a.y1 + margin
    )


class RoomPlacer:
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
        self.passages = Passages(self.inner, self.keepouts)

    def fits(self, p: Placement) -> bool:
        """Inside the room, out of door keep-outs and other items; tall parts out of the core;
        standing items leave the doors joined."""
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
        if any(
            _overlap(b, q.bounds(), ITEM_GAP) for q in self.placed if q.item.flat == p.item.flat
        ):
            return False
        return p.item.flat or self.passages.keeps(b)

    def _accept(self, p: Placement) -> None:
        """Keep a placement that fits."""
        self.placed.append(p)
        if not p.item.flat:
            self.passages.add(p.bounds())

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
                along = uniform(rng, lo, hi)
                if side == 0:
                    return (inner.x0 + WALL_GAP + hx, along, 0.0)
                return (inner.x1 - WALL_GAP - hx, along, math.pi)
            lo, hi = inner.x0 + hy, inner.x1 - hy
            if hi < lo:
                return None
            along = uniform(rng, lo, hi)
            if side == 2:
                return (along, inner.y0 + WALL_GAP + hx, math.pi / 2)
            return (along, inner.y1 - WALL_GAP - hx, -math.pi / 2)
        yaw = float(rng.integers(4)) * math.pi / 2 - math.pi / 2
        ex, ey = (hy, hx) if round(yaw / (math.pi / 2)) % 2 else (hx, hy)
        cx, cy = inner.center
        if where == "center":
            return (cx + uniform(rng, -0.4, 0.4), cy + uniform(rng, -0.4, 0.4), yaw)
        margin = 0.5
        x_lo, x_hi = inner.x0 + ex + margin, inner.x1 - ex - margin
        y_lo, y_hi = inner.y0 + ey + margin, inner.y1 - ey - margin
        if x_hi < x_lo or y_hi < y_lo:
            return None
        return (uniform(rng, x_lo, x_hi), uniform(rng, y_lo, y_hi), yaw)

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
                self._accept(p)
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
            self._accept(p)


def _companions(
    placer: RoomPlacer, name: str, parent: Placement, pal: Palette, p_keep: float
) -> None:
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
) -> RoomPlacer:
    """Choose and place a room's furniture from the catalogue; items that don't fit are skipped.
    The placer holds them (`placed`) and can place more beside them.

    `doors` are the doors in this room's walls; `density` scales how many optional items are
    tried (0 = empty room); `kitchenette` adds kitchen items (for apartments without a kitchen).
    """
    placer = RoomPlacer(rect, room_type, doors, wall_thickness, rng)
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
    return placer
