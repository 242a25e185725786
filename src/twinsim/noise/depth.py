"""Depth camera errors: stereo (RealSense) or structured-light (Kinect) noise, range clip, holes.

RealSense-like: the disparity d = f·b / z gets Gaussian sub-pixel noise, so the depth error
grows as σ_z = z² · σ_d / (f · b). Kinect-like (Nguyen et al., 2012): each pixel reads a
neighbour displaced by lateral noise, plus axial noise σ_z = a + b (z − z0)². Pixels at depth
discontinuities, on dark surfaces and on reflective materials return nothing (0), as do depths
outside the sensor's range. Each model (`DepthNoise.model`) is an entry of `DEPTH_MODELS`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import cv2
import numpy as np

from twinsim.noise.profiles import DepthNoise


@dataclass(frozen=True)
class DepthModel:
    """A depth sensor's error model: the axial σ (m) at depth z, whether each pixel reads a
    neighbour displaced by `lateral_px` first, and the noisy depth and validity given one
    standard normal draw per pixel."""

    sigma: Callable[[np.ndarray, DepthNoise], np.ndarray]
    perturb: Callable[[np.ndarray, np.ndarray, np.ndarray, DepthNoise], tuple]
    lateral: bool = False


def _stereo(z: np.ndarray, valid: np.ndarray, noise: np.ndarray, params: DepthNoise) -> tuple:
    """Disparity d = f·b / z with Gaussian sub-pixel noise; d ≤ 0 reads nothing."""
    fb = params.focal_px * params.baseline_m
    disparity = fb / np.where(valid, z, 1.0) + noise * params.subpixel_px
    valid &= disparity > 0
    return fb / np.where(valid, disparity, 1.0), valid


#: every depth model by its `DepthNoise.model` name
DEPTH_MODELS: dict[str, DepthModel] = {
    "none": DepthModel(lambda z, p: np.zeros_like(z), lambda z, valid, noise, p: (z, valid)),
    "realsense": DepthModel(
        lambda z, p: z**2 * p.subpixel_px / (p.focal_px * p.baseline_m), _stereo
    ),
    "kinect": DepthModel(
        lambda z, p: p.axial_a_m + p.axial_b_per_m * (z - p.axial_z0_m) ** 2,
        lambda z, valid, noise, p: (z + noise * depth_sigma(z, p), valid),
        lateral=True,
    ),
}


def depth_sigma(z_m: np.ndarray, params: DepthNoise) -> np.ndarray:
    """Standard deviation (m) of the axial depth error at depth z under the profile's model."""
    return DEPTH_MODELS[params.model].sigma(np.asarray(z_m, dtype=np.float64), params)


def edge_mask(depth: np.ndarray, threshold: float, width_px: int) -> np.ndarray:
    """Pixels within `width_px` of a jump larger than `threshold` × depth in a 3×3 window."""
    valid = depth > 0
    big = np.where(valid, depth, np.float32(1e6)).astype(np.float32)
    kernel = np.ones((3, 3), np.uint8)
    hi = cv2.dilate(np.where(valid, depth, 0).astype(np.float32), kernel)
    lo = cv2.erode(big, kernel)
    edges = valid & (hi - lo > threshold * np.maximum(lo, 1e-6))
    if width_px > 1:
        grow = np.ones((2 * width_px - 1, 2 * width_px - 1), np.uint8)
        edges = cv2.dilate(edges.astype(np.uint8), grow).astype(bool) & valid
    return edges


def add_depth_noise(
    depth: np.ndarray,
    params: DepthNoise,
    rng: np.random.Generator,
    rgb: np.ndarray | None = None,
    reflective: np.ndarray | None = None,
) -> np.ndarray:
    """Noisy float32 depth (0 = no reading) from clean z-depth (H, W) in metres.

    `rgb` (H, W, 3) uint8 finds dark pixels; `reflective` (H, W) bool marks reflective material.
    """
    model = DEPTH_MODELS[params.model]
    z = np.asarray(depth, dtype=np.float64)
    valid = z > 0
    if model.lateral and params.lateral_px > 0:
        h, w = z.shape
        jitter = rng.standard_normal((2, h, w)) * params.lateral_px
        cols = np.clip(np.rint(np.arange(w)[None, :] + jitter[0]), 0, w - 1).astype(int)
        rows = np.clip(np.rint(np.arange(h)[:, None] + jitter[1]), 0, h - 1).astype(int)
        z, valid = z[rows, cols], valid[rows, cols]
    noise = rng.standard_normal(z.shape)
    z, valid = model.perturb(z, valid, noise, params)
    invalid = ~valid | (z < params.min_range_m) | (z > params.max_range_m)
    if params.edge_threshold > 0:
        invalid |= edge_mask(
            np.asarray(depth, np.float32), params.edge_threshold, params.edge_width_px
        )
    if rgb is not None and params.dark_threshold > 0:
        luminance = rgb.astype(np.float64) @ np.array([0.299, 0.587, 0.114]) / 255.0
        invalid |= luminance < params.dark_threshold
    if reflective is not None and params.reflective_dropout > 0:
        invalid |= reflective & (rng.random(z.shape) < params.reflective_dropout)
    return np.where(invalid, 0.0, z).astype(np.float32)
