"""Pydantic models of every user-facing setting, YAML presets, and `--set` overrides.

A config is loaded from a preset name (a YAML file shipped in `twinsim/configs/`) or a path,
overlaid with `key.path=value` overrides, and validated once; the resolved config is written
into every sequence's metadata.
"""

from __future__ import annotations

import math
import re
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError, model_validator

from twinsim.compat.config import SENSOR_SECTIONS, section_paths, upgrade_config
from twinsim.config_shorthands import (
    DEFAULT_ROBOT,
    fold_robots,
    kind_default_sensors,
    merge,
    shorthand_paths,
)
from twinsim.configmodel import ConfigModel, Seed, format_validation_error
from twinsim.errors import ConfigError
from twinsim.model.clock import expected_count
from twinsim.model.sections import (
    FlyingObjectsConfig,
    GroundTruthConfig,
    LightConfig,
    OutputConfig,
    PeopleConfig,
    RenderConfig,
    SimConfig,
    TrafficConfig,
    WeatherConfig,
)
from twinsim.plugins import keyed_config
from twinsim.registries import (
    DEFAULT_GENERATOR,
    DEFAULT_PRESET,
    DEFAULT_ROBOT_KIND,
    GENERATORS,
    ROBOTS,
)
from twinsim.textdata import TextDataError, excerpt, parse_yaml

ROBOT_CONFIG = keyed_config(ROBOTS, "kind", DEFAULT_ROBOT_KIND)
__all__ = ["DEFAULT_ROBOT", "SENSOR_SECTIONS", "TwinsimConfig", "load_config", "validate_config"]

_Config = ConfigModel


def _default_robots() -> dict[str, Any]:
    kind = ROBOTS.get(DEFAULT_ROBOT_KIND)
    return {DEFAULT_ROBOT: kind.config_model(sensors=kind.default_sensors())}


