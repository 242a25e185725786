"""`twinsim run --resume`: an interrupted run finished from its last checkpoint is byte for byte
the folder an uninterrupted run writes (metadata and checksums included); a folder that cannot
be resumed faithfully is refused with one line."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import zlib
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from conftest import digest_folder
from test_golden import OVERRIDES as GOLDEN
from twinsim.atomic import lock_folder
from twinsim.checkpoint import read_checkpoint, write_checkpoint
from twinsim.cli import app
from twinsim.config import load_config
from twinsim.resume import resume
from twinsim.sequence import validate_sequence
from twinsim.sim import run

TWINSIM = Path(sys.executable).parent / "twinsim"
#: the golden run's world: people, flying objects, a LiDAR (checkpoints wait for its sweep to
#: end) and an event camera
DRONE = (*GOLDEN, "output.checkpoint_s=0.25")
#: wheel odometry integrates, and a shuttered camera blurs over the steps it remembers
DIFF_DRIVE = (
    "robot.kind=diff_drive",
    "sensors.cam0.exposure_s=0.01",
    "output.checkpoint_s=0.3",
)


class SimulatedKillError(Exception):
    """Stands for a kill in the middle of a run."""


def _interrupted(cfg, out: Path, after_steps: int) -> Path:
    def stop(done: int, total: int) -> None:
        if done >= after_steps:
            raise SimulatedKillError

    with pytest.raises(SimulatedKillError):
        run(cfg, out, progress=stop)
    assert (out / "INCOMPLETE").exists() and (out / "resume.npz").exists()
    return out


@pytest.fixture(scope="module")
def drone(tmp_path_factory, gl_backend):
    """The config, an uninterrupted run of it and a copy interrupted after 200 steps."""
    root = tmp_path_factory.mktemp("resume")
    cfg = load_config("tiny", list(DRONE), duration_s=1.5)
    whole = run(cfg, root / "whole")
    return cfg, whole, _interrupted(cfg, root / "cut", 200)


@pytest.mark.slow
@pytest.mark.parametrize("overrides", [DRONE, DIFF_DRIVE], ids=["drone", "diff_drive"])
def test_a_resumed_run_is_byte_identical_to_an_uninterrupted_one(tmp_path, overrides, drone):
    if overrides is DRONE:
        _, whole, cut = drone
        cut = Path(shutil.copytree(cut, tmp_path / "cut"))
    else:
        cfg = load_config("tiny", list(overrides), duration_s=1.5)
        whole = run(cfg, tmp_path / "whole")
        cut = _interrupted(cfg, tmp_path / "cut", 250)
    step = read_checkpoint(cut).step
    assert 0 < step - 240 < 250  # the last checkpoint before the interruption
    resume(cut)
    assert digest_folder(cut) == digest_folder(whole)
    assert validate_sequence(cut).ok
    assert not (cut / "resume.npz").exists()


@pytest.mark.slow
def test_a_killed_cli_run_resumes_to_the_same_folder(tmp_path):
    sets = ["--set", "output.checkpoint_s=0.2"]
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    base = [str(TWINSIM), "run", "--config", "tiny", *sets]
    subprocess.run([*base, "--out", str(whole)], check=True, capture_output=True)
    proc = subprocess.Popen([*base, "--out", str(cut)], start_new_session=True)
    deadline = time.monotonic() + 60
    while not (cut / "resume.npz").exists() and proc.poll() is None:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)  # a real kill, at a checkpoint or just after one
    proc.wait()
    assert (cut / "INCOMPLETE").exists()
    done = subprocess.run([str(TWINSIM), "run", "--resume", str(cut)], capture_output=True)
    assert done.returncode == 0, done.stderr.decode()
    assert digest_folder(cut) == digest_folder(whole)


def _refusal(args: list[str], *expected: str) -> None:
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.split())
    assert all(part in text for part in expected), text
    assert "Traceback" not in result.output


def test_a_complete_folder_or_other_options_are_refused(drone):
    _, whole, cut = drone
    _refusal(["run", "--resume", str(whole)], "not an interrupted run")
    _refusal(["run", "--resume", str(cut), "--out", "x", "--seed", "0"], "drop --out, --seed")
    _refusal(["run", "--resume", str(cut.parent / "nothing")], "no such folder")
    _refusal(["run"], "--out")


def test_a_run_without_a_checkpoint_says_so(tmp_path, drone):
    cfg = load_config("tiny", [*GOLDEN, "output.checkpoint_s=0"], duration_s=1.5)
    with pytest.raises(SimulatedKillError):
        run(cfg, tmp_path / "cut", progress=lambda done, total: _raise_after(done, 100))
    _refusal(["run", "--resume", str(tmp_path / "cut")], "before its first checkpoint")


def _raise_after(done: int, steps: int) -> None:
    if done >= steps:
        raise SimulatedKillError


def test_a_changed_log_or_a_garbled_checkpoint_is_refused(tmp_path, drone):
    _, _, source = drone
    changed = Path(shutil.copytree(source, tmp_path / "changed"))
    table = changed / "robot_state" / "data.csv"
    lines = table.read_text().splitlines(keepends=True)
    head, *values = lines[5].split(",")
    lines[5] = ",".join([head, repr(float(values[0]) + 1e-9), *values[1:]])
    table.write_text("".join(lines))
    before = digest_folder(changed)
    _refusal(
        ["run", "--resume", str(changed)], "robot_state/data.csv", "edited after its checkpoint"
    )
    assert digest_folder(changed) == before  # refused before anything was written
    # the same edit with the checkpoint's ledger made to agree: the physics replay catches it
    _vouch_for(changed, "robot_state/data.csv")
    _refusal(["run", "--resume", str(changed)], "differs from the interrupted run")
    assert (changed / "INCOMPLETE").exists()

    garbled = Path(shutil.copytree(source, tmp_path / "garbled"))
    data = bytearray((garbled / "resume.npz").read_bytes())
    (garbled / "resume.npz").write_bytes(bytes(data[: len(data) // 2]))
    _refusal(["run", "--resume", str(garbled)], "resume.npz: cannot be read")

    scene = Path(shutil.copytree(source, tmp_path / "scene"))
    text = (scene / "scene.json").read_text()
    (scene / "scene.json").write_text(text.replace('"seed"', '"seed" ', 1))
    _refusal(["run", "--resume", str(scene)], "scene.json: is not the scene")


def _vouch_for(folder: Path, rel: str) -> None:
    """Rewrite the checkpoint's ledger entry of `rel` to the file's present bytes."""
    checkpoint = read_checkpoint(folder)
    entry = checkpoint.contents[rel]
    entry[0] = zlib.crc32((folder / rel).read_bytes()[entry[3] : entry[1]])
    write_checkpoint(folder, checkpoint)


def test_files_edited_after_the_checkpoint_are_refused(tmp_path, drone):
    """A resume keeps what was written before the checkpoint and checksums it into the
    finished folder: an edited ground-truth row, a deleted or a grown frame would be vouched
    for by `validate` afterwards, so each is refused, with the folder left as it was."""
    _, _, source = drone
    ledger = read_checkpoint(source).contents
    assert ledger["groundtruth_body/data.csv"][2] == 1 and ledger["cam0/rgb/000000.png"][2] == 0

    edited = Path(shutil.copytree(source, tmp_path / "edited"))
    table = edited / "groundtruth_body" / "data.csv"
    text = table.read_text()
    row = text.splitlines()[3]
    table.write_text(text.replace(row, row[:-1] + ("1" if row[-1] != "1" else "2"), 1))
    before = digest_folder(edited)
    _refusal(["run", "--resume", str(edited)], "groundtruth_body/data.csv", "edited after")
    assert digest_folder(edited) == before

    deleted = Path(shutil.copytree(source, tmp_path / "deleted"))
    (deleted / "cam0" / "rgb" / "000001.png").unlink()
    before = digest_folder(deleted)
    _refusal(["run", "--resume", str(deleted)], "cam0/rgb/000001.png: missing")
    assert digest_folder(deleted) == before

    grown = Path(shutil.copytree(source, tmp_path / "grown"))
    with (grown / "cam0" / "depth" / "000000.npy").open("ab") as f:
        f.write(b"\0")
    _refusal(["run", "--resume", str(grown)], "cam0/depth/000000.npy", "the checkpoint saw")

    # rows appended after the checkpoint are the interrupted run's own: cut back, not refused
    assert (source / "groundtruth_body" / "data.csv").stat().st_size > ledger[
        "groundtruth_body/data.csv"
    ][1]


def test_checkpoints_wait_for_a_lidar_sweep_to_end(drone):
    cfg, _, cut = drone
    checkpoint = read_checkpoint(cut)
    hz = cfg.sim.physics_hz
    sweep = hz // cfg.robots["robot"].sensors["lidar0"].rate_hz
    assert checkpoint.step % sweep == 0
    scans = {k: v for k, v in checkpoint.sensors.items() if k.endswith(".scans")}
    assert [int(v) for v in scans.values()] == [(checkpoint.step - 240) // sweep]
    assert np.all(np.isfinite(checkpoint.sensors["robot.0.poses"]))


def test_a_refused_resume_leaves_the_folder_as_it_was(tmp_path, drone):
    """Everything that can be checked is checked before a stream is cut back: a link in the
    folder (it would be written through), a checkpoint without a stream the metadata lists,
    robot_state rows missing; a second writer on a folder being resumed is refused."""
    _, _, source = drone
    linked = Path(shutil.copytree(source, tmp_path / "linked"))
    outside = tmp_path / "outside"
    shutil.move(linked / "cam0" / "rgb", outside)
    (linked / "cam0" / "rgb").symlink_to(outside)
    before = digest_folder(outside)
    _refusal(["run", "--resume", str(linked)], "cam0/rgb: a symbolic link")
    assert digest_folder(outside) == before

    short = Path(shutil.copytree(source, tmp_path / "short"))
    table = short / "robot_state" / "data.csv"
    table.write_text("".join(table.read_text().splitlines(keepends=True)[:20]))
    before = digest_folder(short)
    _refusal(["run", "--resume", str(short)], "robot_state/data.csv", "the checkpoint saw")
    assert digest_folder(short) == before  # nothing cut back

    missing = Path(shutil.copytree(source, tmp_path / "missing"))
    metadata = json.loads((missing / "metadata.json").read_text())
    metadata["streams"]["extra"] = {"type": "pose", "rate_hz": 60, "count": 0}
    (missing / "metadata.json").write_text(json.dumps(metadata))
    before = digest_folder(missing)
    _refusal(["run", "--resume", str(missing)], "list different streams (extra)")
    assert digest_folder(missing) == before

    busy = Path(shutil.copytree(source, tmp_path / "busy"))
    held = lock_folder(busy)
    try:
        _refusal(["run", "--resume", str(busy)], "another twinsim is writing it")
    finally:
        os.close(held)
