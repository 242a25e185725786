"""What a twin changes about a recorded run: composable variations, from the CLI, YAML or Python.

Every field defaults to "no change", so `Variations()` is an exact repetition. `adversity`
presets (Unreal Robotics Lab's none / minor / major) fill in fog, rain, smoke, flickering light
and added walking people wherever the same field is not given explicitly; `resolved()` applies
them.

Sensors of any registered kind are added, changed and removed through `sensors` (name →
fields, a new sensor's with its `kind`) and `remove_sensors`. The per-kind fields of earlier
versions (`cameras`, `lidars`, `event_cameras`, `remove_cameras`) stay accepted as shorthands
and are folded into those two when validated, so a model, its `summary()` and a twin's metadata
hold only the canonical form; the model remembers where a folded entry was written, so errors
name it as the user wrote it (`lidars.lidar0.colums`) and `remove_cameras` removes cameras only.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    PrivateAttr,
    ValidationError,
    model_validator,
)

from twinsim.configmodel import Seed, format_validation_error
from twinsim.errors import ConfigError
from twinsim.model.sections import LightConfig, WeatherConfig
from twinsim.model.sections import LightPreset as LightPreset  # re-exported
from twinsim.textdata import TextDataError, parse_yaml


class ReplayMode(StrEnum):
    """teleport: the logged state is set at every physics step (exact); control: the logged
    set-points drive the PID controllers and physics again (a changed world changes the motion)."""

    teleport = "teleport"
    control = "control"


class Adversity(StrEnum):
    none = "none"
    minor = "minor"
    major = "major"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


#: a twin's light variation is a run's `light:` section (one model)
LightVariation = LightConfig
_WEATHER = WeatherConfig.model_fields  # a twin's fog, rain, snow, smoke: a run's `weather:`


class StereoVariation(_Model):
    """A stereo pair `<name>_left` / `<name>_right`, rectified, the right one `baseline_m` to
    the right of the left one (optical x), centred on `pos`."""

    name: str = Field(
        "stereo",
        pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$",
        description="The pair's cameras are <name>_left and <name>_right.",
    )
    baseline_m: float = Field(
        0.12, gt=0.0, le=2.0, description="Distance between the two cameras (m)."
    )
    width: int = Field(640, ge=8, le=4096, description="Image width (pixels).")
    height: int = Field(480, ge=8, le=4096, description="Image height (pixels).")
    hfov_deg: float = Field(90.0, gt=1.0, lt=179.0, description="Horizontal field of view (deg).")
    rate_hz: int = Field(30, gt=0, description="Frame rate of the pair (Hz).")
    pos: tuple[float, float, float] = Field(
        (0.12, 0.0, 0.0), description="Centre of the pair on the robot (m, body frame)."
    )
    rpy_deg: tuple[float, float, float] = Field(
        (0.0, 0.0, 0.0), description="Roll, pitch, yaw of the pair on the robot (deg)."
    )


#: shorthands of `sensors`: each section's entries are sensors of its kind
SENSOR_SHORTHANDS = {"cameras": "camera", "lidars": "lidar", "event_cameras": "event_camera"}
#: shorthands of `remove_sensors`: each removes sensors of its kind only
REMOVAL_SHORTHANDS = {"remove_cameras": "camera"}


def _mapping(value: Any, where: str, of: str) -> dict:
    if not isinstance(value, dict):
        raise ValueError(f"{where} must be a mapping of {of}")
    return value


def _names(value: Any, where: str) -> list[str]:
    if not isinstance(value, list | tuple) or not all(isinstance(n, str) for n in value):
        raise ValueError(f"{where} must be a list of sensor names")
    return list(value)


def _fold_sensor_shorthands(data: dict) -> tuple[dict, dict[tuple[str, str], str]]:
    """`data` with the shorthands folded into `sensors` and `remove_sensors`, and where each
    folded entry was written: {("sensors" | "remove_sensors", name): shorthand}.

    A shorthand's entry updates the `sensors` entry of the same name, which must be of the
    shorthand's kind (`ValueError` naming the sensor otherwise).
    """
    keys = [k for k in (*SENSOR_SHORTHANDS, *REMOVAL_SHORTHANDS) if k in data]
    if not keys:
        return data, {}
    out = {k: v for k, v in data.items() if k not in keys}
    written: dict[tuple[str, str], str] = {}
    sensors = dict(_mapping(out.get("sensors", {}), "sensors", "sensor names to their fields"))
    for key in (k for k in keys if k in SENSOR_SHORTHANDS):
        kind = SENSOR_SHORTHANDS[key]
        for name, fields in _mapping(data[key], key, "sensor names to their fields").items():
            where = f"{key}.{name}"
            current = _mapping(sensors.get(name, {}), f"sensors.{name}", "fields")
            fields = _mapping(fields, where, "fields")
            kinds = (current.get("kind", kind), fields.get("kind", kind))
            if any(k != kind for k in kinds):
                other = next(k for k in kinds if k != kind)
                raise ValueError(f"{where}: sensor {name!r} is a {other}, not a {kind}")
            sensors[name] = {**current, **fields, "kind": kind}
            written["sensors", name] = key
    removals = _names(out.get("remove_sensors", []), "remove_sensors")
    for key in (k for k in keys if k in REMOVAL_SHORTHANDS):
        for name in _names(data[key], key):
            if name not in removals:
                removals.append(name)
                written["remove_sensors", name] = key
    if sensors:
        out["sensors"] = sensors
    if removals:
        out["remove_sensors"] = removals
    return out, written


class Variations(_Model):
    """Everything a twin may change; the defaults change nothing."""

    static: bool = Field(False, description="Remove every dynamic actor.")
    remove_classes: tuple[str, ...] = Field((), description="Remove dynamic actors of a class.")
    remove_instances: tuple[int, ...] = Field((), description="Remove a dynamic instance by id.")
    add_people: int = Field(0, ge=0, le=100, description="People to add.")
    add_people_motions: dict[Literal["walk", "idle", "wave", "sit"], float] | None = Field(
        None,
        description="Weights of the added people's motions; None: the recorded run's mix "
        "(clips included).",
    )
    add_flying_objects: int = Field(0, ge=0, le=100, description="Flying objects to add.")
    light: LightVariation = Field(
        LightVariation(), description="Scene lighting: preset, gain, colour, tints, flicker."
    )
    materials_seed: Seed | None = Field(None, description="Re-randomise textures and reflectance.")
    fog: float | None = _WEATHER["fog"]
    rain: float | None = _WEATHER["rain"]
    snow: float | None = _WEATHER["snow"]
    smoke: float | None = _WEATHER["smoke"]
    adversity: Adversity = Field(
        Adversity.none,
        description="Preset combining fog, rain, smoke, flicker (major: walking people).",
    )
    sensors: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="Sensor name (as its stream is named) → fields: merged onto the recorded "
        "sensor of that name (same kind), or a new sensor (its fields name its kind); removals "
        "apply first.",
    )
    remove_sensors: tuple[str, ...] = Field((), description="Drop a sensor of any kind.")
    stereo: StereoVariation | None = Field(None, description="A stereo pair added to the robot.")
    seed: Seed = Field(0, description="Seed of added actors and weather.")
    _written_as: dict[tuple[str, str], str] = PrivateAttr(default_factory=dict)

    @model_validator(mode="after")
    def _motion_weights(self) -> Variations:
        w = self.add_people_motions
        if w is not None and (any(v < 0 for v in w.values()) or sum(w.values()) <= 0):
            raise ValueError(f"add_people_motions={w}: weights must be >= 0 with a positive sum")
        return self

    @model_validator(mode="wrap")
    @classmethod
    def _fold_shorthands(cls, data: Any, handler: ModelWrapValidatorHandler) -> Variations:
        written: dict[tuple[str, str], str] = {}
        if isinstance(data, dict):
            data, written = _fold_sensor_shorthands(data)
        model = handler(data)
        if written:
            model._written_as = written
        return model

    def written_as(self, field: str, name: str) -> str:
        """Where the entry `name` of `sensors` or `remove_sensors` was written: the field
        itself, or the shorthand folded into it (for error messages, and removal kinds)."""
        return self._written_as.get((field, name), field)

    def resolved(self) -> Variations:
        """The variations with the adversity preset filled in where a field was left unset
        (at its default: None, or no added people)."""
        preset, fields = ADVERSITY[self.adversity], Variations.model_fields
        update: dict = {
            k: v
            for k, v in preset.items()
            if k != "flicker" and getattr(self, k) == fields[k].default
        }
        if preset.get("flicker") and self.light.flicker == 0.0:
            update["light"] = self.light.model_copy(update={"flicker": preset["flicker"]})
        return self.model_copy(update=update)

    def summary(self) -> dict:
        """The variations that differ from "no change", as plain JSON data (for metadata)."""
        return self.model_dump(mode="json", exclude_defaults=True)


#: Unreal Robotics Lab's adversity levels as twinsim variations: minor is environmental effects
#: only (haze, rain, light smoke); major adds heavier ones, dynamic lighting (flicker) and
#: moving people (walkers placed clear of the recorded robot path, from the twin's seed).
ADVERSITY: dict[Adversity, dict[str, Any]] = {
    Adversity.none: {},
    Adversity.minor: {"fog": 0.15, "rain": 0.3, "smoke": 0.2},
    Adversity.major: {
        "fog": 0.35,
        "rain": 0.8,
        "smoke": 0.6,
        "flicker": 0.4,
        "add_people": 3,
        "add_people_motions": {"walk": 1.0},
    },
}


def parse_variations(data: dict, source: str = "") -> Variations:
    """Validate a mapping into `Variations`; `ConfigError` with a one-line reason if bad,
    after `source` (the file it came from) when given."""
    try:
        return Variations.model_validate(data)
    except ValidationError as exc:
        message = format_validation_error(exc, Variations, data, what="variation")
        raise ConfigError(f"{source}: {message}" if source else message) from None


def load_variations(path: str | Path) -> Variations:
    """Variations from a YAML file (the same field names as `Variations`)."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"variations file {str(path)!r} does not exist")
    try:
        data = parse_yaml(path.read_text(encoding="utf-8")) or {}
    except (OSError, UnicodeDecodeError, TextDataError) as exc:
        raise ConfigError(f"variations file {str(path)!r} is not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"variations file {str(path)!r} must be a mapping at the top level")
    return parse_variations(data, f"variations file {str(path)!r}")


def merge_variations(base: Variations, override: dict) -> Variations:
    """`base` with the fields in `override` replaced; light and each sensor are merged field by
    field, removals added (a sensor `override` removes loses `base`'s changes of it)."""
    over = parse_variations(override)  # validated, its sensor shorthands folded
    data = base.model_dump(mode="json", exclude_defaults=True)
    removed = list(over.remove_sensors)
    sensors = {n: f for n, f in data.pop("sensors", {}).items() if n not in removed}
    for name, fields in over.sensors.items():
        sensors[name] = {**sensors.get(name, {}), **fields}
    kept = [n for n in data.pop("remove_sensors", ()) if n not in removed]
    folded = {"sensors", "remove_sensors", *SENSOR_SHORTHANDS, *REMOVAL_SHORTHANDS}
    for key, value in override.items():
        if key == "light" and isinstance(value, dict):
            data["light"] = {**data.get("light", {}), **value}
        elif key not in folded:
            data[key] = value
    merged = parse_variations(data | {"sensors": sensors, "remove_sensors": kept + removed})
    replaced = {("sensors", n) for n in (*over.sensors, *removed)}
    replaced |= {("remove_sensors", n) for n in removed}
    written = {k: v for k, v in base._written_as.items() if k not in replaced}
    merged._written_as = written | over._written_as
    return merged
