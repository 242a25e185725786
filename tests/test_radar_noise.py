"""`twinsim noise` on a radar: valid copies, the configured σ per detection, dropout and false
alarm counts within their sampling tolerance, determinism, every other stream untouched."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import digest_folder
from twinsim.noise import NoiseError, NoiseProfile, RadarNoise, apply_noise, resolve_profile
from twinsim.sequence import open_sequence, validate_sequence

RADAR = (
    "sensors.radar0.kind=radar",
    "sensors.radar0.horizontal_fov_deg=90",
    "sensors.radar0.vertical_fov_deg=30",
    "sensors.radar0.points_per_second=8000",  # 400 rays a scan, 40 scans
    "sensors.cam0.width=16",
    "sensors.cam0.height=12",
)
SIGMA = {"range": 0.1, "azimuth": np.deg2rad(0.5), "elevation": np.deg2rad(0.8), "velocity": 0.1}
GAUSSIAN = RadarNoise(
    enabled=True,
    range_sigma_m=0.1,
    azimuth_sigma_deg=0.5,
    elevation_sigma_deg=0.8,
    velocity_sigma_mps=0.1,
)
LOSSY = GAUSSIAN.model_copy(update={"dropout": 0.2, "false_alarm_rate": 5.0})


@pytest.fixture(scope="module")
def radar_run(tmp_path_factory, gl_backend):
    """A 2 s drone run in the tiny closed room with a wide radar: 16 000 detections."""
    from twinsim.config import load_config
    from twinsim.sim import run

    out = tmp_path_factory.mktemp("radar") / "seq"
    return run(load_config("tiny", RADAR, seed=3, duration_s=2.0), out)


def _noisy(src, dst, radar: RadarNoise, seed: int):
    return apply_noise(src, dst, NoiseProfile(name="test", radar=radar), seed=seed)


def test_residuals_have_the_configured_sigma(radar_run, tmp_path):
    out = _noisy(radar_run, tmp_path / "g", GAUSSIAN, seed=1)
    assert validate_sequence(out).ok, validate_sequence(out).problems
    clean, noisy = open_sequence(radar_run).radar("radar0"), open_sequence(out).radar("radar0")
    assert np.array_equal(noisy.counts, clean.counts) and clean.counts.sum() == 16_000
    half = {"azimuth": np.deg2rad(45), "elevation": np.deg2rad(15)}
    for field, sigma in SIGMA.items():
        a = np.concatenate([s.to_records()[field] for s in clean]).astype(np.float64)
        b = np.concatenate([s.to_records()[field] for s in noisy]).astype(np.float64)
        inside = np.abs(a) < half[field] - 5 * sigma if field in half else np.ones(len(a), bool)
        residual = (b - a)[inside]  # clipping at the field's edge left out
        assert inside.sum() > 11_000
        assert np.std(residual) == pytest.approx(sigma, rel=0.03), field  # ±5 standard errors
        assert abs(np.mean(residual)) < 5 * sigma / np.sqrt(len(residual)), field
        if field in half:  # clipped into the field of view, never beyond
            assert np.abs(b).max() <= half[field] + 1e-6
    for a, b in zip(clean, noisy, strict=True):  # labels travel with their detection
        assert np.array_equal(a.instance, b.instance) and np.array_equal(a.dynamic, b.dynamic)


def test_dropout_and_false_alarms_within_sampling_tolerance(radar_run, tmp_path):
    out = _noisy(radar_run, tmp_path / "l", LOSSY, seed=2)
    report = validate_sequence(out)
    assert report.ok, report.problems  # counts in data.csv, ranges and angles in bounds
    seq = open_sequence(out)
    clean, noisy = open_sequence(radar_run).radar("radar0"), seq.radar("radar0")
    assert all((s.instance > 0).all() for s in clean)  # a closed room: every ray hits something
    n = int(clean.counts.sum())
    alarms = [s.to_records()[s.instance == 0] for s in noisy]
    n_alarms, n_kept = sum(map(len, alarms)), int(noisy.counts.sum()) - sum(map(len, alarms))
    # binomial kept count (σ ≈ 51) and Poisson false alarms (5 a scan × 40, σ ≈ 14): ±4 σ
    assert abs(n_kept - 0.8 * n) < 4 * np.sqrt(n * 0.2 * 0.8)
    assert abs(n_alarms - 5.0 * len(clean)) < 4 * np.sqrt(5.0 * len(clean))
    drawn = seq.metadata["noise"]["draws"]["radar0"]
    assert drawn == {"dropped": n - n_kept, "false_alarms": n_alarms}
    for scan in noisy:  # the false alarms follow the kept detections
        assert (scan.instance[: len(scan) - np.sum(scan.instance == 0)] > 0).all()
    fa = np.concatenate(alarms)
    assert not fa["dynamic"].any() and not fa["semantic"].any()
    assert fa["range"].min() > 0 and fa["range"].max() <= 100.0
    assert fa["range"].mean() == pytest.approx(50.0, abs=4 * 100 / np.sqrt(12 * len(fa)))
    assert np.abs(fa["azimuth"]).max() <= np.deg2rad(45) + 1e-6
    assert np.std(fa["velocity"]) == pytest.approx(0.1, rel=0.25)
    parameters = seq.metadata["noise"]["parameters"]["radar"]
    assert parameters == LOSSY.model_dump(mode="json")
    assert "noise profile 'test'" in seq.stream_info("radar0")["noise"]


def test_determinism_and_every_other_stream_byte_identical(radar_run, tmp_path):
    a = digest_folder(_noisy(radar_run, tmp_path / "a", LOSSY, seed=7))
    b = digest_folder(_noisy(radar_run, tmp_path / "b", LOSSY, seed=7))
    c = digest_folder(_noisy(radar_run, tmp_path / "c", LOSSY, seed=8))
    src = digest_folder(radar_run)
    assert a == b
    radar = [p for p in src if p.startswith("radar0/detections/")]
    assert len(radar) == 40 and all(a[p] != c[p] for p in radar)
    assert all(a[p] != src[p] for p in radar)
    others = [p for p in src if not p.startswith("radar0/")]
    others = [p for p in others if p not in ("metadata.json", "checksums.csv")]
    assert len(others) > 10 and all(a[p] == src[p] for p in others)
    # the index keeps every time and pose byte for byte; only the counts change
    clean_rows = (radar_run / "radar0" / "data.csv").read_text().splitlines()
    noisy_rows = (tmp_path / "a" / "radar0" / "data.csv").read_text().splitlines()
    assert noisy_rows[0] == clean_rows[0]
    assert [r.rsplit(",", 1)[0] for r in noisy_rows] == [r.rsplit(",", 1)[0] for r in clean_rows]


def test_profiles_and_refusals(tmp_path, gl_backend):
    assert resolve_profile("carla-loc").radar == resolve_profile("radar").radar
    assert resolve_profile("radar").requires == ("radar",)
    with pytest.raises(NoiseError, match=r"^noise profile 'radar': radar\.dropout: .*less than 1 "
                       r"\(got 1\)$"):  # fmt: skip
        resolve_profile("radar", ["radar.dropout=1"])
    with pytest.raises(NoiseError, match=r"radar\.range_sigma_m: .* 0 \(got -0\.1\)$"):
        resolve_profile("radar", ["radar.range_sigma_m=-0.1"])
    with pytest.raises(NoiseError, match=r"unknown key 'sigma'; allowed: enabled, range_sigma_m"):
        resolve_profile("radar", ["radar.sigma=1"])
    from twinsim.config import load_config
    from twinsim.sim import run

    no_radar = run(load_config("tiny", ["cameras={}"], seed=1, duration_s=0.3), tmp_path / "n")
    with pytest.raises(NoiseError, match=r"^profile 'radar' needs a radar stream, but .* has none"):
        apply_noise(no_radar, tmp_path / "x", resolve_profile("radar"))
