"""Cost of each export relative to reading the same sequence, measured in one run.

Records one dynamic world with a camera, an IMU and a LiDAR, then for every format in
`twinsim.export.FORMATS`: wall time of `export_sequence`, that time divided by the time to
read every camera frame and LiDAR sweep of the sequence (the floor any exporter pays), and the
size written. Results go to benchmarks/results/export_speed.json.

Usage: python benchmarks/export_speed.py [--seed 0] [--duration 5] [--width 320 --height 240]
                                         [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from twinsim.engine.backend import configure_backend


def _folder_mb(path: Path) -> float:
    files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
    return sum(p.stat().st_size for p in files) / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--duration", type=float, default=5.0)
    parser.add_argument("--width", type=int, default=320)
    parser.add_argument("--height", type=int, default=240)
    parser.add_argument("--json", type=Path, default=Path("benchmarks/results/export_speed.json"))
    args = parser.parse_args()
    configure_backend("auto")
    from twinsim.config import load_config
    from twinsim.export import FORMATS, export_sequence
    from twinsim.sequence import open_sequence
    from twinsim.sim import run

    overrides = [
        "people.count=6",
        "flying_objects.count=4",
        f"cameras.cam0.width={args.width}",
        f"cameras.cam0.height={args.height}",
        "lidars.lidar0.model=vlp-16",
    ]
    with tempfile.TemporaryDirectory() as tmp:
        seq_path = run(
            load_config("tiny", overrides, seed=args.seed, duration_s=args.duration),
            Path(tmp) / "seq",
        )
        seq = open_sequence(seq_path)
        t0 = time.perf_counter()
        frames = sum(1 for _ in seq.camera("cam0"))
        sweeps = sum(1 for _ in seq.lidar("lidar0"))
        read_s = time.perf_counter() - t0
        results = {}
        for name in FORMATS:
            t0 = time.perf_counter()
            out = export_sequence(seq_path, name, Path(tmp) / name)
            wall = time.perf_counter() - t0
            results[name] = {
                "seconds": round(wall, 3),
                "ratio_to_read": round(wall / read_s, 2),
                "ms_per_frame": round(1000 * wall / frames, 2),
                "size_mb": round(_folder_mb(out), 2),
            }
            print(f"{name:8s} {wall:7.2f} s  {wall / read_s:6.2f}x read  {_folder_mb(out):8.1f} MB")
    report = {
        "sequence": {
            "preset": "tiny",
            "overrides": overrides,
            "seed": args.seed,
            "duration_s": args.duration,
            "camera_frames": frames,
            "lidar_sweeps": sweeps,
            "read_s": round(read_s, 3),
        },
        "formats": results,
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2) + "\n")
    print(f"read every frame and sweep: {read_s:.2f} s; written {args.json}")


if __name__ == "__main__":
    main()
