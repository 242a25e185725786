"""The sections of a run's config that are plain settings: the clock, people, traffic, flying
objects, ground-truth rates, rendering, weather, light and output. The sections picked by a
registry (the scene's generator, each robot's kind, each sensor's kind) are assembled in
`twinsim.config`.

`WeatherConfig` and `LightConfig` are also the replay's variations of the same name
(`twinsim.replay.variations`: `Variations.light` is a `LightConfig`, its `fog`, `rain`, `snow`
and `smoke` are `WeatherConfig`'s fields), so a run and a twin take one model."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import ConfigDict, Field, model_validator

from twinsim.configmodel import ConfigModel, Seed


class SimConfig(ConfigModel):
    """The physics rate and how long a run settles and records; bounded so a typo fails at
    once instead of running for ever (10 kHz is past any robot's control loop; a day of
    simulated time past any sequence)."""

    physics_hz: int = Field(240, gt=0, le=10_000)
    bootstrap_s: float = Field(1.0, ge=0.0, le=3_600.0, allow_inf_nan=False)
    duration_s: float = Field(60.0, gt=0.0, le=86_400.0, allow_inf_nan=False)


class PeopleConfig(ConfigModel):
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


class TrafficConfig(ConfigModel):
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


class FlyingObjectsConfig(ConfigModel):
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


class GroundTruthConfig(ConfigModel):
    """Rates of the ground-truth streams (GRADE's Table 3)."""

    pose_rate_hz: int = Field(60, gt=0)
    odometry_rate_hz: int = Field(60, gt=0)
    joint_state_rate_hz: int = Field(120, gt=0)
    contact_rate_hz: int = Field(120, gt=0)


class RenderConfig(ConfigModel):
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


class OutputConfig(ConfigModel):
    """How frames are stored: the RGB PNG zlib level trades disk for CPU (0 = stored, fastest);
    how often (seconds of simulated time, 0 = never) a run checkpoints for `run --resume`."""

    rgb_png_level: int = Field(0, ge=0, le=9)
    checkpoint_s: float = Field(1.0, ge=0.0, allow_inf_nan=False)


class WeatherConfig(ConfigModel):
    """Weather a run records in (and a twin's `fog`, `rain`, `snow`, `smoke`): MuJoCo's fog on
    the colour pass and the LiDARs, rain, snow and smoke composited onto each colour image and
    degrading the LiDARs (`twinsim.adversity`); draws from the run's seed. None or 0: none."""

    fog: float | None = Field(None, ge=0.0, le=1.0, description="Fog density 0..1.")
    rain: float | None = Field(None, ge=0.0, le=1.0, description="Rain 0..1.")
    snow: float | None = Field(None, ge=0.0, le=1.0, description="Snow 0..1.")
    smoke: float | None = Field(None, ge=0.0, le=1.0, description="Drifting smoke 0..1.")


class LightPreset(StrEnum):
    day = "day"
    dusk = "dusk"
    night = "night"


class LightConfig(ConfigModel):
    """Scene lighting: a preset, then a global intensity and colour, new random tints, flicker
    (a run's `light:` section and a twin's `light` variation)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    preset: LightPreset | None = Field(None, description="Light preset.")
    intensity: float = Field(1.0, ge=0.0, le=10.0, description="Global light gain.")
    color: tuple[float, float, float] = Field(
        (1.0, 1.0, 1.0), description="Global light colour (red, green, blue in [0, 1])."
    )
    seed: Seed | None = Field(None, description="New random light tints.")
    flicker: float = Field(0.0, ge=0.0, le=1.0, description="Light flicker amplitude 0..1.")
    flicker_hz: float = Field(2.0, gt=0.0, le=60.0, description="Light flicker frequency (Hz).")

    @model_validator(mode="after")
    def _color(self) -> LightConfig:
        if any(not 0.0 <= c <= 1.0 for c in self.color):
            raise ValueError(f"color={self.color} must be three values in [0, 1]")
        return self
