"""A world for every seed: build and record each preset's world for many seeds (issue 31).

For every preset and seed 0..N-1: `build_scene` of the preset with `--duration` seconds
recorded (0.05 s by default: the world, the robots' tours, the bootstrap and a few frames), then
`record` into a scratch folder (deleted after). Images are shrunk to 64x48 (`SMALL`: the world
is the same, only the cameras are smaller). Worlds are built in `--workers` processes.

Printed per preset: seeds tried, built and recorded, redrawn (the seed's own draw of people
left a robot no room, `SceneSpec.redraw`) and how many people those kept, the mean and median
seconds to build and to record a world; every failure with its message goes into the JSON.

Usage: python benchmarks/seed_sweep.py [--seeds 200] [--presets default,D,tiny,team,town]
       [--workers 2] [--duration 0.05] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import statistics
import sys
import tempfile
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

PRESETS = ("default", "D", "tiny", "team", "town")
_CAMERA = ["sensors.cam0.width=64", "sensors.cam0.height=48"]
#: overrides that only shrink the cameras (tiny and town are 64x48 already)
SMALL = {
    "default": _CAMERA,
    "D": _CAMERA,
    "tiny": [],
    "team": [*_CAMERA, "robots.ugv.sensors.cam0.width=64", "robots.ugv.sensors.cam0.height=48"],
    "town": [],
}


def one_world(preset: str, seed: int, duration_s: float, scratch: str) -> dict:
    """Build and record one world; what happened and how long each stage took."""
    from twinsim.assemble import build_scene
    from twinsim.config import load_config
    from twinsim.engine.backend import configure_backend
    from twinsim.sim import record

    out: dict = {"seed": seed}
    cfg = load_config(preset, SMALL[preset], seed=seed, duration_s=duration_s)
    configure_backend(cfg.render.backend)
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            scene = build_scene(cfg)
    except Exception as exc:  # every failure is a finding of the sweep
        return out | {"stage": "build", "error": f"{type(exc).__name__}: {exc}"}
    out["build_s"] = time.perf_counter() - t0
    out["people"] = len(scene.people)
    if scene.redraw is not None:
        out["redraw"] = scene.redraw.model_dump(mode="json")
    folder = Path(tempfile.mkdtemp(dir=scratch))
    t0 = time.perf_counter()
    try:
        record(scene, cfg, folder / "seq")
    except Exception as exc:
        return out | {"stage": "record", "error": f"{type(exc).__name__}: {exc}"}
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    out["record_s"] = time.perf_counter() - t0
    return out


def _timing(values: list[float]) -> dict:
    """Mean and median of a stage's seconds (None without any)."""
    if not values:
        return {"mean_s": None, "median_s": None}
    return {"mean_s": statistics.fmean(values), "median_s": statistics.median(values)}


def _s(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds:.2f} s"


def _quiet() -> None:
    """Worker start: the planner's warnings (short tours) are not this sweep's findings."""
    logging.getLogger("twinsim").setLevel(logging.ERROR)


def summary(preset: str, worlds: list[dict], wanted_people: int) -> dict:
    """A preset's figures from its worlds."""
    built = [w for w in worlds if "build_s" in w]
    recorded = [w for w in built if "record_s" in w]
    redrawn = [w for w in built if "redraw" in w]
    return {
        "preset": preset,
        "overrides": SMALL[preset],
        "seeds_tried": len(worlds),
        "built": len(built),
        "recorded": len(recorded),
        "people_requested": wanted_people,
        "people_placed_mean": statistics.fmean(w["people"] for w in built) if built else None,
        "redrawn": len(redrawn),
        "redrawn_people_kept": [w["redraw"]["people_requested"] for w in redrawn],
        "build": _timing([w["build_s"] for w in built]),
        "record": _timing([w["record_s"] for w in recorded]),
        "world": _timing([w["build_s"] + w["record_s"] for w in recorded]),
        "failures": [
            {"seed": w["seed"], "stage": w["stage"], "message": w["error"]}
            for w in worlds
            if "error" in w
        ],
        "redraws": [{"seed": w["seed"], **w["redraw"]} for w in redrawn],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--presets", default=",".join(PRESETS))
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--duration", type=float, default=0.05)
    parser.add_argument(
        "--json", type=Path, default=Path(__file__).parent / "results" / "seed_sweep.json"
    )
    args = parser.parse_args()
    from twinsim.config import load_config

    scratch = "/dev/shm" if Path("/dev/shm").is_dir() else tempfile.gettempdir()
    presets = [p for p in args.presets.split(",") if p]
    unknown = sorted(set(presets) - set(PRESETS))
    if unknown:
        sys.exit(f"--presets: unknown {unknown}; known: {', '.join(PRESETS)}")
    results, t_start = [], time.perf_counter()
    with ProcessPoolExecutor(max_workers=args.workers, initializer=_quiet) as pool:
        for preset in presets:
            seeds = range(args.seeds)
            jobs = [pool.submit(one_world, preset, s, args.duration, scratch) for s in seeds]
            worlds = []
            for k, job in enumerate(jobs, start=1):
                worlds.append(job.result())
                if k % 20 == 0 or k == len(jobs):
                    print(f"  {preset}: {k}/{len(jobs)} worlds", flush=True)
            entry = summary(preset, worlds, load_config(preset).people.count)
            results.append(entry)
            print(
                f"{preset:>8}: built {entry['built']}/{entry['seeds_tried']}, recorded "
                f"{entry['recorded']}, redrawn {entry['redrawn']} (people kept "
                f"{sorted(entry['redrawn_people_kept'])}), {_s(entry['world']['mean_s'])} a "
                f"world on average (median build {_s(entry['build']['median_s'])}, record "
                f"{_s(entry['record']['median_s'])})",
                flush=True,
            )
            for failure in entry["failures"]:
                print(
                    f"          seed {failure['seed']} ({failure['stage']}): {failure['message']}"
                )
    report = {
        "seeds": args.seeds,
        "duration_s": args.duration,
        "workers": args.workers,
        "wall_s": time.perf_counter() - t_start,
        "presets": results,
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
