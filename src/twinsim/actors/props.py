"""The props GRADE throws around as flying objects: balls, boxes, toys (a car or a teddy bear)
and bottles, each built from primitives with its own uniquely named materials.

Geoms are given in the object frame, centred on its origin (`twinsim.actors.flying` scales and
moves them); every size and colour is drawn from the generator passed in.
"""

from __future__ import annotations

import colorsys
import math
from collections.abc import Callable, Sequence

import numpy as np

from twinsim.model.base import Quat
from twinsim.model.scene import GeomSpec, MaterialSpec
from twinsim.scene.furniture.kit import geoms_bounds

Parts = tuple[tuple[GeomSpec, ...], tuple[MaterialSpec, ...]]  # an object's geoms, materials
Builder = Callable[[np.random.Generator, str], Parts]

_S = math.sqrt(0.5)
_AXIS_Y: Quat = (_S, _S, 0.0, 0.0)  # turns a cylinder's z axis onto y
_AXIS_X: Quat = (_S, 0.0, _S, 0.0)  # turns a capsule's z axis onto x


def _r3(v: float) -> float:
    return round(float(v), 3)


def _r4(v: float) -> float:
    return round(float(v), 4)


def _color(rng: np.random.Generator, hue: tuple[float, float], sat, val) -> tuple[float, ...]:
    rgb = colorsys.hsv_to_rgb(
        (rng.uniform(*hue) % 360.0) / 360.0, rng.uniform(*sat), rng.uniform(*val)
    )
    return tuple(_r3(c) for c in rgb)


def _material(
    rng: np.random.Generator, name: str, rgb: tuple[float, ...], glossy: bool = False
) -> MaterialSpec:
    lo = 0.4 if glossy else 0.05
    return MaterialSpec(
        name=name,
        rgba=(*rgb, 1.0),
        specular=_r3(rng.uniform(lo, lo + 0.4)),
        shininess=_r3(rng.uniform(lo, lo + 0.4)),
        reflectance=_r3(rng.uniform(0.0, 0.15) if glossy else 0.0),
    )


def _geom(kind: str, size: Sequence[float], pos: Sequence[float], mat: str, quat=None) -> GeomSpec:
    extra = {} if quat is None else {"quat": quat}
    return GeomSpec(
        type=kind,
        size=tuple(_r4(s) for s in size),
        pos=tuple(_r4(p) for p in pos),
        material=mat,
        **extra,
    )


def _centred(geoms: list[GeomSpec]) -> tuple[GeomSpec, ...]:
    """The geoms moved so their bounding box is centred on the object's origin."""
    lo, hi = geoms_bounds(geoms)
    c = (lo + hi) / 2
    return tuple(
        g.model_copy(update={"pos": tuple(_r4(p - o) for p, o in zip(g.pos, c, strict=True))})
        for g in geoms
    )


def ball(rng: np.random.Generator, name: str, radius: float | None = None) -> Parts:
    """A glossy ball, 8–28 cm across (`radius` overrides the random size)."""
    r = float(rng.uniform(0.04, 0.14)) if radius is None else radius
    mat = _material(rng, f"mat_{name}", _color(rng, (0, 360), (0.5, 1.0), (0.5, 1.0)), True)
    return (_geom("sphere", (r,), (0, 0, 0), mat.name),), (mat,)


def box(rng: np.random.Generator, name: str) -> Parts:
    """A cardboard box with a lid and a tape strip, or a gift box with a crossed ribbon."""
    hx, hy, hz = (float(rng.uniform(0.06, 0.2)) for _ in range(3))
    lid_h = float(rng.uniform(0.01, 0.02))
    gift = rng.uniform() < 0.35
    if gift:
        body = _color(rng, (0, 360), (0.5, 0.9), (0.5, 0.95))
        lid = body
        band = _color(rng, (0, 360), (0.6, 1.0), (0.7, 1.0))
    else:
        body = _color(rng, (22, 38), (0.45, 0.65), (0.5, 0.75))
        lid = tuple(_r3(min(1.0, c * 1.1)) for c in body)
        band = _color(rng, (20, 45), (0.1, 0.4), (0.6, 0.9))
    mats = (
        _material(rng, f"mat_{name}_body", body, gift),
        _material(rng, f"mat_{name}_lid", lid, gift),
        _material(rng, f"mat_{name}_band", band, True),
    )
    m_body, m_lid, m_band = (m.name for m in mats)
    top = hz + lid_h
    geoms = [
        _geom("box", (hx, hy, hz), (0, 0, 0), m_body),
        _geom("box", (hx + 0.004, hy + 0.004, lid_h), (0, 0, top), m_lid),
        _geom("box", (hx + 0.006, 0.025, lid_h + 0.002), (0, 0, top), m_band),
    ]
    if gift:
        geoms.append(_geom("box", (0.025, hy + 0.006, lid_h + 0.002), (0, 0, top), m_band))
    return _centred(geoms), mats


