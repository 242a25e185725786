"""The dynamic effect, GRADE-style: feature VO on a dynamic sequence, its static twin, a noisy copy.

Records a dynamic world (`twinsim run`), replays it without its people and flying objects
(`twinsim replay --static`), adds GRADE's evaluation noise to it (`twinsim noise --profile grade`),
then runs `twinsim bench` with the built-in baselines over the three, 3 trials each. Writes the
report folder under --work and the headline numbers to benchmarks/results/dynamic_effect.json.

    .venv/bin/python benchmarks/dynamic_effect.py --work runs/dynamic_effect

Stages whose output already exists are skipped, and the bench resumes, so a re-run is cheap.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from twinsim.eval.harness import bench
from twinsim.eval.report import TABLE_METRICS, aggregate

ROOT = Path(__file__).resolve().parent
TWINSIM = [str(Path(sys.executable).parent / "twinsim")]
METHODS = ["feature_vo", "feature_vo_masked", "rgbd_odometry"]


def stage(name: str, out: Path, command: list[str]) -> float | None:
    """Run one twinsim command unless its output sequence is already complete; seconds taken
    (None when skipped)."""
    if (out / "metadata.json").is_file() and not (out / "INCOMPLETE").exists():
        print(f"{name}: {out} exists, skipped")
        return None
    print(f"{name}: {' '.join(command)}")
    start = time.perf_counter()
    subprocess.run(command, check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("runs/dynamic_effect"))
    parser.add_argument("--preset", default="F", help="dynamic preset (GRADE's F: people+objects)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--duration", type=float, default=20.0)
    parser.add_argument("--size", default="320x240", help="camera WIDTHxHEIGHT")
    parser.add_argument("--noise", default="grade", help="noise profile of the noisy copy")
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    width, height = args.size.split("x")
    work = args.work
    work.mkdir(parents=True, exist_ok=True)
    dynamic, static, noisy = work / "dynamic", work / "static", work / "noisy"
    seconds = {
        "record": stage(
            "record",
            dynamic,
            [
                *TWINSIM,
                "run",
                "--config",
                args.preset,
                "--seed",
                str(args.seed),
                "--duration",
                str(args.duration),
                "--set",
                f"cameras.cam0.width={width}",
                "--set",
                f"cameras.cam0.height={height}",
                "--out",
                str(dynamic),
            ],
        ),
        "static_twin": stage(
            "static twin",
            static,
            [*TWINSIM, "replay", str(dynamic), "--static", "--out", str(static)],
        ),
        "noisy_copy": stage(
            "noisy copy",
            noisy,
            [
                *TWINSIM,
                "noise",
                str(dynamic),
                "--profile",
                args.noise,
                "--seed",
                str(args.seed),
                "--out",
                str(noisy),
            ],
        ),
    }
    start = time.perf_counter()
    report = bench(
        METHODS,
        [dynamic, static, noisy],
        args.trials,
        work / "report",
        workers=args.workers,
        progress=lambda done, total, label: print(f"[{done}/{total}] {label}", flush=True),
    )
    seconds["bench"] = time.perf_counter() - start
    stats = aggregate(report.results)
    table = {
        f"{method}/{seq}": {
            key: {"mean": entry[key][0], "std": entry[key][1]} for key, *_ in TABLE_METRICS
        }
        | {"trials": entry["trials"], "failed": entry["failed"]}
        for (method, seq), entry in stats.items()
    }
    ate = {key: value["ate_rmse"]["mean"] for key, value in table.items()}
    dyn, stat, masked = (
        ate["feature_vo/dynamic"],
        ate["feature_vo/static"],
        ate["feature_vo_masked/dynamic"],
    )
    result = {
        "command": " ".join(["benchmarks/dynamic_effect.py", *sys.argv[1:]]),
        "preset": args.preset,
        "seed": args.seed,
        "duration_s": args.duration,
        "camera": args.size,
        "noise_profile": args.noise,
        "trials": args.trials,
        "feature_vo_ate_dynamic_over_static": dyn / stat,
        "feature_vo_masked_ate_over_static": masked / stat,
        "share_of_dynamic_error_recovered_by_masking": (dyn - masked) / (dyn - stat)
        if dyn != stat
        else None,
        "results": table,
        "seconds": seconds,
        "report": str(work / "report"),
    }
    out = ROOT / "results" / "dynamic_effect.json"
    out.write_text(json.dumps(result, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    print((work / "report" / "table.md").read_text(encoding="utf-8"))
    print(json.dumps({k: v for k, v in result.items() if k != "results"}, indent=2))


if __name__ == "__main__":
    main()
