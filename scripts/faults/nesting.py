"""Deeply nested YAML and JSON in every file a command parses: refused in one line, no
RecursionError."""

from __future__ import annotations

import json
from pathlib import Path

from faults.cases import (
    Case,
    remove,
    run_cli,
)
from faults.common import (
    PLAN,
    _reader_args,
    copy_of,
    fresh,
    verdict,
    watch,
)

DEPTH = 100_000


def _nested(depth: int = DEPTH) -> str:
    return "[" * depth + "]" * depth


def sweep_nesting(seq: Path, work: Path) -> list[Case]:
    """Deeply nested YAML and JSON wherever a command parses a file or a value: refused in
    one line, no RecursionError."""
    base = fresh(work / "nesting")
    out = base / "out"
    files = {
        "config.yaml": f"extends: tiny\nsim:\n  duration_s: {_nested()}\n",
        "config-top.yaml": _nested(),
        "config-unclosed.yaml": "[" * DEPTH,
        "config-maps.yaml": "{a: " * DEPTH + "}" * DEPTH,
        "plan.yaml": f"runs:\n  configs: {_nested()}\n",
        "variations.yaml": f"fog: {_nested()}\n",
    }
    for name, text in files.items():
        (base / name).write_text(text)
    cases_args = {
        "run --config (nested value)": ["run", "--config", base / "config.yaml", "--out", out],
        "run --config (nested top)": ["run", "--config", base / "config-top.yaml", "--out", out],
        "run --config (unclosed [)": ["run", "--config", base / "config-unclosed.yaml"],
        "run --config (nested maps)": ["run", "--config", base / "config-maps.yaml"],
        "run --set (60000 deep)": ["run", "--set", f"sim.duration_s={_nested(60_000)}"],
        "batch PLAN --dry-run": ["batch", base / "plan.yaml", "--out", out, "--dry-run"],
        "replay --variations": ["replay", seq, "--variations", base / "variations.yaml"],
    }
    cases = []
    for name, args in cases_args.items():
        if "--out" not in args:
            args = [*args, "--out", out]
        cases.append(_nesting_case(name, args, base, seq))
    meta = json.loads((seq / "metadata.json").read_text(encoding="utf-8"))
    texts = {
        "whole file": _nested(),
        "config value": json.dumps({**meta, "config": "@"}).replace('"@"', _nested()),
    }
    for label, text in texts.items():
        copy = copy_of(seq, base / "seq")
        (copy / "metadata.json").write_text(text)
        for command in ("info", "validate", "export-tum"):
            args = _reader_args(command, copy, out)
            cases.append(_nesting_case(f"metadata.json {label}: {command}", args, base, seq))
    dataset = base / "dataset"
    dataset.mkdir()
    (dataset / "dataset.json").write_text(_nested())
    for name, args in {
        "dataset.json: info": ["info", dataset],
        "dataset.json: batch": ["batch", PLAN, "--out", dataset, "--workers", "1"],
    }.items():
        cases.append(_nesting_case(name, args, base, seq))
    return cases


def _nesting_case(name: str, args: list, base: Path, seq: Path) -> Case:
    """One nesting case: nothing but its output (`base/out`) may change in `base` or `seq`."""
    watched = watch(seq, base)
    ran = run_cli(args)
    case = verdict("nesting", name, ran, watched, own=("out",))
    remove(base / "out")
    if case.outcome == "refused" and "Recursion" in ran.stderr + ran.stdout:
        case.outcome = "traceback"
    return case
