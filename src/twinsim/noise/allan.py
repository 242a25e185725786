"""Overlapping Allan deviation: how IMU noise is characterised (and how we check our own)."""

from __future__ import annotations

import numpy as np


def allan_deviation(samples: np.ndarray, rate_hz: float, taus_s: np.ndarray) -> np.ndarray:
    """Overlapping Allan deviation of rate samples (n,) or (n, axes) at cluster times `taus_s`.

    White noise of density N gives N / √τ; a random walk of density K gives K √(τ / 3).
    """
    x = np.asarray(samples, dtype=np.float64)
    x = x[:, None] if x.ndim == 1 else x
    theta = np.concatenate([np.zeros((1, x.shape[1])), np.cumsum(x, axis=0)]) / rate_hz
    out = []
    for tau in np.atleast_1d(taus_s):
        m = int(np.rint(tau * rate_hz))
        if m < 1 or 2 * m >= len(theta):
            raise ValueError(f"tau {tau} s needs 1 <= tau * rate_hz < n / 2 samples")
        d = theta[2 * m :] - 2 * theta[m:-m] + theta[: -2 * m]
        out.append(np.sqrt(np.mean(d**2, axis=0) / (2 * (m / rate_hz) ** 2)))
    result = np.array(out)
    return result[:, 0] if np.asarray(samples).ndim == 1 else result
