"""Frame cost of the recording pipeline vs the raw MuJoCo rendering of the same frames, and memory.

Measured in one run on the static apartment (`S`: the default world without people) at 640×480:
- raw: per frame, one RGB+depth pass and one segmentation pass read back (`render_raw`), at
  the poses the recorded run visits;
- pipeline: wall time of `twinsim.sim.run` (physics, control, every stream, annotations,
  writing, until the last file is flushed) per camera frame, taken as the difference between
  a long and a short run divided by their difference in frames, so that world generation
  and start-up cancel out (the all-inclusive figure is reported too);
- peak RSS of a 10 s and a 60 s run, each in its own process;
- the dynamic world: the default apartment with 20 people requested and 10 flying objects, its
  pipeline frame cost (same differential method, shorter runs) over that of the same apartment
  and the same flight with the people and objects taken out (median of alternated repeats).

Usage: python benchmarks/frame_cost.py [--seed 0] [--short 10] [--long 60] [--repeats 3]
                                       [--only-dynamic] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_CHILD = """
import json, resource, sys, time
from pathlib import Path
from twinsim.config import load_config
from twinsim.sim import build_scene, record
cfg = load_config(
    "S", json.loads(sys.argv[4]), seed=int(sys.argv[1]), duration_s=float(sys.argv[2])
)
t0 = time.perf_counter()
scene = build_scene(cfg)
if sys.argv[5] == "without-actors":  # the same apartment and flight, nobody in it
    scene = scene.model_copy(update={"people": (), "flying_objects": ()})