def _toy_car(rng: np.random.Generator, name: str) -> tuple[list[GeomSpec], list[MaterialSpec]]:
    length = float(rng.uniform(0.14, 0.32))
    w, h = 0.45 * length, 0.12 * length
    mats = [
        _material(rng, f"mat_{name}_paint", _color(rng, (0, 360), (0.6, 1.0), (0.6, 1.0)), True),
        _material(rng, f"mat_{name}_window", _color(rng, (190, 220), (0.1, 0.3), (0.5, 0.8)), True),
        _material(rng, f"mat_{name}_tyre", _color(rng, (0, 360), (0.0, 0.1), (0.05, 0.15))),
    ]
    paint, window, tyre = (m.name for m in mats)
    wheel_r = 0.12 * length
    cabin_h = 0.09 * length
    geoms = [
        _geom("box", (length / 2, w / 2, h), (0, 0, wheel_r + 0.6 * h), paint),
        _geom(
            "box",
            (0.24 * length, w / 2 - 0.004, cabin_h),
            (-0.04 * length, 0, wheel_r + 1.6 * h + cabin_h),
            window,
        ),
    ]
    for sx in (-1, 1):
        for sy in (-1, 1):
            pos = (sx * 0.3 * length, sy * (w / 2), wheel_r)
            geoms.append(_geom("cylinder", (wheel_r, 0.05 * length), pos, tyre, _AXIS_Y))
    return geoms, mats


def _teddy(rng: np.random.Generator, name: str) -> tuple[list[GeomSpec], list[MaterialSpec]]:
    h = float(rng.uniform(0.18, 0.36))
    fur = _color(rng, (20, 45), (0.3, 0.8), (0.3, 0.8))
    mats = [
        _material(rng, f"mat_{name}_fur", fur),
        _material(rng, f"mat_{name}_muzzle", tuple(_r3(min(1.0, c * 1.35)) for c in fur)),
        _material(rng, f"mat_{name}_eyes", (0.03, 0.03, 0.03), True),
    ]
    m_fur, m_muzzle, m_eyes = (m.name for m in mats)
    body_z, head_z = 0.3 * h, 0.74 * h
    head_r = 0.17 * h
    geoms = [
        _geom("ellipsoid", (0.17 * h, 0.19 * h, 0.24 * h), (0, 0, body_z), m_fur),
        _geom("sphere", (head_r,), (0, 0, head_z), m_fur),
        _geom("sphere", (0.08 * h,), (0.14 * h, 0, head_z - 0.03 * h), m_muzzle),
    ]
    for sy in (-1, 1):
        geoms += [
            _geom("sphere", (0.06 * h,), (0, sy * 0.13 * h, head_z + 0.13 * h), m_fur),
            _geom("sphere", (0.022 * h,), (0.15 * h, sy * 0.06 * h, head_z + 0.05 * h), m_eyes),
            _geom("capsule", (0.05 * h, 0.08 * h), (0.03 * h, sy * 0.2 * h, 0.38 * h), m_fur),
            _geom(
                "capsule", (0.06 * h, 0.07 * h), (0.1 * h, sy * 0.1 * h, 0.06 * h), m_fur, _AXIS_X
            ),
        ]
    return geoms, mats


def toy(rng: np.random.Generator, name: str) -> Parts:
    """A toy car (body, cabin, four wheels) or a teddy bear (ellipsoid body, head, limbs)."""
    geoms, mats = (_toy_car if rng.uniform() < 0.5 else _teddy)(rng, name)
    return _centred(geoms), tuple(mats)


def bottle(rng: np.random.Generator, name: str) -> Parts:
    """A bottle 20–34 cm tall: body, shoulder, neck, cap and a label band."""
    h = float(rng.uniform(0.2, 0.34))
    r = float(rng.uniform(0.03, 0.045))
    glass = _color(rng, (0, 360), (0.2, 0.9), (0.2, 0.8))
    mats = (
        _material(rng, f"mat_{name}_glass", glass, True),
        _material(rng, f"mat_{name}_label", _color(rng, (0, 360), (0.0, 0.9), (0.5, 1.0))),
        _material(rng, f"mat_{name}_cap", _color(rng, (0, 360), (0.3, 1.0), (0.3, 0.9)), True),
    )
    m_glass, m_label, m_cap = (m.name for m in mats)
    body_h = 0.33 * h
    neck_h = 0.1 * h
    shoulder_z = 2 * body_h
    neck_z = shoulder_z + 0.6 * r + neck_h * 0.6
    geoms = [
        _geom("cylinder", (r, body_h), (0, 0, body_h), m_glass),
        _geom("ellipsoid", (r, r, 0.7 * r), (0, 0, shoulder_z), m_glass),
        _geom("cylinder", (0.35 * r, neck_h), (0, 0, neck_z), m_glass),
        _geom("cylinder", (0.42 * r, 0.025 * h), (0, 0, neck_z + neck_h), m_cap),
        _geom("cylinder", (r + 0.001, 0.35 * body_h), (0, 0, body_h), m_label),
    ]
    return _centred(geoms), mats


BUILDERS: dict[str, Builder] = {"ball": ball, "box": box, "toy": toy, "bottle": bottle}
