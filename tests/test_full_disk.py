"""Writes that the system cuts short (here a per-file size limit, `RLIMIT_FSIZE`, which makes
a write past it fail as a full disk does) end in one line and exit code 2, and leave nothing
that looks finished: a scene graph spark-dsg wrote in part, a stream `noise` copied in part, a
KITTI sweep. Each case was a traceback or a silent success before (the fault sweep,
scripts/fault_sweep.py, found them)."""

from __future__ import annotations

import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from twinsim.config import load_config
from twinsim.sim import run

TWINSIM = Path(sys.executable).parent / "twinsim"


@pytest.fixture(scope="module")
def source(tmp_path_factory, gl_backend) -> Path:
    sets = ["lidars.lidar0.model=vlp-16", "lidars.lidar0.columns=90"]
    cfg = load_config("tiny", sets, duration_s=1.0)
    return run(cfg, tmp_path_factory.mktemp("disk") / "seq")


def _limited(args: list[str], limit_bytes: int) -> subprocess.CompletedProcess:
    """`twinsim args` with every file it writes capped at `limit_bytes`."""

    def cap() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the write fails (EFBIG) instead
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))

    return subprocess.run(
        [str(TWINSIM), *args], capture_output=True, text=True, preexec_fn=cap, timeout=300
    )


def _one_line_refusal(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, done.stderr
    return lines[0]


def test_a_scene_graph_cut_short_is_refused_not_saved(source, tmp_path):
    out = tmp_path / "graph.json"
    line = _one_line_refusal(_limited(["dsg", str(source), "--out", str(out)], 16_000))
    assert "graph.json" in line
    assert list(tmp_path.iterdir()) == []  # neither the graph nor its temporary file


def test_noise_that_cannot_copy_a_stream_says_which_file(source, tmp_path):
    out = tmp_path / "noisy"
    scene = (source / "scene.json").stat().st_size
    biggest = max(p.stat().st_size for p in (source / "robot_state").iterdir())
    assert scene < biggest  # the writer starts, then a copied stream is cut short
    args = ["noise", str(source), "--profile", "rotors-default", "--out", str(out)]
    line = _one_line_refusal(_limited(args, (scene + biggest) // 2))
    assert "cannot be written" in line or "too large" in line
    assert (out / "INCOMPLETE").exists()


def test_a_kitti_sweep_cut_short_leaves_no_export(source, tmp_path):
    out = tmp_path / "kitti"
    line = _one_line_refusal(
        _limited(["export", str(source), "--format", "kitti", "--out", str(out)], 16_000)
    )
    assert "velodyne" in line or "cannot be written" in line
    assert not out.exists()
