"""Trajectory I/O and metrics: our numbers equal evo's command-line tools; bad input is reported."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.transform import Rotation
from typer.testing import CliRunner

from twinsim.eval.io import read_trajectory, write_tum
from twinsim.eval.metrics import evaluate, tracking_rate
from twinsim.eval.trajectory import TrajectoryError, from_poses

EVO_BIN = Path(sys.executable).parent
RATE_HZ = 30
T0_NS = 1_000_000_000


def ground_truth(seconds: float = 20.0):
    """A camera flying a wavy loop at 30 Hz for `seconds`, turning as it goes."""
    n = int(seconds * RATE_HZ)
    k = np.arange(n)
    t_ns = T0_NS + (k * 10**9 + RATE_HZ // 2) // RATE_HZ
    s = k / RATE_HZ
    poses = np.tile(np.eye(4), (n, 1, 1))
    poses[:, :3, 3] = np.column_stack(
        [2 * np.cos(0.3 * s), 1.5 * np.sin(0.3 * s), 1 + 0.2 * s / 20]
    )
    poses[:, :3, :3] = Rotation.from_euler(
        "zyx", np.column_stack([0.3 * s, 0.1 * np.sin(s), 0.05 * np.cos(2 * s)])
    ).as_matrix()
    return from_poses(t_ns, poses, "gt")


def noisy_estimate(gt, scale: float = 1.0, seed: int = 3):
    """GT seen from another world frame, with drift and noise, optionally scaled (monocular)."""
    rng = np.random.default_rng(seed)
    offset = np.eye(4)
    offset[:3, :3] = Rotation.from_euler("z", 0.7).as_matrix()
    offset[:3, 3] = [3.0, -1.0, 0.5]
    poses = offset @ gt.poses
    poses[:, :3, 3] += np.cumsum(rng.normal(0, 0.004, (len(gt), 3)), axis=0)
    noise = Rotation.from_rotvec(rng.normal(0, 0.004, (len(gt), 3))).as_matrix()
    poses[:, :3, :3] = poses[:, :3, :3] @ noise
    poses[:, :3, 3] *= scale
    return from_poses(gt.t_ns, poses, "est")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("traj")
    gt = ground_truth()
    write_tum(folder / "gt.tum", gt)
    write_tum(folder / "est.tum", noisy_estimate(gt))
    write_tum(folder / "mono.tum", noisy_estimate(gt, scale=0.4))
    return folder


def evo_rmse(tool: str, args: list[str], folder: Path, name: str) -> float:
    """Run evo_ape / evo_rpe on TUM files and read the RMSE from its saved results."""
    out = folder / f"{name}.zip"
    subprocess.run(
        [str(EVO_BIN / tool), "tum", *args, "--save_results", str(out), "--no_warnings"],
        check=True,
        capture_output=True,
        cwd=folder,
    )
    with zipfile.ZipFile(out) as archive:
        return json.loads(archive.read("stats.json"))["rmse"]


@pytest.mark.parametrize(
    ("tool", "est", "options", "key", "sim3"),
    [
        ("evo_ape", "est.tum", ["-a"], "ate_rmse", False),
        ("evo_ape", "mono.tum", ["-as"], "ate_rmse", True),
        (
            "evo_rpe",
            "est.tum",
            ["-a", "--delta", "1", "--delta_unit", "f"],
            "rpe_trans_rmse",
            False,
        ),
        (
            "evo_rpe",
            "est.tum",
            ["-a", "-r", "angle_deg", "--delta", "1", "--delta_unit", "f"],
            "rpe_rot_rmse",
            False,
        ),
        (
            "evo_rpe",
            "est.tum",
            ["-a", "--delta", "1", "--delta_unit", "m"],
            "rpe_trans_per_m_rmse",
            False,
        ),
        (
            "evo_rpe",
            "est.tum",
            ["-a", "-r", "angle_deg", "--delta", "1", "--delta_unit", "m"],
            "rpe_rot_per_m_rmse",
            False,
        ),
        (
            "evo_rpe",
            "mono.tum",
            ["-as", "--delta", "1", "--delta_unit", "f"],
            "rpe_trans_rmse",
            True,
        ),
    ],
)
def test_metrics_equal_evo_command_line(files, tool, est, options, key, sim3):
    ours = evaluate(read_trajectory(files / "gt.tum"), read_trajectory(files / est), sim3=sim3)
    theirs = evo_rmse(tool, ["gt.tum", est, *options], files, f"{tool}_{key}_{sim3}")
    assert getattr(ours, key) > 1e-4  # a real, non-trivial error
    assert getattr(ours, key) == pytest.approx(theirs, abs=1e-9, rel=0)


def test_ground_truth_against_itself(files):
    gt = read_trajectory(files / "gt.tum")
    result = evaluate(gt, gt)
    assert result.ate_rmse < 1e-12 and result.rpe_trans_rmse < 1e-12
    assert result.tracking_rate == 1.0
    assert result.coverage == pytest.approx(1.0, abs=1e-12)
    assert result.matched_poses == len(gt) == 600


def test_sim3_recovers_scale(files):
    result = evaluate(
        read_trajectory(files / "gt.tum"), read_trajectory(files / "mono.tum"), sim3=True
    )
    assert result.scale == pytest.approx(1 / 0.4, rel=0.02)
    assert result.coverage == pytest.approx(1.0, abs=0.1)


def test_a_straight_drive_is_aligned_at_its_first_pose_and_says_so():
    """Umeyama leaves the rotation about a straight path free (evo refuses it): the estimate is
    aligned at the first pose, the ATE is the drift from there, and a note says so."""
    t_ns = np.arange(50, dtype=np.int64) * 50_000_000
    poses = np.tile(np.eye(4), (50, 1, 1))
    poses[:, 0, 3] = np.linspace(0.0, 20.0, 50)  # 20 m straight ahead
    est = poses.copy()
    est[:, 1, 3] = np.linspace(0.0, 0.5, 50)  # drifts 0.5 m sideways, linearly
    moved = est.copy()
    moved[:, :3, 3] += (5.0, -3.0, 1.0)  # the estimate's own origin
    result = evaluate(from_poses(t_ns, poses, "gt"), from_poses(t_ns, moved, "est"))
    assert result.alignment == "origin"
    assert any("aligned at the first pose" in n for n in result.notes)
    expected = float(np.sqrt(np.mean(np.linspace(0.0, 0.5, 50) ** 2)))
    assert result.ate_rmse == pytest.approx(expected, rel=1e-6)
    with pytest.raises(TrajectoryError, match="cannot align"):
        evaluate(from_poses(t_ns, poses, "gt"), from_poses(t_ns, moved, "est"), sim3=True)


def test_ten_second_gap_tracking_rate():
    gt = ground_truth(20.0)
    t = gt.t_ns
    keep = (t < T0_NS + 5 * 10**9) | (t >= T0_NS + 15 * 10**9)
    est = from_poses(t[keep], gt.poses[keep], "gapped")
    before, after = (
        t[keep][t[keep] < T0_NS + 5 * 10**9][-1],
        t[keep][t[keep] >= T0_NS + 15 * 10**9][0],
    )
    expected = 1 - (after - before) / (t[-1] - t[0])
    result = evaluate(gt, est)
    assert result.tracking_rate == pytest.approx(expected, abs=1e-12)
    assert 0.49 < result.tracking_rate < 0.5  # a 10.03 s hole in 19.97 s
    assert result.matched_poses == keep.sum()
    # losing track before the end counts as well
    assert tracking_rate(t, t[: len(t) // 2]) == pytest.approx(
        (t[len(t) // 2 - 1] - t[0]) / (t[-1] - t[0])
    )
    # two dropped frames leave two gaps of two periods each
    two_drops = 1 - 2 * (t[11] - t[9]) / (t[-1] - t[0])
    assert tracking_rate(t, np.delete(t, [10, 200])) == pytest.approx(two_drops, abs=1e-12)


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n")
    return path


def tum_lines(traj) -> list[str]:
    return [
        f"{t / 1e9:.9f} " + " ".join(repr(float(v)) for v in (*p, *q))
        for t, p, q in zip(traj.t_ns, traj.xyz, traj.quat_xyzw, strict=True)
    ]


def test_unsorted_and_duplicate_rows_are_reported(tmp_path):
    gt = ground_truth(2.0)
    lines = tum_lines(gt)
    lines[5], lines[6] = lines[6], lines[5]
    lines.insert(10, lines[9].split()[0] + " 9 9 9 0 0 0 1")  # same stamp, another pose
    traj = read_trajectory(write_lines(tmp_path / "bad.tum", lines))
    notes = " | ".join(traj.notes)
    assert "not sorted" in notes and "duplicate timestamp" in notes
    assert len(traj) == len(gt) and np.all(np.diff(traj.t_ns) > 0)
    # the first of the duplicates (the true pose) is kept
    np.testing.assert_allclose(traj.xyz[9], gt.xyz[9])
    result = evaluate(gt, traj)
    assert result.ate_rmse < 1e-9 and result.notes[: len(traj.notes)] == list(traj.notes)


def reject_constant(name: str):
    raise AssertionError(f"{name} in JSON output (not valid JSON)")


def strict_json(text: str) -> dict:
    """Parse JSON as any strict parser would: NaN and Infinity are not JSON."""
    return json.loads(text, parse_constant=reject_constant)


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ("nan 0 0 0 0 0 1", r"bad.tum:21: 'nan' is not a finite number"),
        ("0 -inf 0 0 0 0 1", r"bad.tum:21: '-inf' is not a finite number"),
        ("0 0 0 0 0 1e400 1", r"bad.tum:21: '1e400' is not a finite number"),
        ("0 0 0 0 0 0 0", r"bad.tum:21: quaternion of norm 0 cannot be normalised"),
        ("0 0 0 1e-9 0 0 0", r"bad.tum:21: quaternion of norm 1e-09 cannot be normalised"),
        ("0 0 0 1e200 0 0 1e200", r"bad.tum:21: quaternion of norm inf cannot be normalised"),
        ("1e300 0 0 0 0 0 1", r"bad.tum:21: position 1e\+300 m is too large to score"),
    ],
)
def test_unusable_rows_are_refused_naming_file_and_line(tmp_path, row, message):
    lines = ["# a comment line counts", *tum_lines(ground_truth(2.0))]
    lines[20] = lines[20].split()[0] + " " + row
    with pytest.raises(TrajectoryError, match=message):
        read_trajectory(write_lines(tmp_path / "bad.tum", lines))


def test_huge_positions_are_an_error_not_infinity(files, tmp_path):
    """An estimate 1e300 m away gave `"ate_rmse": Infinity`; now it is one line and exit 2."""
    from twinsim.cli import app

    gt = read_trajectory(files / "gt.tum")
    far = [
        f"{t / 1e9:.9f} {float(x) * 1e300!r} {float(y)!r} {float(z)!r} 0 0 0 1"
        for t, (x, y, z) in zip(gt.t_ns, gt.xyz, strict=True)
    ]
    est = write_lines(tmp_path / "far.tum", far)
    result = CliRunner().invoke(app, ["eval", str(files / "gt.tum"), str(est), "--json"])
    assert result.exit_code == 2, result.output
    assert "far.tum:" in result.output and "too large to score" in result.output
    assert "Infinity" not in result.output and "Traceback" not in result.output


def test_json_is_strict_and_undefined_metrics_are_null(tmp_path):
    """A short estimate has no RPE per metre: null in --json, with a note saying why."""
    from twinsim.cli import app

    gt = ground_truth(2.0)  # about 0.6 m of travel
    write_tum(tmp_path / "gt.tum", gt)
    write_tum(tmp_path / "est.tum", noisy_estimate(gt))
    result = CliRunner().invoke(
        app, ["eval", str(tmp_path / "gt.tum"), str(tmp_path / "est.tum"), "--json"]
    )
    assert result.exit_code == 0, result.output
    data = strict_json(result.output)
    assert data["rpe_trans_per_m_rmse"] is None and data["rpe_rot_per_m_rmse"] is None
    assert any("RPE per metre: undefined (null)" in note for note in data["notes"])
    assert isinstance(data["ate_rmse"], float) and data["ate_rmse"] > 0


def test_non_unit_quaternions_are_normalised_with_a_warning(files, tmp_path):
    from twinsim.cli import app

    gt = read_trajectory(files / "gt.tum")
    lines = tum_lines(gt)
    for i, factor in ((3, 2.0), (7, 1000.0)):
        t, *values = lines[i].split()
        q = [float(v) * factor for v in values[3:]]
        lines[i] = " ".join([t, *values[:3], *(repr(v) for v in q)])
    path = write_lines(tmp_path / "scaled_q.tum", lines)
    traj = read_trajectory(path)
    np.testing.assert_allclose(traj.quat_xyzw, gt.quat_xyzw, atol=1e-12)
    (note,) = traj.notes
    assert "scaled_q.tum: 2 quaternion(s) were not of unit length" in note
    assert "norms 2–1000" in note and "lines 4, 8" in note and "normalised" in note
    # rounding of printed unit quaternions is no reason to warn
    assert read_trajectory(files / "gt.tum").notes == ()
    shown = CliRunner().invoke(app, ["eval", str(files / "gt.tum"), str(path)])
    assert shown.exit_code == 0 and "warning:" in shown.output and "unit length" in shown.output
    data = strict_json(
        CliRunner().invoke(app, ["eval", str(files / "gt.tum"), str(path), "--json"]).output
    )
    assert any("not of unit length" in n for n in data["notes"]) and data["ate_rmse"] < 1e-9


def test_bad_inputs_raise_clear_errors(tmp_path):
    gt = ground_truth(2.0)
    write_tum(tmp_path / "gt.tum", gt)
    late = from_poses(gt.t_ns + 100 * 10**9, gt.poses, "late")
    with pytest.raises(TrajectoryError, match=r"no estimate pose is within 0.01 s .* spans"):
        evaluate(gt, late)
    kitti = write_lines(
        tmp_path / "poses.txt", [" ".join(repr(float(v)) for v in T[:3].ravel()) for T in gt.poses]
    )
    with pytest.raises(TrajectoryError, match="KITTI poses carry no timestamps"):
        read_trajectory(kitti)
    times = write_lines(tmp_path / "times.txt", [f"{t / 1e9:.9f}" for t in gt.t_ns[:-1]])
    with pytest.raises(TrajectoryError, match=r"60 poses but .*times.txt has 59 times"):
        read_trajectory(kitti, times=times)
    short = write_lines(tmp_path / "short.tum", ["1.0 0 0 0 0 0 1", "1.1 0 0 0 0 0 0 1"])
    with pytest.raises(TrajectoryError, match=r"short.tum:1: 7 values, expected 8"):
        read_trajectory(short, "tum")
    with pytest.raises(
        TrajectoryError, match="unknown trajectory format 'csv'; allowed: tum, euroc"
    ):
        read_trajectory(tmp_path / "gt.tum", "csv")
    with pytest.raises(TrajectoryError, match="holds no poses"):
        read_trajectory(write_lines(tmp_path / "empty.tum", ["# nothing"]), "tum")
    kitti_nan = write_lines(tmp_path / "nan.txt", ["1 0 0 nan 0 1 0 0 0 0 1 0"])
    with pytest.raises(TrajectoryError, match=r"nan.txt:1: 'nan' is not a finite number"):
        read_trajectory(kitti_nan, times=write_lines(tmp_path / "t1.txt", ["1.0"]))


def test_euroc_kitti_and_bag_read_the_same_trajectory(tmp_path):
    from evo.tools import file_interface
    from rosbags.rosbag2 import Writer

    gt = ground_truth(2.0)
    euroc = write_lines(
        tmp_path / "data.csv",
        ["#timestamp [ns],p_x,p_y,p_z,q_w,q_x,q_y,q_z"]
        + [
            ",".join([str(int(t)), *(repr(float(v)) for v in (*p, q[3], *q[:3]))])
            for t, p, q in zip(gt.t_ns, gt.xyz, gt.quat_xyzw, strict=True)
        ],
    )
    kitti = write_lines(
        tmp_path / "poses.txt", [" ".join(repr(float(v)) for v in T[:3].ravel()) for T in gt.poses]
    )
    times = write_lines(tmp_path / "times.txt", [f"{t / 1e9:.9f}" for t in gt.t_ns])
    with Writer(tmp_path / "bag", version=9) as writer:
        file_interface.write_bag_trajectory(writer, gt.to_evo(), "/pose", frame_id="world")
    for traj in (read_trajectory(euroc), read_trajectory(kitti, times=times)):
        np.testing.assert_array_equal(traj.t_ns, gt.t_ns)
        np.testing.assert_allclose(traj.poses, gt.poses, atol=1e-12)
    bag = read_trajectory(tmp_path / "bag")
    np.testing.assert_allclose(bag.t_ns, gt.t_ns, atol=1000)
    np.testing.assert_allclose(bag.poses, gt.poses, atol=1e-12)
    # evo reads the EuRoC file to the same poses
    theirs = file_interface.read_euroc_csv_trajectory(euroc)
    np.testing.assert_allclose(np.stack(theirs.poses_se3), gt.poses, atol=1e-12)


def test_eval_cli_json(files):
    from twinsim.cli import app

    result = CliRunner().invoke(
        app, ["eval", str(files / "gt.tum"), str(files / "est.tum"), "--json"]
    )
    assert result.exit_code == 0, result.output
    data = strict_json(result.output)
    for key in (
        "ate_rmse",
        "rpe_trans_rmse",
        "rpe_rot_rmse",
        "tracking_rate",
        "coverage",
        "scaled_ate",
        "matched_poses",
    ):
        assert key in data
    assert data["matched_poses"] == 600 and data["tracking_rate"] == 1.0
    expected = evaluate(read_trajectory(files / "gt.tum"), read_trajectory(files / "est.tum"))
    assert data["ate_rmse"] == expected.ate_rmse
    bad = CliRunner().invoke(app, ["eval", str(files / "gt.tum"), str(files / "missing.tum")])
    assert bad.exit_code == 2 and "no such trajectory file" in bad.output
