"""Lights and decoration: TV, floor and ceiling lamps, potted plants, rugs."""

from __future__ import annotations

import math

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


def tv(rng: np.random.Generator, pal: Palette) -> FurnitureItem:
    """Flat-screen TV on a floor stand (base plate, column, screen facing +x)."""
    width = uniform(rng, 0.9, 1.4)
    sh = width * 9 / 16
    zc = uniform(rng, 1.0, 1.2)
    g = [
        box(0.15, 0.28, 0.01, 0, 0, 0.01, pal.metal),
        cyl(0.025, (zc - 0.02) / 2, -0.05, 0, 0.02 + (zc - 0.02) / 2, pal.metal),
        box(0.025, width / 2, sh / 2, 0.0, 0, zc, pal.dark),
        box(0.002, width / 2 - 0.02, sh / 2 - 0.02, 0.026, 0, zc, pal.metal),
    ]
    return make_item("tv", g)


def lamp(rng: np.random.Generator, pal: Palette) -> FurnitureItem:
    """Floor lamp: base disc, pole, and a cylindrical or round shade."""
    h = uniform(rng, 1.4, 1.8)
    g = [
        cyl(uniform(rng, 0.12, 0.17), 0.012, 0, 0, 0.012, pal.metal),
        cyl(0.012, h / 2, 0, 0, h / 2, pal.metal),
    ]
    if rng.uniform() < 0.5:
        g.append(cyl(uniform(rng, 0.15, 0.22), 0.12, 0, 0, h, pal.shade))
    else:
        g.append(ell(0.2, 0.2, 0.14, 0, 0, h, pal.shade))
    return make_item("lamp", g)


def plant(rng: np.random.Generator, pal: Palette) -> FurnitureItem:
    """Potted plant: pot, soil, stems, and a cluster of foliage ellipsoids."""
    r = uniform(rng, 0.1, 0.2)
    ph = uniform(rng, 0.2, 0.45)
    g = [cyl(r, ph / 2, 0, 0, ph / 2, pal.pot), cyl(r - 0.015, 0.005, 0, 0, ph, pal.soil)]
    for _ in range(int(rng.integers(3, 8))):
        a = uniform(rng, 0, 2 * math.pi)
        d = uniform(rng, 0.0, r + 0.08)
        z = ph + uniform(rng, 0.1, 0.3 + 2 * r)
        fr = uniform(rng, 0.07, 0.12 + r * 0.5)
        x, y = d * math.cos(a), d * math.sin(a)
        g.append(cap(0.008, (z - ph) / 2, x / 2, y / 2, ph + (z - ph) / 2, pal.foliage))
        g.append(
            ell(fr, fr * uniform(rng, 0.6, 1.0), fr * uniform(rng, 0.5, 0.9), x, y, z, pal.foliage)
        )
    return make_item("plant", g)


def rug(rng: np.random.Generator, pal: Palette) -> FurnitureItem:
    """Flat rug (1 cm); other furniture may stand on it."""
    d, w = uniform(rng, 1.0, 2.0), uniform(rng, 1.4, 2.8)
    return make_item("rug", [box(d / 2, w / 2, 0.005, 0, 0, 0.005, pal.rug)], flat=True)


def ceiling_lamp(rng: np.random.Generator, pal: Palette) -> FurnitureItem:
    """Ceiling light fixture hanging below z = 0 (its object origin is on the ceiling)."""
    r = uniform(rng, 0.15, 0.28)
    g = [cyl(0.04, 0.01, 0, 0, -0.01, pal.metal), cyl(r, 0.025, 0, 0, -0.045, pal.shade)]
    return make_item("lamp", g)
