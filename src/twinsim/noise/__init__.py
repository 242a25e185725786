"""Post-processing sensor noise: a recorded sequence in, a new sequence with realistic errors out.

Models (IMU white noise and bias walk, RealSense / Kinect depth, motion blur and rolling shutter,
photon and read noise, LiDAR range noise, radar detection noise, GNSS errors) and their profiles
are documented in docs/noise.md.
Named profiles are entries of `NOISE_PROFILES` (`twinsim.registries`).
"""

from twinsim._lazy import lazy_exports

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "allan_deviation": "twinsim.noise.allan",
        "SPLINE_SUFFIX": "twinsim.noise.apply",
        "apply_noise": "twinsim.noise.apply",
        "add_depth_noise": "twinsim.noise.depth",
        "depth_sigma": "twinsim.noise.depth",
        "add_imu_noise": "twinsim.noise.imu",
        "noise_series": "twinsim.noise.imu",
        "lidar_noise": "twinsim.noise.lidar",
        "NOISE_PROFILES": "twinsim.registries",
        "DepthNoise": "twinsim.noise.profiles",
        "ImuNoise": "twinsim.noise.profiles",
        "LidarNoise": "twinsim.noise.profiles",
        "NoiseError": "twinsim.noise.profiles",
        "NoiseProfile": "twinsim.noise.profiles",
        "RadarNoise": "twinsim.noise.profiles",
        "RgbNoise": "twinsim.noise.profiles",
        "resolve_profile": "twinsim.noise.profiles",
        "radar_noise": "twinsim.noise.radar",
        "add_rgb_noise": "twinsim.noise.rgb",
    },
)

__all__ = [
    "NOISE_PROFILES",
    "SPLINE_SUFFIX",
    "DepthNoise",
    "ImuNoise",
    "LidarNoise",
    "NoiseError",
    "NoiseProfile",
    "RadarNoise",
    "RgbNoise",
    "add_depth_noise",
    "add_imu_noise",
    "add_rgb_noise",
    "allan_deviation",
    "apply_noise",
    "depth_sigma",
    "lidar_noise",
    "noise_series",
    "radar_noise",
    "resolve_profile",
]
