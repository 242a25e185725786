"""The ego car as data: its config, its resolved spec and its body, a CARLA-class saloon
(Lincoln MKZ-sized: 4.9 × 1.9 m, wheelbase 2.9 m, 1 800 kg) on a planar base.

The chassis rides on three joints, slides x, y and a hinge yaw (as the omni base), so qpos
reads as the planar pose; the car's dynamics are a dynamic bicycle model whose tyre and drive
forces the controller computes and applies to those joints each step (`car_controller`), and
MuJoCo integrates them: the IMU sees the accelerations the tyres give. The body frame is on the
ground-level centre of the footprint, raised to the axle height `BODY_Z_M`, x forward; the
wheels are drawn and carry nothing (the road is flat where a car drives).
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import Field, model_validator

from twinsim.model.body import BodySpec, LinkGeomSpec
from twinsim.robots.common.ground_tour import GroundConfig, GroundShape, GroundSpec
from twinsim.robots.omni.spec import planar_body  # the same planar x, y, yaw joints

ROOT_LINK = "car_body"
BODY_Z_M = 0.35  # the body frame's height: the axles'
WHEEL_RADIUS_M = 0.35
WHEEL_LIFT_M = 0.02  # the drawn wheels clear the road: the bicycle model carries the car
CLEARANCE_M = 0.18  # the underbody above the road
#: the centre of mass: midway between the axles, as the bicycle model has it (equal axle
#: loads), 0.55 m above the road, a saloon's centre-of-gravity height
COM = (0.0, 0.0, 0.55 - BODY_Z_M)
#: CARLA-Loc's stereo rig sits on the roof above the windscreen
CAMERA_POS = (0.6, 0.0, 1.55 - BODY_Z_M)
LIDAR_POS = (0.0, 0.0, 1.9 - BODY_Z_M)
PAINT = (0.55, 0.07, 0.08, 1.0)
GLASS = (0.08, 0.1, 0.12, 1.0)
TYRE = (0.05, 0.05, 0.05, 1.0)


class CarConfig(GroundConfig):
    """A car driven along a planned route: size, mass, steering and comfort limits (CARLA-Loc
    drove by hand for smooth IMU data; these limits give a human-like drive)."""

    kind: Literal["car"] = "car"
    length_m: float = Field(4.9, gt=1.0, le=20.0)
    width_m: float = Field(1.9, gt=0.5, le=3.5)
    height_m: float = Field(1.5, gt=0.5, le=5.0)
    wheelbase_m: float = Field(2.9, gt=0.5, le=10.0)
    mass_kg: float = Field(1800.0, gt=0.0)
    max_steer_deg: float = Field(35.0, gt=0.0, le=60.0)
    max_speed_mps: float = Field(8.0, gt=0.0, le=40.0)
    max_accel_mps2: float = Field(1.5, gt=0.0, le=6.0)
    max_lateral_accel_mps2: float = Field(2.0, gt=0.0, le=8.0)
    max_yaw_rate_dps: float = Field(40.0, gt=0.0)
    smoothing_s: float = Field(1.5, gt=0.0, le=5.0)  # the speed profile's jerk window
    cornering_stiffness_n_per_rad: float = Field(80000.0, gt=0.0)
    friction: float = Field(0.9, gt=0.0, le=2.0)
    # the route over the town's lanes: from `start_lane` (None: drawn) to `goal_lane` (None:
    # a drawn drive long enough for the run)
    start_lane: int | None = Field(None, ge=0)
    goal_lane: int | None = Field(None, ge=0)

    @model_validator(mode="after")
    def _fits(self) -> CarConfig:
        if self.wheelbase_m >= self.length_m:
            raise ValueError(
                f"wheelbase_m={self.wheelbase_m} must be shorter than length_m={self.length_m}"
            )
        return self


class CarSpec(GroundSpec):
    """The car of a run: its size, dynamics, limits, the lanes of its route and its path."""

    kind: Literal["car"] = "car"
    length_m: float
    width_m: float
    height_m: float
    wheelbase_m: float
    mass_kg: float
    inertia: tuple[float, float, float]
    max_steer_deg: float
    cornering_stiffness_n_per_rad: float
    friction: float
    route_lanes: tuple[int, ...] = ()

    json_last = ("route_lanes", "rooms_visited")


def shape_of(cfg: CarConfig) -> GroundShape:
    """The car's extent for a ground tour (worlds without roads): the circle round its box."""
    return GroundShape(
        footprint_radius_m=0.5 * math.hypot(cfg.length_m, cfg.width_m),
        underside_m=CLEARANCE_M,
        top_m=cfg.height_m,
        body_z_m=BODY_Z_M,
    )


