"""Furniture to lie, sit and work at: beds, sofas, armchairs, tables, chairs, desks."""

from __future__ import annotations

import numpy as np

from twinsim.scene.furniture.kit import (
    FurnitureItem,
    Palette,
    box,
    cap,
    cyl,
    ell,
    make_item,
    uniform,
)


def bed(rng: np.random.Generator, pal: Palette) -> FurnitureItem:
    """Bed: frame, mattress, headboard at the back (-x), pillows, a blanket over the foot end."""
    length = uniform(rng, 1.95, 2.1)
    width = float(rng.choice([0.9, 1.2, 1.4, 1.6, 1.8]))
    head_h = uniform(rng, 0.8, 1.1)
    g = [
        box(length / 2, width / 2, 0.15, 0, 0, 0.15, pal.wood),
        box(length / 2 - 0.04, width / 2 - 0.03, 0.1, 0.02, 0, 0.4, pal.fabric),
        box(0.03, width / 2 + 0.02, head_h / 2, -length / 2 + 0.03, 0, head_h / 2, pal.wood),
        box(0.32 * length, width / 2 + 0.01, 0.02, 0.17 * length, 0, 0.51, pal.rug),
    ]
    n_pillows = 1 if width < 1.1 else 2
    for k in range(n_pillows):
        y = 0.0 if n_pillows == 1 else (k - 0.5) * width / 2
        g.append(ell(0.14, min(0.3, width / 2.4), 0.07, -length / 2 + 0.25, y, 0.55, pal.paint))
    return make_item("bed", g)


def sofa(rng: np.random.Generator, pal: Palette, seats: int | None = None) -> FurnitureItem:
    """Sofa: base, seat cushions, back rest at -x, two arm rests."""
    seats = seats or int(rng.integers(2, 4))
    depth = uniform(rng, 0.8, 0.95)
    seat_w = uniform(rng, 0.55, 0.7)
    arm = uniform(rng, 0.08, 0.18)
    width = seats * seat_w + 2 * arm
    back_h = uniform(rng, 0.8, 0.95)
    g = [
        box(depth / 2, width / 2 - arm, 0.12, 0, 0, 0.16, pal.fabric),
        box(
            0.1,
            width / 2 - arm,
            back_h / 2 - 0.02,
            -depth / 2 + 0.1,
            0,
            back_h / 2 + 0.02,
            pal.fabric,
        ),
        box(depth / 2, arm / 2, 0.3, 0, width / 2 - arm / 2, 0.3, pal.fabric),
        box(depth / 2, arm / 2, 0.3, 0, -width / 2 + arm / 2, 0.3, pal.fabric),
    ]
    for k in range(seats):
        y = -width / 2 + arm + seat_w * (k + 0.5)
        g.append(box(depth / 2 - 0.12, seat_w / 2 - 0.01, 0.07, 0.08, y, 0.35, pal.fabric))
        zc = (0.42 + back_h - 0.04) / 2
        hz = (back_h - 0.04 - 0.42) / 2
        g.append(box(0.05, seat_w / 2 - 0.02, hz, -depth / 2 + 0.25, y, zc, pal.fabric))
    for sx in (-1, 1):
        for sy in (-1, 1):
            g.append(
                cyl(0.025, 0.02, sx * (depth / 2 - 0.06), sy * (width / 2 - 0.06), 0.02, pal.wood)
            )
    return make_item("sofa", g)


def armchair(rng: np.random.Generator, pal: Palette) -> FurnitureItem:
    """Armchair: a one-seat sofa."""
    return make_item("armchair", list(sofa(rng, pal, seats=1).geoms))


def table(rng: np.random.Generator, pal: Palette, coffee: bool = False) -> FurnitureItem:
    """Table: rectangular (top + four legs) or round (top + pedestal); `coffee` makes it low."""
    height = uniform(rng, 0.38, 0.46) if coffee else uniform(rng, 0.72, 0.77)
    if not coffee and rng.uniform() < 0.3:
        r = uniform(rng, 0.45, 0.6)
        g = [
            cyl(r, 0.015, 0, 0, height - 0.015, pal.wood),
            cyl(0.04, (height - 0.03) / 2, 0, 0, (height - 0.03) / 2, pal.metal),
            cyl(0.25, 0.01, 0, 0, 0.01, pal.metal),
        ]
        return make_item("table", g)
    depth = uniform(rng, 0.5, 0.65) if coffee else uniform(rng, 0.8, 1.0)
    width = uniform(rng, 0.9, 1.2) if coffee else uniform(rng, 1.2, 1.8)
    leg_h = (height - 0.03) / 2
    g = [box(depth / 2, width / 2, 0.015, 0, 0, height - 0.015, pal.wood)]
    for sx in (-1, 1):
        for sy in (-1, 1):
            g.append(
                cyl(0.025, leg_h, sx * (depth / 2 - 0.06), sy * (width / 2 - 0.06), leg_h, pal.wood)
            )
    if coffee:
        g.append(box(depth / 2 - 0.06, width / 2 - 0.06, 0.01, 0, 0, 0.12, pal.wood))
    return make_item("table", g)


def chair(rng: np.random.Generator, pal: Palette) -> FurnitureItem:
    """Chair: seat, four legs, back rest at -x; the sitter faces +x."""
    w = uniform(rng, 0.2, 0.24)
    seat_h = uniform(rng, 0.43, 0.47)
    back_h = uniform(rng, 0.38, 0.5)
    mat = pal.wood if rng.uniform() < 0.6 else pal.paint
    g = [
        box(w, w, 0.02, 0, 0, seat_h, mat),
        box(0.015, w, back_h / 2, -w + 0.015, 0, seat_h + back_h / 2, mat),
    ]
    for sx in (-1, 1):
        for sy in (-1, 1):
            g.append(
                cyl(
                    0.015,
                    seat_h / 2 - 0.01,
                    sx * (w - 0.03),
                    sy * (w - 0.03),
                    seat_h / 2 - 0.01,
                    mat,
                )
            )
    return make_item("chair", g)


def desk(rng: np.random.Generator, pal: Palette) -> FurnitureItem:
    """Desk: top, side panel, drawer unit with handles, and a monitor at the back."""
    depth = uniform(rng, 0.6, 0.75)
    width = uniform(rng, 1.2, 1.6)
    h = 0.75
    g = [
        box(depth / 2, width / 2, 0.015, 0, 0, h - 0.015, pal.wood),
        box(
            depth / 2 - 0.02, 0.015, (h - 0.03) / 2, 0, width / 2 - 0.015, (h - 0.03) / 2, pal.wood
        ),
        box(depth / 2 - 0.02, 0.2, (h - 0.03) / 2, 0, -width / 2 + 0.2, (h - 0.03) / 2, pal.paint),
    ]
    for k in range(3):
        z = (k + 0.5) * (h - 0.03) / 3
        g.append(cap(0.008, 0.05, depth / 2 - 0.005, -width / 2 + 0.2, z, pal.metal, axis="y"))
    if rng.uniform() < 0.7:
        sw = uniform(rng, 0.25, 0.35)
        g.append(box(0.015, sw, sw * 0.3, -depth / 2 + 0.15, 0, h + 0.15 + sw * 0.3, pal.dark))
        g.append(box(0.08, 0.1, 0.006, -depth / 2 + 0.15, 0, h + 0.006, pal.dark))
        g.append(cyl(0.015, 0.075, -depth / 2 + 0.12, 0, h + 0.08, pal.dark))
    return make_item("desk", g)
