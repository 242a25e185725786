"""Twin generation time relative to the original run's (target ≤ 1.0: replay is not slower).

Measured in one run, in one process, on the same machine: the original is `twinsim.sim.run`
(world generation, start-up, bootstrap and recording: what it costs to make the sequence);
each twin is `twinsim.replay.replay` of it (checks, world build, recording) with: no change
(teleport), no change (control), static, fog + night, adversity minor and major (major adds
walking people, so nothing is copied), and a stereo pair added;
the stereo twin is also compared with the run recorded with that pair from the start (the same
rendering work). Teleport twins copy the camera frames their source provably holds (all of an
unchanged camera; depth, masks and boxes of one whose look changed); the exact and minor
adversity twins are also timed with every frame rendered again (`rerender=True`), the cost
without copies.
Repeats alternate the original and its twins and keep the median of each, because software
rendering on a shared machine varies by ±15 % from run to run.

Usage: python benchmarks/twin_cost.py [--config F] [--duration 5] [--repeats 2] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import time
from functools import partial
from pathlib import Path

from twinsim.engine.backend import configure_backend

# name → (variations, mode, render every frame again instead of copying what the source holds)
TWINS = {
    "exact (teleport)": ({}, "teleport", False),
    "exact (teleport, rendered)": ({}, "teleport", True),
    "exact (control)": ({}, "control", False),
    "static": ({"static": True}, "teleport", False),
    "fog + night": ({"fog": 0.4, "light": {"preset": "night"}}, "teleport", False),
    "adversity minor": ({"adversity": "minor"}, "teleport", False),
    "adversity minor (rendered)": ({"adversity": "minor"}, "teleport", True),
    "adversity major": ({"adversity": "major"}, "teleport", False),
    "stereo pair added": ({"stereo": {"width": 320, "height": 240}}, "teleport", False),
}


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="F", help="preset of the original run")
    parser.add_argument("--duration", type=float, default=5.0)
    parser.add_argument("--width", type=int, default=320)
    parser.add_argument("--height", type=int, default=240)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--json", type=Path, default=Path("benchmarks/results/twin_cost.json"))
    args = parser.parse_args()
    configure_backend("auto")
    from twinsim.config import load_config
    from twinsim.replay.replay import replay
    from twinsim.replay.sensors import stereo_cameras
    from twinsim.replay.variations import StereoVariation, parse_variations
    from twinsim.sim import run

    overrides = [f"cameras.cam0.width={args.width}", f"cameras.cam0.height={args.height}"]
    cfg = load_config(args.config, overrides, seed=args.seed, duration_s=args.duration)
    # the same run recorded with the stereo pair from the start: what the stereo twin repeats
    pair = stereo_cameras(StereoVariation(**TWINS["stereo pair added"][0]["stereo"]))
    cfg_pair = cfg.model_copy(update={"sensors": {**cfg.sensors, **pair}})
    times: dict[str, list[float]] = {"original": [], "original with the pair": []}
    times |= {name: [] for name in TWINS}
    with tempfile.TemporaryDirectory(prefix="twin_cost_") as tmp:
        root = Path(tmp)
        for r in range(args.repeats):
            source = root / f"source{r}"
            times["original"].append(_timed(lambda s=source: run(cfg, s)))
            with_pair = root / f"pair{r}"
            times["original with the pair"].append(_timed(lambda p=with_pair: run(cfg_pair, p)))
            shutil.rmtree(with_pair)
            for i, (name, (variations, mode, rerender)) in enumerate(TWINS.items()):
                out = root / f"twin{r}_{i}"
                v = parse_variations(variations)
                twin = partial(replay, source, out, v, mode, rerender=rerender)
                times[name].append(_timed(twin))
                shutil.rmtree(out)
            shutil.rmtree(source)
    original = statistics.median(times["original"])
    result = {
        "config": args.config,
        "duration_s": args.duration,
        "resolution": f"{args.width}x{args.height}",
        "repeats": args.repeats,
        "original_s": round(original, 3),
        "twins": {
            name: {
                "seconds": round(statistics.median(times[name]), 3),
                "ratio_to_original": round(statistics.median(times[name]) / original, 3),
            }
            for name in TWINS
        },
        "original_with_the_pair_s": round(statistics.median(times["original with the pair"]), 3),
        "stereo_twin_to_original_with_the_pair": round(
            statistics.median(times["stereo pair added"])
            / statistics.median(times["original with the pair"]),
            3,
        ),
        "target_ratio": 1.0,
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=2) + "\n")
    world = f"{args.config}, {args.duration} s, {result['resolution']}"
    print(f"original run: {original:.1f} s ({world})")
    for name, entry in result["twins"].items():
        print(f"  {name:20s} {entry['seconds']:7.1f} s   ratio {entry['ratio_to_original']:.2f}")
    print(
        f"the run recorded with the stereo pair: {result['original_with_the_pair_s']:.1f} s; "
        f"stereo twin / it: {result['stereo_twin_to_original_with_the_pair']:.2f}"
    )


if __name__ == "__main__":
    main()
