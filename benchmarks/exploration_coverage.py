"""Frontier exploration of the default apartment: coverage of the reachable floor against time.

The default preset with an omni robot and a 96×72 depth camera at 10 Hz; people and flying
objects are off (a static world, which the explorer's map assumes). `FrontierExplorer` maps
with the camera's depth and the ground-truth pose; `ExplorationTask` scores what the camera
saw within 4 m. Prints the coverage reached and the sim time to 80 %.

Usage: python benchmarks/exploration_coverage.py [--seconds 180] [--seed 0] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

OVERRIDES = [
    "robot.kind=omni",
    "sensors.cam0.width=96",
    "sensors.cam0.height=72",
    "sensors.cam0.rate_hz=10",
    "people.count=0",
    "flying_objects.count=0",
]


def explore(seconds: float, seed: int) -> dict:
    """One unrecorded episode; the coverage series (t_s, coverage) and the summary."""
    from twinsim.closedloop import Session
    from twinsim.closedloop.exploration import ExplorationTask
    from twinsim.config import load_config
    from twinsim.navigation.api import run_episode
    from twinsim.navigation.frontier import FrontierExplorer

    cfg = load_config("default", OVERRIDES, duration_s=seconds)
    task = ExplorationTask()
    series: list[tuple[float, float]] = []
    t0 = time.perf_counter()
    with Session(cfg, record=False) as session:
        result = run_episode(
            session,
            task,
            FrontierExplorer(),
            seed,
            on_step=lambda obs, info: series.append((info.t_s, info.coverage)),
        )
    wall = time.perf_counter() - t0
    to_80 = next((t for t, c in series if c >= 0.8), None)
    return {
        "world": "default apartment, omni, 96x72 depth at 10 Hz, people off",
        "seed": seed,
        "sim_seconds": seconds,
        "wall_seconds": wall,
        "free_m2": task.free_m2,
        "coverage": series[-1][1],
        "time_to_80_s": to_80,
        "summary": result.summary["metrics"],
        "series": [(round(t, 2), round(c, 4)) for t, c in series[::30]],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=180.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--json",
        type=Path,
        default=Path(__file__).parent / "results" / "exploration_coverage.json",
    )
    args = parser.parse_args()
    report = explore(args.seconds, args.seed)
    to_80 = report["time_to_80_s"]
    print(
        f"coverage {report['coverage']:.1%} of {report['free_m2']:.1f} m² reachable floor in "
        f"{args.seconds:.0f} s sim ({report['wall_seconds']:.0f} s wall); 80 % at "
        + (f"{to_80:.1f} s" if to_80 is not None else "never")
        + f"; collisions {report['summary']['collisions']}"
    )
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2) + "\n")
    print(f"written to {args.json}")


if __name__ == "__main__":
    main()
