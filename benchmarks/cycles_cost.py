"""What a Cycles frame costs on this machine, and how close few samples + denoising get.

A short tiny run (people and flying objects) is recorded; the world at its middle camera frame
is rendered at WIDTH×HEIGHT by MuJoCo and by Cycles (CPU) at each sample count with
OpenImageDenoise, and once at the reference count without it. Reported: seconds per frame
(median of `--repeats`, scene build excluded), PSNR and SSIM of each denoised image against the
reference, the SHA-256 of each image (run twice to check that bytes repeat across processes),
and optionally a side-by-side PNG (MuJoCo | Cycles at the middle sample count).

Usage: python benchmarks/cycles_cost.py [--width 640 --height 480] [--samples 16 64 256]
       [--reference 1024] [--repeats 2] [--adaptive-threshold 0.01] [--json PATH] [--image PATH]

With `--adaptive-threshold T` every denoised sample count is also rendered with Cycles'
adaptive sampling at that noise threshold (rows with `adaptive_threshold`).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
from skimage.metrics import peak_signal_noise_ratio, structural_similarity

from twinsim.engine.backend import configure_backend


def _timed(cycles, T, K, size, clip, repeats: int) -> tuple[np.ndarray, float]:
    """The rendered image and the median seconds a render took."""
    times, rgb = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        rgb = cycles.render(T, "robot", K, size, clip).rgb
        times.append(time.perf_counter() - start)
    return rgb, statistics.median(times)


def main() -> None:
    """Measure and write the JSON (and the image, if asked)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--width", type=int, default=640)
    parser.add_argument("--height", type=int, default=480)
    parser.add_argument("--samples", type=int, nargs="+", default=[16, 64, 256])
    parser.add_argument("--reference", type=int, default=1024)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--adaptive-threshold", type=float, default=0.0)
    parser.add_argument("--json", type=Path, default=Path("benchmarks/results/cycles_cost.json"))
    parser.add_argument("--image", type=Path, default=None)
    args = parser.parse_args()
    configure_backend("egl")
    from twinsim.config import load_config
    from twinsim.render.cycles.blender import blender_version
    from twinsim.render.cycles.scene import CyclesScene
    from twinsim.render.cycles.settings import CyclesSettings
    from twinsim.replay.source import load_source, world_at_frame
    from twinsim.sensors.camera import intrinsics
    from twinsim.sequence import open_sequence
    from twinsim.sim import run

    size = (args.width, args.height)
    with tempfile.TemporaryDirectory() as tmp:
        cfg = load_config("tiny", ("people.count=2", "flying_objects.count=2"), 3, 1.0)
        src = load_source(run(cfg, Path(tmp) / "src"))
        middle = len(open_sequence(src.path).camera("cam0")) // 2
        world, cam = world_at_frame(src, middle, *size), src.scene.sensors[0]
        K, clip = intrinsics(*size, cam.hfov_deg), (cam.near_m, cam.far_m)
        T = world.T_world_cam("cam0")
        start = time.perf_counter()
        mujoco_rgb = world.render("cam0", *size).rgb
        mujoco_s = time.perf_counter() - start
        adaptive = [args.adaptive_threshold] if args.adaptive_threshold > 0 else []
        renders = [(n, True, a) for n in args.samples for a in (0.0, *adaptive)]
        images, rows = [], []
        for samples, denoise, threshold in [*renders, (args.reference, False, 0.0)]:
            settings = CyclesSettings(
                samples=samples, denoise=denoise, adaptive_threshold=threshold
            )
            cycles = CyclesScene(world, settings, Path(tmp) / "work")
            repeats = args.repeats if denoise else 1
            rgb, seconds = _timed(cycles, T, K, size, clip, repeats)
            images.append(rgb)
            row = {"samples": samples, "denoise": denoise}
            if threshold > 0:
                row["adaptive_threshold"] = threshold
            row["s_per_frame"] = round(seconds, 3)
            row["sha256"] = hashlib.sha256(rgb.tobytes()).hexdigest()
            rows.append(row)
        world.close()
    reference = images[-1]
    for row, img in zip(rows[:-1], images[:-1], strict=True):
        row["psnr_db_vs_reference"] = round(float(peak_signal_noise_ratio(reference, img)), 2)
        row["ssim_vs_reference"] = round(
            float(structural_similarity(reference, img, channel_axis=2)), 4
        )
    result = {
        "what": "Cycles CPU render time per frame and quality vs a high-sample reference",
        "resolution": f"{args.width}x{args.height}",
        "reference": {"samples": args.reference, "denoise": False},
        "blender_version": blender_version(),
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs",
        "mujoco_rgbd_seg_s_per_frame": round(mujoco_s, 3),
        "cycles": rows,
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=1))
    if args.image is not None:
        from PIL import Image

        middle = [r["samples"] for r in rows].index(args.samples[len(args.samples) // 2])
        Image.fromarray(np.hstack([mujoco_rgb, images[middle]])).save(args.image)


if __name__ == "__main__":
    main()
