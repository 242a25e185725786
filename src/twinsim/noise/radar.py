"""Radar errors: Gaussian noise on range, angles and Doppler, lost detections and false alarms."""

from __future__ import annotations

import numpy as np

from twinsim.noise.profiles import RadarNoise
from twinsim.sequence.radar import DETECTION_DTYPE

#: the shortest range a noisy detection keeps: noise that takes a range to 0 or below stops here
MIN_RANGE_M = 1e-3


def radar_noise(
    records: np.ndarray,
    params: RadarNoise,
    range_m: float,
    fov_deg: tuple[float, float],
    rng: np.random.Generator,
) -> tuple[np.ndarray, int]:
    """(noisy detections as `DETECTION_DTYPE` records, how many of them are false alarms).

    The kept detections come first, in their order, each with its labels; a range is clipped
    into [`MIN_RANGE_M`, `range_m`] and an angle into the field of view `fov_deg` (horizontal,
    vertical, full widths), so the scan stays one the radar could have given. The false alarms
    follow, uniform over the field of view and (0, `range_m`], labelled as hitting nothing.
    """
    n = len(records)
    keep = rng.random(n) >= params.dropout
    noise = rng.standard_normal((n, 4)) * [
        params.range_sigma_m,
        np.deg2rad(params.azimuth_sigma_deg),
        np.deg2rad(params.elevation_sigma_deg),
        params.velocity_sigma_mps,
    ]
    half_h, half_v = np.deg2rad(fov_deg[0]) / 2, np.deg2rad(fov_deg[1]) / 2
    kept = records[keep].copy()
    noise = noise[keep]
    kept["range"] = np.clip(kept["range"] + noise[:, 0], MIN_RANGE_M, range_m)
    kept["azimuth"] = np.clip(kept["azimuth"] + noise[:, 1], -half_h, half_h)
    kept["elevation"] = np.clip(kept["elevation"] + noise[:, 2], -half_v, half_v)
    kept["velocity"] = kept["velocity"] + noise[:, 3]
    k = int(rng.poisson(params.false_alarm_rate))
    alarms = np.zeros(k, DETECTION_DTYPE)  # instance 0 (nothing), semantic 0, not dynamic
    alarms["range"] = range_m * (1.0 - rng.random(k))  # (0, range_m]
    alarms["azimuth"] = rng.uniform(-half_h, half_h, k)
    alarms["elevation"] = rng.uniform(-half_v, half_v, k)
    alarms["velocity"] = rng.standard_normal(k) * params.velocity_sigma_mps
    return np.concatenate([kept, alarms]), k
