"""RGB sensor effects: exposure and rolling shutter from camera motion, then photon and read
noise, gain and gamma jitter, all in linear light (sRGB-like gamma 2.2 around it)."""

from __future__ import annotations

import numpy as np

from twinsim.noise.motion import PoseSpline, exposure_image
from twinsim.noise.profiles import NoiseError, RgbNoise

#: Display gamma assumed for the clean 8-bit images.
GAMMA = 2.2


def frame_draws(params: RgbNoise, rng: np.random.Generator) -> dict[str, float]:
    """What a frame draws once: exposure time, gain (exposure jitter) and relative gamma."""
    lo, hi = params.exposure_s
    return {
        "exposure_s": float(rng.uniform(lo, hi)) if hi > lo else float(lo),
        "gain": float(np.exp(rng.standard_normal() * params.exposure_jitter)),
        "gamma": float(max(0.2, 1.0 + rng.standard_normal() * params.gamma_jitter)),
    }


def readout_draw(params: RgbNoise, rng: np.random.Generator) -> float:
    """Rolling-shutter readout time of one camera, ~N(mean, std) clipped at 0."""
    readout = params.rolling_shutter_mean_s + rng.standard_normal() * params.rolling_shutter_std_s
    return float(max(0.0, readout))


def add_rgb_noise(
    rgb: np.ndarray,
    depth: np.ndarray,
    K: np.ndarray,
    poses: PoseSpline | None,
    t_s: float,
    readout_s: float,
    draws: dict[str, float],
    params: RgbNoise,
    rng: np.random.Generator,
) -> np.ndarray:
    """Noisy uint8 RGB of one frame given its depth, the camera pose spline and its draws.

    `poses` (seconds as `t_s`) is needed only when the exposure or the readout is not zero.
    """
    linear = (rgb.astype(np.float32) / 255.0) ** GAMMA
    if draws["exposure_s"] > 0 or readout_s > 0:
        if poses is None:
            raise NoiseError("motion blur and rolling shutter need the camera's poses")
        linear = exposure_image(
            linear, depth, K, poses, t_s, draws["exposure_s"], readout_s, params.blur_samples
        )
    linear = linear.astype(np.float64) * draws["gain"]
    if params.full_well_e > 0:
        electrons = rng.poisson(np.clip(linear, 0.0, None) * params.full_well_e)
        linear = electrons / params.full_well_e
        if params.read_noise_e > 0:
            read = rng.standard_normal(linear.shape) * params.read_noise_e
            linear = linear + read / params.full_well_e
    encoded = np.clip(linear, 0.0, 1.0) ** (1.0 / (GAMMA * draws["gamma"]))
    return np.clip(np.rint(encoded * 255.0), 0, 255).astype(np.uint8)
