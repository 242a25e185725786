"""Pydantic models of every user-facing setting, YAML presets, and `--set` overrides.

A config is loaded from a preset name (a YAML file shipped in `twinsim/configs/`) or a path,
overlaid with `key.path=value` overrides, and validated once; the resolved config is written
into every sequence's metadata.
"""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, Field, ValidationError, model_validator

from twinsim.configmodel import ConfigModel, format_validation_error
from twinsim.errors import ConfigError
from twinsim.plugins import keyed_config
from twinsim.robots.registry import ROBOTS
from twinsim.scene.generators import GENERATORS
from twinsim.sensors.registry import SENSORS

SENSOR_CONFIG = keyed_config(SENSORS, "kind", None)
#: the config sections of format 1, one per sensor kind, folded into `sensors`
SENSOR_SECTIONS = {
    "cameras": "camera",
    "imus": "imu",
    "lidars": "lidar",
    "event_cameras": "event_camera",
}


def _robot_default_sensors(data: dict[str, Any]) -> dict[str, Any]:
    """The default sensors (as settings) of the robot kind a config's data names."""
    robot = data.get("robot")
    kind = robot.get("kind", "drone") if isinstance(robot, dict) else "drone"
    return dict(ROBOTS.get(kind).default_sensors()) if kind in ROBOTS else {}


def _fields(entry: Any) -> dict[str, Any]:
    """A sensor entry's settings as a mapping (an entry may already be a validated model)."""
    if isinstance(entry, BaseModel):
        return entry.model_dump()
    return dict(entry) if isinstance(entry, dict) else {}


def fold_sensor_sections(data: dict[str, Any]) -> dict[str, Any]:
    """`cameras:`, `imus:`, `lidars:`, `event_cameras:` (format 1's sections, still accepted as
    shorthands) folded into the one `sensors:` mapping keyed by name, each entry with its kind.

    Without a `sensors` mapping (a format-1 config), each section replaces the robot's default
    sensors of its kind, in the kind order of format 1; with one, a section's entries update
    the sensor of that name (same kind) or add one, and an empty section removes its kind.
    """
    sections = {key: data[key] for key in SENSOR_SECTIONS if key in data}
    if not sections:
        return data if "sensors" in data else data | {"sensors": _robot_default_sensors(data)}
    out = {k: v for k, v in data.items() if k not in SENSOR_SECTIONS}
    for key, entries in sections.items():
        if not isinstance(entries, dict):
            raise ValueError(f"{key} must be a mapping of sensor names to settings")
    if "sensors" not in data:
        defaults = _robot_default_sensors(data)
        sensors: dict[str, Any] = {}
        for key, sensor_kind in SENSOR_SECTIONS.items():
            if key in sections:
                for name, fields in sections[key].items():
                    sensors[name] = {**_fields(fields), "kind": sensor_kind}
            else:
                sensors |= {n: f for n, f in defaults.items() if f["kind"] == sensor_kind}
        return out | {"sensors": sensors}
    sensors = dict(data["sensors"] or {})
    for key, entries in sections.items():
        if not entries:  # an empty section removes every sensor of its kind
            kind = SENSOR_SECTIONS[key]
            sensors = {n: f for n, f in sensors.items() if _fields(f).get("kind") != kind}
        for name, fields in entries.items():
            current = _fields(sensors.get(name))
            if current.get("kind", SENSOR_SECTIONS[key]) != SENSOR_SECTIONS[key]:
                raise ValueError(
                    f"{key}.{name}: sensor {name!r} is a {current['kind']}, not a "
                    f"{SENSOR_SECTIONS[key]}"
                )
            sensors[name] = {**current, **_fields(fields), "kind": SENSOR_SECTIONS[key]}
    return out | {"sensors": sensors}


_Config = ConfigModel


class SimConfig(_Config):
    physics_hz: int = Field(240, gt=0)
    bootstrap_s: float = Field(1.0, ge=0.0)
    duration_s: float = Field(60.0, gt=0.0)


