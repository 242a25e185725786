"""A folder a command goes on writing is held by one twinsim at a time and holds only regular
files and folders: a second export, bench, navbench or batch into a folder being written is
refused in one line, and a link inside a benchmark or dataset folder (which the next write
would follow out of it) is refused before anything is written, outside or in."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import digest_folder
from twinsim.atomic import lock_folder
from twinsim.batch.manifest import new_manifest, write_manifest
from twinsim.cli import app

PLAN = Path(__file__).parent / "data" / "batch_plan.yaml"


def _refused(args: list[str], *expected: str) -> str:
    result = CliRunner().invoke(app, args, env={"COLUMNS": "300"})
    assert result.exit_code == 2, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert "Traceback" not in result.output and len(errors) == 1, result.output
    text = " ".join(result.output.split())
    assert all(part in text for part in expected), text
    return text


def test_a_second_export_into_a_folder_being_written_is_refused(tmp_path, dynamic_sequence):
    out = tmp_path / "tum"
    out.mkdir()
    held = lock_folder(out)  # as the first export holds it while it writes
    try:
        _refused(
            ["export", str(dynamic_sequence), "--format", "tum", "--out", str(out)],
            "another twinsim is writing it",
        )
    finally:
        os.close(held)
    assert out.is_dir() and not any(out.iterdir())
    assert [p.name for p in tmp_path.iterdir()] == ["tum"]  # no partial left beside it
    # once the first is done the folder is free: an export lands there in full
    result = CliRunner().invoke(
        app, ["export", str(dynamic_sequence), "--format", "tum", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert (out / "twinsim-export.json").is_file()


def test_an_export_that_fails_leaves_no_folder_it_made(tmp_path, dynamic_sequence):
    out = tmp_path / "yolo"
    args = ["export", str(dynamic_sequence), "--format", "yolo", "--out", str(out)]
    _refused([*args, "-o", "camera=nope"], "nope")  # found out by the exporter, inside the lock
    assert not list(tmp_path.iterdir())


def _bench_args(seq: Path, out: Path) -> list[str]:
    return [
        *("bench", "--sequences", str(seq), "--methods", "rgbd_odometry"),
        *("--trials", "1", "--out", str(out)),
    ]


def _navbench_args(out: Path) -> list[str]:
    return ["navbench", "--methods", "planner", "--worlds", "apartment", "--out", str(out)]


@pytest.mark.parametrize("command", ["bench", "navbench", "batch"])
def test_a_link_inside_a_folder_being_resumed_is_refused(tmp_path, dynamic_sequence, command):
    """`R/runs` a link to a folder elsewhere: resuming `R` would write the trials there."""
    out, outside = tmp_path / "R", tmp_path / "outside"
    out.mkdir()
    outside.mkdir()
    (outside / "keep.txt").write_text("not twinsim's\n")
    (out / "runs").symlink_to(outside)
    if command == "bench":
        (out / "bench.json").write_text(json.dumps({"methods": [], "sequences": {}, "seed": 0}))
        args = _bench_args(dynamic_sequence, out)
    elif command == "navbench":
        (out / "navbench.json").write_text("{}")
        args = _navbench_args(out)
    else:
        write_manifest(out, new_manifest({}, "twinsim batch"))
        args = ["batch", str(PLAN), "--out", str(out)]
    before, inside = digest_folder(outside), sorted(p.name for p in out.iterdir())
    _refused(args, "runs: a symbolic link")
    assert digest_folder(outside) == before
    assert sorted(p.name for p in out.iterdir()) == inside


@pytest.mark.parametrize("command", ["bench", "navbench"])
def test_a_second_writer_of_a_benchmark_is_refused(tmp_path, dynamic_sequence, command):
    out = tmp_path / "R"
    out.mkdir()
    args = _bench_args(dynamic_sequence, out) if command == "bench" else _navbench_args(out)
    held = lock_folder(out)  # as the first holds it while its trials run
    try:
        _refused(args, "another twinsim is writing it")
    finally:
        os.close(held)
    assert not any(out.iterdir())  # not even a manifest
