"""`twinsim compare`: per-axis pose deviation, image similarity, and the CLI's table and JSON."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.spatial.transform import Rotation
from typer.testing import CliRunner

from conftest import SENSOR_OVERRIDES
from twinsim.cli import app
from twinsim.replay.compare import AXES, pose_deviation


def _poses(xyz: np.ndarray, ypr: np.ndarray) -> np.ndarray:
    T = np.tile(np.eye(4), (len(xyz), 1, 1))
    T[:, :3, :3] = Rotation.from_euler("ZYX", ypr).as_matrix()
    T[:, :3, 3] = xyz
    return T


def test_pose_deviation_per_axis_recovers_known_offsets():
    rng = np.random.default_rng(0)
    n = 200
    xyz = rng.uniform(-3, 3, (n, 3))
    ypr = np.column_stack([rng.uniform(-3, 3, n), rng.uniform(-0.4, 0.4, (n, 2))])
    dxyz = np.column_stack([np.full(n, 1e-3), rng.normal(0.0, 2e-3, n), np.zeros(n)])
    dyaw = np.where(np.arange(n) % 2 == 0, 0.01, -0.01)
    ypr_b = ypr.copy()
    ypr_b[:, 0] = np.angle(np.exp(1j * (ypr[:, 0] + dyaw)))  # wrapping must not matter
    dev = pose_deviation(_poses(xyz, ypr), _poses(xyz + dxyz, ypr_b))
    assert set(dev) == set(AXES)
    assert dev["x"]["mean"] == pytest.approx(1e-3) and dev["x"]["std"] == pytest.approx(
        0, abs=1e-12
    )
    assert dev["y"]["std"] == pytest.approx(dxyz[:, 1].std())
    assert dev["z"] == {"mean": 0.0, "std": 0.0, "max_abs": 0.0}
    assert dev["yaw"]["mean"] == pytest.approx(0.0, abs=1e-9)
    assert dev["yaw"]["max_abs"] == pytest.approx(0.01, abs=1e-9)
    assert dev["roll"]["max_abs"] < 1e-9 and dev["pitch"]["max_abs"] < 1e-9


def test_cli_compare_prints_a_table_and_json(dynamic_sequence):
    runner = CliRunner()
    res = runner.invoke(app, ["compare", str(dynamic_sequence), str(dynamic_sequence), "--json"])
    assert res.exit_code == 0, res.output
    result = json.loads(res.output)
    assert result["poses"]["groundtruth_body"]["x"]["max_abs"] == 0.0
    assert result["cameras"]["cam0"]["rgb_ssim"]["min"] == 1.0
    table = runner.invoke(app, ["compare", str(dynamic_sequence), str(dynamic_sequence)])
    assert (
        table.exit_code == 0 and "RGB SSIM" in table.output and "groundtruth_body" in table.output
    )
    bad = runner.invoke(app, ["compare", str(dynamic_sequence), "/nonexistent/seq"])
    assert bad.exit_code == 2 and "error" in bad.output


DURATION_S = 0.25


@pytest.fixture(scope="module")
def sensor_runs(gl_backend, tmp_path_factory):
    """A quarter second with people and flying objects seen by a LiDAR and an event camera,
    and its twin without them (a teleport replay: the same motion in an emptied world)."""
    from twinsim.config import load_config
    from twinsim.replay import Variations, replay
    from twinsim.sim import run

    root = tmp_path_factory.mktemp("compare_sensors")
    # seed 2: people and flying objects in view of every sweep and of the event camera
    a = run(load_config("tiny", SENSOR_OVERRIDES, seed=2, duration_s=DURATION_S), root / "a")
    return a, replay(a, root / "static", Variations(static=True))


def test_a_sequence_with_lidar_and_events_matches_itself(sensor_runs):
    from twinsim.replay.compare import compare_sequences
    from twinsim.sequence import open_sequence

    a, _ = sensor_runs
    seq = open_sequence(a)
    n_points = sum(len(scan) for scan in seq.lidar("lidar0"))
    n_events = len(seq.events("ev0"))
    result = compare_sequences(a, a)
    assert not {"lidar0", "ev0"} & set(result.tables)
    lidar, events = result.lidars["lidar0"], result.event_cameras["ev0"]
    assert lidar["identical"] and lidar["scans"] == 3
    assert lidar["points"] == {"a": n_points, "b": n_points} and lidar["beams_in_both"] == n_points
    assert lidar["returns_only_in_a"] == lidar["returns_only_in_b"] == 0
    assert lidar["range_mae_m"]["max"] == 0.0 and lidar["range_max_abs_m"] == 0.0
    assert lidar["instance_changed"] == 0.0 and lidar["count_difference"]["max_abs"] == 0.0
    assert all(lidar["pose"][axis]["max_abs"] == 0.0 for axis in AXES)
    assert events["identical"] and events["events"] == {"a": n_events, "b": n_events}
    assert events["shared_events"] == n_events > 0 and events["pixel_count_difference"] == 0.0
    assert events["rate_hz"]["a"] == pytest.approx(n_events / DURATION_S)
    assert events["rate_hz"]["difference"] == 0.0
    table = CliRunner().invoke(app, ["compare", str(a), str(a)])
    assert table.exit_code == 0, table.output
    assert "LiDAR sweeps" in table.output and "event cameras" in table.output


def test_the_twin_without_people_differs_where_they_were(sensor_runs):
    from twinsim.replay.compare import compare_sequences
    from twinsim.sequence import open_sequence

    a, b = sensor_runs
    seq_a, seq_b = open_sequence(a), open_sequence(b)
    result = compare_sequences(a, b)
    lidar = result.lidars["lidar0"]
    assert not lidar["identical"] and lidar["scans"] == 3
    assert all(lidar["pose"][axis]["max_abs"] == 0.0 for axis in AXES)  # the same motion
    # indoors every ray returns, so both write the same beams in the same (firing) order
    mae, largest, moved, total = [], 0.0, 0, 0
    for sa, sb in zip(seq_a.lidar("lidar0"), seq_b.lidar("lidar0"), strict=True):
        assert len(sa) == len(sb) and np.array_equal(sa.ring, sb.ring)
        assert sa.dynamic.any() and not sb.dynamic.any()
        d = sb.range.astype(float) - sa.range.astype(float)
        assert np.all(d[~sa.dynamic] == 0.0)  # rays on the static world are unchanged
        assert np.all(d[sa.dynamic] >= 0.0)  # rays that hit people now reach what was behind
        mae.append(np.abs(d).mean())
        largest = max(largest, np.abs(d).max())
        moved += int(sa.dynamic.sum())
        total += len(sa)
    assert lidar["beams_in_both"] == total and lidar["returns_only_in_a"] == 0
    assert lidar["instance_changed"] == pytest.approx(moved / total)
    assert lidar["range_max_abs_m"] == pytest.approx(largest) and largest > 0.1
    assert lidar["range_mae_m"]["max"] == pytest.approx(max(mae))
    assert lidar["range_mae_m"]["mean"] == pytest.approx(np.mean(mae))
    events = result.event_cameras["ev0"]
    n_a, n_b = len(seq_a.events("ev0")), len(seq_b.events("ev0"))
    assert not events["identical"] and events["events"] == {"a": n_a, "b": n_b}
    assert n_b < n_a  # without people and flying objects fewer edges move
    assert events["rate_hz"]["difference"] == pytest.approx((n_b - n_a) / DURATION_S)
    assert events["shared_events"] + events["events_only_in_a"] == n_a
    assert events["shared_events"] + events["events_only_in_b"] == n_b
    assert 0.0 < events["pixel_count_difference"] <= 1.0
    assert result.tables["imu0"]["max_abs_difference"] == 0.0


def test_lidars_with_other_beams_are_refused(sensor_runs, tmp_path):
    import shutil

    from twinsim.errors import SequenceError
    from twinsim.replay.compare import compare_sequences

    a, _ = sensor_runs
    other = tmp_path / "other"
    shutil.copytree(a, other)
    meta = json.loads((other / "metadata.json").read_text())
    meta["streams"]["lidar0"]["columns"] = 120
    (other / "metadata.json").write_text(json.dumps(meta))
    with pytest.raises(SequenceError, match=r"lidar0: 6 rings x 240 columns in A and 6 x 120"):
        compare_sequences(a, other)
    bad = CliRunner().invoke(app, ["compare", str(a), str(other)])
    assert bad.exit_code == 2 and "columns" in bad.output
