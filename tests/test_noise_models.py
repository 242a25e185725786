"""Noise models against their definitions: Allan deviation, depth σ(z), warps, photons, LiDAR."""

from __future__ import annotations

import numpy as np
import pytest

from twinsim.noise import (
    DepthNoise,
    ImuNoise,
    LidarNoise,
    NoiseError,
    RgbNoise,
    add_depth_noise,
    add_imu_noise,
    add_rgb_noise,
    allan_deviation,
    depth_sigma,
    lidar_noise,
    noise_series,
    resolve_profile,
)
from twinsim.noise.motion import PoseSpline, warp_to_row_poses, world_points
from twinsim.sequence import ImuData


def _fit_allan(adev: np.ndarray, taus: np.ndarray) -> tuple[float, float]:
    """Least-squares (N, K) of ADEV² = N²/τ + K²τ/3 (white noise + random walk)."""
    A = np.stack([1 / taus, taus / 3], axis=1) / adev[:, None] ** 2
    n2, k2 = np.linalg.lstsq(A, np.ones_like(taus), rcond=None)[0]
    return np.sqrt(n2), np.sqrt(k2)


@pytest.mark.parametrize(
    ("density", "walk"), [(3.394e-4, 3.88e-5 * 50), (4e-3, 6e-3)], ids=["gyro", "accel"]
)
def test_allan_deviation_matches_configured_densities(density, walk):
    """A long synthetic series at 200 Hz: the fitted N and K are within 10 % of the settings."""
    rate = 200.0
    white, bias = noise_series(1_000_000, rate, density, walk, np.random.default_rng(7))
    taus = np.geomspace(0.01, 30.0, 16)
    adev = allan_deviation(white + bias, rate, taus)
    for axis in range(3):
        n_fit, k_fit = _fit_allan(adev[:, axis], taus)
        assert n_fit == pytest.approx(density, rel=0.1)
        assert k_fit == pytest.approx(walk, rel=0.1)
    # and the white-noise slope alone: N / √τ at τ = 0.01 s
    np.testing.assert_allclose(adev[0], density / np.sqrt(0.01), rtol=0.1)


def test_imu_noise_has_the_turn_on_bias_and_walks_from_it():
    n = 48_000
    clean = ImuData(np.arange(n, dtype=np.int64), np.zeros((n, 3)), np.tile([0, 0, 9.81], (n, 1)))
    params = ImuNoise(enabled=True, gyro_turn_on_bias=0.01, accel_turn_on_bias=0.2)
    noisy, drawn = add_imu_noise(clean, 240.0, params, np.random.default_rng(1))
    np.testing.assert_allclose(noisy.gyro - clean.gyro, np.tile(drawn["gyro_turn_on_bias"], (n, 1)))
    np.testing.assert_allclose(noisy.accel[-1] - clean.accel[-1], drawn["accel_bias_final"])
    assert np.linalg.norm(drawn["accel_turn_on_bias"]) > 0.01


@pytest.mark.parametrize("model", ["realsense", "kinect"])
def test_depth_noise_std_matches_the_model_at_1_2_3_m(model):
    params = DepthNoise(enabled=True, model=model, max_range_m=10.0)
    rng = np.random.default_rng(3)
    for z in (1.0, 2.0, 3.0):
        clean = np.full((240, 320), z, np.float32)
        noisy = add_depth_noise(clean, params, rng)
        assert np.all(noisy > 0)
        expected = float(depth_sigma(z, params))
        assert np.std(noisy - z) == pytest.approx(expected, rel=0.1)
        assert abs(np.mean(noisy - z)) < 0.1 * expected
    if model == "realsense":  # z² growth: σ(2 m) / σ(1 m) = 4
        assert depth_sigma(2.0, params) / depth_sigma(1.0, params) == pytest.approx(4.0)


def test_depth_clip_edges_dark_and_reflective_pixels_read_nothing():
    params = DepthNoise(
        enabled=True,
        model="none",
        max_range_m=3.5,
        edge_threshold=0.1,
        dark_threshold=0.05,
        reflective_dropout=0.5,
    )
    depth = np.full((40, 60), 2.0, np.float32)
    depth[:, 30:] = 4.0  # beyond the 3.5 m clip, with a depth edge at column 30
    rgb = np.full((40, 60, 3), 128, np.uint8)
    rgb[:5, :10] = 3  # a dark patch
    reflective = np.zeros((40, 60), bool)
    reflective[20:40, :20] = True
    out = add_depth_noise(depth, params, np.random.default_rng(0), rgb, reflective)
    assert np.all(out[:, 30:] == 0)  # clipped
    assert np.all(out[:, 29] == 0)  # the near side of the edge
    assert np.all(out[:5, :10] == 0)  # dark
    assert np.all(out[5:20, :29] == 2.0)  # untouched
    dropped = np.mean(out[20:40, :20] == 0)
    assert 0.35 < dropped < 0.65


def _translating_camera(speed_mps: float) -> PoseSpline:
    """A camera moving along its own x axis (image right) at constant speed."""
    t = np.arange(-1.0, 1.0 + 1e-9, 0.05)
    T = np.tile(np.eye(4), (len(t), 1, 1))
    T[:, 0, 3] = speed_mps * t
    return PoseSpline(np.rint((t + 1.0) * 1e9).astype(np.int64), T)


