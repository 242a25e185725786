"""`twinsim noise` on real sequences: valid output, byte-identical ground truth, determinism."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from conftest import digest_folder
from twinsim.cli import app
from twinsim.errors import OutputFolderError
from twinsim.noise import NoiseError, apply_noise, depth_sigma, resolve_profile
from twinsim.sensors.spline_imu import sequence_spline_imu
from twinsim.sequence import open_sequence, validate_sequence

GROUND_TRUTH = ("groundtruth_body", "groundtruth_cam0", "odometry", "joint_states", "robot_state")
CHEAP_GRADE = ["rgb.blur_samples=3"]


@pytest.fixture(scope="module")
def static_sequence(tmp_path_factory, gl_backend):
    """A static world (no people, no flying objects) with a 16×12 camera at 10 Hz, 2 s."""
    from twinsim.config import load_config
    from twinsim.sim import run

    overrides = ["cameras.cam0.width=16", "cameras.cam0.height=12", "cameras.cam0.rate_hz=10"]
    cfg = load_config("tiny", overrides, seed=5, duration_s=2.0)
    return run(cfg, tmp_path_factory.mktemp("static") / "seq")


@pytest.fixture(scope="module")
def graded(dynamic_sequence, tmp_path_factory):
    """The shared dynamic sequence under GRADE's noise (source digested before and after)."""
    before = digest_folder(dynamic_sequence)
    out = tmp_path_factory.mktemp("graded") / "noisy"
    apply_noise(dynamic_sequence, out, resolve_profile("grade", CHEAP_GRADE), seed=11)
    assert digest_folder(dynamic_sequence) == before  # the source is never touched
    return out


def test_grade_noise_gives_a_valid_sequence_with_gt_copied(dynamic_sequence, graded):
    report = validate_sequence(graded)
    assert report.ok, report.problems
    src, out = digest_folder(dynamic_sequence), digest_folder(graded)
    for stream in GROUND_TRUTH:
        files = {k: v for k, v in src.items() if k.startswith(stream + "/")}
        assert files and all(out[k] == v for k, v in files.items()), stream
    assert out["scene.json"] == src["scene.json"]
    # labels describe the clean image, and poses and boxes are the source's: all unchanged
    for name in ("cam0/frames.csv", "cam0/boxes.jsonl", "cam0/instance/000010.png"):
        assert out[name] == src[name], name
    assert out["cam0/semantic/000010.png"] == src["cam0/semantic/000010.png"]


def test_grade_metadata_records_profile_parameters_and_seed(graded):
    meta = open_sequence(graded).metadata
    noise = meta["noise"]
    assert noise["profile"] == "grade" and noise["seed"] == 11
    assert noise["parameters"]["imu"]["gyro_noise_density"] == 3.394e-4
    assert noise["parameters"]["depth"]["max_range_m"] == 3.5
    assert noise["parameters"]["rgb"]["blur_samples"] == 3
    cam = noise["draws"]["cam0"]
    assert 0.0 <= cam["rolling_shutter_readout_s"] < 0.05
    exposures = np.array(cam["frames"]["exposure_s"])
    assert len(exposures) == meta["streams"]["cam0"]["count"]
    assert exposures.min() >= 0.01 and exposures.max() <= 0.1
    assert len(noise["draws"]["imu0"]["gyro_turn_on_bias"]) == 3