def car_spec(cfg: CarConfig, **fields) -> CarSpec:
    """The car of `cfg` (its size, mass, tyres, steering) with its run's `fields` (start pose,
    limits, path, route)."""
    return CarSpec(
        length_m=cfg.length_m,
        width_m=cfg.width_m,
        height_m=cfg.height_m,
        wheelbase_m=cfg.wheelbase_m,
        mass_kg=cfg.mass_kg,
        inertia=box_inertia(cfg.mass_kg, cfg.length_m, cfg.width_m, cfg.height_m),
        max_steer_deg=cfg.max_steer_deg,
        cornering_stiffness_n_per_rad=cfg.cornering_stiffness_n_per_rad,
        friction=cfg.friction,
        footprint_radius_m=shape_of(cfg).footprint_radius_m,
        **fields,
    )


def box_inertia(mass_kg: float, length: float, width: float, height: float) -> tuple[float, ...]:
    """Principal moments of a solid box."""
    return (
        mass_kg * (width**2 + height**2) / 12,
        mass_kg * (length**2 + height**2) / 12,
        mass_kg * (length**2 + width**2) / 12,
    )


def _box(name: str, half, centre, rgba) -> LinkGeomSpec:
    """A box geom given its half sizes and its centre relative to the body frame."""
    return LinkGeomSpec(
        name=name,
        type="box",
        size=tuple(round(float(h), 4) for h in half),
        pos=tuple(round(float(c), 4) for c in centre),
        rgba=rgba,
    )


def car_geoms(spec: CarSpec) -> tuple[LinkGeomSpec, ...]:
    """Lower body, cabin with its glass, four wheels (relative to the body frame)."""
    L, W, H = spec.length_m, spec.width_m, spec.height_m
    lower_top = 0.55 * H
    z0 = -BODY_Z_M  # the road
    s = math.sin(math.pi / 4)
    wheels = tuple(
        LinkGeomSpec(
            name=f"car_wheel_{i}",
            type="cylinder",
            size=(WHEEL_RADIUS_M, 0.11),
            pos=(x, y * (0.5 * W - 0.12), WHEEL_LIFT_M),
            quat=(s, s, 0.0, 0.0),
            rgba=TYRE,
        )
        for i, (x, y) in enumerate(
            (
                (0.5 * spec.wheelbase_m, 1),
                (0.5 * spec.wheelbase_m, -1),
                (-0.5 * spec.wheelbase_m, 1),
                (-0.5 * spec.wheelbase_m, -1),
            )
        )
    )
    return (
        _box(
            "car_lower",
            (L / 2, W / 2, (lower_top - CLEARANCE_M) / 2),
            (0.0, 0.0, z0 + (lower_top + CLEARANCE_M) / 2),
            PAINT,
        ),
        _box(
            "car_cabin",
            (0.28 * L, W / 2 - 0.08, (H - lower_top) / 2),
            (-0.04 * L, 0.0, z0 + (H + lower_top) / 2),
            GLASS,
        ),
        *wheels,
    )


def car_body(spec: CarSpec) -> BodySpec:
    """One link on the x, y, yaw joints at the axle height, its centre of mass where the
    bicycle model has it (`COM`), a motor on each joint (the forces of the bicycle model)."""
    geoms = car_geoms(spec)
    return planar_body(
        ROOT_LINK, spec.mass_kg, spec.inertia, BODY_Z_M, geoms, 1e-3, "force", com=COM
    )
