"""Sensors of a twin: add or replace cameras, LiDARs and event cameras, move a camera, drop one,
or add a stereo pair.

A replay logs the robot state at every physics step, so a sensor added in a twin gets its
poses at its own rate (any rate dividing the physics rate) exactly, with no interpolation; a
LiDAR casts each sector from its own step's state as in a run. Sensors that are not changed
keep their recorded `SensorSpec`.
"""

from __future__ import annotations

import numpy as np
from pydantic import BaseModel, ValidationError

from twinsim.config import SENSOR_SECTIONS, TwinsimConfig, validate_config
from twinsim.configmodel import format_validation_error
from twinsim.errors import ConfigError
from twinsim.geometry import rpy_deg_to_matrix
from twinsim.replay.variations import StereoVariation, Variations
from twinsim.scene.spec import SceneSpec
from twinsim.sensors.kinds.camera import CameraConfig
from twinsim.sensors.registry import SENSORS
from twinsim.sensors.rig import R_BODY_OPTICAL_FORWARD, resolve_sensors


def stereo_cameras(stereo: StereoVariation) -> dict[str, CameraConfig]:
    """A rectified pair: same orientation, `baseline_m` apart along the optical x axis."""
    x_opt = rpy_deg_to_matrix(stereo.rpy_deg) @ R_BODY_OPTICAL_FORWARD[:, 0]
    centre = np.asarray(stereo.pos, dtype=float)
    out = {}
    for side, sign in (("left", -0.5), ("right", 0.5)):
        pos = centre + sign * stereo.baseline_m * x_opt
        out[f"{stereo.name}_{side}"] = CameraConfig(
            width=stereo.width,
            height=stereo.height,
            hfov_deg=stereo.hfov_deg,
            rate_hz=stereo.rate_hz,
            pos=tuple(float(v) for v in pos),
            rpy_deg=stereo.rpy_deg,
        )
    return out


def _sensor(section: str, recorded: BaseModel | None, name: str, fields: dict) -> BaseModel:
    """The config of sensor `name` of `section`'s kind: the recorded one (if any, of the same
    kind) with `fields` set."""
    kind = SENSOR_SECTIONS[section]
    if recorded is not None and recorded.kind != kind:
        raise ConfigError(f"{section}.{name}: sensor {name!r} is a {recorded.kind}, not a {kind}")
    model = SENSORS.get(kind).config_model
    data = {**(recorded.model_dump() if recorded is not None else {}), **fields, "kind": kind}
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(format_validation_error(exc, model, data, f"{section}.{name}")) from None


def twin_sensors(
    cfg: TwinsimConfig, scene: SceneSpec, variations: Variations
) -> tuple[TwinsimConfig, SceneSpec]:
    """The config and scene with the variation's sensors; `ConfigError` for unknown names."""
    changes = {
        "cameras": variations.cameras,
        "lidars": variations.lidars,
        "event_cameras": variations.event_cameras,
    }
    if not (any(changes.values()) or variations.remove_cameras or variations.stereo):
        return cfg, scene
    sensors = dict(cfg.sensors)
    cameras = [n for n, s in sensors.items() if s.kind == "camera"]
    for name in variations.remove_cameras:
        if name not in cameras:
            raise ConfigError(
                f"remove_cameras: no camera {name!r} in this sequence; cameras: "
                f"{', '.join(cameras) or 'none'}"
            )
        del sensors[name]
    added: set[str] = set()
    for section, entries in changes.items():
        for name, fields in entries.items():
            sensors[name] = _sensor(section, sensors.get(name), name, fields)
            added.add(name)
    if variations.stereo is not None:
        pair = stereo_cameras(variations.stereo)
        sensors |= pair
        added |= set(pair)
    data = cfg.model_dump(mode="json")
    data["sensors"] = {n: c.model_dump(mode="json") for n, c in sensors.items()}
    twin_cfg = validate_config(data)
    resolved = {s.name: s for s in resolve_sensors(twin_cfg)}
    recorded = {s.name: s for s in scene.sensors}
    sensors = [
        recorded[name] if name in recorded and name not in added else spec
        for name, spec in resolved.items()
    ]
    sensors += [s for n, s in recorded.items() if n not in resolved and s.type != "camera"]
    return twin_cfg, scene.model_copy(update={"sensors": tuple(sensors)})