def _edge_image(w: int = 80, h: int = 60) -> np.ndarray:
    image = np.zeros((h, w, 3), np.float32)
    image[:, w // 2 :] = 1.0
    return image


def _edge_column(row: np.ndarray) -> float:
    """Sub-pixel column of a dark-to-bright (0 → 1, linear light) edge: the dark area minus ½."""
    return float(np.sum(1.0 - row)) - 0.5


K = np.array([[40.0, 0, 39.5], [0, 40.0, 29.5], [0, 0, 1]])


def test_warp_moves_a_plane_by_f_times_baseline_over_depth():
    """Camera 0.1 m to the right, plane at 2 m: the edge moves 40 · 0.1 / 2 = 2 px to the left."""
    image, depth = _edge_image(), np.full((60, 80), 2.0)
    points = world_points(depth, K, np.eye(4))
    T = np.tile(np.eye(4), (60, 1, 1))
    T[:, 0, 3] = 0.1
    warped = warp_to_row_poses(image, points, K, T)
    assert _edge_column(warped[30, :, 0]) == pytest.approx(_edge_column(image[30, :, 0]) - 2.0)


def test_rolling_shutter_slants_a_vertical_edge_and_blur_spreads_it():
    """1 m/s sideways at 2 m depth, 0.03 s readout: bottom row lags the top by 40·0.03/2 = 0.6 px;
    a 0.05 s exposure smears the edge over 40·0.05/2 = 1 px."""
    poses = _translating_camera(1.0)
    image, depth = _edge_image(), np.full((60, 80), 2.0, np.float32)
    rgb = (image * 255).astype(np.uint8)
    draws = {"exposure_s": 0.0, "gain": 1.0, "gamma": 1.0}
    params = RgbNoise(enabled=True)
    t_s = poses.seconds(1_000_000_000)
    shutter = add_rgb_noise(
        rgb, depth, K, poses, t_s, 0.03, draws, params, np.random.default_rng(0)
    )
    lin = (shutter[..., 0] / 255.0) ** 2.2
    slant = _edge_column(lin[0]) - _edge_column(lin[-1])
    assert slant == pytest.approx(0.6, abs=0.1)
    blurred = add_rgb_noise(
        rgb,
        depth,
        K,
        poses,
        t_s,
        0.0,
        {**draws, "exposure_s": 0.05},
        params,
        np.random.default_rng(0),
    )
    row = (blurred[30, :, 0] / 255.0) ** 2.2
    ramp = np.flatnonzero((row > 0.02) & (row < 0.98))
    assert 1 <= len(ramp) <= 3  # a ~1 px wide ramp instead of a step
    assert _edge_column(row) == pytest.approx(_edge_column(image[30, :, 0]), abs=0.15)


def test_shot_noise_variance_follows_the_photon_count():
    params = RgbNoise(enabled=True, full_well_e=200.0)
    rgb = np.full((200, 200, 3), 160, np.uint8)
    draws = {"exposure_s": 0.0, "gain": 1.0, "gamma": 1.0}
    out = add_rgb_noise(
        rgb, np.ones((200, 200)), K, None, 0.0, 0.0, draws, params, np.random.default_rng(2)
    )
    lin_clean = (160 / 255) ** 2.2
    lin = (out.astype(np.float64) / 255) ** 2.2
    assert np.std(lin) == pytest.approx(np.sqrt(lin_clean / 200.0), rel=0.1)
    assert np.mean(lin) == pytest.approx(lin_clean, rel=0.02)


def test_lidar_noise_moves_points_along_their_beams_and_drops_some():
    rng = np.random.default_rng(4)
    directions = rng.standard_normal((20_000, 3))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    ranges = rng.uniform(1.0, 30.0, 20_000)
    points = directions * ranges[:, None]
    keep, noisy, noisy_ranges = lidar_noise(
        points, ranges, LidarNoise(range_sigma_m=0.02, dropout=0.1), np.random.default_rng(5)
    )
    assert np.mean(~keep) == pytest.approx(0.1, abs=0.01)
    assert np.std(noisy_ranges - ranges[keep]) == pytest.approx(0.02, rel=0.05)
    np.testing.assert_allclose(np.linalg.norm(noisy, axis=1), noisy_ranges, rtol=1e-6)
    cosines = np.sum(noisy * directions[keep], axis=1) / noisy_ranges
    np.testing.assert_allclose(cosines, 1.0, atol=1e-6)


def test_profiles_resolve_and_refuse_bad_values():
    grade = resolve_profile("grade", ["depth.max_range_m=5.0", "imu.spline=true"])
    assert grade.depth.max_range_m == 5.0 and grade.imu.spline
    assert resolve_profile("carla-loc").imu.gyro_noise_density == 2e-4
    with pytest.raises(NoiseError, match=r"unknown noise profile 'nope'; registered: rotors-"):
        resolve_profile("nope")
    with pytest.raises(NoiseError, match=r"imu\.accel_random_walk: .* 0 \(got -0\.1\)"):
        resolve_profile("rotors-default", ["imu.accel_random_walk=-0.1"])
    with pytest.raises(NoiseError, match=r"unknown key 'sigma'; allowed: enabled"):
        resolve_profile("lidar", ["lidar.sigma=0.1"])
    with pytest.raises(NoiseError, match=r"section imu, depth, rgb, lidar, gnss or radar"):
        resolve_profile("lidar", ["range_sigma_m=0.1"])
    with pytest.raises(NoiseError, match=r"read_noise_e needs full_well_e"):
        resolve_profile("grade", ["rgb.full_well_e=0"])
