"""Fog, rain and snow on LiDAR scans: the model on large synthetic sweeps, and twins of a
recorded run whose LiDAR sees the twin's fog."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from conftest import digest_folder
from twinsim.adversity.light import FOG_VISIBILITY_M
from twinsim.replay import Variations, replay
from twinsim.sensors.lidar_weather import NEAR_BAND_M, LidarWeather
from twinsim.sequence import open_sequence, validate_sequence
from twinsim.sequence.scans import LidarScan

HARD_CLASS = 7


def _scan(n: int, r_min: float = 1.0, r_max: float = 60.0, seed: int = 0) -> LidarScan:
    """A synthetic sweep: random beams hitting class-7 targets at uniform ranges."""
    rng = np.random.default_rng(seed)
    d = rng.standard_normal((n, 3))
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    r = rng.uniform(r_min, r_max, n)
    return LidarScan(
        index=3,
        t_ns=10**9,
        T_world_lidar=np.eye(4),
        points=(d * r[:, None]).astype(np.float32),
        t_offset_ns=np.arange(n, dtype=np.int64),
        ring=(np.arange(n) % 16).astype(np.uint16),
        intensity=rng.uniform(0.1, 0.9, n).astype(np.float32),
        range=r.astype(np.float32),
        instance=np.full(n, 5, np.uint32),
        semantic=np.full(n, HARD_CLASS, np.uint16),
        dynamic=np.zeros(n, bool),
    )


def test_fog_removes_far_returns_more_at_higher_density():
    scan = _scan(50_000)
    far = []
    for fog in (0.0, 0.02, 0.05, 0.1, 0.15, 0.4):
        visibility = None if fog == 0 else FOG_VISIBILITY_M / fog
        out = LidarWeather(fog_visibility_m=visibility, seed=1).degrade(scan, "lidar0")
        hard = out.semantic == HARD_CLASS
        far.append(int((out.range[hard] > 10.0).sum()))
    assert far[0] == int((scan.range > 10.0).sum())
    assert all(a > b for a, b in itertools.pairwise(far[:-1])), far
    assert far[-1] == 0  # 7.5 m visibility: nothing is seen 10 m away
    # what survives is attenuated two-way: I · exp(−2βR)
    weather = LidarWeather(fog_visibility_m=60.0, seed=1)
    out = weather.degrade(scan, "lidar0")
    hard = np.flatnonzero(out.semantic == HARD_CLASS)
    source = out.t_offset_ns[hard]  # the synthetic beams' indices
    want = scan.intensity[source] * np.exp(-2 * weather.beta * scan.range[source])
    assert np.allclose(out.intensity[hard], want, rtol=1e-5)
    assert np.array_equal(out.ring, scan.ring[out.t_offset_ns])


def test_clutter_returns_only_in_the_near_band_and_grow_with_fog():
    scan = _scan(50_000)
    counts = []
    for visibility in (100.0, 30.0, 10.0):
        out = LidarWeather(fog_visibility_m=visibility, seed=2).degrade(scan, "lidar0")
        clutter = out.semantic == 0
        assert (out.instance[clutter] == 0).all() and not out.dynamic[clutter].any()
        assert (out.range[clutter] >= NEAR_BAND_M[0]).all()
        assert (out.range[clutter] <= NEAR_BAND_M[1]).all()
        # each clutter point lies on its own beam, in front of the target it hid
        source = out.t_offset_ns[clutter]
        assert (out.range[clutter] < scan.range[source]).all()
        cos = np.einsum("ij,ij->i", out.points[clutter], scan.points[source])
        cos /= out.range[clutter] * scan.range[source]
        assert cos.min() > 0.9999
        counts.append(int(clutter.sum()))
    assert counts[0] < counts[1] < counts[2], counts


def test_rain_drops_beams_at_the_models_rate():
    n = 400_000
    scan = _scan(n, r_min=6.0, r_max=40.0)  # beyond the near band: every clutter draw counts
    weather = LidarWeather(rain=1.0, seed=3)
    out = weather.degrade(scan, "lidar0")
    p_drop, p_clutter = weather.drop_probability, weather.clutter_probability
    assert 0.03 < p_drop < 0.1 and 0.005 < p_clutter < 0.05
    hard = (out.semantic == HARD_CLASS).sum() / n
    clutter = (out.semantic == 0).sum() / n
    assert abs(hard - (1 - p_drop) * (1 - p_clutter)) < 0.003
    assert abs(clutter - p_clutter) < 0.002
    # snow is stronger, with the same shape
    snow = LidarWeather(snow=1.0, seed=3)
    assert snow.drop_probability > p_drop and snow.beta > weather.beta
    assert (snow.degrade(scan, "lidar0").semantic == HARD_CLASS).sum() / n < hard


def test_range_noise_grows_with_range():
    scan = _scan(200_000, r_min=1.0, r_max=30.0)
    out = LidarWeather(fog_visibility_m=100.0, seed=4).degrade(scan, "lidar0")
    hard = out.semantic == HARD_CLASS
    source = out.t_offset_ns[hard]
    error = out.range[hard] - scan.range[source]
    near, far = scan.range[source] < 10.0, scan.range[source] > 20.0
    assert 2.0 * error[near].std() < error[far].std() < 0.05


def test_the_same_scan_degrades_to_the_same_bytes():
    scan = _scan(10_000)
    weather = LidarWeather(fog_visibility_m=20.0, rain=0.5, snow=0.2, seed=9)
    a, b = weather.degrade(scan, "lidar0"), weather.degrade(scan, "lidar0")
    assert a.to_records().tobytes() == b.to_records().tobytes()
    other = LidarWeather(fog_visibility_m=20.0, rain=0.5, snow=0.2, seed=10)
    assert other.degrade(scan, "lidar0").to_records().tobytes() != a.to_records().tobytes()
    assert weather.degrade(scan, "lidar1").to_records().tobytes() != a.to_records().tobytes()
    assert not LidarWeather().active and LidarWeather(rain=0.1).active


SOURCE = (
    "lidars.lidar0.model=vlp-16",
    "lidars.lidar0.columns=120",
    "cameras.cam0.width=48",
    "cameras.cam0.height=36",
)


@pytest.fixture(scope="module")
def lidar_source(tmp_path_factory, gl_backend) -> Path:
    from twinsim.config import load_config
    from twinsim.sim import run

    cfg = load_config("tiny", SOURCE, seed=5, duration_s=0.6)
    return run(cfg, tmp_path_factory.mktemp("weather") / "source")


def _far_returns(path: Path, beyond_m: float) -> int:
    return sum(int((s.range > beyond_m).sum()) for s in open_sequence(path).lidar("lidar0"))


@pytest.mark.slow
def test_a_foggy_twin_sees_fewer_far_returns_on_the_same_poses(lidar_source, tmp_path):
    clear = replay(lidar_source, tmp_path / "clear", Variations())
    assert digest_folder(clear / "lidar0") == digest_folder(lidar_source / "lidar0")
    light = replay(lidar_source, tmp_path / "light", Variations(fog=0.15, seed=1))
    thick = replay(lidar_source, tmp_path / "thick", Variations(fog=0.4, seed=1))
    for twin in (light, thick):
        report = validate_sequence(twin)
        assert report.ok, report.problems
        assert (twin / "groundtruth_body" / "data.csv").read_bytes() == (
            lidar_source / "groundtruth_body" / "data.csv"
        ).read_bytes()
        assert (twin / "lidar0" / "scans.csv").read_bytes() == (
            lidar_source / "lidar0" / "scans.csv"
        ).read_bytes()  # the same sweep times and poses
    counts = [_far_returns(p, 3.0) for p in (lidar_source, light, thick)]
    assert counts[0] > counts[1] > counts[2], counts
    meta = open_sequence(thick).metadata["twin"]["lidar_weather"]
    assert meta["fog_visibility_m"] == pytest.approx(FOG_VISIBILITY_M / 0.4)
    again = replay(lidar_source, tmp_path / "again", Variations(fog=0.4, seed=1))
    assert digest_folder(again / "lidar0") == digest_folder(thick / "lidar0")
