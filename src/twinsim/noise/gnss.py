"""GNSS noise: white position noise, a first-order Gauss-Markov bias and outages.

Errors are drawn in the world's ENU frame (east and north with the horizontal σ, up with the
vertical σ), added to the true ENU position, and latitude, longitude and height are computed
anew from the noisy position, so the geodetic and ENU columns always agree. The bias follows
b[k+1] = φ b[k] + √(1 − φ²) σ_b w[k] with φ = exp(−Δt/τ), started from its stationary
distribution, so its autocorrelation is σ_b² exp(−|Δt|/τ) (Farrell's GNSS error model).
Outages start as a Poisson process of `outage_rate_per_min` per minute of fix and last a
uniform draw from `outage_duration_s`; their rows stay in the table (a receiver keeps
reporting at its rate) with status −1 (NavSatStatus.STATUS_NO_FIX) and NaN in every position
and velocity column, which is what NavSatFix consumers (robot_localization's navsat_transform,
GTSAM factors built from fixes) skip.
"""

from __future__ import annotations

import numpy as np

from twinsim.model.sensors import GnssSpec
from twinsim.noise.profiles import GnssNoise
from twinsim.sensors.kinds.gnss import COLUMNS, STATUS_NO_FIX, enu_to_geodetic


def gauss_markov(n: int, dt: float, sigma: np.ndarray, tau: float, rng) -> np.ndarray:
    """(n, len(sigma)) stationary first-order Gauss-Markov series at sample period `dt`."""
    sigma = np.asarray(sigma, dtype=float)
    phi = np.exp(-dt / tau)
    w = rng.standard_normal((n, sigma.size)) * sigma
    bias = np.empty_like(w)
    if n:
        bias[0] = w[0]
    drive = np.sqrt(1.0 - phi * phi)
    for k in range(1, n):
        bias[k] = phi * bias[k - 1] + drive * w[k]
    return bias


def outage_intervals(
    t0_s: float, t1_s: float, params: GnssNoise, rng: np.random.Generator
) -> list[tuple[float, float]]:
    """[start, end) times (s) of the outages over [t0_s, t1_s]: Poisson starts during fix."""
    rate_per_s = params.outage_rate_per_min / 60.0
    intervals: list[tuple[float, float]] = []
    if rate_per_s <= 0.0:
        return intervals
    lo, hi = params.outage_duration_s
    t = t0_s
    while True:
        t += rng.exponential(1.0 / rate_per_s)
        if t > t1_s:
            return intervals
        end = t + rng.uniform(lo, hi)
        intervals.append((t, end))
        t = end


def position_sigma(params: GnssNoise) -> tuple[float, float]:
    """Total (horizontal, vertical) σ of the position error (white and bias), m."""
    horizontal = np.hypot(params.horizontal_sigma_m, params.bias_horizontal_sigma_m)
    vertical = np.hypot(params.vertical_sigma_m, params.bias_vertical_sigma_m)
    return float(horizontal), float(vertical)


def add_gnss_noise(
    table: dict[str, np.ndarray], datum: GnssSpec, params: GnssNoise, rng: np.random.Generator
) -> tuple[np.ndarray, dict]:
    """(N, len(COLUMNS)) noisy rows of a GNSS table and what was drawn (outages, last bias)."""
    t_s = table["t_ns"].astype(float) * 1e-9
    n = len(t_s)
    enu = np.stack([table[c] for c in ("x", "y", "z")], axis=1)
    velocity = np.stack([table[c] for c in ("vx", "vy", "vz")], axis=1)
    dt = float(np.median(np.diff(t_s))) if n > 1 else 1.0
    white_sigma = [params.horizontal_sigma_m] * 2 + [params.vertical_sigma_m]
    bias_sigma = [params.bias_horizontal_sigma_m] * 2 + [params.bias_vertical_sigma_m]
    white = rng.standard_normal((n, 3)) * np.asarray(white_sigma)
    bias = gauss_markov(n, dt, np.asarray(bias_sigma), params.bias_tau_s, rng)
    noisy_enu = enu + white + bias
    noisy_v = velocity + rng.standard_normal((n, 3)) * params.velocity_sigma_mps
    rows = np.concatenate(
        [enu_to_geodetic(noisy_enu, datum), noisy_enu, noisy_v, table["status"][:, None]], axis=1
    )
    intervals = outage_intervals(t_s[0], t_s[-1], params, rng) if n else []
    out = np.zeros(n, dtype=bool)
    for start, end in intervals:
        out |= (t_s >= start) & (t_s < end)
    rows[out] = np.nan
    rows[out, COLUMNS.index("status")] = STATUS_NO_FIX
    drawn = {
        "outages_s": [[start, end] for start, end in intervals],
        "no_fix_rows": int(out.sum()),
        "bias_final_m": bias[-1].tolist() if n else [],
    }
    return rows, drawn


def write_gnss(seq, writer, stream: str, params: GnssNoise, rng, draws: dict):
    """Write a GNSS table with noise (its datum from the stream's metadata); yields once."""
    datum = GnssSpec.model_validate(seq.stream_info(stream)["datum"])
    table = seq.table(stream)
    rows, draws[stream] = add_gnss_noise(table, datum, params, rng)
    writer.add_table(stream, COLUMNS)
    for t_ns, row in zip(table["t_ns"].tolist(), rows, strict=True):
        writer.append(stream, t_ns, row)
    yield stream
