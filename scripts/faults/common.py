"""Shared by the hostile classes: the commands and readers they run, an interrupted run to resume,
fresh folders, and the verdict of one run (its outcome, or `escape` when a watched folder
changed)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path

from faults.cases import (
    TIMEOUT_S,
    Case,
    Ran,
    differences,
    digest,
    kill_group,
    remove,
    sandbox_leftovers,
    shorten,
    start_cli,
)

ROOT = Path(__file__).resolve().parents[1]
PLAN = ROOT / "tests" / "data" / "batch_plan.yaml"
#: a tiny run that checkpoints every 0.2 s of simulated time (the run `interrupted` kills)
CHECKPOINTED = ["run", "--config", "tiny", "--set", "output.checkpoint_s=0.2"]
BENCH = ["bench", "--methods", "rgbd_odometry", "--trials", "1", "--workers", "1"]
NAVBENCH = [
    *("navbench", "--methods", "planner", "--worlds", "apartment", "--adversity", "none"),
    *("--trials", "1", "--workers", "1", "--duration", "2", "--preset", "tiny"),
]
#: the readers of a sequence: verb and the arguments after the sequence path
READERS: dict[str, list[str]] = {
    "validate": [],
    "info": [],
    "export-tum": ["--format", "tum", "--out", "{out}"],
    "noise": ["--profile", "rotors-default", "--out", "{out}"],
    "replay": ["--out", "{out}"],
    "preview": ["--out", "{out}.png"],
    "dsg": ["--out", "{out}.json", "--no-mesh"],
}
FRAME = "cam0/rgb/000001.png"  # a frame written before the interrupted run's checkpoint
#: how long a case that may block on a FIFO is given
FIFO_TIMEOUT_S = 60


def interrupted(work: Path) -> Path:
    """A tiny run killed (SIGKILL) just after its first checkpoint (`resume.npz`), made once
    into `work/interrupted`: copy it before use."""
    folder = work / "interrupted"
    if (folder / "resume.npz").exists():
        return folder
    remove(folder)
    proc = start_cli([*CHECKPOINTED, "--out", folder], stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + TIMEOUT_S
    while not (folder / "resume.npz").exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            kill_group(proc)
            raise RuntimeError(f"{folder}: no checkpoint (exit {proc.wait()})")
        time.sleep(0.005)
    kill_group(proc)
    proc.wait()
    if not (folder / FRAME).exists():
        raise RuntimeError(f"{folder}: {FRAME} missing before the checkpoint")
    return folder


def fresh(folder: Path) -> Path:
    """`folder`, emptied (a `--work` folder may hold an earlier sweep's)."""
    remove(folder)
    folder.mkdir(parents=True)
    return folder


def copy_of(source: Path, dest: Path) -> Path:
    remove(dest)
    shutil.copytree(source, dest, symlinks=True)
    return dest


def verdict(
    group: str, name: str, ran: Ran, watched: dict[Path, dict[str, str]], own: tuple = ()
) -> Case:
    """The case of one run: its outcome, unless a watched path (a digest taken before) changed
    (`escape`, the run's own outcome in the detail); changes below a watched folder's entries
    named in `own` (the command's outputs) are its own."""
    for path, before in watched.items():
        diff = differences(before, digest(path))
        diff = [d for d in diff if Path(d[1:]).parts[0] not in own]
        if diff:
            detail = f"{path.name} changed: {diff[:4]} (the command: {ran.outcome} {ran.detail})"
            return Case(group, name, "escape", shorten(detail, 400))
    return Case(group, name, ran.outcome, ran.detail)


def leftover_case(group: str, name: str) -> list[Case]:
    """An `escape` case when a process this sweep managed itself left files in the working
    directory (`run_cli` checks its own)."""
    left = sandbox_leftovers()
    if not left:
        return []
    return [Case(group, name, "escape", f"left in the working directory: {left[:5]}")]


def watch(*paths: Path) -> dict[Path, dict[str, str]]:
    return {path: digest(path) for path in paths}


def _reader_args(command: str, seq: Path, out: Path) -> list[str]:
    verb = "export" if command.startswith("export") else command
    return [verb, str(seq), *(a.replace("{out}", str(out)) for a in READERS[command])]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
