"""Every robot kind records a 60 s sequence of the default apartment from the CLI, and replays it.

For each kind: `twinsim run --set robot.kind=<kind>` (the default world: 20 people, 5 flying
objects; the camera at `--size`, 320×240 by default to keep the 2-core machine's time down),
`twinsim validate`, a teleport replay (`twinsim replay`) whose files must equal the original's
byte for byte (all but `metadata.json`), and a control replay (`--mode control`) whose body and
camera poses are compared with the original's per axis (`twinsim.replay.compare`: |mean|, std,
max). The `mjcf` kind records `examples/robots/wheelbot.xml` (planar base, camera on its site).
Wall times of each command are reported; everything goes to JSON.

Usage: python benchmarks/robot_kinds_replay.py [--kinds drone omni ...] [--duration 60]
                                               [--size 320x240] [--out DIR] [--json PATH]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KINDS = ("drone", "omni", "diff_drive", "quadruped", "arm", "mjcf")
EXTRA = {
    "diff_drive": ["sensors.wheel_odom.kind=wheel_odometry"],
    "mjcf": [
        f"robot.path={ROOT / 'examples' / 'robots' / 'wheelbot.xml'}",
        "robot.base=planar",
        "robot.mount=cam_site",
    ],
}
TWINSIM = [str(Path(sys.executable).parent / "twinsim")]  # the venv's console script


def _timed(args: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run([*TWINSIM, *args], check=True, capture_output=True, text=True)
    return time.perf_counter() - t0


def _digest(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != "metadata.json"
    }


def _deviation(a: Path, b: Path) -> dict:
    """Per-axis pose deviation of every pose stream (body, camera) of b from a."""
    from twinsim.replay.compare import compare_sequences

    poses = compare_sequences(a, b, stride=10**9)["poses"]
    worst = {}
    for axis in ("x", "y", "z"):
        worst[f"{axis}_max_m"] = max(p[axis]["max_abs"] for p in poses.values())
    for axis in ("roll", "pitch", "yaw"):
        worst[f"{axis}_max_rad"] = max(p[axis]["max_abs"] for p in poses.values())
    samples = sum(p["samples"] for p in poses.values())
    return {"pose_streams": sorted(poses), "samples": samples, **worst}


def measure(kind: str, duration: float, size: str, folder: Path) -> dict:
    """Run, validate, teleport- and control-replay one kind; figures of each step."""
    width, height = size.split("x")
    sets = [
        f"robot.kind={kind}",
        f"sensors.cam0.width={width}",
        f"sensors.cam0.height={height}",
        *EXTRA.get(kind, []),
    ]
    seq, twin, ctrl = folder / kind, folder / f"{kind}-twin", folder / f"{kind}-ctrl"
    run_args = ["run", "--duration", str(duration), "--out", str(seq)]
    for assignment in sets:
        run_args += ["--set", assignment]
    result = {"command": "twinsim " + " ".join(run_args), "run_s": _timed(run_args)}
    result["validate_s"] = _timed(["validate", str(seq)])
    result["teleport_s"] = _timed(["replay", str(seq), "--out", str(twin)])
    a, b = _digest(seq), _digest(twin)
    result["teleport_files"] = len(a)
    result["teleport_differing_files"] = sorted(p for p in a if a[p] != b.get(p))
    result["control_s"] = _timed(["replay", str(seq), "--out", str(ctrl), "--mode", "control"])
    result["control_deviation"] = _deviation(seq, ctrl)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kinds", nargs="+", default=list(KINDS))
    parser.add_argument("--duration", type=float, default=60.0)
    parser.add_argument("--size", default="320x240")
    parser.add_argument("--out", type=Path, default=None, help="keep the sequences here")
    parser.add_argument(
        "--json", type=Path, default=ROOT / "benchmarks" / "results" / "robot_kinds_replay.json"
    )
    args = parser.parse_args()
    folder = args.out or Path(tempfile.mkdtemp(prefix="twinsim-kinds-"))
    folder.mkdir(parents=True, exist_ok=True)
    results = {}
    try:
        for kind in args.kinds:
            results[kind] = r = measure(kind, args.duration, args.size, folder)
            dev = r["control_deviation"]
            worst_m = max(dev["x_max_m"], dev["y_max_m"], dev["z_max_m"])
            print(
                f"{kind:>10}: run {r['run_s']:.0f} s, teleport replay "
                f"{'byte-identical' if not r['teleport_differing_files'] else 'DIFFERS'}, "
                f"control replay max |Δ| {worst_m:.1e} m",
                flush=True,
            )
            args.json.write_text(
                json.dumps(
                    {"duration_s": args.duration, "size": args.size, "kinds": results}, indent=1
                )
                + "\n",
                encoding="utf-8",
            )
    finally:
        if args.out is None:
            shutil.rmtree(folder)


if __name__ == "__main__":
    main()
