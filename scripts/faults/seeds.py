"""Extreme seeds on several worlds: the valid ones record a valid sequence, the others are
refused."""

from __future__ import annotations

from pathlib import Path

from faults.cases import (
    Case,
    remove,
    run_cli,
)
from faults.common import (
    fresh,
)

SEEDS_OK = (0, 1, 7, 2**31 - 1, 2**32 + 5, 2**63 - 1)
SEEDS_BAD = ("-1", str(2**64), "1.5")
#: the configs each seed runs with: the tiny and default presets and a warehouse hall
SEED_CONFIGS = {
    "tiny": ["--config", "tiny"],
    "default": ["--config", "default"],
    "warehouse": ["--config", "default", "--set", "scene.generator=warehouse"],
}


def sweep_seeds(work: Path, quick: bool) -> list[Case]:
    """Short runs (0.05 s) at extreme seeds: valid sequences; seeds out of range refused.
    Quick: every seed on tiny, the two largest on the others."""
    base = fresh(work / "seeds")
    cases = []
    for config, options in SEED_CONFIGS.items():
        seeds = SEEDS_OK if config == "tiny" or not quick else SEEDS_OK[-2:]
        for seed in seeds:
            out = base / f"{config}-{seed}"
            ran = run_cli(
                ["run", *options, "--seed", str(seed), "--duration", "0.05", "--out", out]
            )
            name = f"{config} --seed {seed}"
            if ran.code == 0 and ran.outcome != "escape":
                valid = run_cli(["validate", out], broken=False)
                outcome = "ok" if valid.outcome == "ok" else "traceback"
                detail = "" if outcome == "ok" else f"invalid: {valid.stderr.strip()[-200:]}"
                cases.append(Case("seeds", name, outcome, detail))
            elif ran.outcome in ("refused", "traceback"):
                cases.append(Case("seeds", name, "traceback", f"exit {ran.code}: {ran.detail}"))
            else:
                cases.append(Case("seeds", name, ran.outcome, ran.detail))
            remove(out)
    for seed in SEEDS_BAD:
        out = base / f"bad{seed}"
        ran = run_cli(
            ["run", "--config", "tiny", "--seed", seed, "--duration", "0.05", "--out", out]
        )
        cases.append(Case("seeds", f"tiny --seed {seed}", ran.outcome, ran.detail))
        remove(out)
    return cases
