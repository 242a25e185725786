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
from typing import Any, Literal

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
from twinsim.plugins import keyed_config
from twinsim.registries import (
    DEFAULT_GENERATOR,
    DEFAULT_PRESET,
    DEFAULT_ROBOT_KIND,
    GENERATORS,
    ROBOTS,
)
from twinsim.sequence.clock import expected_count
from twinsim.textdata import TextDataError, excerpt, parse_yaml

ROBOT_CONFIG = keyed_config(ROBOTS, "kind", DEFAULT_ROBOT_KIND)
__all__ = ["DEFAULT_ROBOT", "SENSOR_SECTIONS", "TwinsimConfig", "load_config", "validate_config"]

_Config = ConfigModel


class SimConfig(_Config):
    """The physics rate and how long a run settles and records; bounded so a typo fails at
    once instead of running for ever (10 kHz is past any robot's control loop; a day of
    simulated time past any sequence)."""

    physics_hz: int = Field(240, gt=0, le=10_000)
    bootstrap_s: float = Field(1.0, ge=0.0, le=3_600.0, allow_inf_nan=False)
    duration_s: float = Field(60.0, gt=0.0, le=86_400.0, allow_inf_nan=False)


class PeopleConfig(_Config):
    """Animated people (GRADE: 7–40 requested; fewer may fit, the metadata says how many).
    The default world has GRADE's D count (20); the `S` preset has none."""

    count: int = Field(20, ge=0, le=200)
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


class TrafficConfig(_Config):
    """Traffic of a world with a road network (`scene.generator: town`): vehicles driving its
    lanes and walkers on its sidewalks and crosswalks (CARLA-Loc's dynamic runs: 102–296
    vehicles, 30–56 walkers, speeds 80–120 % of the limit). None by default."""

    vehicles: int = Field(0, ge=0, le=1000)
    walkers: int = Field(0, ge=0, le=500)
    speed_factor: tuple[float, float] = (0.8, 1.2)  # × the lane's speed limit, per vehicle
    classes: dict[Literal["car", "van", "truck", "bus", "bicycle"], float] = Field(
        default_factory=lambda: {
            "car": 0.7,
            "van": 0.12,
            "truck": 0.07,
            "bus": 0.05,
            "bicycle": 0.06,
        }
    )

    @model_validator(mode="after")
    def _valid(self) -> TrafficConfig:
        lo, hi = self.speed_factor
        if not 0.0 < lo <= hi <= 2.0:
            raise ValueError(f"speed_factor={self.speed_factor} must be 0 < low <= high <= 2")
        if any(w < 0 for w in self.classes.values()) or sum(self.classes.values()) <= 0:
            raise ValueError(f"classes={self.classes} weights must be >= 0 with a positive sum")
        return self


class FlyingObjectsConfig(_Config):
    """Objects flown by random time-keyed transforms; collisions deliberately not avoided.
    The default world flies a few (5, GRADE's smaller flying-object count)."""

    count: int = Field(5, ge=0, le=100)
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
    contact_rate_hz: int = Field(120, gt=0)


class RenderConfig(_Config):
    """Rasteriser quality; the defaults keep 640×480 at ≥ 10 recorded frames/s on 2 CPU cores."""

    backend: Literal["auto", "egl", "osmesa"] = "auto"
    shadow_size: int = Field(512, ge=0, le=8192)
    multisamples: int = Field(0, ge=0, le=16)
    reflections: bool = False
    # MuJoCo's tessellation of round primitives: at 16 × 8 a cylinder's sides lie up to 1.9 %
    # of its radius inside the true surface, a sphere's (capsule's, ellipsoid's) facets 3.7 %
    # (`round_meshes.builtin_error`); a geom it would draw more than 1 mm (or 0.1 % of its
    # size) off is drawn as a camera mesh instead (`engine/round_meshes.py`), so these only
    # set the cost of the small ones (MuJoCo's default 28 costs ~20 ms a frame here)
    geom_slices: int = Field(16, ge=8, le=64)
    geom_stacks: int = Field(8, ge=4, le=32)
    # changing light in a generated (live) world: all scene light dims together at flicker_hz
    # to 1 - flicker of its level (`engine.look.Look.flicker`); 0: steady light
    flicker: float = Field(0.0, ge=0.0, le=1.0)
    flicker_hz: float = Field(2.0, gt=0.0, le=60.0)


class OutputConfig(_Config):
    """How frames are stored: the RGB PNG zlib level trades disk for CPU (0 = stored, fastest);
    how often (seconds of simulated time, 0 = never) a run checkpoints for `run --resume`."""

    rgb_png_level: int = Field(0, ge=0, le=9)
    checkpoint_s: float = Field(1.0, ge=0.0, allow_inf_nan=False)


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