record(scene, cfg, Path(sys.argv[3]))
wall = time.perf_counter() - t0
rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"wall_s": wall, "peak_rss_mb": rss_mb}))
"""


DYNAMIC = ["people.count=20", "flying_objects.count=10"]


def _run_child(
    seed: int, duration: float, out: Path, overrides: list[str] = (), actors: str = "as-is"
) -> dict:
    args = [str(seed), str(duration), str(out), json.dumps(overrides), actors]
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, *args],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _raw_cost(seq_path: Path, n_frames: int) -> float:
    """Seconds per frame of the bare MuJoCo passes, at poses of the recorded sequence."""
    from twinsim.config import validate_config
    from twinsim.engine.backend import configure_backend
    from twinsim.model.sections import RenderConfig
    from twinsim.sequence import open_sequence

    seq = open_sequence(seq_path)
    cfg = validate_config(seq.metadata["config"])
    configure_backend(cfg.render.backend)
    from twinsim.engine.render import CameraRenderer
    from twinsim.engine.world import World

    world = World(seq.scene, RenderConfig(**cfg.render.model_dump()), cfg.sim.physics_hz)
    state = seq.table("robot_state")
    cam = next(s for s in seq.scene.sensors if s.type == "camera")
    renderer = CameraRenderer(world.model, cam.name, cam.width, cam.height)
    period = cfg.sim.physics_hz // cam.rate_hz
    rows = range(0, min(len(state["t_ns"]), n_frames * period), period)
    qpos_cols = [c for c in state if c.startswith("qpos_")]
    times = []
    for i in rows:
        world.robot().set_state(
            [state[c][i] for c in qpos_cols],
            [state[c.replace("qpos", "qvel")][i] for c in qpos_cols],
        )
        t0 = time.perf_counter()
        renderer.render_raw(world.data)
        times.append(time.perf_counter() - t0)
    renderer.close()
    world.close()
    times.sort()
    return sum(times[1:]) / max(1, len(times) - 1)  # the first frame uploads textures


def _dynamic_costs(args, tmp: Path) -> dict[str, float]:
    """Seconds per frame of the dynamic world and of the same world and flight without its
    actors, each by the short/long differential, the two alternated `--repeats` times so
    that load on the machine affects both alike; the medians are returned."""
    per_frame: dict[str, list[float]] = {"static": [], "dynamic": []}
    frames = round((args.dyn_long - args.dyn_short) * 30)
    for i in range(args.repeats):
        for name, actors in (("static", "without-actors"), ("dynamic", "as-is")):
            a, b = (
                _run_child(args.seed, dur, tmp / f"{name}_{part}{i}", DYNAMIC, actors)
                for part, dur in (("a", args.dyn_short), ("b", args.dyn_long))
            )
            per_frame[name].append((b["wall_s"] - a["wall_s"]) / frames)
    return {name: statistics.median(values) for name, values in per_frame.items()}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--short", type=float, default=10.0, help="seconds of the short run")
    parser.add_argument("--long", type=float, default=60.0, help="seconds of the long run")
    parser.add_argument("--dyn-short", type=float, default=5.0, help="dynamic comparison, short")
    parser.add_argument("--dyn-long", type=float, default=20.0, help="dynamic comparison, long")
    parser.add_argument("--repeats", type=int, default=3, help="dynamic comparison repeats")
    parser.add_argument(
        "--only-dynamic", action="store_true", help="measure only the dynamic comparison"
    )
    parser.add_argument(
        "--json", type=Path, default=Path(__file__).parent / "results" / "frame_cost.json"
    )
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        result = {} if args.only_dynamic else _static_result(args, Path(tmp))
        if args.only_dynamic and args.json.exists():  # keep the static figures on record
            result = json.loads(args.json.read_text())
        dyn = _dynamic_costs(args, Path(tmp))
        placed = json.loads((Path(tmp) / "dynamic_b0" / "metadata.json").read_text())["people"]
    result["dynamic_world"] = {
        "overrides": DYNAMIC,
        "people": placed,
        "comparison": "same apartment and flight without the people and flying objects",
        "repeats": args.repeats,
        "static_ms_per_frame": dyn["static"] * 1e3,
        "dynamic_ms_per_frame": dyn["dynamic"] * 1e3,
        "ratio_dynamic_to_static": dyn["dynamic"] / dyn["static"],
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=2) + "\n")
    if not args.only_dynamic:
        _print_static(args, result)
    d = result["dynamic_world"]
    print(
        f"dynamic world ({d['people']['placed']} of {d['people']['requested']} people placed, "
        f"10 flying objects): {d['dynamic_ms_per_frame']:.1f} ms vs "
        f"{d['static_ms_per_frame']:.1f} ms a frame without them, "
        f"ratio {d['ratio_dynamic_to_static']:.2f}"
    )
    print(f"written to {args.json}")


def _static_result(args, tmp: Path) -> dict:
    """The static apartment's frame cost against raw MuJoCo, throughput and memory."""
    short = _run_child(args.seed, args.short, tmp / "short")
    raw_s = _raw_cost(tmp / "short", n_frames=int(args.short * 30))
    long = _run_child(args.seed, args.long, tmp / "long")
    frames_short, frames_long = round(args.short * 30), round(args.long * 30)
    pipeline_s = (long["wall_s"] - short["wall_s"]) / (frames_long - frames_short)
    return {
        "world": f"default preset, seed {args.seed}, 640x480 RGB-D + segmentation, IMU 240 Hz",
        "raw_mujoco_ms_per_frame": raw_s * 1e3,
        "pipeline_ms_per_frame": pipeline_s * 1e3,
        "ratio_pipeline_to_raw": pipeline_s / raw_s,
        "recorded_frames_per_s": 1.0 / pipeline_s,
        "long_run_all_inclusive_frames_per_s": frames_long / long["wall_s"],
        "short_run": {"duration_s": args.short, **short},
        "long_run": {"duration_s": args.long, **long},
        "rss_growth_long_vs_short": long["peak_rss_mb"] / short["peak_rss_mb"] - 1.0,
    }


def _print_static(args, result: dict) -> None:
    rows = [
        ("raw MuJoCo frame (RGB+depth pass + segmentation pass)", "raw_mujoco_ms_per_frame", "ms"),
        ("pipeline frame (everything, until flushed)", "pipeline_ms_per_frame", "ms"),
        ("ratio pipeline / raw", "ratio_pipeline_to_raw", ""),
        ("recorded frames per second", "recorded_frames_per_s", ""),
    ]
    for label, key, unit in rows:
        print(f"{label:<56} {result[key]:8.2f} {unit}")
    short, long = result["short_run"], result["long_run"]
    print(
        f"{args.long:g} s run all inclusive (generation, start-up): "
        f"{long['wall_s']:.0f} s, {result['long_run_all_inclusive_frames_per_s']:.1f} frames/s"
    )
    growth = result["rss_growth_long_vs_short"]
    print(
        f"peak RSS: {short['peak_rss_mb']:.0f} MB ({args.short:g} s run), "
        f"{long['peak_rss_mb']:.0f} MB ({args.long:g} s run), growth {growth:+.1%}"
    )


if __name__ == "__main__":
    main()
