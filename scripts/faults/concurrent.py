"""Two writers at once on one folder (a resume, an export, a bench): at most one may finish, and
the folder it leaves must be whole."""

from __future__ import annotations

import re
from pathlib import Path

from faults.cases import (
    Case,
    Ran,
    differences,
    digest,
    finish,
    invoke,
    run_cli,
    start_cli,
)
from faults.common import (
    BENCH,
    CHECKPOINTED,
    copy_of,
    fresh,
    interrupted,
    leftover_case,
    verdict,
    watch,
)


def sweep_concurrent(seq: Path, work: Path) -> list[Case]:
    """Two processes of the same writing command into the same folder at once: at most one
    exits 0 (the other refused, exit 2), unless both outputs are byte-identical to a single
    run's; the folder left is whole (a valid sequence, or equal to a single run's output)."""
    base = fresh(work / "concurrent")
    run = interrupted(work)
    cases = leftover_case("concurrent", "the interrupted run: working directory")
    reference = base / "ref-run"
    made = run_cli([*CHECKPOINTED, "--out", reference], broken=False)
    if made.outcome != "ok":
        return [*cases, Case("concurrent", "reference run", made.outcome, made.detail)]
    pairs = {
        "run --resume": (["run", "--resume", "{out}"], reference, "copy"),
        "export tum": (["export", str(seq), "--format", "tum", "--out", "{out}"], None, None),
        "bench": ([*BENCH, "--sequences", str(seq), "--out", "{out}"], None, None),
    }
    for name, (template, ref, prepare) in pairs.items():
        out = base / name.replace(" ", "_").replace("-", "")
        if ref is None:  # a single run of the same command is the reference
            ref = base / f"ref-{out.name}"
            made = run_cli([a.replace("{out}", str(ref)) for a in template], broken=False)
            if made.outcome != "ok":
                cases.append(Case("concurrent", f"{name} (reference)", made.outcome, made.detail))
                continue
        if prepare == "copy":
            copy_of(run, out)
        watched = watch(seq)
        args = [a.replace("{out}", str(out)) for a in template]
        procs = [start_cli(args), start_cli(args)]
        ran = [finish(p, sandboxed=False) for p in procs]  # the sandbox is checked once, below
        cases.append(_judge_pair(name, ran, out, ref, watched))
        cases += leftover_case("concurrent", f"{name}: working directory")
    return cases


def _judge_pair(name: str, ran: list[Ran], out: Path, ref: Path, watched: dict) -> Case:
    codes = [r.code for r in ran]
    for r in ran:
        if r.outcome in ("hang", "traceback"):
            return Case("concurrent", name, r.outcome, f"exits {codes}: {r.detail}")
    bad = [r for r in ran if r.code not in (0, 2)]
    if bad:
        return Case("concurrent", name, "traceback", f"exits {codes}: {bad[0].detail}")
    escaped = verdict("concurrent", name, ran[0], watched)
    if escaped.outcome == "escape":
        return escaped
    refused = [r.detail for r in ran if r.code == 2]
    if len(refused) == 2:
        return Case("concurrent", name, "refused", f"both refused: {refused[0]}")
    same = _same_output(out, ref)
    if not same:
        diff = differences(digest(ref), digest(out))[:4]
        return Case("concurrent", name, "silent", f"exits {codes}; output differs: {diff}")
    if name.startswith("run"):
        valid = invoke(["validate", str(out)])
        if valid.exit_code != 0:
            return Case("concurrent", name, "silent", f"exits {codes}; not a valid sequence")
    detail = f"exits {codes}" + (f"; the other: {refused[0]}" if refused else "")
    return Case("concurrent", name, "ok", detail)


def _same_output(out: Path, ref: Path) -> bool:
    """Whether `out` holds what `ref` holds, byte for byte but for benchmark wall times."""
    a, b = digest(out), digest(ref)
    if a.keys() != b.keys():
        return False
    for rel in (k for k in a if a[k] != b[k]):
        if Path(rel).name not in ("results.csv", "status.json"):
            return False
        if _without_wall(out / rel) != _without_wall(ref / rel):
            return False
    return True


def _without_wall(path: Path) -> str:
    """A benchmark table or status without its wall-clock seconds."""
    text = path.read_text(encoding="utf-8")
    if path.name == "status.json":
        return re.sub(r'"wall_s": [0-9.e+-]+', "", text)
    rows = [line.split(",") for line in text.splitlines()]
    if not rows or "wall_s" not in rows[0]:
        return text
    col = rows[0].index("wall_s")
    return "\n".join(",".join(r[:col] + r[col + 1 :]) for r in rows)
