"""Bench hardening: a lost worker costs one trial, failed trials run again, sequences are known
by content, a method's alignment is its own, and every number written is valid JSON or CSV."""

from __future__ import annotations

import csv
import json
import shutil
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from twinsim.eval.harness import bench, content_digest

KILLER = """
import os, signal, sys
from pathlib import Path
seq, out, index, marker = sys.argv[1:]
if index == "00" and not Path(marker).exists():  # the first attempt of trial 0 only
    Path(marker).write_text("killed my worker once")
    os.kill(os.getppid(), signal.SIGKILL)  # the parent is the bench's worker process
    sys.exit(0)
from twinsim.eval.io import read_sequence, write_tum
write_tum(out, read_sequence(Path(seq)))
"""

SCALED_GT = """
import sys
from dataclasses import replace
from pathlib import Path
from twinsim.eval.io import read_sequence, write_tum
gt = read_sequence(Path(sys.argv[1]))
quat = gt.quat_xyzw * float(sys.argv[4]) if len(sys.argv) > 4 else gt.quat_xyzw
write_tum(sys.argv[2], replace(gt, xyz=gt.xyz * float(sys.argv[3]), quat_xyzw=quat))
"""


def method_yaml(folder: Path, name: str, body: str, args: str, extra: str = "") -> Path:
    """An external method running `body` as `python script {sequence} {trial}/out.txt args`."""
    script = folder / f"{name}.py"
    script.write_text(body)
    path = folder / f"{name}.yaml"
    path.write_text(
        f"name: {name}\n"
        f'command: "{sys.executable} {script} {{sequence}} {{trial}}/out.txt {args}"\n'
        f"trajectory: out.txt\ntimeout_s: 60\n{extra}"
    )
    return path


