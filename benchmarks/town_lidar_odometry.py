"""KISS-ICP on static, dynamic, foggy and rainy-night twins of one drive: CARLA-Loc's tables.

Runs the CARLA-Loc dataset template (`src/twinsim/plans/carla_loc.yaml`) for one town: one
`carla_loc` drive (its LiDAR, IMU, GNSS and traffic as they are; the cameras shrunk to 64x36 and
the event cameras to 20 Hz, since only the LiDAR is benchmarked) and its five twins, then
KISS-ICP raw and with the dynamic points removed (`kiss_icp_static`) on all six sequences,
through `twinsim batch`. Writes the tables in CARLA-Loc's layout and the ATE per sequence as
JSON.

Usage: python benchmarks/town_lidar_odometry.py [--preset mid_city] [--duration 20] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import yaml

SMALL_RIG = [
    *(f"sensors.{cam}.{key}={value}" for cam in ("cam_left", "cam_right", "event_left",
      "event_right") for key, value in (("width", 64), ("height", 36))),
    "sensors.event_left.rate_hz=20",
    "sensors.event_right.rate_hz=20",
]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--preset", default="mid_city")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--duration", type=float, default=20.0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--json", type=Path, default=Path(__file__).parent / "results" / "town_lidar_odometry.json"
    )
    args = parser.parse_args()
    from twinsim.batch import run_batch
    from twinsim.batch.manifest import read_manifest
    from twinsim.batch.plan import load_plan
    from twinsim.batch.tables import TABLES_FILE, condition

    template, _ = load_plan("carla_loc")
    plan = template.model_dump(mode="json", exclude_none=True)
    plan["runs"] |= {"seeds": [args.seed], "duration": args.duration, "set": SMALL_RIG}
    plan["runs"]["axes"] = {"scene.preset": [args.preset]}
    plan["bench"]["methods"] = ["kiss_icp", "kiss_icp_static"]
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "plan.yaml"
        path.write_text(yaml.safe_dump(plan))
        result = run_batch(path, Path(tmp) / "dataset", workers=args.workers)
        if not result.ok:
            raise SystemExit(f"jobs failed: {result.failed}")
        tables = (Path(tmp) / "dataset" / TABLES_FILE).read_text()
        jobs = read_manifest(Path(tmp) / "dataset")["jobs"]
    ate = {}
    for job in jobs.values():
        if job["type"] == "bench":
            seq = job["deps"][0]
            twin = seq.split("/")[2] if seq.startswith("twins/") else None
            name = condition(plan["twins"][twin] if twin else None)
            ate[f"{name} {job['id'].rsplit('/', 1)[1]}"] = job["result"]
    out = {
        "plan": plan,
        "ate_by_sequence_and_method": dict(sorted(ate.items())),
        "tables_markdown": tables,
        "benchmark_seconds": time.perf_counter() - t0,
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(out, indent=1) + "\n")
    print(tables)
    print(f"written to {args.json}")


if __name__ == "__main__":
    main()
