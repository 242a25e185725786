"""Links and FIFOs where a command reads or writes: every reader of a sequence, a resume, and a
benchmark or dataset folder resumed with `runs/` leading elsewhere."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from faults.cases import (
    TIMEOUT_S,
    Case,
    remove,
    run_cli,
)
from faults.common import (
    BENCH,
    FIFO_TIMEOUT_S,
    FRAME,
    NAVBENCH,
    PLAN,
    READERS,
    _reader_args,
    copy_of,
    fresh,
    interrupted,
    leftover_case,
    verdict,
    watch,
)


def _link_rgb_folder(copy: Path, outside: Path) -> None:
    shutil.move(copy / "cam0" / "rgb", outside / "rgb")
    (copy / "cam0" / "rgb").symlink_to(outside / "rgb", target_is_directory=True)


def _link_frame(copy: Path, outside: Path, rel: str = FRAME) -> None:
    shutil.move(copy / rel, outside / Path(rel).name)
    (copy / rel).symlink_to(outside / Path(rel).name)


def _fifo_frame(copy: Path, outside: Path, rel: str = FRAME) -> None:
    (copy / rel).unlink()
    os.mkfifo(copy / rel)


def _link_next_frame(copy: Path, outside: Path) -> None:
    """A link where the resumed run writes its next frame, to an outside file."""
    frames = sorted((copy / "cam0" / "rgb").iterdir())
    target = outside / "victim.png"
    target.write_bytes(b"outside, not twinsim's\n")
    (copy / "cam0" / "rgb" / f"{len(frames):06d}.png").symlink_to(target)


def _link_table(copy: Path, outside: Path) -> None:
    """The body pose table the resumed run appends to, a link to an outside copy."""
    _link_frame(copy, outside, "groundtruth_body/data.csv")


LINKS = {
    "cam0/rgb -> outside folder": _link_rgb_folder,
    "frame -> outside file": _link_frame,
    "frame is a FIFO": _fifo_frame,
}
RESUME_LINKS = {
    **LINKS,
    "next frame -> outside file": _link_next_frame,
    "data.csv -> outside file": _link_table,
}


def sweep_links(seq: Path, work: Path, quick: bool) -> list[Case]:
    """Links to outside folders and files, and FIFOs, in a sequence every reader reads, in an
    interrupted run resumed, and in a benchmark or dataset folder resumed: refused without
    hanging, and nothing outside changed."""
    cases: list[Case] = []
    readers = ["validate", "info", "export-tum", "noise"] if quick else list(READERS)
    base = fresh(work / "links")
    for i, (label, make) in enumerate(LINKS.items()):
        folder = base / f"seq{i}"  # the copy, the outside folder and the outputs
        copy = copy_of(seq, folder / "seq")
        outside = folder / "outside"
        outside.mkdir()
        make(copy, outside)
        for command in readers:
            out = folder / f"out-{command}"
            own = (out.name, f"{out.name}.png", f"{out.name}.json")
            watched = watch(folder)
            timeout = FIFO_TIMEOUT_S if "FIFO" in label else TIMEOUT_S
            ran = run_cli(_reader_args(command, copy, out), timeout=timeout)
            cases.append(verdict(f"links:{command}", label, ran, watched, own))
            remove(out, out.with_suffix(".png"), out.with_suffix(".json"))
    run = interrupted(work)
    cases += leftover_case("links:resume", "the interrupted run: working directory")
    for i, (label, make) in enumerate(RESUME_LINKS.items()):
        copy = copy_of(run, base / f"run{i}")
        outside = base / f"run-outside{i}"
        outside.mkdir()
        make(copy, outside)
        watched = watch(outside, copy)
        timeout = FIFO_TIMEOUT_S if "FIFO" in label else TIMEOUT_S
        ran = run_cli(["run", "--resume", copy], timeout=timeout)
        cases.append(verdict("links:resume", label, ran, watched))
    cases += _report_folder_links(seq, base)
    return cases


def _report_folder_links(seq: Path, base: Path) -> list[Case]:
    """bench, navbench and batch into a folder of theirs whose `runs` is a link outside."""
    cases = []
    commands = {
        "bench": [*BENCH, "--sequences", str(seq)],
        "navbench": NAVBENCH,
        "batch": ["batch", str(PLAN), "--workers", "1"],
    }
    for name, args in commands.items():
        report = base / f"report-{name}"
        outside = base / f"report-outside-{name}"
        if name == "batch":
            from twinsim.batch.manifest import new_manifest, write_manifest

            report.mkdir()
            write_manifest(report, new_manifest({}, "x"))
            (outside / "runs").mkdir(parents=True)
        else:
            made = run_cli([*args, "--out", report], broken=False)
            if made.outcome != "ok":
                cases.append(Case("links:report", f"{name} (first run)", made.outcome, made.detail))
                continue
            outside.mkdir()
            shutil.move(report / "runs", outside / "runs")
        (report / "runs").symlink_to(outside / "runs", target_is_directory=True)
        watched = watch(outside, seq)
        ran = run_cli([*args, "--out", report])
        cases.append(verdict("links:report", f"{name}: runs -> outside folder", ran, watched))
    return cases
