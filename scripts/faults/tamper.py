"""A resumed run whose files were edited, deleted or grown before its checkpoint: refused, the
folder left as it was."""

from __future__ import annotations

from pathlib import Path

from faults.cases import (
    Case,
    differences,
    digest,
    run_cli,
)
from faults.common import (
    FRAME,
    copy_of,
    fresh,
    interrupted,
    leftover_case,
)


def _edit_row(copy: Path) -> None:
    """Change one digit of the first data row of the body poses (before the checkpoint)."""
    path = copy / "groundtruth_body" / "data.csv"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    row = lines[1]
    i = max(i for i, c in enumerate(row) if c.isdigit())
    lines[1] = row[:i] + str((int(row[i]) + 1) % 10) + row[i + 1 :]
    path.write_text("".join(lines), encoding="utf-8")


def _append(copy: Path) -> None:
    with open(copy / FRAME, "ab") as f:
        f.write(b"\x00tampered")


TAMPERS = {
    "data.csv row edited": _edit_row,
    f"{FRAME} deleted": lambda copy: (copy / FRAME).unlink(),
    f"{FRAME} bytes appended": _append,
}


def sweep_tamper(work: Path) -> list[Case]:
    """An interrupted run edited before its checkpoint, resumed: refused (exit 2, one line)
    and left as it was. An untouched copy resumes into a valid sequence (the control)."""
    run = interrupted(work)
    base = fresh(work / "tamper")
    cases = leftover_case("tamper", "the interrupted run: working directory")
    for i, (name, tamper) in enumerate(TAMPERS.items()):
        copy = copy_of(run, base / f"run{i}")
        tamper(copy)
        before = digest(copy)
        ran = run_cli(["run", "--resume", copy])
        diff = differences(before, digest(copy))
        if diff and ran.outcome == "refused":
            cases.append(Case("tamper", name, "escape", f"refused but changed: {diff[:4]}"))
        elif diff and ran.outcome == "silent":
            cases.append(Case("tamper", name, "silent", f"resumed over the edit: {diff[:3]}"))
        else:
            cases.append(Case("tamper", name, ran.outcome, ran.detail))
    copy = copy_of(run, base / "control")
    ran = run_cli(["run", "--resume", copy], broken=False)
    if ran.outcome == "ok" and run_cli(["validate", copy], broken=False).outcome != "ok":
        ran.outcome, ran.detail = "silent", "resumed but invalid"
    cases.append(Case("tamper", "untouched copy resumes (control)", ran.outcome, ran.detail))
    return cases
