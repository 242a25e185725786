"""No command writes inside a sequence folder: a source is never modified and a sequence holds
only what its own writer put there. Each command that writes a file or a folder refuses a
path inside a sequence (its source or any other, through a link too) in one line, exit code
2, before any work, and leaves the sequence byte for byte as it was; a sequence holding a
link or a FIFO is refused by every reader before it reads anything."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import digest_folder
from twinsim.cli import app
from twinsim.sequence import validate_sequence

TWINSIM = str(Path(sys.executable).with_name("twinsim"))
WIDE = {**os.environ, "COLUMNS": "300"}  # problem lines unwrapped


@pytest.fixture
def sequence(tmp_path, dynamic_sequence):
    seq = tmp_path / "seq"
    shutil.copytree(dynamic_sequence, seq)
    return seq


def _outputs_inside(seq) -> dict[str, list[str]]:
    """Each writing command with an output inside `seq`."""
    return {
        "preview": ["preview", str(seq), "--out", str(seq / "p.png")],
        "dsg": ["dsg", str(seq), "--out", str(seq / "g.json")],
        "dsg plot": [
            *("dsg", str(seq), "--out", str(seq.parent / "g.json")),
            *("--plot", str(seq / "cam0" / "g.png")),
        ],
        "dsg-plan": [
            *("dsg-plan", str(seq), "--start", "0,0", "--goal", "1,1"),
            *("--plot", str(seq / "plan.png")),
        ],
        "dsg-reconstruct": ["dsg-reconstruct", str(seq), "--out", str(seq / "r.json")],
        "view": ["view", str(seq), "--out", str(seq / "v.rrd"), "--no-open"],
        "bench": [
            *("bench", "--sequences", str(seq), "--methods", "rgbd_odometry"),
            *("--trials", "1", "--out", str(seq / "bench")),
        ],
        "export": ["export", str(seq), "--format", "tum", "--out", str(seq / "tum")],
        "noise": ["noise", str(seq), "-p", "rotors-default", "--out", str(seq / "noisy")],
        "replay": ["replay", str(seq), "--out", str(seq / "twin")],
        "run": ["run", "--config", "tiny", "--out", str(seq / "run")],
        "navbench": [
            *("navbench", "--methods", "planner", "--worlds", "apartment"),
            *("--out", str(seq / "nav")),
        ],
        "through a link": ["preview", str(seq), "--out", str(seq.parent / "link" / "p.png")],
    }


def test_every_writing_command_refuses_a_path_inside_a_sequence(sequence):
    (sequence.parent / "link").symlink_to(sequence / "cam0")
    before = digest_folder(sequence)
    for name, args in _outputs_inside(sequence).items():
        result = CliRunner().invoke(app, args)
        text = " ".join(result.output.split())
        assert result.exit_code == 2, f"{name}: {result.output}"
        assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1
        assert "inside the" in text and "sequence" in text, f"{name}: {text}"
    assert digest_folder(sequence) == before
    assert validate_sequence(sequence).ok


def test_links_and_fifos_inside_a_sequence_are_refused_without_reading_them(sequence, tmp_path):
    """A FIFO in place of a frame would block every reader; a link may lead out of the folder.
    `validate` names either at once, and every reader (export and info here) refuses the folder."""
    frame = next(iter(sorted((sequence / "cam0" / "rgb").iterdir())))
    frame.unlink()
    os.mkfifo(frame)
    outside = tmp_path / "outside"
    outside.mkdir()
    (sequence / "cam0" / "elsewhere").symlink_to(outside)
    for args, code in [
        (["validate", str(sequence)], 1),
        (["export", str(sequence), "--format", "tum", "--out", str(tmp_path / "tum")], 2),
        (["info", str(sequence)], 2),
    ]:
        result = subprocess.run(
            [TWINSIM, *args], capture_output=True, text=True, timeout=60, env=WIDE
        )
        text = " ".join((result.stdout + result.stderr).split())
        assert result.returncode == code, text
        assert "elsewhere: a symbolic link" in text  # a reader names the first, validate all
        assert code == 2 or "not a regular file (a FIFO" in text
    assert list(outside.iterdir()) == [] and not (tmp_path / "tum").exists()
