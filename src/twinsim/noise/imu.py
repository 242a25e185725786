"""IMU noise: white noise and bias random walk from continuous-time densities.

For a sample period Δt, the discrete white noise has σ_d = σ / √Δt and the bias random walk
steps by σ_b √Δt per sample (Kalibr's IMU noise model, as RotorS and CARLA-Loc use it); a
constant turn-on bias drawn once per stream is added on top.
"""

from __future__ import annotations

import numpy as np

from twinsim.noise.profiles import ImuNoise
from twinsim.sequence import ImuData


def noise_series(
    n: int,
    rate_hz: float,
    density: float,
    random_walk: float,
    rng: np.random.Generator,
    axes: int = 3,
) -> tuple[np.ndarray, np.ndarray]:
    """(white noise, bias) of shape (n, axes) for continuous densities at `rate_hz` samples/s.

    The bias starts at zero and walks from the first sample on.
    """
    dt = 1.0 / rate_hz
    white = rng.standard_normal((n, axes)) * (density / np.sqrt(dt))
    bias = np.cumsum(rng.standard_normal((n, axes)) * (random_walk * np.sqrt(dt)), axis=0)
    return white, bias


def add_imu_noise(
    imu: ImuData, rate_hz: float, params: ImuNoise, rng: np.random.Generator
) -> tuple[ImuData, dict]:
    """Noisy copy of `imu` and what was drawn once for it (the turn-on biases)."""
    n = len(imu.t_ns)
    turn_on_gyro = rng.standard_normal(3) * params.gyro_turn_on_bias
    turn_on_accel = rng.standard_normal(3) * params.accel_turn_on_bias
    g_white, g_bias = noise_series(
        n, rate_hz, params.gyro_noise_density, params.gyro_random_walk, rng
    )
    a_white, a_bias = noise_series(
        n, rate_hz, params.accel_noise_density, params.accel_random_walk, rng
    )
    noisy = ImuData(
        t_ns=imu.t_ns.copy(),
        gyro=imu.gyro + turn_on_gyro + g_bias + g_white,
        accel=imu.accel + turn_on_accel + a_bias + a_white,
    )
    drawn = {
        "gyro_turn_on_bias": turn_on_gyro.tolist(),
        "accel_turn_on_bias": turn_on_accel.tolist(),
        "gyro_bias_final": (turn_on_gyro + g_bias[-1]).tolist() if n else [],
        "accel_bias_final": (turn_on_accel + a_bias[-1]).tolist() if n else [],
    }
    return noisy, drawn