class PeopleConfig(_Config):
    """Animated people (GRADE: 7–40 requested; fewer may fit, the metadata says how many)."""

    count: int = Field(0, ge=0, le=200)
    speed_mps: tuple[float, float] = (0.6, 1.4)
    motions: dict[Literal["walk", "idle", "wave", "sit", "bvh"], float] = Field(
        default_factory=lambda: {"walk": 0.6, "idle": 0.15, "wave": 0.15, "sit": 0.1}
    )
    placement_attempts: int = Field(10, ge=1)
    max_trace_intersections: int = Field(20, ge=0)
    # motion-capture clips (CMU-style BVH) played by the people whose motion is "bvh"; with
    # files and no "bvh" weight in `motions`, "bvh" weighs as much as the other kinds together
    bvh_files: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _valid(self) -> PeopleConfig:
        lo, hi = self.speed_mps
        if lo < 0 or hi < lo:
            raise ValueError(f"speed_mps={self.speed_mps} must be 0 <= low <= high")
        if any(w < 0 for w in self.motions.values()) or sum(self.motions.values()) <= 0:
            raise ValueError(f"motions={self.motions} weights must be >= 0 with a positive sum")
        if self.motions.get("bvh", 0.0) > 0 and not self.bvh_files:
            raise ValueError("motions has a 'bvh' weight but bvh_files names no BVH file")
        return self


class FlyingObjectsConfig(_Config):
    """Objects flown by random time-keyed transforms; collisions deliberately not avoided."""

    count: int = Field(0, ge=0, le=100)
    speed_mps: tuple[float, float] = (0.3, 1.5)
    classes: list[Literal["ball", "box", "toy", "bottle"]] = Field(
        default_factory=lambda: ["ball", "box", "toy", "bottle"]
    )
    pass_in_front: bool = False

    @model_validator(mode="after")
    def _valid(self) -> FlyingObjectsConfig:
        lo, hi = self.speed_mps
        if lo <= 0 or hi < lo:
            raise ValueError(f"speed_mps={self.speed_mps} must be 0 < low <= high")
        if not self.classes:
            raise ValueError("classes must name at least one of ball, box, toy, bottle")
        return self


class GroundTruthConfig(_Config):
    """Rates of the ground-truth streams (GRADE's Table 3)."""

    pose_rate_hz: int = Field(60, gt=0)
    odometry_rate_hz: int = Field(60, gt=0)
    joint_state_rate_hz: int = Field(120, gt=0)


class RenderConfig(_Config):
    """Rasteriser quality; the defaults keep 640×480 at ≥ 10 recorded frames/s on 2 CPU cores."""

    backend: Literal["auto", "egl", "osmesa"] = "auto"
    shadow_size: int = Field(512, ge=0, le=8192)
    multisamples: int = Field(0, ge=0, le=16)
    reflections: bool = False
    # tessellation of round primitives: 16 slices keep a cylinder's rendered surface within
    # 2 % of its radius of the true one (MuJoCo's default 28 costs ~20 ms a frame here)
    geom_slices: int = Field(16, ge=8, le=64)
    geom_stacks: int = Field(8, ge=4, le=32)


class OutputConfig(_Config):
    """How frames are stored: the RGB PNG zlib level trades disk for CPU (0 = stored, fastest)."""

    rgb_png_level: int = Field(0, ge=0, le=9)


class TwinsimConfig(_Config):
    seed: int = Field(0, ge=0)
    sim: SimConfig = SimConfig()
    scene: keyed_config(GENERATORS, "generator", "apartment") = Field(  # type: ignore[valid-type]
        default_factory=lambda: GENERATORS.get("apartment").config_model()
    )
    robot: keyed_config(ROBOTS, "kind", "drone") = Field(  # type: ignore[valid-type]
        default_factory=lambda: ROBOTS.get("drone").config_model()
    )
    people: PeopleConfig = PeopleConfig()
    flying_objects: FlyingObjectsConfig = FlyingObjectsConfig()
    # the robot kind's default sensors when a config names none (`fold_sensor_sections`)
    sensors: dict[str, SENSOR_CONFIG] = Field(default_factory=dict)  # type: ignore[valid-type]
    groundtruth: GroundTruthConfig = GroundTruthConfig()
    render: RenderConfig = RenderConfig()
    output: OutputConfig = OutputConfig()

    @model_validator(mode="before")
    @classmethod
    def _fold_sensor_sections(cls, data: Any) -> Any:
        return fold_sensor_sections(data) if isinstance(data, dict) else data

    @model_validator(mode="after")
    def _rates_divide_physics(self) -> TwinsimConfig:
        hz = self.sim.physics_hz
        rates = {f"sensors.{n}.rate_hz": c.rate_hz for n, c in self.sensors.items()}
        rates |= {f"groundtruth.{k}": v for k, v in self.groundtruth.model_dump().items()}
        for field, rate in rates.items():
            if hz % rate:
                allowed = ", ".join(str(d) for d in range(1, hz + 1) if hz % d == 0)
                raise ValueError(
                    f"{field}={rate} must divide sim.physics_hz={hz} (allowed: {allowed})"
                )
        return self


