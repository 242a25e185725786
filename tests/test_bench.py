"""The benchmark harness: a small run writes the report; a second run resumes, not repeats."""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import cv2
import pytest
from typer.testing import CliRunner

from twinsim.errors import OutputFolderError
from twinsim.eval.harness import bench
from twinsim.eval.io import read_tum
from twinsim.eval.methods import get_method
from twinsim.eval.metrics import evaluate
from twinsim.sequence import open_sequence


def crash_yaml(folder: Path) -> Path:
    script = folder / "crash.py"
    script.write_text("import sys\nprint('out of memory, pretend')\nsys.exit(1)\n")
    path = folder / "crash.yaml"
    path.write_text(
        f'name: crasher\ncommand: "{sys.executable} {script}"\ntrajectory: "t.txt"\ntimeout_s: 30\n'
    )
    return path


def read_rows(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as file:
        return list(csv.DictReader(file))


@pytest.fixture(scope="module")
def report(dynamic_sequence, tmp_path_factory):
    folder = tmp_path_factory.mktemp("bench")
    out = folder / "report"
    seen: list[tuple[int, int]] = []
    result = bench(
        ["feature_vo", str(crash_yaml(folder))],
        [dynamic_sequence],
        2,
        out,
        workers=2,
        progress=lambda done, total, _: seen.append((done, total)),
    )
    return result, out, seen, folder


def test_report_files(report, dynamic_sequence):
    result, out, seen, _ = report
    assert seen[-1] == (4, 4)
    for name in ("results.csv", "table.md", "table.tex", "bench.json"):
        assert (out / name).is_file()
    seq = dynamic_sequence.name
    for plot in (f"{seq}_trajectories.png", f"{seq}_ate_over_time.png", "ate_boxplot.png"):
        image = cv2.imread(str(out / "plots" / plot))
        assert image is not None and image.shape[0] > 100
    for trial in (0, 1):
        folder = out / "runs" / "feature_vo" / seq / f"trial_{trial:02d}"
        assert {"estimate.tum", "log.txt", "status.json"} <= {p.name for p in folder.iterdir()}
    assert sorted(result.files) == sorted(
        ["results.csv", "table.md", "table.tex"]
        + [
            f"plots/{p}"
            for p in (f"{seq}_trajectories.png", f"{seq}_ate_over_time.png", "ate_boxplot.png")
        ]
    )


def test_results_are_the_metrics_of_the_stored_estimates(report, dynamic_sequence):
    _, out, _, _ = report
    rows = read_rows(out / "results.csv")
    assert [(r["method"], r["trial"], r["ok"]) for r in rows] == [
        ("feature_vo", "0", "1"),
        ("feature_vo", "1", "1"),
        ("crasher", "0", "0"),
        ("crasher", "1", "0"),
    ]
    method = get_method("feature_vo")
    seq = open_sequence(dynamic_sequence)
    for row in rows[:2]:
        folder = out / "runs" / "feature_vo" / dynamic_sequence.name / f"trial_0{row['trial']}"
        expected = evaluate(
            method.ground_truth(seq), read_tum(folder / "estimate.tum"), frame_period_s=1 / 30
        )
        assert float(row["ate_rmse"]) == expected.ate_rmse
        assert float(row["tracking_rate"]) == expected.tracking_rate
    # trials differ (seeded RANSAC order), a crash is TR 0 with no ATE and its log kept
    assert rows[0]["ate_rmse"] != rows[1]["ate_rmse"]
    assert rows[2]["tracking_rate"] == "0.0" and rows[2]["ate_rmse"] == ""
    assert "exited with code 1" in rows[2]["error"]
    crash_dir = out / "runs" / "crasher" / dynamic_sequence.name / "trial_00"
    assert "out of memory, pretend" in (crash_dir / "program.log").read_text()


def test_tables_have_grade_layout(report, dynamic_sequence):
    _, out, _, _ = report
    rows = read_rows(out / "results.csv")
    ates = [float(r["ate_rmse"]) for r in rows[:2]]
    mean = sum(ates) / 2
    markdown = (out / "table.md").read_text()
    lines = markdown.splitlines()
    assert lines[0].startswith("| sequence |  | feature_vo ATE [m] |")
    mean_row = lines[2].split(" | ")
    assert mean_row[0] == f"| {dynamic_sequence.name}" and mean_row[1] == "mean"
    assert mean_row[2] == f"{mean:.3f}" and lines[3].split(" | ")[1] == "std"
    assert f"crasher on {dynamic_sequence.name}: 2 of 2 trials failed" in markdown
    latex = (out / "table.tex").read_text()
    assert r"\multicolumn{6}{c}{feature\_vo}" in latex and r"\bottomrule" in latex
    assert f"{dynamic_sequence.name} & mean & {mean:.3f}" in latex


@pytest.mark.slow
def test_resume_runs_only_unfinished_and_failed_trials(report, dynamic_sequence):
    from twinsim.cli import app

    _, out, _, folder = report
    runs = out / "runs" / "feature_vo" / dynamic_sequence.name
    done_status = runs / "trial_00" / "status.json"
    before = done_status.stat().st_mtime_ns, (runs / "trial_00" / "log.txt").read_bytes()
    old_rows = read_rows(out / "results.csv")
    (runs / "trial_01" / "status.json").unlink()  # as if interrupted mid-trial
    (runs / "trial_01" / "junk.tmp").write_text("partial")
    args = [
        "bench",
        "--methods",
        f"feature_vo,{folder / 'crash.yaml'}",
        "--sequences",
        str(dynamic_sequence),
        "--trials",
        "2",
        "--out",
        str(out),
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    # the interrupted trial and the crasher's two failed trials run again
    assert "3/3" in result.output and "feature_vo ATE" in result.output
    assert (done_status.stat().st_mtime_ns, (runs / "trial_00" / "log.txt").read_bytes()) == before
    assert not (runs / "trial_01" / "junk.tmp").exists()
    new_rows = read_rows(out / "results.csv")
    assert [r["ate_rmse"] for r in new_rows] == [r["ate_rmse"] for r in old_rows]


def test_bench_refuses_bad_output_and_input(report, dynamic_sequence, tmp_path):
    from twinsim.cli import app

    _, out, _, _ = report
    (tmp_path / "keep.txt").write_text("someone's data")
    with pytest.raises(OutputFolderError):
        bench(["feature_vo"], [dynamic_sequence], 1, tmp_path)
    with pytest.raises(OutputFolderError, match="was run with seed 0, not 5"):
        bench(["feature_vo"], [dynamic_sequence], 1, out, seed=5)
    result = CliRunner().invoke(
        app,
        [
            "bench",
            "--methods",
            "nope",
            "--sequences",
            str(dynamic_sequence),
            "--out",
            str(tmp_path / "new"),
        ],
    )
    assert result.exit_code == 2 and "unknown method 'nope'" in result.output
    result = CliRunner().invoke(
        app,
        [
            "bench",
            "--methods",
            "feature_vo",
            "--sequences",
            str(tmp_path / "none"),
            "--out",
            str(tmp_path / "new"),
        ],
    )
    assert result.exit_code == 2 and "no such sequence folder" in result.output


def test_external_method_reads_its_export(dynamic_sequence, tmp_path):
    """An external method consuming the TUM export: here a program that copies its ground truth."""
    script = tmp_path / "copy.py"
    script.write_text("import shutil, sys\nshutil.copy(sys.argv[1], sys.argv[2])\n")
    yaml_path = tmp_path / "tum_reader.yaml"
    yaml_path.write_text(
        "name: tum_reader\n"
        f'command: "{sys.executable} {script} {{export}}/groundtruth.txt {{trial}}/traj.txt"\n'
        "format: tum\ntrajectory: traj.txt\n"
    )
    out = tmp_path / "report"
    result = bench([str(yaml_path)], [dynamic_sequence], 1, out, workers=1)
    assert (out / "exports" / dynamic_sequence.name / "tum" / "rgb.txt").is_file()
    (trial,) = result.results
    assert trial.ok, trial.error
    assert trial.evaluation.ate_rmse < 1e-9 and trial.evaluation.tracking_rate == 1.0
