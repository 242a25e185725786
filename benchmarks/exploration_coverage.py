"""Frontier exploration of the default apartment: coverage of the reachable floor against time,
localised by the ground truth and by estimators on the live sensors (GRADE's active SLAM).

The default preset with an omni robot, a 160×120 RGB-D camera at 30 Hz and a VLP-16 LiDAR at
10 Hz; people and flying objects are off (a static world, which the explorer's map assumes).
`FrontierExplorer` maps with the camera's depth at the pose its localizer gives (the ground
truth, `rgbd_odometry` on the camera, `kiss_icp` on the LiDAR); `ExplorationTask` scores what
the camera saw within 4 m. Prints, per localizer, the coverage reached, the sim time to 80 %
and the estimator's drift.

Usage: python benchmarks/exploration_coverage.py [--seconds 180] [--seed 0]
       [--localizers ground_truth,rgbd_odometry,kiss_icp] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

OVERRIDES = [
    "robot.kind=omni",
    "sensors.cam0.width=160",
    "sensors.cam0.height=120",
    "sensors.cam0.rate_hz=30",
    "sensors.lidar0.kind=lidar",
    "sensors.lidar0.model=vlp-16",
    "sensors.lidar0.rate_hz=10",
    "sensors.lidar0.pos=[0.0,0.0,0.5]",
    "people.count=0",
    "flying_objects.count=0",
]


def explore(seconds: float, seed: int, localizer: str) -> dict:
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
            localizer=localizer,
        )
    wall = time.perf_counter() - t0
    to_80 = next((t for t, c in series if c >= 0.8), None)
    return {
        "localizer": localizer,
        "seed": seed,
        "sim_seconds": seconds,
        "wall_seconds": wall,
        "free_m2": task.free_m2,
        "coverage": series[-1][1],
        "time_to_80_s": to_80,
        "summary": result.summary["metrics"],
        "drift": result.summary.get("localization"),
        "series": [(round(t, 2), round(c, 4)) for t, c in series[::30]],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=180.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--localizers", default="ground_truth,rgbd_odometry,kiss_icp")
    parser.add_argument(
        "--json",
        type=Path,
        default=Path(__file__).parent / "results" / "exploration_coverage.json",
    )
    args = parser.parse_args()
    runs = []
    for localizer in args.localizers.split(","):
        run = explore(args.seconds, args.seed, localizer)
        runs.append(run)
        to_80, drift = run["time_to_80_s"], run["drift"]
        print(
            f"{localizer}: coverage {run['coverage']:.1%} of {run['free_m2']:.1f} m² reachable "
            f"floor in {args.seconds:.0f} s sim ({run['wall_seconds']:.0f} s wall); 80 % at "
            + (f"{to_80:.1f} s" if to_80 is not None else "never")
            + f"; collisions {run['summary']['collisions']}"
            + (
                f"; drift {drift['drift_m']:.2f} m at the end ({drift['drift_pct']:.1f} % of "
                f"{drift['path_length_m']:.1f} m), max {drift['max_drift_m']:.2f} m"
                if drift
                else ""
            )
        )
    report = {
        "world": "default apartment, omni, 160x120 RGB-D at 30 Hz, VLP-16 at 10 Hz, people off",
        "runs": runs,
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2) + "\n")
    print(f"written to {args.json}")


if __name__ == "__main__":
    main()
