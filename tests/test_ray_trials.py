"""`bench` and `navbench` on Ray (`--ray local`): the same trials as Ray tasks score exactly
what local processes score, a crashing method is a failed trial there too, and an address no
cluster listens on is one line."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from test_bench import crash_yaml
from twinsim.cli import app
from twinsim.eval.harness import bench
from twinsim.navigation.bench import NavBenchSpec, navbench

pytestmark = pytest.mark.ray  # a local Ray instance

METRICS = ("ate_rmse", "rpe_trans_rmse", "rpe_rot_rmse", "tracking_rate", "scaled_ate")


def _rows(path: Path) -> dict[tuple[str, str], dict]:
    with open(path, encoding="utf-8") as f:
        return {(r["method"], r["trial"]): r for r in csv.DictReader(f)}


@pytest.mark.slow
def test_bench_trials_on_ray_score_what_local_processes_score(dynamic_sequence, tmp_path):
    methods = ["rgbd_odometry", str(crash_yaml(tmp_path))]
    local = bench(methods, [dynamic_sequence], 2, tmp_path / "local", workers=1)
    on_ray = bench(methods, [dynamic_sequence], 2, tmp_path / "ray", workers=2, ray="local")
    a, b = _rows(tmp_path / "local" / "results.csv"), _rows(tmp_path / "ray" / "results.csv")
    assert a.keys() == b.keys() and len(a) == 4
    for key, row in a.items():
        assert row["ok"] == b[key]["ok"]
        assert all(row[m] == b[key][m] for m in METRICS), key  # the same bits, as text
    assert sum(not r.ok for r in on_ray.results) == sum(not r.ok for r in local.results) == 2


@pytest.mark.slow
def test_a_navbench_trial_on_ray_is_the_local_one(gl_backend, tmp_path):
    spec = NavBenchSpec(("planner",), ("apartment",), ("none",), trials=1, duration_s=20.0)
    spec = NavBenchSpec(**{**spec.__dict__, "goal_m": (2.0, 4.0), "preset": "tiny"})
    navbench(spec, tmp_path / "local", workers=1)
    navbench(spec, tmp_path / "ray", workers=1, ray="local")
    trial = Path("runs/planner/apartment/none/trial_00/result.json")
    local = json.loads((tmp_path / "local" / trial).read_text())
    on_ray = json.loads((tmp_path / "ray" / trial).read_text())
    assert local == on_ray and local["metrics"]["success"] == 1.0


def test_an_unreachable_cluster_is_one_line(dynamic_sequence, tmp_path):
    args = ["bench", "--methods", "rgbd_odometry", "--sequences", str(dynamic_sequence)]
    result = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "b"), "--ray", "127.0.0.1:9"])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "--ray 127.0.0.1:9: no Ray cluster reachable there" in " ".join(result.output.split())
    assert sys.modules.get("ray") is None or not sys.modules["ray"].is_initialized()
