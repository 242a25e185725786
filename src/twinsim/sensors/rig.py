"""Resolve the configured sensors into mounted `SensorSpec`s, each through its kind."""

from __future__ import annotations

import numpy as np

from twinsim.geometry import matrix_to_quat_wxyz, rpy_deg_to_matrix
from twinsim.model.sensors import SensorSpec
from twinsim.registries import DEFAULT_ROBOT, SENSORS

# Body x forward, y left, z up → optical z forward, x right (= −y body), y down (= −z body).
R_BODY_OPTICAL_FORWARD = np.array([[0.0, 0.0, 1.0], [-1.0, 0.0, 0.0], [0.0, -1.0, 0.0]])


def optical_fields(cam) -> dict:
    """The fields every image sensor shares: rate, mounting (optical frame), image, clipping."""
    R = rpy_deg_to_matrix(cam.rpy_deg) @ R_BODY_OPTICAL_FORWARD
    return {
        "rate_hz": cam.rate_hz,
        "pos": cam.pos,
        "quat": matrix_to_quat_wxyz(R),
        "width": cam.width,
        "height": cam.height,
        "hfov_deg": cam.hfov_deg,
        "near_m": cam.near_m,
        "far_m": cam.far_m,
    }


def check_clipping(cfg) -> None:
    """An image sensor's clipping range must hold something: `near_m` < `far_m` (else every
    depth would be 0 and every image empty)."""
    if cfg.near_m >= cfg.far_m:
        raise ValueError(f"near_m={cfg.near_m} must be < far_m={cfg.far_m}")


def body_mounted(cfg) -> dict:
    """Rate and mounting of a sensor whose frame is the body's turned by `rpy_deg`."""
    return {
        "rate_hz": cfg.rate_hz,
        "pos": cfg.pos,
        "quat": matrix_to_quat_wxyz(rpy_deg_to_matrix(cfg.rpy_deg)),
    }


def resolve_sensors(sensors: dict, robot: str = DEFAULT_ROBOT) -> tuple[SensorSpec, ...]:
    """A robot's configured sensors (name → config, in order) as sensors on its body."""
    return tuple(
        _resolved(name, s).model_copy(update={"robot": robot}) for name, s in sensors.items()
    )


def _resolved(name: str, cfg) -> SensorSpec:
    """One sensor's spec, of its kind's `spec_model` (what `scene.json` is read back with, so a
    kind's own fields written there must be that model's)."""
    kind = SENSORS.get(cfg.kind)
    spec = kind.spec(name, cfg)
    if type(spec) is not kind.spec_model:
        raise TypeError(
            f"sensor kind {cfg.kind!r}: spec() made a {type(spec).__name__}, its spec_model is "
            f"{kind.spec_model.__name__}; set spec_model = {type(spec).__name__}"
        )
    return spec
