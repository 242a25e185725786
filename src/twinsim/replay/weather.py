"""Rain, snow and drifting smoke of a twin: the image-space model of `twinsim.adversity.image`,
which a run recording in weather (`weather:` in its config) composites with too."""

from twinsim.adversity.image import (
    EXPOSURE_S,
    MAX_RANGE_M,
    RAIN_PER_M3,
    RAIN_SPEED_MPS,
    SMOKE_BLOBS_PER_100M3,
    SMOKE_DENSITY_PER_M,
    SMOKE_RGB,
    SMOKE_SIGMA_M,
    SMOKE_SPEED_MPS,
    SNOW_PER_M3,
    SNOW_SPEED_MPS,
    TILE_M,
    Weather,
)

__all__ = [
    "EXPOSURE_S",
    "MAX_RANGE_M",
    "RAIN_PER_M3",
    "RAIN_SPEED_MPS",
    "SMOKE_BLOBS_PER_100M3",
    "SMOKE_DENSITY_PER_M",
    "SMOKE_RGB",
    "SMOKE_SIGMA_M",
    "SMOKE_SPEED_MPS",
    "SNOW_PER_M3",
    "SNOW_SPEED_MPS",
    "TILE_M",
    "Weather",
]
