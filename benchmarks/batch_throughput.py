"""`twinsim batch` throughput: 1 vs 2 local workers, Ray local vs the local executor, and
"scaling on paper" for GRADE's and CARLA-Loc's datasets from measured per-job costs.

1. The test plan (tests/data/batch_plan.yaml: 2 seeds × 2 values of scene.max_rooms, tiny
   0.5 s runs, a fog twin, a rotors-default noisy copy, a TUM export of every sequence: 24
   jobs) into a fresh dataset with 1 and with 2 local worker processes, and on a local Ray
   instance with 2 CPUs (`--ray local`). Ray's start-up (ray.init + shutdown) is timed alone,
   so its overhead per job is (Ray wall − start-up − local wall) / jobs.
2. Per-job costs at the size of the real datasets: GRADE's "D" preset (640×480 RGB-D, 20
   people) recorded for 1 s and 2 s, with a fog twin, a `grade` noisy copy and a rosbag1
   export of the run and of the noisy copy; every job's wall time from the manifest gives
   cost(T) = a + b·T per job type, extrapolated to 60 s sequences and multiplied by the job
   counts of
   - GRADE's SLAM set (eliabntt/GRADE_data: F, FH, D, DH, WO, WOH, S, SH; 60 s each, a ground
     truth and a noisy bag of each): 8 runs, 8 `grade` noisy copies, 16 rosbag1 exports;
   - CARLA-Loc (7 maps × 2 dynamic levels × 3 weathers = 42 sequences): 14 runs (7 worlds ×
     static/dynamic), 28 twins (fog, night), 42 rosbag1 exports; 60 s assumed per sequence.
   The estimate is core-seconds (one job per core) ÷ cores, for this machine's 2 cores and for
   a 64-core cluster, but never less than one cell's chain (run, then its twin or noisy copy,
   then an export), assuming independent jobs scale linearly.

Usage: python benchmarks/batch_throughput.py [--repeats 3] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

import yaml

from twinsim.batch import read_manifest, run_batch
from twinsim.batch.executors import RayExecutor

ROOT = Path(__file__).resolve().parents[1]
SMALL_PLAN = ROOT / "tests" / "data" / "batch_plan.yaml"
SECONDS = 60.0  # the length of one sequence of either dataset
GRADE_JOBS = {"run": 8, "noise": 8, "export": 16}
CARLA_JOBS = {"run": 14, "twin": 28, "export": 42}


def _timed_batch(plan: Path, out: Path, **kwargs) -> tuple[float, dict]:
    start = time.perf_counter()
    result = run_batch(plan, out, **kwargs)
    wall = time.perf_counter() - start
    if not result.ok:
        raise SystemExit(f"{plan}: {len(result.failed)} jobs failed: {result.failed[0]['error']}")
    return wall, read_manifest(out)


def _ray_startup() -> float:
    start = time.perf_counter()
    RayExecutor("local", 2).close()
    return time.perf_counter() - start


def throughput(tmp: Path, repeats: int) -> dict:
    """Median walls of the small plan on 1 and 2 local workers and on Ray local, the three
    alternated `repeats` times (the machine is shared: single runs vary)."""
    walls: dict[str, list[float]] = {"local1": [], "local2": [], "ray": [], "startup": []}
    for i in range(repeats):
        for name, kwargs in (
            ("local1", {"workers": 1}),
            ("local2", {"workers": 2}),
            ("ray", {"ray": "local", "workers": 2}),
        ):
            wall, manifest = _timed_batch(SMALL_PLAN, tmp / f"{name}-{i}", **kwargs)
            walls[name].append(wall)
        walls["startup"].append(_ray_startup())
    local1, local2, ray, startup = (statistics.median(walls[k]) for k in walls)
    jobs = len(manifest["jobs"])
    return {
        "plan": str(SMALL_PLAN.relative_to(ROOT)),
        "jobs": jobs,
        "repeats": repeats,
        "walls_s": walls,
        "local_1_worker_s": local1,
        "local_2_workers_s": local2,
        "speedup_2_vs_1_workers": local1 / local2,
        "ray_local_2_cpus_s": ray,
        "ray_startup_s": startup,
        "ray_vs_local_2_workers": ray / local2,
        "ray_overhead_per_job_s": (ray - startup - local2) / jobs,
        "job_seconds_sum": sum(j["wall_s"] for j in manifest["jobs"].values()),
    }


def _cost_plan(folder: Path, duration: float) -> Path:
    plan = {
        "runs": {"configs": ["D"], "seeds": [0], "duration": duration},
        "twins": {"fog": {"fog": 0.3}},
        "noise": {"grade": {"profile": "grade", "seed": 1}},
        "exports": {"bag": {"format": "rosbag1", "of": ["runs", "noise"]}},
    }
    path = folder / f"cost_{duration:g}s.yaml"
    path.write_text(yaml.safe_dump(plan))
    return path


def per_job_costs(tmp: Path) -> dict:
    """cost(T) = a + b·T per job type, from 1 s and 2 s versions of a GRADE-sized cell."""
    walls = {}
    for duration in (1.0, 2.0):
        _, manifest = _timed_batch(_cost_plan(tmp, duration), tmp / f"cost{duration:g}", workers=1)
        for job in manifest["jobs"].values():
            walls.setdefault(job["type"], {}).setdefault(duration, []).append(job["wall_s"])
    costs = {}
    for kind, by_duration in sorted(walls.items()):
        one, two = (sum(v) / len(v) for v in (by_duration[1.0], by_duration[2.0]))
        per_s = max(two - one, 0.0)
        costs[kind] = {"fixed_s": one - per_s, "per_recorded_s": per_s}
        costs[kind]["at_60_s"] = costs[kind]["fixed_s"] + per_s * SECONDS
    return costs


def on_paper(costs: dict, counts: dict, chain: tuple[str, ...]) -> dict:
    """Core-hours of the dataset, and its wall time on 2 and 64 cores: the core-seconds
    shared out, but never less than one cell's chain of jobs (`chain`, run first)."""
    core_s = sum(costs[kind]["at_60_s"] * n for kind, n in counts.items())
    path_s = sum(costs[kind]["at_60_s"] for kind in chain)
    return {
        "jobs": counts,
        "core_hours": core_s / 3600,
        "critical_path_s": path_s,
        "hours_on_2_cores": max(core_s / 2, path_s) / 3600,
        "minutes_on_64_cores": max(core_s / 64, path_s) / 60,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--json", type=Path, default=ROOT / "benchmarks" / "results" / "batch_throughput.json"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="twinsim-batch-bench-") as tmp:
        tmp = Path(tmp)
        result = {"cpu_count": os.cpu_count(), "throughput": throughput(tmp, args.repeats)}
        costs = per_job_costs(tmp)
    result["per_job_cost_s"] = costs
    result["grade_slam_set"] = on_paper(costs, GRADE_JOBS, ("run", "noise", "export"))
    result["carla_loc"] = on_paper(costs, CARLA_JOBS, ("run", "twin", "export"))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=2) + "\n")
    t = result["throughput"]
    print(
        f"small plan, {t['jobs']} jobs: 1 worker {t['local_1_worker_s']:.1f} s, 2 workers "
        f"{t['local_2_workers_s']:.1f} s (speed-up {t['speedup_2_vs_1_workers']:.2f}×)"
    )
    print(
        f"Ray local (2 CPUs) {t['ray_local_2_cpus_s']:.1f} s = "
        f"{t['ray_vs_local_2_workers']:.2f}× the local executor; start-up "
        f"{t['ray_startup_s']:.1f} s, overhead {t['ray_overhead_per_job_s']:.3f} s per job"
    )
    for kind, c in costs.items():
        print(
            f"{kind}: {c['fixed_s']:.1f} s + {c['per_recorded_s']:.1f} s per recorded s "
            f"→ {c['at_60_s']:.0f} s for 60 s"
        )
    for name in ("grade_slam_set", "carla_loc"):
        p = result[name]
        print(
            f"{name}: {p['core_hours']:.1f} core-hours: {p['hours_on_2_cores']:.1f} h on 2 "
            f"cores, {p['minutes_on_64_cores']:.0f} min on 64"
        )
    print(f"written to {args.json}")


if __name__ == "__main__":
    main()