def test_grade_noise_changes_images_and_depth_as_modelled(dynamic_sequence, graded):
    params = resolve_profile("grade")
    clean, noisy = (
        open_sequence(dynamic_sequence).camera("cam0"),
        open_sequence(graded).camera("cam0"),
    )
    for i in (0, len(clean) // 2, len(clean) - 1):
        a, b = clean[i], noisy[i]
        assert b.depth.dtype == np.float32 and b.depth.shape == a.depth.shape
        assert np.all(b.depth <= 3.5)
        assert np.all(b.depth[a.depth > 4.0] == 0)  # clipped at 3.5 m (4 m: 8 σ beyond)
        both = (a.depth > 0) & (b.depth > 0)
        assert both.mean() > 0.2
        sigma = depth_sigma(a.depth[both], params.depth)
        assert np.all(np.abs(b.depth[both] - a.depth[both]) < 6 * sigma)
        assert np.any(b.depth[both] != a.depth[both])
        assert not np.array_equal(a.rgb, b.rgb)
        assert np.abs(a.rgb.astype(float) - b.rgb).mean() < 40  # the same scene
        assert np.array_equal(a.T_world_cam, b.T_world_cam)
        assert a.boxes == b.boxes and a.keypoints.keys() == b.keypoints.keys()


def test_same_seed_same_bytes_other_seed_other_noise(dynamic_sequence, tmp_path):
    profile = resolve_profile("realsense-d435i")
    a = digest_folder(apply_noise(dynamic_sequence, tmp_path / "a", profile, seed=3))
    b = digest_folder(apply_noise(dynamic_sequence, tmp_path / "b", profile, seed=3))
    c = digest_folder(apply_noise(dynamic_sequence, tmp_path / "c", profile, seed=4))
    assert a == b
    assert a["cam0/depth/000005.npy"] != c["cam0/depth/000005.npy"]
    assert a["cam0/rgb/000005.png"] == c["cam0/rgb/000005.png"]  # depth-only profile
    assert a["imu0/data.csv"] == c["imu0/data.csv"]


def test_spline_imu_and_carla_loc_on_a_static_sequence(static_sequence, tmp_path):
    out = apply_noise(static_sequence, tmp_path / "spline", resolve_profile("spline-imu"))
    assert validate_sequence(out).ok
    src, seq = open_sequence(static_sequence), open_sequence(out)
    info = seq.stream_info("imu0_spline")
    assert info["type"] == "imu" and info["rate_hz"] == 240
    assert info["T_body_sensor"] == src.stream_info("imu0")["T_body_sensor"]
    spline, written = sequence_spline_imu(src, "imu0"), seq.imu("imu0_spline")
    np.testing.assert_array_equal(written.t_ns, spline.t_ns)
    np.testing.assert_array_equal(written.accel, spline.accel)  # bit-exact through the CSV
    np.testing.assert_array_equal(written.gyro, spline.gyro)
    # noise-free: the MuJoCo IMU is rewritten to the very same bytes
    assert digest_folder(out)["imu0/data.csv"] == digest_folder(static_sequence)["imu0/data.csv"]
    # CARLA-Loc's densities: white noise of σ / √Δt on top of a slow bias walk
    noisy = open_sequence(
        apply_noise(static_sequence, tmp_path / "c", resolve_profile("carla-loc"))
    )
    assert set(noisy.streams) == set(seq.streams)
    for stream, clean in (("imu0", src.imu("imu0")), ("imu0_spline", spline)):
        diff = noisy.imu(stream).gyro - clean.gyro
        white = np.diff(diff, axis=0) / np.sqrt(2)  # the walk hardly moves between samples
        assert np.std(white) == pytest.approx(2e-4 * np.sqrt(240), rel=0.1)


def test_bad_input_is_refused_with_one_clear_line(static_sequence, dynamic_sequence, tmp_path):
    from twinsim.config import load_config
    from twinsim.sim import run

    no_camera = run(load_config("tiny", ["cameras={}"], seed=1, duration_s=0.5), tmp_path / "nc")
    with pytest.raises(NoiseError, match=r"profile 'realsense-d435i' needs a camera stream"):
        apply_noise(no_camera, tmp_path / "o1", resolve_profile("realsense-d435i"))
    with pytest.raises(NoiseError, match=r"profile 'lidar' needs a lidar stream"):
        apply_noise(static_sequence, tmp_path / "o2", resolve_profile("lidar"))
    with pytest.raises(NoiseError, match=r"inside the source sequence"):
        apply_noise(static_sequence, static_sequence / "noisy", resolve_profile("carla-loc"))
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "keep.txt").write_text("mine")
    with pytest.raises(OutputFolderError, match="not empty"):
        apply_noise(static_sequence, tmp_path / "full", resolve_profile("carla-loc"))
    assert (tmp_path / "full" / "keep.txt").read_text() == "mine"


