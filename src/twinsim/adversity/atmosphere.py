"""The look and weather of a run's config or a twin's variations, and what a run's metadata says
of them."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from twinsim.adversity.light import look_for
from twinsim.engine.look import Look
from twinsim.model.sections import LightConfig, WeatherConfig
from twinsim.sensors.lidar_weather import LidarWeather

#: the image weather's fields (the fog is the look's)
IMAGE_WEATHER = ("rain", "snow", "smoke")


@dataclass(frozen=True)
class Atmosphere:
    """How a world is rendered beyond its scene (`look`) and the weather its colour images and
    LiDARs see: `weather` holds rain, snow and smoke in [0, 1] and the draws' `seed` (a twin's
    metadata `weather` entry)."""

    look: Look = field(default_factory=Look)
    weather: dict = field(default_factory=dict)


def atmosphere_for(
    light: LightConfig,
    fog: float | None,
    rain: float | None,
    snow: float | None,
    smoke: float | None,
    seed: int,
) -> Atmosphere | None:
    """The atmosphere of a light and weather, None where they change neither the look nor the
    weather (a light's colour or tints alone relight the scene, `relight`)."""
    visual = light.preset is not None or light.flicker > 0 or light.intensity != 1.0
    if not visual and all(v is None for v in (fog, rain, snow, smoke)):
        return None
    weather: dict = {
        k: float(v or 0.0) for k, v in zip(IMAGE_WEATHER, (rain, snow, smoke), strict=True)
    }
    weather["seed"] = seed
    return Atmosphere(look_for(light, fog, seed), weather)


def config_atmosphere(cfg) -> Atmosphere | None:
    """The atmosphere a run of `cfg` (a `TwinsimConfig`) records in: its `light` and `weather`
    sections, drawn from its seed."""
    w = cfg.weather
    return atmosphere_for(cfg.light, w.fog, w.rain, w.snow, w.smoke, cfg.seed)


def lidar_weather(look: Look, weather: dict) -> LidarWeather:
    """The fog (at the camera fog's distance), rain and snow LiDARs see in this look and
    weather."""
    fog = look.fog_end_m if look.fog_start_m is not None else None
    rain, snow = weather.get("rain", 0.0), weather.get("snow", 0.0)
    return LidarWeather(fog, rain, snow, int(weather.get("seed", 0)))


def run_metadata(cfg) -> dict:
    """The metadata entries of a run recorded with a `weather:` or `light:` section (none
    without): `weather` (fog, rain, snow, smoke, seed), `light` (the section's changes),
    `look` (as rendered) and `lidar_weather` (with fog, rain or snow: the LiDAR model's
    values), as a twin's `twin` entry has them."""
    out: dict = {}
    if cfg.weather != WeatherConfig():
        out["weather"] = {k: float(v or 0.0) for k, v in cfg.weather.model_dump().items()}
        out["weather"]["seed"] = cfg.seed
    if cfg.light != LightConfig():
        out["light"] = cfg.light.model_dump(mode="json", exclude_defaults=True)
    atmosphere = config_atmosphere(cfg)
    if atmosphere is not None:
        out["look"] = asdict(atmosphere.look)
        lidar = lidar_weather(atmosphere.look, atmosphere.weather)
        if lidar.active:
            out["lidar_weather"] = lidar.summary()
    return out


def recorded_atmosphere(metadata: dict) -> tuple[Look, dict]:
    """The look and weather a sequence was recorded in: a twin's (`twin.look`, `twin.weather`),
    else a run's own (`look`, `weather`), else none."""
    entry = metadata.get("twin") or metadata
    look = Look(
        **{k: tuple(v) if isinstance(v, list) else v for k, v in entry.get("look", {}).items()}
    )
    weather = entry.get("weather", {}) if "look" in entry else {}
    return look, {k: weather[k] for k in (*IMAGE_WEATHER, "seed") if k in weather}
