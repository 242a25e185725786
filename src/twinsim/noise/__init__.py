"""Post-processing sensor noise: a recorded sequence in, a new sequence with realistic errors out.

Models (IMU white noise and bias walk, RealSense / Kinect depth, motion blur and rolling shutter,
photon and read noise, LiDAR range noise) and their profiles are documented in docs/noise.md.
"""

from twinsim.noise.allan import allan_deviation
from twinsim.noise.apply import SPLINE_SUFFIX, apply_noise
from twinsim.noise.depth import add_depth_noise, depth_sigma
from twinsim.noise.imu import add_imu_noise, noise_series
from twinsim.noise.lidar import lidar_noise
from twinsim.noise.profiles import (
    PROFILES,
    DepthNoise,
    ImuNoise,
    LidarNoise,
    NoiseError,
    NoiseProfile,
    RgbNoise,
    resolve_profile,
)
from twinsim.noise.rgb import add_rgb_noise

__all__ = [
    "PROFILES",
    "SPLINE_SUFFIX",
    "DepthNoise",
    "ImuNoise",
    "LidarNoise",
    "NoiseError",
    "NoiseProfile",
    "RgbNoise",
    "add_depth_noise",
    "add_imu_noise",
    "add_rgb_noise",
    "allan_deviation",
    "apply_noise",
    "depth_sigma",
    "lidar_noise",
    "noise_series",
    "resolve_profile",
]
