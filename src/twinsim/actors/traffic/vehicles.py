"""Traffic vehicles as data: the classes (car, van, truck, bus, bicycle) with their sizes and
driving parameters, and each vehicle's body built from primitives with its own materials.

Sizes follow the common classes of CARLA's blueprint library and European type approval
(a C-segment car 4.5 × 1.8 m, a panel van 5.2 × 2.0 m, a rigid truck 8 × 2.5 m, a city bus
12 × 2.55 m, a bicycle with its rider 1.8 × 0.6 m). The driving parameters are the
Intelligent Driver Model's (Treiber, Hennecke & Helbing 2000; Treiber & Kesting, *Traffic
Flow Dynamics*, 2013, table 11.2): maximum acceleration a, comfortable deceleration b,
minimum gap s0, time headway T; a class's desired speed is the lane's limit times the
vehicle's own factor, capped by the class's top speed (a bicycle rides at most 6 m/s).

Geoms are in the vehicle's frame: origin on the ground under the middle of the vehicle, x
forward, z up, as a traffic keyframe places it.
"""

from __future__ import annotations

import colorsys
import math
from dataclasses import dataclass

import numpy as np

from twinsim.model.base import Quat
from twinsim.model.roads import VEHICLE_LAMP_MATERIALS
from twinsim.model.scene import GeomSpec, MaterialSpec

_S = math.sqrt(0.5)
_WHEEL_AXIS: Quat = (_S, _S, 0.0, 0.0)  # a cylinder's z axis turned onto y


@dataclass(frozen=True)
class VehicleClass:
    """One class of traffic: its semantic class, size (m), IDM parameters and top speed."""

    name: str
    length_m: float
    width_m: float
    height_m: float
    accel_mps2: float  # IDM a
    decel_mps2: float  # IDM b (comfortable)
    min_gap_m: float  # IDM s0
    headway_s: float  # IDM T
    top_speed_mps: float
    wheel_radius_m: float


CLASSES: dict[str, VehicleClass] = {
    c.name: c
    for c in (
        VehicleClass("car", 4.5, 1.8, 1.45, 1.8, 2.5, 2.0, 1.4, 40.0, 0.32),
        VehicleClass("van", 5.2, 2.0, 2.2, 1.4, 2.2, 2.0, 1.5, 36.0, 0.34),
        VehicleClass("truck", 8.0, 2.5, 3.2, 1.0, 2.0, 2.5, 1.7, 25.0, 0.5),
        VehicleClass("bus", 12.0, 2.55, 3.1, 1.0, 2.0, 2.5, 1.7, 22.0, 0.5),
        VehicleClass("bicycle", 1.8, 0.6, 1.7, 1.0, 1.5, 1.5, 1.2, 6.0, 0.34),
    )
}


def _r4(v: float) -> float:
    return round(float(v), 4)


def _box(size, pos, material: str) -> GeomSpec:
    return GeomSpec(
        type="box",
        size=tuple(_r4(s) for s in size),
        pos=tuple(_r4(p) for p in pos),
        material=material,
    )


def _wheel(radius: float, half_width: float, x: float, y: float, material: str) -> GeomSpec:
    return GeomSpec(
        type="cylinder",
        size=(_r4(radius), _r4(half_width)),
        pos=(_r4(x), _r4(y), _r4(radius)),
        quat=_WHEEL_AXIS,
        material=material,
    )


def _paint(rng: np.random.Generator, name: str) -> MaterialSpec:
    """A car paint: mostly greys, whites and blacks, some colours (as real fleets are)."""
    if rng.uniform() < 0.6:
        v = float(rng.choice([0.08, 0.25, 0.5, 0.75, 0.92]))
        rgb = (v, v, v * 1.02)
    else:
        rgb = colorsys.hsv_to_rgb(rng.uniform(), rng.uniform(0.5, 0.9), rng.uniform(0.35, 0.85))
    rgba = (*(round(min(float(c), 1.0), 3) for c in rgb), 1.0)
    return MaterialSpec(name=name, rgba=rgba, specular=0.6, shininess=0.7, reflectance=0.1)


