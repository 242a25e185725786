"""Noise parameters as data: one pydantic model per sensor, and a profile of them.

Every density is a continuous-time value (per √Hz); the models scale it by the stream's sample
rate. A profile lists the stream types it needs; sections that are not enabled leave their
streams untouched. Named profiles are registered in `twinsim.registries.NOISE_PROFILES` (the
built-ins in `noise/builtin.py`, others through the entry-point group
`twinsim.noise_profiles`). `resolve_profile` looks one up by name, applies
`--set section.key=value` overrides and turns any invalid value into a one-line `NoiseError`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from twinsim.configmodel import format_validation_error
from twinsim.errors import TwinsimError
from twinsim.registries import NOISE_PROFILES
from twinsim.textdata import TextDataError, excerpt, parse_yaml


class NoiseError(TwinsimError):
    """A noise profile, parameter or input sequence cannot be used."""


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ImuNoise(_Section):
    """White noise + bias random walk (Kalibr / RotorS model), optional constant turn-on bias."""

    enabled: bool = False
    gyro_noise_density: float = Field(0.0, ge=0.0)  # rad/s/√Hz
    accel_noise_density: float = Field(0.0, ge=0.0)  # m/s²/√Hz
    gyro_random_walk: float = Field(0.0, ge=0.0)  # rad/s²/√Hz
    accel_random_walk: float = Field(0.0, ge=0.0)  # m/s³/√Hz
    gyro_turn_on_bias: float = Field(0.0, ge=0.0)  # rad/s, σ of a bias drawn once per stream
    accel_turn_on_bias: float = Field(0.0, ge=0.0)  # m/s², σ of a bias drawn once per stream
    spline: bool = False  # also write <imu>_spline: the spline IMU with the same noise model


class DepthNoise(_Section):
    """Stereo (RealSense) or structured-light (Kinect) depth errors, range clip, invalid pixels."""

    enabled: bool = False
    model: Literal["none", "realsense", "kinect"] = "none"
    min_range_m: float = Field(0.0, ge=0.0)
    max_range_m: float = Field(1e9, gt=0.0)
    # realsense: disparity noise σ (px) of a stereo pair with this focal length and baseline
    focal_px: float = Field(382.0, gt=0.0)
    baseline_m: float = Field(0.05, gt=0.0)
    subpixel_px: float = Field(0.08, ge=0.0)
    # kinect (Nguyen et al. 2012): σ_z = a + b (z − z0)², lateral σ in pixels
    axial_a_m: float = Field(0.0012, ge=0.0)
    axial_b_per_m: float = Field(0.0019, ge=0.0)
    axial_z0_m: float = Field(0.4, ge=0.0)
    lateral_px: float = Field(0.8, ge=0.0)
    # invalid pixels: relative depth jump over a 3×3 neighbourhood (0 disables), dilated
    edge_threshold: float = Field(0.0, ge=0.0)
    edge_width_px: int = Field(1, ge=1)
    # dark pixels (luminance in [0, 1] below this) and reflective materials (reflectance ≥ min)
    dark_threshold: float = Field(0.0, ge=0.0, le=1.0)
    reflective_min: float = Field(0.2, ge=0.0, le=1.0)
    reflective_dropout: float = Field(0.0, ge=0.0, le=1.0)

    @model_validator(mode="after")
    def _range(self) -> DepthNoise:
        if self.min_range_m >= self.max_range_m:
            raise ValueError(
                f"min_range_m={self.min_range_m} must be below max_range_m={self.max_range_m}"
            )
        return self


class RgbNoise(_Section):
    """Motion blur and rolling shutter from depth and poses, then sensor noise and tone jitter."""

    enabled: bool = False
    exposure_s: tuple[float, float] = (0.0, 0.0)  # drawn uniformly per frame
    blur_samples: int = Field(10, ge=2, le=100)
    rolling_shutter_mean_s: float = Field(0.0, ge=0.0)  # readout drawn once per camera
    rolling_shutter_std_s: float = Field(0.0, ge=0.0)
    full_well_e: float = Field(0.0, ge=0.0)  # electrons at white; 0 disables shot noise
    read_noise_e: float = Field(0.0, ge=0.0)  # electrons; applies with shot noise
    exposure_jitter: float = Field(0.0, ge=0.0)  # σ of the log gain, per frame
    gamma_jitter: float = Field(0.0, ge=0.0)  # σ of the relative gamma, per frame

    @model_validator(mode="after")
    def _exposure(self) -> RgbNoise:
        lo, hi = self.exposure_s
        if lo < 0 or hi < lo:
            raise ValueError(f"exposure_s={list(self.exposure_s)} must be 0 <= low <= high")
        if self.read_noise_e > 0 and self.full_well_e <= 0:
            raise ValueError("read_noise_e needs full_well_e > 0 (read noise is in electrons)")
        return self


class LidarNoise(_Section):
    """Gaussian range noise along each beam and random dropouts."""

    enabled: bool = False
    range_sigma_m: float = Field(0.02, ge=0.0)
    dropout: float = Field(0.0, ge=0.0, lt=1.0)


class GnssNoise(_Section):
    """White position noise, a first-order Gauss-Markov bias and outages (no fix)."""

    enabled: bool = False
    horizontal_sigma_m: float = Field(0.0, ge=0.0)  # white, σ of east and of north
    vertical_sigma_m: float = Field(0.0, ge=0.0)  # white, σ of up
    bias_horizontal_sigma_m: float = Field(0.0, ge=0.0)  # stationary σ of the east/north bias
    bias_vertical_sigma_m: float = Field(0.0, ge=0.0)  # stationary σ of the up bias
    bias_tau_s: float = Field(60.0, gt=0.0)  # correlation time of the bias
    velocity_sigma_mps: float = Field(0.0, ge=0.0)  # white, σ of each velocity axis
    outage_rate_per_min: float = Field(0.0, ge=0.0)  # outages starting per minute of fix
    outage_duration_s: tuple[float, float] = (1.0, 5.0)  # drawn uniformly per outage

    @model_validator(mode="after")
    def _durations(self) -> GnssNoise:
        lo, hi = self.outage_duration_s
        if lo <= 0 or hi < lo:
            raise ValueError(
                f"outage_duration_s={list(self.outage_duration_s)} must be 0 < low <= high"
            )
        return self


class RadarNoise(_Section):
    """Gaussian noise on each detection's range, angles and Doppler velocity; lost detections
    and Poisson false alarms (uniform over the field of view and range)."""

    enabled: bool = False
    range_sigma_m: float = Field(0.1, ge=0.0)
    azimuth_sigma_deg: float = Field(0.3, ge=0.0)
    elevation_sigma_deg: float = Field(1.0, ge=0.0)
    velocity_sigma_mps: float = Field(0.1, ge=0.0)
    dropout: float = Field(0.0, ge=0.0, lt=1.0)  # probability a detection is lost
    false_alarm_rate: float = Field(0.0, ge=0.0)  # expected spurious detections per scan


class NoiseProfile(_Section):
    """A named set of sensor noise models and the stream types it cannot do without."""

    name: str
    description: str = ""
    requires: tuple[Literal["imu", "camera", "lidar", "gnss", "radar"], ...] = ()
    imu: ImuNoise = ImuNoise()
    depth: DepthNoise = DepthNoise()
    rgb: RgbNoise = RgbNoise()
    lidar: LidarNoise = LidarNoise()
    gnss: GnssNoise = GnssNoise()
    radar: RadarNoise = RadarNoise()


#: the sections `--set` may change: every sensor model of a `NoiseProfile`
_SECTIONS = ("imu", "depth", "rgb", "lidar", "gnss", "radar")


def resolve_profile(name: str, overrides: Sequence[str] = ()) -> NoiseProfile:
    """The registered profile `name` (named as it is registered) with `section.key=value`
    overrides applied and validated."""
    if name not in NOISE_PROFILES:
        raise NoiseError(NOISE_PROFILES.unknown(name))
    data = NOISE_PROFILES.get(name).model_dump(mode="json") | {"name": name}
    for assignment in overrides:
        key, sep, raw = assignment.partition("=")
        parts = key.strip().split(".")
        if not sep or len(parts) != 2 or parts[0] not in _SECTIONS:
            raise NoiseError(
                "--set expects section.key=value with section imu, depth, rgb, lidar, gnss or "
                f"radar, got {assignment!r}"
            )
        section, field = parts
        if field not in data[section]:
            allowed = ", ".join(data[section])
            raise NoiseError(f"--set {key}: unknown key {field!r}; allowed: {allowed}")
        try:
            data[section][field] = parse_yaml(raw)
        except TextDataError as exc:
            raise NoiseError(f"--set {key}: {excerpt(raw)} is not a YAML value ({exc})") from None
    try:
        return NoiseProfile.model_validate(data)
    except ValidationError as exc:
        value = exc.errors()[0]["input"]
        got = "" if isinstance(value, dict) else f" (got {value!r})"
        message = format_validation_error(exc, NoiseProfile, data, what="noise parameter")
        raise NoiseError(f"noise profile {name!r}: {message}{got}") from None
