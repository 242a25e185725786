"""`twinsim compare`: per-axis pose deviation, image similarity, and the CLI's table and JSON."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.spatial.transform import Rotation
from typer.testing import CliRunner

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