def test_cli_noise_writes_a_valid_sequence_and_fails_cleanly(static_sequence, tmp_path):
    runner = CliRunner()
    out = tmp_path / "cli"
    result = runner.invoke(
        app,
        [
            "noise",
            str(static_sequence),
            "--out",
            str(out),
            "--profile",
            "grade",
            "--set",
            "rgb.blur_samples=2",
            "--seed",
            "9",
        ],
    )
    assert result.exit_code == 0, result.output
    assert validate_sequence(out).ok
    assert json.loads((out / "metadata.json").read_text())["noise"]["seed"] == 9
    bad = runner.invoke(
        app,
        [
            "noise",
            str(static_sequence),
            "--out",
            str(tmp_path / "x"),
            "--profile",
            "rotors-default",
            "--set",
            "imu.gyro_noise_density=-1",
        ],
    )
    assert bad.exit_code == 2
    assert "imu.gyro_noise_density: " in bad.output and "(got -1)" in bad.output
    assert "Traceback" not in bad.output
    unknown = runner.invoke(
        app, ["noise", str(static_sequence), "--out", str(tmp_path / "y"), "--profile", "fancy"]
    )
    assert unknown.exit_code == 2 and "registered: rotors-default, carla-loc" in unknown.output


def _beam(point: np.ndarray, range_m: float) -> tuple:
    return tuple(np.round(point / range_m, 3).tolist())


def test_lidar_noise_on_a_recorded_lidar_sequence(tmp_path, gl_backend):
    from twinsim.config import load_config
    from twinsim.sim import run

    lidar = "lidars={lidar0: {model: vlp-16, columns: 120}}"
    cfg = load_config("tiny", ["cameras={}", lidar], seed=4, duration_s=0.5)
    src = run(cfg, tmp_path / "lidar")
    profile = resolve_profile("lidar", ["lidar.dropout=0.2"])
    out = apply_noise(src, tmp_path / "noisy", profile, seed=2)
    assert validate_sequence(out).ok
    for name in ("robot_state/data.csv", "lidar0/scans.csv"):  # times and poses: same bytes
        assert digest_folder(out)[name] == digest_folder(src)[name], name
    clean, noisy = open_sequence(src).lidar("lidar0"), open_sequence(out).lidar("lidar0")
    assert len(clean) == len(noisy) == 5
    residuals, kept = [], []
    for a, b in zip(clean, noisy, strict=True):
        # a beam is identified by its direction in the LiDAR frame; the noisy scan keeps a subset
        key_a = {_beam(p, r): i for i, (p, r) in enumerate(zip(a.points, a.range, strict=True))}
        idx = np.array([key_a[_beam(p, r)] for p, r in zip(b.points, b.range, strict=True)])
        np.testing.assert_array_equal(b.t_offset_ns, a.t_offset_ns[idx])
        kept.append(len(b) / len(a))
        residuals.append(b.range - a.range[idx])
        np.testing.assert_array_equal(b.instance, a.instance[idx])
        direction = a.points[idx] / a.range[idx, None]
        np.testing.assert_allclose(b.points, direction * b.range[:, None], atol=1e-4)
    assert np.mean(kept) == pytest.approx(0.8, abs=0.03)
    assert np.std(np.concatenate(residuals)) == pytest.approx(0.02, rel=0.1)


@pytest.mark.slow
def test_render_time_exposure_is_not_blurred_twice(tmp_path, gl_backend):
    """A camera recorded with exposure and a rolling shutter keeps them: the noise adds sensor
    noise but no second blur or readout (recorded as zero draws)."""
    from twinsim.config import load_config
    from twinsim.sim import run

    cam = ["width=16", "height=12", "rate_hz=10", "exposure_s=0.02"]
    cam.append("rolling_shutter_readout_s=0.01")
    cfg = load_config("tiny", [f"cameras.cam0.{c}" for c in cam], seed=5, duration_s=1.0)
    src = run(cfg, tmp_path / "exposed")
    out = apply_noise(src, tmp_path / "noisy", resolve_profile("grade", CHEAP_GRADE), seed=3)
    drawn = open_sequence(out).metadata["noise"]["draws"]["cam0"]
    assert drawn["rolling_shutter_readout_s"] == 0.0
    assert set(drawn["frames"]["exposure_s"]) == {0.0} and len(drawn["frames"]["gain"]) == 10
    assert validate_sequence(out).ok
