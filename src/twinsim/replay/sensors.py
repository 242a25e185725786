"""Sensors of a twin: add, change or remove sensors of any registered kind, or add a stereo pair.

A replay logs the robot state at every physics step, so a sensor added in a twin gets its
poses at its own rate (any rate dividing the physics rate) exactly, with no interpolation; a
LiDAR casts each sector from its own step's state as in a run. Sensors that are not changed
keep their recorded `SensorSpec`.
"""

from __future__ import annotations

import numpy as np
from pydantic import BaseModel, ValidationError

from twinsim.config import TwinsimConfig, validate_config
from twinsim.configmodel import format_validation_error
from twinsim.errors import ConfigError
from twinsim.geometry import rpy_deg_to_matrix
from twinsim.model.scene import SceneSpec
from twinsim.registries import SENSORS
from twinsim.replay.variations import REMOVAL_SHORTHANDS, StereoVariation, Variations
from twinsim.sensors.kinds.camera import CameraConfig
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


def _sensor(recorded: BaseModel | None, name: str, fields: dict, where: str) -> BaseModel:
    """The config of sensor `name`: the recorded one (if any) with `fields` set, of its kind;
    a new sensor's `fields` name its kind. `where` is the variation's path in errors."""
    kind = fields.get("kind", None if recorded is None else recorded.kind)
    if kind is None:
        raise ConfigError(
            f"{where}: {name!r} is a new sensor; give its kind, one of {', '.join(SENSORS.names())}"
        )
    if recorded is not None and kind != recorded.kind:
        raise ConfigError(
            f"{where}: sensor {name!r} is a {recorded.kind}, not a {kind} (a twin keeps a "
            "sensor's kind: remove it to add a new one of that name)"
        )
    if not isinstance(kind, str) or kind not in SENSORS:
        raise ConfigError(f"{where}.kind: {SENSORS.unknown(kind)}")
    model = SENSORS.get(kind).config_model
    data = {**(recorded.model_dump() if recorded is not None else {}), **fields, "kind": kind}
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(format_validation_error(exc, model, data, where)) from None


def _robot_of(name: str, robots: list[str]) -> tuple[str, str]:
    """(robot, sensor) a variation's sensor name means: `b.cam1` is robot b's `cam1` in a
    sequence of several robots; a plain name is the first robot's."""
    head, dot, tail = name.partition(".")
    if dot and len(robots) > 1 and head in robots:
        return head, tail
    return robots[0], name


def twin_sensors(
    cfg: TwinsimConfig, scene: SceneSpec, variations: Variations
) -> tuple[TwinsimConfig, SceneSpec]:
    """The config and scene with the variation's sensors; `ConfigError` for unknown names.

    Sensors are named as their streams are: `cam1`, or `b.cam1` for robot b's when the
    sequence has several robots (a plain name is the first robot's). Removals apply first, so
    a name both removed and given is a new sensor.
    """
    if not (variations.sensors or variations.remove_sensors or variations.stereo):
        return cfg, scene
    robots = [r.name for r in scene.robots]  # the run's order (a config read back is sorted)
    sensors = {r: dict(cfg.robots[r].sensors) for r in robots}
    removed: set[tuple[str, str]] = set()
    for name in variations.remove_sensors:
        robot, local = _robot_of(name, robots)
        field = variations.written_as("remove_sensors", name)
        kind = REMOVAL_SHORTHANDS.get(field)  # a shorthand removes sensors of its kind only
        current = sensors[robot].get(local)
        if current is None or kind not in (None, current.kind):
            what = kind or "sensor"
            present = [
                scene.stream_prefix(r) + n
                for r in robots
                for n, c in sensors[r].items()
                if kind in (None, c.kind)
            ]
            raise ConfigError(
                f"{field}: no {what} {name!r} in this sequence; {what}s: "
                f"{', '.join(present) or 'none'}"
            )
        del sensors[robot][local]
        removed.add((robot, local))
    added: set[tuple[str, str]] = set()
    for name, fields in variations.sensors.items():
        robot, local = _robot_of(name, robots)
        where = f"{variations.written_as('sensors', name)}.{name}"
        sensors[robot][local] = _sensor(sensors[robot].get(local), name, fields, where)
        added.add((robot, local))
    if variations.stereo is not None:
        robot, local = _robot_of(variations.stereo.name, robots)
        pair = stereo_cameras(variations.stereo.model_copy(update={"name": local}))
        sensors[robot] |= pair
        added |= {(robot, n) for n in pair}
    data = cfg.model_dump(mode="json")
    for robot in robots:
        data["robots"][robot]["sensors"] = {
            n: c.model_dump(mode="json") for n, c in sensors[robot].items()
        }
    twin_cfg = validate_config(data)
    resolved = {
        (s.robot, s.name): s
        for robot in robots
        for s in resolve_sensors(twin_cfg.robots[robot].sensors, robot)
    }
    recorded = {(s.robot, s.name): s for s in scene.sensors}
    specs = [
        recorded[key] if key in recorded and key not in added else spec
        for key, spec in resolved.items()
    ]
    specs += [s for key, s in recorded.items() if key not in resolved and key not in removed]
    return twin_cfg, scene.model_copy(update={"sensors": tuple(specs)})