def lamp_materials() -> tuple[MaterialSpec, MaterialSpec]:
    """The head and tail lamp materials all vehicles share (`VEHICLE_LAMP_MATERIALS`)."""
    head, tail = VEHICLE_LAMP_MATERIALS
    return (
        MaterialSpec(name=head, rgba=(0.95, 0.94, 0.85, 1.0), specular=0.9, shininess=0.9),
        MaterialSpec(name=tail, rgba=(0.75, 0.04, 0.03, 1.0), specular=0.6, shininess=0.8),
    )


def vehicle_body(
    cls: VehicleClass, rng: np.random.Generator, name: str
) -> tuple[tuple[GeomSpec, ...], tuple[MaterialSpec, ...]]:
    """The geoms of one vehicle of class `cls` and its own materials (named after `name`); its
    lamps use the shared `lamp_materials` (a bicycle has none)."""
    paint = _paint(rng, f"{name}_paint")
    glass = MaterialSpec(
        name=f"{name}_glass",
        rgba=(0.08, 0.1, 0.12, 1.0),
        specular=0.9,
        shininess=0.9,
        reflectance=0.2,
    )
    tyre = MaterialSpec(name=f"{name}_tyre", rgba=(0.05, 0.05, 0.05, 1.0), specular=0.1)
    L, W, H, r = cls.length_m, cls.width_m, cls.height_m, cls.wheel_radius_m
    wheel_hw = 0.11 if cls.name != "bicycle" else 0.02
    if cls.name == "bicycle":
        geoms = (
            _wheel(r, wheel_hw, 0.55, 0.0, tyre.name),
            _wheel(r, wheel_hw, -0.55, 0.0, tyre.name),
            _box((0.5, 0.02, 0.02), (0.0, 0.0, r + 0.25), paint.name),  # frame
            _box((0.15, 0.18, 0.3), (-0.1, 0.0, 1.05), glass.name),  # the rider's torso
            _box((0.09, 0.09, 0.11), (-0.05, 0.0, 1.48), glass.name),  # head
        )
        return geoms, (paint, glass, tyre)
    axle = 0.5 * L - (0.9 if cls.name in ("car", "van") else 1.6)
    lower = 0.55 * H if cls.name == "car" else 0.8 * H
    clearance = 0.6 * r
    geoms = [
        _box(
            (L / 2, W / 2, (lower - clearance) / 2), (0.0, 0.0, (lower + clearance) / 2), paint.name
        ),
    ]
    if cls.name == "car":  # a cabin set back, with its glass
        cabin_l = 0.28 * L
        geoms.append(
            _box(
                (cabin_l, W / 2 - 0.08, (H - lower) / 2),
                (-0.05 * L, 0.0, (H + lower) / 2),
                glass.name,
            )
        )
    else:  # a box body, windows as a band
        geoms.append(
            _box((L / 2 - 0.02, W / 2 + 0.005, 0.18), (0.0, 0.0, lower - 0.35), glass.name)
        )
        geoms.append(_box((L / 2, W / 2, (H - lower) / 2), (0.0, 0.0, (H + lower) / 2), paint.name))
    for x in (axle, -axle):
        for y in (W / 2 - wheel_hw, -(W / 2 - wheel_hw)):
            geoms.append(_wheel(r, wheel_hw, x, y, tyre.name))
    head, tail = VEHICLE_LAMP_MATERIALS
    lamp_z = clearance + 0.75 * (lower - clearance)
    for y in (W / 2 - 0.28, -(W / 2 - 0.28)):  # lamps set into the front and rear faces
        geoms.append(_box((0.02, 0.16, 0.06), (L / 2 - 0.01, y, lamp_z), head))
        geoms.append(_box((0.02, 0.14, 0.05), (-L / 2 + 0.01, y, lamp_z), tail))
    return tuple(geoms), (paint, glass, tyre)
