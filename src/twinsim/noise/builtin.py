"""Registers the built-in noise profiles, each a `NoiseProfile` under its own name."""

from __future__ import annotations

from twinsim.noise.profiles import (
    DepthNoise,
    GnssNoise,
    ImuNoise,
    LidarNoise,
    NoiseProfile,
    RadarNoise,
    RgbNoise,
)
from twinsim.registries import NOISE_PROFILES

# GRADE's released IMU noise: RotorS' ADIS16448 defaults (its gazebo_imu_plugin): gyro white
# 2·35/3600 °/s/√Hz, bias walk 2·4/3600 °/s²/√Hz, turn-on σ 0.5 °/s; accelerometer white
# 2·2e-3 m/s²/√Hz, bias walk 2·3e-3 m/s³/√Hz, turn-on σ 20e-3 · 9.8 m/s² (checked in its source)
_ROTORS_IMU = ImuNoise(
    enabled=True,
    gyro_noise_density=3.394e-4,
    accel_noise_density=4e-3,
    gyro_random_walk=3.88e-5,
    accel_random_walk=6e-3,
    gyro_turn_on_bias=0.0087,
    accel_turn_on_bias=0.196,
)
_REALSENSE = DepthNoise(
    enabled=True,
    model="realsense",
    min_range_m=0.1,
    max_range_m=5.0,
    edge_threshold=0.1,
    dark_threshold=0.04,
    reflective_dropout=0.5,
)
_GRADE_RGB = RgbNoise(
    enabled=True,
    exposure_s=(0.01, 0.1),
    rolling_shutter_mean_s=0.015,
    rolling_shutter_std_s=0.006,
    full_well_e=6000.0,
    read_noise_e=3.0,
    exposure_jitter=0.05,
    gamma_jitter=0.03,
)
# A 77 GHz automotive radar, after the accuracies a datasheet such as Continental's ARS 408-21
# quotes: range about ±0.1 m (near range; ±0.4 m far), azimuth ±0.1° (far) to ±0.3° (near, on
# boresight), Doppler resolution about 0.1 m/s (0.37 km/h). Elevation, where a radar measures it
# at all, comes from far fewer antennas than azimuth: σ 1°. 5 % of the detections lost and half
# a false alarm a scan: a CFAR detector's design false-alarm probability (1e-6 to 1e-5 a cell)
# over the ~1e5 range-Doppler-angle cells of a scan.
_AUTOMOTIVE_RADAR = RadarNoise(
    enabled=True,
    range_sigma_m=0.1,
    azimuth_sigma_deg=0.3,
    elevation_sigma_deg=1.0,
    velocity_sigma_mps=0.1,
    dropout=0.05,
    false_alarm_rate=0.5,
)

for _profile in (
    NoiseProfile(
        name="rotors-default",
        description="IMU noise of GRADE / RotorS (ADIS16448)",
        requires=("imu",),
        imu=_ROTORS_IMU,
    ),
    NoiseProfile(
        name="carla-loc",
        description="CARLA-Loc: spline IMU + white noise and bias walk; LiDAR σ 0.02 m; "
        "automotive radar σ 0.1 m, 0.3° / 1°, 0.1 m/s, 5 % lost, 0.5 false alarms a scan",
        requires=("imu",),
        imu=ImuNoise(
            enabled=True,
            gyro_noise_density=2e-4,
            accel_noise_density=2e-3,
            gyro_random_walk=2e-5,
            accel_random_walk=3e-3,
            spline=True,
        ),
        lidar=LidarNoise(enabled=True, range_sigma_m=0.02),
        radar=_AUTOMOTIVE_RADAR,
    ),
    NoiseProfile(
        name="spline-imu",
        description="adds <imu>_spline: a noise-free IMU from splines through the ground "
        "truth (CARLA-Loc's method); every other stream unchanged",
        requires=("imu",),
        imu=ImuNoise(enabled=True, spline=True),
    ),
    NoiseProfile(
        name="realsense-d435i",
        description="RealSense D435i depth: stereo noise ∝ z², clip at 5 m, invalid pixels",
        requires=("camera",),
        depth=_REALSENSE,
    ),
    NoiseProfile(
        name="realsense-d435i-3.5m",
        description="RealSense D435i depth clipped at 3.5 m (GRADE's benchmark setting)",
        requires=("camera",),
        depth=_REALSENSE.model_copy(update={"max_range_m": 3.5}),
    ),
    NoiseProfile(
        name="kinect",
        description="Kinect-like structured light depth (axial + lateral noise), 0.5–4.5 m",
        requires=("camera",),
        depth=DepthNoise(
            enabled=True,
            model="kinect",
            min_range_m=0.5,
            max_range_m=4.5,
            edge_threshold=0.1,
            dark_threshold=0.04,
        ),
    ),
    NoiseProfile(
        name="grade",
        description="GRADE's evaluation noise: RotorS IMU, D435i depth at 3.5 m, motion "
        "blur, rolling shutter, sensor noise",
        requires=("imu", "camera"),
        imu=_ROTORS_IMU,
        depth=_REALSENSE.model_copy(update={"max_range_m": 3.5}),
        rgb=_GRADE_RGB,
    ),
    NoiseProfile(
        name="lidar",
        description="Gaussian LiDAR range noise σ 0.02 m and 1 % dropouts",
        requires=("lidar",),
        lidar=LidarNoise(enabled=True, range_sigma_m=0.02, dropout=0.01),
    ),
    NoiseProfile(
        name="radar",
        description="automotive radar: σ 0.1 m range, 0.3° azimuth, 1° elevation, 0.1 m/s "
        "Doppler, 5 % of detections lost, 0.5 false alarms a scan",
        requires=("radar",),
        radar=_AUTOMOTIVE_RADAR,
    ),
    NoiseProfile(
        name="gnss",
        description="single-frequency GNSS: white σ 0.3 m horizontal / 0.5 m vertical, "
        "Gauss-Markov bias σ 1 m / 2 m (τ 60 s), 0.5 outages per minute of 2–10 s",
        requires=("gnss",),
        gnss=GnssNoise(
            enabled=True,
            horizontal_sigma_m=0.3,
            vertical_sigma_m=0.5,
            bias_horizontal_sigma_m=1.0,
            bias_vertical_sigma_m=2.0,
            bias_tau_s=60.0,
            velocity_sigma_mps=0.05,
            outage_rate_per_min=0.5,
            outage_duration_s=(2.0, 10.0),
        ),
    ),
):
    NOISE_PROFILES.register(_profile.name, _profile)
