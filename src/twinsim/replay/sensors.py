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

from twinsim.config import (
    CameraConfig,
    EventCameraConfig,
    LidarConfig,
    TwinsimConfig,
    validate_config,
)
from twinsim.errors import ConfigError
from twinsim.geometry import rpy_deg_to_matrix
from twinsim.replay.variations import StereoVariation, Variations
from twinsim.scene.spec import SceneSpec
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


_SECTIONS = {"cameras": CameraConfig, "lidars": LidarConfig, "event_cameras": EventCameraConfig}


def _sensor(section: str, recorded: BaseModel | None, name: str, fields: dict) -> BaseModel:
    """The config of sensor `name` in `section`: the recorded one (if any) with `fields` set."""
    model = _SECTIONS[section]
    base = recorded.model_dump() if recorded is not None else {}
    try:
        return model.model_validate({**base, **fields})
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        if err["type"] == "extra_forbidden":
            allowed = ", ".join(model.model_fields)
            msg = f"unknown field; allowed: {allowed}"
            raise ConfigError(f"{section}.{name}.{where}: {msg}") from None
        raise ConfigError(f"{section}.{name}.{where}: {err['msg']}") from None


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
    cameras = dict(cfg.cameras)
    for name in variations.remove_cameras:
        if name not in cameras:
            raise ConfigError(
                f"remove_cameras: no camera {name!r} in this sequence; cameras: "
                f"{', '.join(cameras) or 'none'}"
            )
        del cameras[name]
    sections = {
        "cameras": cameras,
        "lidars": dict(cfg.lidars),
        "event_cameras": dict(cfg.event_cameras),
    }
    added: set[str] = set()
    for section, entries in changes.items():
        current = sections[section]
        for name, fields in entries.items():
            current[name] = _sensor(section, current.get(name), name, fields)
            added.add(name)
    if variations.stereo is not None:
        pair = stereo_cameras(variations.stereo)
        cameras |= pair
        added |= set(pair)
    data = cfg.model_dump(mode="json")
    for section, entries in sections.items():
        data[section] = {n: c.model_dump(mode="json") for n, c in entries.items()}
    twin_cfg = validate_config(data)
    resolved = {s.name: s for s in resolve_sensors(twin_cfg)}
    recorded = {s.name: s for s in scene.sensors}
    sensors = [
        recorded[name] if name in recorded and name not in added else spec
        for name, spec in resolved.items()
    ]
    sensors += [s for n, s in recorded.items() if n not in resolved and s.type != "camera"]
    return twin_cfg, scene.model_copy(update={"sensors": tuple(sensors)})
