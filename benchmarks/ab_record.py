"""Recording cost of this checkout vs another twinsim source tree (e.g. a git worktree of an
older commit), alternated on the same machine, written to tmpfs so disk speed stays out.

Each run builds the static apartment (`S`: the default world without people) in its own
process, then times `record` alone (physics, control, rendering, annotation, writing) and
reports milliseconds per camera frame; the two trees alternate `--repeats` times and the
medians and their ratio are printed and written.

Usage: python benchmarks/ab_record.py --other /path/to/old/src [--duration 10] [--repeats 2]
                                      [--json PATH]
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
from twinsim.config import load_config
from twinsim.sim import build_scene, record
cfg = load_config("S", [], seed=0, duration_s=float(sys.argv[1]))
scene = build_scene(cfg)
root = Path(tempfile.mkdtemp(dir=sys.argv[2]))
t0 = time.perf_counter()
record(scene, cfg, root / "seq")
wall = time.perf_counter() - t0
shutil.rmtree(root)
print(json.dumps({"record_s": wall}))
"""


def _record_s(src: Path | None, duration: float, scratch: str) -> float:
    env = dict(os.environ)
    if src is not None:  # the other tree's package shadows this checkout's
        env["PYTHONPATH"] = f"{src}{os.pathsep}{env.get('PYTHONPATH', '')}"
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, str(duration), scratch],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    )
    return json.loads(proc.stdout.strip().splitlines()[-1])["record_s"]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--other", type=Path, required=True, help="the other tree's src/")
    parser.add_argument("--duration", type=float, default=10.0, help="recorded seconds")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--scratch", default="/dev/shm", help="folder for the sequences")
    parser.add_argument(
        "--json", type=Path, default=Path(__file__).parent / "results" / "ab_record.json"
    )
    args = parser.parse_args()
    frames = round(args.duration * 30)
    runs: dict[str, list[float]] = {"other": [], "this": []}
    for _ in range(args.repeats):
        runs["other"].append(_record_s(args.other, args.duration, args.scratch) / frames)
        runs["this"].append(_record_s(None, args.duration, args.scratch) / frames)
    medians = {name: statistics.median(v) for name, v in runs.items()}
    result = {
        "world": f"default preset, seed 0, 640x480, {args.duration:g} s ({frames} frames)",
        "other_tree": str(args.other),
        "ms_per_frame": {name: [round(v * 1e3, 2) for v in vs] for name, vs in runs.items()},
        "median_ms_per_frame": {name: round(v * 1e3, 2) for name, v in medians.items()},
        "ratio_this_to_other": medians["this"] / medians["other"],
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=2) + "\n")
    print(
        f"this checkout {medians['this'] * 1e3:.1f} ms a frame, other tree "
        f"{medians['other'] * 1e3:.1f} ms (runs: this {result['ms_per_frame']['this']}, other "
        f"{result['ms_per_frame']['other']}); ratio {result['ratio_this_to_other']:.3f}"
    )
    print(f"written to {args.json}")


if __name__ == "__main__":
    main()