class TwinsimConfig(_Config):
    """A whole run: seed, clock, world, robots (each with its sensors), actors, ground truth."""

    seed: Seed = 0
    sim: SimConfig = SimConfig()
    scene: keyed_config(GENERATORS, "generator", DEFAULT_GENERATOR) = Field(  # type: ignore[valid-type]
        default_factory=lambda: GENERATORS.get(DEFAULT_GENERATOR).config_model()
    )
    # robot name → its kind's config with its `sensors` (`twinsim.config_shorthands`)
    robots: dict[str, ROBOT_CONFIG] = Field(default_factory=_default_robots)  # type: ignore[valid-type]
    people: PeopleConfig = PeopleConfig()
    flying_objects: FlyingObjectsConfig = FlyingObjectsConfig()
    traffic: TrafficConfig = TrafficConfig()
    groundtruth: GroundTruthConfig = GroundTruthConfig()
    render: RenderConfig = RenderConfig()
    # the weather and light a run records in, as a twin's variations of the same names
    weather: WeatherConfig = WeatherConfig()
    light: LightConfig = LightConfig()
    output: OutputConfig = OutputConfig()

    @property
    def robot(self):
        """The first robot's config (the only one of a one-robot config)."""
        return next(iter(self.robots.values()))

    @model_validator(mode="before")
    @classmethod
    def _fold_shorthands(cls, data: Any) -> Any:
        return canonical_form(data) if isinstance(data, dict) else data

    @model_validator(mode="after")
    def _one_flicker(self) -> TwinsimConfig:
        if self.light.flicker > 0.0 and self.render.flicker > 0.0:
            raise ValueError(
                f"light.flicker={self.light.flicker} and render.flicker={self.render.flicker} "
                "both make the light flicker; give one of them"
            )
        return self

    @model_validator(mode="after")
    def _rates_divide_physics(self) -> TwinsimConfig:
        hz = self.sim.physics_hz
        rates = {
            f"robots.{r}.sensors.{n}.rate_hz": c.rate_hz
            for r, robot in self.robots.items()
            for n, c in robot.sensors.items()
        }
        rates |= {f"groundtruth.{k}": v for k, v in self.groundtruth.model_dump().items()}
        for field, rate in rates.items():
            if hz % rate:
                allowed = ", ".join(str(d) for d in range(1, hz + 1) if hz % d == 0)
                every = math.lcm(*rates.values())
                raise ValueError(
                    f"{field}={rate} must divide sim.physics_hz={hz} (allowed: {allowed}); "
                    f"or set sim.physics_hz to a multiple of {every}, which every rate divides"
                )
        k_start = round(self.sim.bootstrap_s * hz)
        k_end = k_start + round(self.sim.duration_s * hz)
        for field, rate in rates.items():  # a stream that would record nothing
            if not expected_count(k_start, k_end, hz // rate):
                raise ValueError(
                    f"sim.duration_s={self.sim.duration_s} records nothing of {field}={rate} "
                    f"(steps {k_start}..{k_end} of {hz} Hz); record at least 1/{rate} s"
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
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise ConfigError(
                f"config file {preset_or_path!r} is not UTF-8 text ({exc.reason})"
            ) from None
        except OSError as exc:
            raise ConfigError(
                f"config file {preset_or_path!r} cannot be read ({exc.strerror})"
            ) from None
    else:
        resource = resources.files("twinsim") / "configs" / f"{preset_or_path}.yaml"
        if not resource.is_file():
            raise ConfigError(
                f"unknown preset {preset_or_path!r}; allowed: {', '.join(preset_names())} "
                "or a path to a .yaml file"
            )
        text = resource.read_text()
    try:
        data = parse_yaml(text) or {}
    except TextDataError as exc:
        raise ConfigError(f"config {preset_or_path!r} is not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"config {preset_or_path!r} must be a mapping at the top level")
    base = data.pop("extends", None)
    if base is None:
        return data
    return merge(_read_yaml(str(base), (*seen, preset_or_path)), data)


#: sections whose fields belong to the plug-in their key names: (key, default)
KEYED_SECTIONS = {
    "robot": ("kind", DEFAULT_ROBOT_KIND),
    "scene": ("generator", DEFAULT_GENERATOR),
}


def _apply_override(data: dict[str, Any], assignment: str) -> None:
    """Set one `key.path=value`; naming another robot kind or generator than the config's
    starts that section afresh (a robot keeps its sensors), since the preset's fields belong
    to the one it named."""
    key, sep, raw = assignment.partition("=")
    if not sep or not key.strip():
        raise ConfigError(f"--set expects key.path=value, got {assignment!r}")
    parts = key.strip().split(".")
    try:
        value = parse_yaml(raw) if raw.strip() else raw
    except TextDataError as exc:
        reason = f"{excerpt(raw)} is not a YAML value ({exc})"
        raise ConfigError(f"--set {key.strip()}: {reason}") from None
    if len(parts) == 2 and KEYED_SECTIONS.get(parts[0], (None,))[0] == parts[1]:
        restarted = _restart_section(data, parts[0], parts[1], value, KEYED_SECTIONS[parts[0]][1])
        if restarted and parts[0] == "robot" and isinstance(data.get("sensors"), dict):
            # the preset's sensors, mounted where the new kind mounts its defaults
            data["sensors"] = merge(kind_default_sensors(value), data["sensors"])
    if len(parts) == 3 and parts[0] == "robots" and parts[2] == "kind":
        robots = data.get("robots")
        if isinstance(robots, dict) and isinstance(robots.get(parts[1]), dict):
            _restart_section(robots, parts[1], "kind", value, None)
    node = data
    for part in parts[:-1]:
        child = node.setdefault(part, {})
        if not isinstance(child, dict):
            raise ConfigError(f"--set {key}: {part!r} is a value, not a section")
        node = child
    node[parts[-1]] = value


def _restart_section(
    parent: dict[str, Any], name: str, key: str, value: Any, default: str | None
) -> bool:
    """Empty `parent[name]` (but its sensors) when `value` names another plug-in than it;
    whether it did."""
    section = parent.get(name)
    current = section.get(key) if isinstance(section, dict) else None
    if value == (current or default):
        return False
    kept = (
        {"sensors": section["sensors"]}
        if isinstance(section, dict) and "sensors" in section
        else {}
    )
    parent[name] = kept
    return True


def validate_config(data: dict[str, Any]) -> TwinsimConfig:
    """Validate a mapping into a `TwinsimConfig`; `ConfigError` with a one-line reason if bad.

    A field of a config written in a shorthand (`robot:`, `sensors:`, `lidars.l: ...`) is
    named as it was written.
    """
    written = section_paths(data) | shorthand_paths(data)
    renames = sorted(written.items(), key=lambda item: -len(item[0]))
    folded: Any = data
    try:
        folded = canonical_form(data)
        return TwinsimConfig.model_validate(folded)
    except ValueError as exc:  # a ValidationError is a ValueError too
        if isinstance(exc, ValidationError):
            message = format_validation_error(exc, TwinsimConfig, folded)
        else:
            message = str(exc)
        for canonical, given in renames:
            message = re.sub(rf"\b{re.escape(canonical)}\b", given, message)
        raise ConfigError(message) from None


def canonical_form(data: dict[str, Any]) -> dict[str, Any]:
    """Any accepted form of a config's data in the canonical one: a format-1 config upgraded
    (`twinsim.compat`, the one place it is), then the shorthands folded (`fold_robots`)."""
    return fold_robots(upgrade_config(data))


def load_config(
    preset_or_path: str = DEFAULT_PRESET,
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
        robot = data.get("robot")
        kind = (
            robot.get("kind", DEFAULT_ROBOT_KIND) if isinstance(robot, dict) else DEFAULT_ROBOT_KIND
        )
        data["sensors"] = merge(kind_default_sensors(kind), data["sensors"])
    if seed is not None:
        data["seed"] = seed
    if duration_s is not None:
        data.setdefault("sim", {})["duration_s"] = duration_s
    return validate_config(data)
