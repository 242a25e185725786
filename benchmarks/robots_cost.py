"""Recording cost of two drones in one world against one drone, alternated in one run.

Each run builds the static apartment (`S`) in its own process (one drone `robot`, or two drones
`alpha` and `bravo` with the same sensors), then times `record` alone on tmpfs. Two robots
render two cameras, so the figure that says what sharing the world costs is the ratio of the
two-robot time to twice the one-robot time (1.0: a second robot costs exactly one more robot).

Usage: python benchmarks/robots_cost.py [--duration 5] [--repeats 2] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

_CHILD = """
import json, shutil, sys, tempfile, time
from pathlib import Path
import twinsim
from twinsim.config import load_config
from twinsim.sim import build_scene, record
robots = json.loads(sys.argv[3])
overrides = [f"robots.{name}.kind=drone" for name in robots]
cfg = load_config("S", overrides, seed=0, duration_s=float(sys.argv[1]))
scene = build_scene(cfg)
root = Path(tempfile.mkdtemp(dir=sys.argv[2]))
t0 = time.perf_counter()
record(scene, cfg, root / "seq")
wall = time.perf_counter() - t0
shutil.rmtree(root)
print(json.dumps({"record_s": wall}))
"""

SETUPS = {"one drone": [], "two drones": ["alpha", "bravo"]}


def _record_s(robots: list[str], duration: float, scratch: str) -> float:
    cmd = [sys.executable, "-c", _CHILD, str(duration), scratch, json.dumps(robots)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=dict(os.environ))
    return json.loads(out.stdout.strip().splitlines()[-1])["record_s"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=5.0)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument(
        "--json", type=Path, default=Path(__file__).parent / "results" / "robots_cost.json"
    )
    args = parser.parse_args()
    scratch = "/dev/shm" if Path("/dev/shm").is_dir() else None
    times: dict[str, list[float]] = {name: [] for name in SETUPS}
    for _ in range(args.repeats):
        for name, robots in SETUPS.items():
            times[name].append(_record_s(robots, args.duration, scratch))
            print(f"{name}: {times[name][-1]:.1f} s", flush=True)
    one, two = (statistics.median(times[name]) for name in SETUPS)
    result = {
        "duration_s": args.duration,
        "repeats": args.repeats,
        "record_s": times,
        "median_s": {"one drone": one, "two drones": two},
        "two_over_twice_one": two / (2 * one),
    }
    print(f"two drones / (2 x one drone) = {result['two_over_twice_one']:.2f}")
    args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
