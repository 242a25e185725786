"""A whole run of the tiny preset: valid, exact clock, consistent annotations, deterministic."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import digest_folder
from twinsim.config import load_config
from twinsim.geometry import pose_to_T
from twinsim.sequence import open_sequence, step_to_ns, validate_sequence
from twinsim.sim import run


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory, gl_backend) -> Path:
    out = tmp_path_factory.mktemp("runs") / "tiny0"
    return run(load_config("tiny", seed=0), out)


def test_tiny_run_is_valid_and_complete(tiny_run):
    report = validate_sequence(tiny_run)
    assert report.ok, report.problems
    assert not (tiny_run / "INCOMPLETE").exists()


def test_timestamps_are_exact_multiples_of_each_period(tiny_run):
    seq = open_sequence(tiny_run)
    hz = seq.metadata["physics_hz"]
    k0, k1 = seq.metadata["recorded_steps"]
    expected_rates = {
        "cam0": 30,
        "imu0": 240,
        "groundtruth_body": 60,
        "odometry": 60,
        "joint_states": 120,
    }
    for stream, rate in expected_rates.items():
        t = seq.table(stream)["t_ns"] if stream != "cam0" else seq.camera("cam0").t_ns
        period = hz // rate
        steps = np.arange(-(-k0 // period) * period, k1, period)
        assert len(t) == len(steps) == round((k1 - k0) / period)
        assert t.dtype == np.int64
        assert np.array_equal(t, [step_to_ns(int(k), hz) for k in steps])
        assert np.all(np.diff(t) > 0)


def test_camera_pose_is_body_pose_times_extrinsics(tiny_run):
    seq = open_sequence(tiny_run)
    t_body, T_body = seq.groundtruth("groundtruth_body")
    t_cam, T_cam = seq.groundtruth("groundtruth_cam0")
    assert np.array_equal(t_body, t_cam)
    T_body_cam = np.array(seq.metadata["streams"]["cam0"]["T_body_sensor"])
    np.testing.assert_allclose(T_body @ T_body_cam, T_cam, atol=1e-9)
    cam = seq.camera("cam0")
    idx = np.searchsorted(t_cam, cam.t_ns)
    np.testing.assert_allclose(cam.T_world_cam, T_cam[idx], atol=1e-12)


def test_annotations_are_consistent(tiny_run):
    seq = open_sequence(tiny_run)
    instances = {row["instance_id"]: row for row in seq.metadata["instances"]}
    classes = seq.metadata["classes"]
    seen = set()
    for frame in seq.camera("cam0"):
        ids = set(np.unique(frame.instance).tolist()) - {0}
        assert ids <= set(instances)
        seen |= ids
        assert {b["instance_id"] for b in frame.boxes} == ids
        for box in frame.boxes:
            x0, y0, x1, y1 = box["tight"]
            lx0, ly0, lx1, ly1 = box["loose"]
            assert lx0 <= x0 <= x1 <= lx1 and ly0 <= y0 <= y1 <= ly1
            assert box["semantic_class"] == instances[box["instance_id"]]["semantic_class"]
        for iid in ids:
            cls = classes.index(instances[iid]["semantic_class"])
            assert np.all(frame.semantic[frame.instance == iid] == cls)
    kinds = {instances[i]["semantic_class"] for i in seen}
    assert {"wall", "floor"} <= kinds


def test_drone_follows_its_path_within_limits(tiny_run):
    seq = open_sequence(tiny_run)
    odo = seq.table("odometry")
    speed = np.linalg.norm(np.stack([odo["vx"], odo["vy"], odo["vz"]], axis=1), axis=1)
    assert speed.max() <= 0.5 + 0.05
    cfg = seq.metadata["config"]["robots"]["robot"]
    state = seq.table("robot_state")
    tilt = np.abs(np.stack([state["qpos_roll"], state["qpos_pitch"]]))
    assert tilt.max() <= np.deg2rad(cfg["max_roll_pitch_deg"])
    err = np.hypot(state["qpos_x"] - state["q_ref_x"], state["qpos_y"] - state["q_ref_y"])
    assert err.max() < 0.05
    assert speed.max() > 0.05  # it really flies
    # GRADE's Table 8 statistics agree with the odometry: the camera moves forward (its z)
    stats = seq.metadata["statistics"]["camera_motion"]
    assert stats["linear_speed"][2] == pytest.approx(np.mean(np.abs(odo["vx"])), rel=0.2, abs=0.01)


def test_same_seed_is_byte_identical_other_seed_differs(tiny_run, tmp_path):
    again = run(load_config("tiny", seed=0), tmp_path / "again")
    assert digest_folder(again) == digest_folder(tiny_run)
    other = run(load_config("tiny", seed=1, duration_s=0.2), tmp_path / "other")
    a = json.loads((tiny_run / "scene.json").read_text())
    b = json.loads((other / "scene.json").read_text())
    assert a["rooms"] != b["rooms"]


def test_scene_json_rebuilds_the_identical_world(tiny_run):
    import mujoco

    from twinsim.engine.build import compile_model
    from twinsim.model.scene import SceneSpec
    from twinsim.sim import build_scene

    text = (tiny_run / "scene.json").read_text()
    scene = SceneSpec.from_json(text)
    assert scene.to_json() == text
    cfg = load_config("tiny", seed=0)
    assert build_scene(cfg) == scene

    def model_bytes(spec: SceneSpec) -> bytes:
        model = compile_model(spec, cfg.render, 240)
        buffer = np.zeros(mujoco.mj_sizeModel(model), dtype=np.uint8)
        mujoco.mj_saveModel(model, None, buffer)
        return buffer.tobytes()

    assert model_bytes(scene) == model_bytes(open_sequence(tiny_run).scene)


def test_cli_run_validate_info(tmp_path, gl_backend):
    out = tmp_path / "cli"
    exe = Path(sys.executable).parent / "twinsim"
    done = subprocess.run(
        [exe, "run", "--config", "tiny", "--duration", "0.5", "--seed", "3", "--out", out],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert "sequence written" in done.stdout
    assert subprocess.run([exe, "validate", out], capture_output=True).returncode == 0
    info = subprocess.run([exe, "info", out, "--json"], capture_output=True, text=True)
    assert info.returncode == 0
    summary = json.loads(info.stdout)
    assert summary["seed"] == 3


def test_interrupted_run_is_marked_partial(tmp_path, gl_backend):
    def interrupt(done: int, total: int) -> None:
        if done > total // 2:
            raise KeyboardInterrupt

    out = tmp_path / "partial"
    with pytest.raises(KeyboardInterrupt):
        run(load_config("tiny", duration_s=1.0), out, progress=interrupt)
    assert (out / "INCOMPLETE").exists()
    report = validate_sequence(out)
    assert not report.ok
    assert any("incomplete" in p.lower() or "interrupted" in p.lower() for p in report.problems)
    with pytest.raises(Exception, match=r"(?i)incomplete|interrupted|partial"):
        open_sequence(out)


def test_pose_helpers_round_trip():
    from twinsim.geometry import T_to_pos_quat_xyzw

    T = pose_to_T((1.0, -2.0, 0.5), (0.9, 0.1, -0.3, 0.2) / np.linalg.norm((0.9, 0.1, -0.3, 0.2)))
    row = T_to_pos_quat_xyzw(T)
    w = row[6]
    back = pose_to_T(row[:3], (w, *row[3:6]))
    np.testing.assert_allclose(back, T, atol=1e-12)


def test_preview_contact_sheet(tiny_run, tmp_path):
    import cv2
    from typer.testing import CliRunner

    from twinsim.cli import app

    out = tmp_path / "sheet.png"
    result = CliRunner().invoke(app, ["preview", str(tiny_run), "--frame", "-1", "--out", str(out)])
    assert result.exit_code == 0, result.output
    sheet = cv2.imread(str(out))
    last = open_sequence(tiny_run).camera("cam0")[-1]
    assert sheet.shape == (2 * last.rgb.shape[0], 2 * last.rgb.shape[1], 3)
    assert np.array_equal(sheet[: last.rgb.shape[0], : last.rgb.shape[1], ::-1], last.rgb)
    bad = CliRunner().invoke(app, ["preview", str(tiny_run), "--frame", "999", "--out", str(out)])
    assert bad.exit_code == 2 and "has frames 0.." in bad.output
