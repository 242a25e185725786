"""What a twin changes about a recorded run: composable variations, from the CLI, YAML or Python.

Every field defaults to "no change", so `Variations()` is an exact repetition. `adversity`
presets (Unreal Robotics Lab's none / minor / major) fill in fog, rain, smoke and flickering
light wherever the same field is not given explicitly; `resolved()` applies them.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from twinsim.configmodel import format_validation_error
from twinsim.errors import ConfigError


class ReplayMode(StrEnum):
    """teleport: the logged state is set at every physics step (exact); control: the logged
    set-points drive the PID controllers and physics again (a changed world changes the motion)."""

    teleport = "teleport"
    control = "control"


class LightPreset(StrEnum):
    day = "day"
    dusk = "dusk"
    night = "night"


class Adversity(StrEnum):
    none = "none"
    minor = "minor"
    major = "major"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class LightVariation(_Model):
    """Scene lighting: a preset, then a global intensity and colour, new random tints, flicker."""

    preset: LightPreset | None = None
    intensity: float = Field(1.0, ge=0.0, le=10.0)
    color: tuple[float, float, float] = (1.0, 1.0, 1.0)
    seed: int | None = Field(None, ge=0)
    flicker: float = Field(0.0, ge=0.0, le=1.0)
    flicker_hz: float = Field(2.0, gt=0.0, le=60.0)

    @model_validator(mode="after")
    def _color(self) -> LightVariation:
        if any(not 0.0 <= c <= 1.0 for c in self.color):
            raise ValueError(f"color={self.color} must be three values in [0, 1]")
        return self


class StereoVariation(_Model):
    """A stereo pair `<name>_left` / `<name>_right`, rectified, the right one `baseline_m` to
    the right of the left one (optical x), centred on `pos`."""

    name: str = Field("stereo", pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    baseline_m: float = Field(0.12, gt=0.0, le=2.0)
    width: int = Field(640, ge=8, le=4096)
    height: int = Field(480, ge=8, le=4096)
    hfov_deg: float = Field(90.0, gt=1.0, lt=179.0)
    rate_hz: int = Field(30, gt=0)
    pos: tuple[float, float, float] = (0.12, 0.0, 0.0)
    rpy_deg: tuple[float, float, float] = (0.0, 0.0, 0.0)


class Variations(_Model):
    """Everything a twin may change; the defaults change nothing."""

    static: bool = False
    remove_classes: tuple[str, ...] = ()
    remove_instances: tuple[int, ...] = ()
    add_people: int = Field(0, ge=0, le=100)
    add_flying_objects: int = Field(0, ge=0, le=100)
    light: LightVariation = LightVariation()
    materials_seed: int | None = Field(None, ge=0)
    fog: float | None = Field(None, ge=0.0, le=1.0)
    rain: float | None = Field(None, ge=0.0, le=1.0)
    snow: float | None = Field(None, ge=0.0, le=1.0)
    smoke: float | None = Field(None, ge=0.0, le=1.0)
    adversity: Adversity = Adversity.none
    # camera name → fields: merged onto the recorded camera of that name, or a new camera
    cameras: dict[str, dict[str, Any]] = Field(default_factory=dict)
    lidars: dict[str, dict[str, Any]] = Field(default_factory=dict)  # add or change LiDARs
    event_cameras: dict[str, dict[str, Any]] = Field(default_factory=dict)
    remove_cameras: tuple[str, ...] = ()
    stereo: StereoVariation | None = None
    seed: int = Field(0, ge=0)

    def resolved(self) -> Variations:
        """The variations with the adversity preset filled in where a field was left unset."""
        preset = ADVERSITY[self.adversity]
        update: dict = {
            k: v for k, v in preset.items() if k != "flicker" and getattr(self, k) is None
        }
        if preset.get("flicker") and self.light.flicker == 0.0:
            update["light"] = self.light.model_copy(update={"flicker": preset["flicker"]})
        return self.model_copy(update=update)

    def summary(self) -> dict:
        """The variations that differ from "no change", as plain JSON data (for metadata)."""
        return self.model_dump(mode="json", exclude_defaults=True)


#: Unreal Robotics Lab's adversity levels as twinsim variations (fog, rain, smoke, flicker).
ADVERSITY: dict[Adversity, dict[str, float]] = {
    Adversity.none: {},
    Adversity.minor: {"fog": 0.15, "rain": 0.3, "flicker": 0.15},
    Adversity.major: {"fog": 0.35, "rain": 0.8, "smoke": 0.6, "flicker": 0.4},
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
        data = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"variations file {str(path)!r} is not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"variations file {str(path)!r} must be a mapping at the top level")
    return parse_variations(data, f"variations file {str(path)!r}")


def merge_variations(base: Variations, override: dict) -> Variations:
    """`base` with the fields in `override` replaced (light merged field by field)."""
    data = base.model_dump(mode="json", exclude_defaults=True)
    for key, value in override.items():
        if key == "light" and isinstance(value, dict):
            data["light"] = {**data.get("light", {}), **value}
        else:
            data[key] = value
    return parse_variations(data)
