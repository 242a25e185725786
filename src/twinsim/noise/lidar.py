"""LiDAR errors: Gaussian noise along each beam and points that return nothing (dropouts)."""

from __future__ import annotations

import numpy as np

from twinsim.noise.profiles import LidarNoise


def lidar_noise(
    points: np.ndarray, ranges: np.ndarray, params: LidarNoise, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(kept mask (N,), noisy points of the kept (M, 3) float32, their ranges (M,) float32).

    Each point moves along its own beam (the ray from the sensor origin in the point's frame),
    so the direction, ring and timestamp stay those of the beam.
    """
    points = np.asarray(points, dtype=np.float64)
    ranges = np.asarray(ranges, dtype=np.float64)
    keep = rng.random(len(ranges)) >= params.dropout
    noisy = ranges + rng.standard_normal(len(ranges)) * params.range_sigma_m
    keep &= noisy > 0
    scale = noisy[keep] / np.maximum(ranges[keep], 1e-12)
    return keep, (points[keep] * scale[:, None]).astype(np.float32), noisy[keep].astype(np.float32)