def read_rows(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as file:
        return list(csv.DictReader(file))


def strict_json(path: Path):
    def refuse(name: str):
        raise AssertionError(f"{path}: {name} is not JSON")

    return json.loads(path.read_text(encoding="utf-8"), parse_constant=refuse)


@pytest.mark.slow
def test_a_killed_worker_costs_only_its_trial_and_is_retried(dynamic_sequence, tmp_path):
    marker = tmp_path / "killed.txt"
    killer = method_yaml(tmp_path, "killer", KILLER, f"{{trial_index}} {marker}")
    out = tmp_path / "report"
    result = bench([str(killer)], [dynamic_sequence], 4, out, workers=2)
    assert marker.is_file()
    by_index = {r.trial.index: r for r in result.results}
    assert [by_index[i].ok for i in range(4)] == [False, True, True, True]
    assert by_index[0].error == "the worker process died (signal SIGKILL)"
    runs = out / "runs" / "killer" / dynamic_sequence.name
    assert strict_json(runs / "trial_00" / "status.json")["ok"] is False
    assert "killer on seq: 1 of 4 trials failed" in (out / "table.md").read_text()
    kept = {i: (runs / f"trial_{i:02d}" / "status.json").stat().st_mtime_ns for i in (1, 2, 3)}

    seen: list[tuple[int, int]] = []
    again = bench(
        [str(killer)],
        [dynamic_sequence],
        4,
        out,
        workers=2,
        progress=lambda done, total, _: seen.append((done, total)),
    )
    assert seen == [(1, 1)]  # only the failed trial ran again
    assert all(r.ok for r in again.results), [r.error for r in again.results]
    assert kept == {
        i: (runs / f"trial_{i:02d}" / "status.json").stat().st_mtime_ns for i in (1, 2, 3)
    }
    assert [row["ok"] for row in read_rows(out / "results.csv")] == ["1"] * 4


@pytest.fixture(scope="module")
def other_run(tmp_path_factory, gl_backend) -> Path:
    """Another 1 s run whose folder is also named `seq`."""
    from twinsim.config import load_config
    from twinsim.sim import run

    out = tmp_path_factory.mktemp("other") / "seq"
    overrides = ("cameras.cam0.width=64", "cameras.cam0.height=48")
    return run(load_config("tiny", overrides, seed=5, duration_s=1.0), out)


@pytest.mark.slow
def test_resume_refuses_another_sequence_of_the_same_name(dynamic_sequence, other_run, tmp_path):
    from twinsim.cli import app

    copy_gt = method_yaml(tmp_path, "copy_gt", SCALED_GT, "1.0")
    out = tmp_path / "report"
    bench([str(copy_gt)], [dynamic_sequence], 1, out, workers=1)
    manifest = strict_json(out / "bench.json")
    assert manifest["sequences"]["seq"] == {
        "path": str(dynamic_sequence),
        "content": content_digest(dynamic_sequence),
    }
    before = (out / "results.csv").read_bytes()
    args = ["bench", "--methods", str(copy_gt), "--trials", "1", "--out", str(out)]
    result = CliRunner().invoke(app, [*args, "--sequences", str(other_run)])
    assert result.exit_code == 2, result.output
    (line,) = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert str(other_run) in line and str(dynamic_sequence) in line and "differs" in line
    assert (out / "results.csv").read_bytes() == before

    # the same content in another folder is the same sequence: nothing to run again
    moved = tmp_path / "moved" / "seq"
    shutil.copytree(dynamic_sequence, moved)
    seen: list = []
    resumed = bench([str(copy_gt)], [moved], 1, out, workers=1, progress=lambda *a: seen.append(a))
    assert seen == [] and resumed.results[0].ok
    assert strict_json(out / "bench.json")["sequences"]["seq"]["path"] == str(moved)


@pytest.mark.slow
def test_alignment_per_method_and_url_columns(dynamic_sequence, tmp_path):
    """A monocular method (scale 0.5) is scored after Sim(3) alignment, a metric one after
    SE(3); the tables carry coverage and scaled ATE; a diverged estimate is a failed trial."""
    mono = method_yaml(tmp_path, "mono", SCALED_GT, "0.5 2", "alignment: sim3\n")
    metric = method_yaml(tmp_path, "metric", SCALED_GT, "0.5")
    diverged = method_yaml(tmp_path, "diverged", SCALED_GT, "1e300")
    out = tmp_path / "report"
    result = bench([str(mono), str(metric), str(diverged)], [dynamic_sequence], 1, out, workers=3)
    by_method = {r.trial.method: r for r in result.results}
    ev_mono, ev_metric = by_method["mono"].evaluation, by_method["metric"].evaluation
    assert ev_mono.alignment == "sim3" and ev_mono.scale == pytest.approx(2.0, rel=1e-9)
    assert ev_mono.ate_rmse < 1e-9 and ev_mono.coverage == pytest.approx(1.0, rel=1e-9)
    assert ev_metric.alignment == "se3" and ev_metric.scale == 1.0
    assert ev_metric.ate_rmse > 0.01 and ev_metric.coverage == pytest.approx(0.5, rel=1e-9)
    assert ev_metric.scaled_ate == pytest.approx(ev_metric.ate_rmse / ev_metric.coverage)
    assert not by_method["diverged"].ok and "too large to score" in by_method["diverged"].error

    rows = {row["method"]: row for row in read_rows(out / "results.csv")}
    assert rows["mono"]["alignment"] == "sim3" and rows["metric"]["alignment"] == "se3"
    assert float(rows["metric"]["scaled_ate"]) == ev_metric.scaled_ate
    assert float(rows["metric"]["coverage"]) == ev_metric.coverage
    assert rows["diverged"]["ate_rmse"] == "" and rows["diverged"]["ok"] == "0"
    assert "inf" not in (out / "results.csv").read_text().lower()
    # its quaternions of norm 2 were normalised, and the log says so
    log = (out / "runs" / "mono" / dynamic_sequence.name / "trial_00" / "log.txt").read_text()
    assert "quaternion(s) were not of unit length (norms 2–2" in log

    lines = (out / "table.md").read_text().splitlines()
    header = lines[0].split(" | ")
    assert "metric Cov." in header and "metric sATE [m]" in header
    mean = dict(zip(header, lines[2].split(" | "), strict=True))
    assert mean["metric Cov."] == f"{ev_metric.coverage:.3f}"
    assert mean["metric sATE [m]"] == f"{ev_metric.scaled_ate:.3f}"
    footnote = "\n".join(lines)
    assert "SE(3): metric, diverged; Sim(3): mono" in footnote
    latex = (out / "table.tex").read_text()
    assert r"\multicolumn{6}{c}{mono}" in latex and "mono: Sim(3) alignment" in latex
    for status in out.glob("runs/*/*/trial_*/status.json"):
        strict_json(status)
