"""Furniture that stores things: bookshelves, cabinets, wardrobes, nightstands, counters."""

from __future__ import annotations

import numpy as np

from twinsim.scene.furniture.kit import (
    FurnitureItem,
    Palette,
    box,
    cap,
    doored_box,
    make_item,
    sph,
    uniform,
)


def shelf(rng: np.random.Generator, pal: Palette) -> FurnitureItem:
    """Bookshelf: sides, back, boards, and rows of books of random sizes and colours."""
    depth = uniform(rng, 0.26, 0.4)
    width = uniform(rng, 0.7, 1.2)
    height = uniform(rng, 1.6, 2.0)
    levels = int(rng.integers(4, 6))
    g = [
        box(depth / 2, 0.012, height / 2, 0, width / 2 - 0.012, height / 2, pal.wood),
        box(depth / 2, 0.012, height / 2, 0, -width / 2 + 0.012, height / 2, pal.wood),
        box(0.006, width / 2 - 0.024, height / 2, -depth / 2 + 0.006, 0, height / 2, pal.wood),
    ]
    pitch = (height - 0.04) / levels
    inner_w = width - 0.05
    for k in range(levels + 1):
        g.append(
            box(depth / 2 - 0.006, width / 2 - 0.024, 0.01, 0.006, 0, 0.01 + k * pitch, pal.wood)
        )
    for k in range(levels):
        if rng.uniform() < 0.2:
            continue
        z0 = 0.02 + k * pitch
        y = -inner_w / 2 + uniform(rng, 0.0, 0.15)
        for _ in range(8):
            bw = uniform(rng, 0.02, 0.06)
            if y + bw > inner_w / 2:
                break
            bh = min(pitch - 0.04, uniform(rng, 0.16, 0.3))
            bd = min(depth - 0.04, uniform(rng, 0.14, 0.24))
            mat = pal.books[int(rng.integers(len(pal.books)))]
            g.append(
                box(
                    bd / 2,
                    bw / 2,
                    bh / 2,
                    -depth / 2 + 0.012 + bd / 2,
                    y + bw / 2,
                    z0 + bh / 2,
                    mat,
                )
            )
            y += bw + (uniform(rng, 0.0, 0.1) if rng.uniform() < 0.3 else 0.003)
    return make_item("shelf", g)


def cabinet(rng: np.random.Generator, pal: Palette) -> FurnitureItem:
    """Low cabinet / sideboard with doors, handles and a slightly overhanging top."""
    depth = uniform(rng, 0.35, 0.5)
    width = uniform(rng, 0.6, 1.4)
    height = uniform(rng, 0.6, 0.9)
    n = max(1, round(width / 0.45))
    g = doored_box(rng, depth, width, height - 0.02, n, pal.wood, pal.paint, pal.metal, plinth=0.06)
    g.append(box(depth / 2 + 0.01, width / 2 + 0.01, 0.01, 0, 0, height - 0.01, pal.wood))
    return make_item("cabinet", g)


def wardrobe(rng: np.random.Generator, pal: Palette) -> FurnitureItem:
    """Tall wardrobe with two or three doors and long handles."""
    depth = uniform(rng, 0.55, 0.65)
    width = uniform(rng, 1.0, 1.8)
    height = uniform(rng, 1.9, 2.1)
    n = 2 if width < 1.3 else 3
    g = doored_box(rng, depth, width, height, n, pal.wood, pal.wood, pal.metal, plinth=0.08)
    return make_item("wardrobe", g)


def counter(rng: np.random.Generator, pal: Palette) -> FurnitureItem:
    """Kitchen counter run: base cabinets, stone top, wall-side splash strip, maybe a tap."""
    depth = 0.62
    width = uniform(rng, 1.2, 2.4)
    n = max(2, round(width / 0.6))
    g = doored_box(rng, depth - 0.02, width, 0.86, n, pal.paint, pal.paint, pal.metal, plinth=0.1)
    g.append(box(depth / 2, width / 2, 0.02, 0, 0, 0.88, pal.ceramic))
    if rng.uniform() < 0.5:
        y = uniform(rng, -width / 2 + 0.3, width / 2 - 0.3)
        g.append(box(0.2, 0.25, 0.004, 0.0, y, 0.902, pal.metal))
        g.append(cap(0.012, 0.12, -depth / 2 + 0.06, y, 1.02, pal.metal))
        g.append(cap(0.01, 0.08, -depth / 2 + 0.14, y, 1.13, pal.metal, axis="x"))
    return make_item("counter", g)


def nightstand(rng: np.random.Generator, pal: Palette) -> FurnitureItem:
    """Bedside table with two drawers and knobs."""
    d, w, h = uniform(rng, 0.35, 0.45), uniform(rng, 0.4, 0.5), uniform(rng, 0.45, 0.6)
    g = [box(d / 2 - 0.01, w / 2, h / 2, -0.01, 0, h / 2, pal.wood)]
    for k in range(2):
        z = h * (0.27 + 0.46 * k)
        g.append(box(0.008, w / 2 - 0.02, h * 0.21, d / 2 - 0.012, 0, z, pal.paint))
        g.append(sph(0.015, d / 2 + 0.005, 0, z, pal.metal))
    return make_item("nightstand", g)
