"""Weather and light a world is seen in: one implementation for a run, a live episode and a twin.

A run's `weather:` and `light:` sections (`twinsim.model.sections`) and a twin's variations of
the same names resolve into the same `Atmosphere` (`atmosphere_for`): the engine's `Look`
(MuJoCo fog on the colour pass, headlight, robot lamp, flicker; `light.py`), the scene's
relit lights (`relight`), rain, snow and smoke composited onto each colour image and each
event-camera render (`image.py`) and fog, rain and snow degrading each LiDAR sweep
(`twinsim.sensors.lidar_weather`): images and sweeps through writers that sit between the
recorder and the sequence (`writers.py`), event-camera renders in their recorder, which is
handed the same image weather (`image_weather`). A run draws its weather from its seed, a twin
from its own `seed`; with the same seed and poses, both give the same bytes.
"""

from twinsim.adversity.atmosphere import (
    Atmosphere,
    atmosphere_for,
    config_atmosphere,
    lidar_weather,
    run_metadata,
)
from twinsim.adversity.light import look_for, relight
from twinsim.adversity.writers import (
    WeatherWriter,
    image_weather,
    min_ranges,
    weather_writers,
)

__all__ = [
    "Atmosphere",
    "WeatherWriter",
    "atmosphere_for",
    "config_atmosphere",
    "image_weather",
    "lidar_weather",
    "look_for",
    "min_ranges",
    "relight",
    "run_metadata",
    "weather_writers",
]