def preset_names() -> list[str]:
    """Names of the presets shipped with twinsim."""
    folder = resources.files("twinsim") / "configs"
    return sorted(
        p.name.removesuffix(".yaml") for p in folder.iterdir() if p.name.endswith(".yaml")
    )


def _read_yaml(preset_or_path: str, seen: tuple[str, ...] = ()) -> dict[str, Any]:
    """A preset or YAML file as a mapping; `extends: NAME` overlays it on another config."""
    if preset_or_path in seen:
        raise ConfigError(f"config {preset_or_path!r} extends itself ({' -> '.join(seen)})")
    path = Path(preset_or_path)
    if path.suffix in (".yaml", ".yml") or path.exists():
        if not path.is_file():
            raise ConfigError(f"config file {preset_or_path!r} does not exist")
        text = path.read_text()
    else:
        resource = resources.files("twinsim") / "configs" / f"{preset_or_path}.yaml"
        if not resource.is_file():
            raise ConfigError(
                f"unknown preset {preset_or_path!r}; allowed: {', '.join(preset_names())} "
                "or a path to a .yaml file"
            )
        text = resource.read_text()
    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"config {preset_or_path!r} is not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"config {preset_or_path!r} must be a mapping at the top level")
    base = data.pop("extends", None)
    if base is None:
        return data
    return _merge(_read_yaml(str(base), (*seen, preset_or_path)), data)


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """Recursive overlay of `over` on `base` (mappings merge, everything else replaces)."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


#: sections whose fields belong to the plug-in their key names: (key, default)
KEYED_SECTIONS = {"robot": ("kind", "drone"), "scene": ("generator", "apartment")}


def _apply_override(data: dict[str, Any], assignment: str) -> None:
    """Set one `key.path=value`; naming another robot kind or generator than the config's
    starts that section afresh, since the preset's fields belong to the one it named."""
    key, sep, raw = assignment.partition("=")
    if not sep or not key.strip():
        raise ConfigError(f"--set expects key.path=value, got {assignment!r}")
    parts = key.strip().split(".")
    value = yaml.safe_load(raw) if raw.strip() else raw
    if len(parts) == 2 and KEYED_SECTIONS.get(parts[0], (None,))[0] == parts[1]:
        section = data.get(parts[0])
        current = section.get(parts[1]) if isinstance(section, dict) else None
        if value != (current or KEYED_SECTIONS[parts[0]][1]):
            data[parts[0]] = {}
    node = data
    for part in parts[:-1]:
        child = node.setdefault(part, {})
        if not isinstance(child, dict):
            raise ConfigError(f"--set {key}: {part!r} is a value, not a section")
        node = child
    node[parts[-1]] = value


def validate_config(data: dict[str, Any]) -> TwinsimConfig:
    """Validate a mapping into a `TwinsimConfig`; `ConfigError` with a one-line reason if bad.

    A sensor given in a kind's section (`lidars.l: ...`) is named as it was given.
    """
    origin = {
        f"sensors.{name}": f"{key}.{name}"
        for key in SENSOR_SECTIONS
        if isinstance(data.get(key), dict)
        for name in data[key]
    }
    try:
        folded = fold_sensor_sections(data)
        return TwinsimConfig.model_validate(folded)
    except ValueError as exc:  # a ValidationError is a ValueError too
        if isinstance(exc, ValidationError):
            message = format_validation_error(exc, TwinsimConfig, folded)
        else:
            message = str(exc)
        for canonical, given in origin.items():
            message = re.sub(rf"\b{re.escape(canonical)}\b", given, message)
        raise ConfigError(message) from None


def load_config(
    preset_or_path: str = "default",
    overrides: list[str] | tuple[str, ...] = (),
    seed: int | None = None,
    duration_s: float | None = None,
) -> TwinsimConfig:
    """Load a preset or YAML file, apply `--set` overrides, seed and duration, and validate."""
    data = _read_yaml(preset_or_path)
    names_sensors = "sensors" in data or any(key in data for key in SENSOR_SECTIONS)
    for assignment in overrides:
        _apply_override(data, assignment)
    if not names_sensors and isinstance(data.get("sensors"), dict):
        data["sensors"] = _merge(_robot_default_sensors(data), data["sensors"])
    if seed is not None:
        data["seed"] = seed
    if duration_s is not None:
        data.setdefault("sim", {})["duration_s"] = duration_s
    return validate_config(data)
