"""Kitchen appliances and bathroom fittings: fridge, cooker, toilet, bathtub, wash basin."""

from __future__ import annotations

import numpy as np

from twinsim.scene.furniture.kit import (
    FurnitureItem,
    Palette,
    box,
    cap,
    cyl,
    doored_box,
    ell,
    make_item,
    uniform,
)


def refrigerator(rng: np.random.Generator, pal: Palette) -> FurnitureItem:
    """Fridge-freezer: body, two doors on +x, long vertical handles."""
    d, w, h = uniform(rng, 0.6, 0.7), uniform(rng, 0.58, 0.72), uniform(rng, 1.75, 1.95)
    split = h * uniform(rng, 0.3, 0.4)
    mat = pal.paint if rng.uniform() < 0.5 else pal.metal
    g = [
        box(d / 2 - 0.02, w / 2, h / 2, -0.02, 0, h / 2, mat),
        box(0.015, w / 2 - 0.005, split / 2 - 0.01, d / 2 - 0.025, 0, split / 2 + 0.02, mat),
        box(
            0.015,
            w / 2 - 0.005,
            (h - split) / 2 - 0.02,
            d / 2 - 0.025,
            0,
            split + (h - split) / 2,
            mat,
        ),
        cap(0.012, split / 2 - 0.1, d / 2 + 0.002, w / 2 - 0.06, split * 0.55, pal.dark),
        cap(
            0.012,
            (h - split) / 4,
            d / 2 + 0.002,
            w / 2 - 0.06,
            split + (h - split) * 0.35,
            pal.dark,
        ),
    ]
    return make_item("refrigerator", g)


def stove(rng: np.random.Generator, pal: Palette) -> FurnitureItem:
    """Cooker: body, hob with four burners, oven door window, handle and knobs."""
    d, w, h = 0.6, uniform(rng, 0.5, 0.6), 0.88
    g = [
        box(d / 2, w / 2, h / 2 - 0.01, 0, 0, h / 2 - 0.01, pal.metal),
        box(d / 2, w / 2, 0.01, 0, 0, h - 0.01, pal.dark),
        box(0.005, w / 2 - 0.06, 0.16, d / 2 + 0.002, 0, 0.38, pal.dark),
        cap(0.012, w / 2 - 0.1, d / 2 + 0.04, 0, 0.6, pal.metal, axis="y"),
    ]
    for sx in (-1, 1):
        for sy in (-1, 1):
            g.append(
                cyl(uniform(rng, 0.06, 0.09), 0.006, sx * d / 4, sy * w / 4, h + 0.004, pal.metal)
            )
    for k in range(4):
        g.append(cyl(0.02, 0.012, d / 2 + 0.012, (k - 1.5) * w / 5, h - 0.08, pal.dark, axis="x"))
    return make_item("stove", g)


def toilet(rng: np.random.Generator, pal: Palette) -> FurnitureItem:
    """Toilet: cistern at the back, bowl, seat, pedestal."""
    d = uniform(rng, 0.62, 0.7)
    w = uniform(rng, 0.36, 0.42)
    g = [
        box(0.09, w / 2, 0.19, -d / 2 + 0.09, 0, 0.6, pal.ceramic),
        ell(0.25, w / 2 - 0.01, 0.16, d / 2 - 0.25, 0, 0.26, pal.ceramic),
        box(0.15, w / 2 - 0.07, 0.1, -d / 2 + 0.3, 0, 0.1, pal.ceramic),
        ell(0.24, w / 2 - 0.02, 0.02, d / 2 - 0.25, 0, 0.43, pal.paint),
    ]
    return make_item("toilet", g)


def bathtub(rng: np.random.Generator, pal: Palette) -> FurnitureItem:
    """Bathtub along the wall: hollow shell (floor, four rims) and a tap at one end."""
    d = uniform(rng, 0.68, 0.8)
    length = uniform(rng, 1.5, 1.8)
    h = uniform(rng, 0.5, 0.6)
    rim = 0.06
    g = [
        box(d / 2, length / 2, 0.05, 0, 0, 0.05, pal.ceramic),
        box(
            rim / 2, length / 2, (h - 0.1) / 2, d / 2 - rim / 2, 0, 0.1 + (h - 0.1) / 2, pal.ceramic
        ),
        box(
            rim / 2,
            length / 2,
            (h - 0.1) / 2,
            -d / 2 + rim / 2,
            0,
            0.1 + (h - 0.1) / 2,
            pal.ceramic,
        ),
        box(
            d / 2 - rim,
            rim / 2,
            (h - 0.1) / 2,
            0,
            length / 2 - rim / 2,
            0.1 + (h - 0.1) / 2,
            pal.ceramic,
        ),
        box(
            d / 2 - rim,
            rim / 2,
            (h - 0.1) / 2,
            0,
            -length / 2 + rim / 2,
            0.1 + (h - 0.1) / 2,
            pal.ceramic,
        ),
        cap(0.015, 0.06, -d / 2 + 0.03, length / 2 - 0.2, h + 0.06, pal.metal),
        cap(0.012, 0.05, -d / 2 + 0.08, length / 2 - 0.2, h + 0.12, pal.metal, axis="x"),
    ]
    return make_item("bathtub", g)


def sink(rng: np.random.Generator, pal: Palette) -> FurnitureItem:
    """Wash basin on a pedestal or a vanity unit, with a tap."""
    d = uniform(rng, 0.4, 0.5)
    w = uniform(rng, 0.45, 0.65)
    top = uniform(rng, 0.8, 0.88)
    if rng.uniform() < 0.5:
        g = [cyl(0.08, (top - 0.12) / 2, -d / 2 + 0.15, 0, (top - 0.12) / 2, pal.ceramic)]
    else:
        g = doored_box(rng, d, w, top - 0.12, 2, pal.wood, pal.paint, pal.metal, plinth=0.05)
    g += [
        box(d / 2, w / 2, 0.06, 0, 0, top - 0.06, pal.ceramic),
        box(d / 2 - 0.08, w / 2 - 0.06, 0.003, 0.02, 0, top + 0.003, pal.metal),
        cap(0.012, 0.06, -d / 2 + 0.05, 0, top + 0.06, pal.metal),
        cap(0.01, 0.04, -d / 2 + 0.09, 0, top + 0.12, pal.metal, axis="x"),
    ]
    return make_item("sink", g)
