"""What the furniture builders share: palette, item type, primitive geoms and footprints.

One place for the geom conventions (sizes and positions rounded to mm) every family builds with.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from shapely.geometry import Polygon

from twinsim.geometry import primitive_half_extents, unit_quat_wxyz_to_matrix
from twinsim.model.base import Quat
from twinsim.model.scene import GeomSpec, ObjectSpec

CORE_MAX_HEIGHT = 0.8
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


def _r3(v: float) -> float:
    """Rounded to the millimetre, so generated worlds print and compare exactly."""
    return round(float(v), 3)


def box(hx: float, hy: float, hz: float, x: float, y: float, z: float, mat: str) -> GeomSpec:
    """A box of half sizes (hx, hy, hz) centred at (x, y, z)."""
    return GeomSpec(
        type="box", size=(_r3(hx), _r3(hy), _r3(hz)), pos=(_r3(x), _r3(y), _r3(z)), material=mat
    )


def cyl(r: float, hh: float, x: float, y: float, z: float, mat: str, axis: str = "z") -> GeomSpec:
    """A cylinder of radius `r` and half height `hh` along `axis`, centred at (x, y, z)."""
    return GeomSpec(
        type="cylinder",
        size=(_r3(r), _r3(hh)),
        pos=(_r3(x), _r3(y), _r3(z)),
        quat=_AXIS_QUAT[axis],
        material=mat,
    )


def cap(r: float, hh: float, x: float, y: float, z: float, mat: str, axis: str = "z") -> GeomSpec:
    """A capsule of radius `r` and half length `hh` along `axis`, centred at (x, y, z)."""
    return GeomSpec(
        type="capsule",
        size=(_r3(r), _r3(hh)),
        pos=(_r3(x), _r3(y), _r3(z)),
        quat=_AXIS_QUAT[axis],
        material=mat,
    )


def sph(r: float, x: float, y: float, z: float, mat: str) -> GeomSpec:
    """A sphere of radius `r` centred at (x, y, z)."""
    return GeomSpec(type="sphere", size=(_r3(r),), pos=(_r3(x), _r3(y), _r3(z)), material=mat)


def ell(rx: float, ry: float, rz: float, x: float, y: float, z: float, mat: str) -> GeomSpec:
    """An axis-aligned ellipsoid of radii (rx, ry, rz) centred at (x, y, z)."""
    return GeomSpec(
        type="ellipsoid",
        size=(_r3(rx), _r3(ry), _r3(rz)),
        pos=(_r3(x), _r3(y), _r3(z)),
        material=mat,
    )


def make_item(cls: str, geoms: list[GeomSpec], flat: bool = False) -> FurnitureItem:
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


def uniform(rng: np.random.Generator, lo: float, hi: float) -> float:
    """One uniform draw in [lo, hi) as a Python float."""
    return float(rng.uniform(lo, hi))


def doored_box(
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
        box(
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
        g.append(box(depth / 2 - 0.06, width / 2 - 0.03, plinth / 2, -0.02, 0, plinth / 2, handle))
    door_w = width / n_doors
    handle_len = min(0.12, (height - plinth) / 4)
    for k in range(n_doors):
        y = -width / 2 + door_w * (k + 0.5)
        g.append(
            box(
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
            cap(
                0.008,
                handle_len / 2,
                depth / 2 + 0.006,
                hy,
                plinth + (height - plinth) * uniform(rng, 0.55, 0.7),
                handle,
            )
        )
    return g
