"""Mesh assets: CoACD's time per asset cold and cached, and what a furnished world costs per
frame against the same world without the catalogue, measured in one run.

The meshes are generated here with trimesh (nothing is downloaded): an upright tube and a
torus (hollow shapes CoACD must cut into many parts) and a chair of boxes (not one manifold:
CoACD's pre-pass remeshes it). Each is decomposed twice with an empty cache folder:
the first time by CoACD in its child process, the second from the cache. Then the tiny world is
recorded with a 320×240 camera and a VLP-16 for `--duration` s and for twice that, without
assets and furnished from a catalogue of the three (CoACD's parts cached by a short run
first, the files as the catalogue reads them hashing apart from the meshes above): the
difference per frame is each world's frame cost (start-up cancels out), compared in one run.

Usage: python benchmarks/mesh_assets.py [--duration 3] [--seed 4] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import trimesh

OVERRIDES = [
    "people.count=0",
    "flying_objects.count=0",
    "sensors.cam0.width=320",
    "sensors.cam0.height=240",
    "sensors.lidar0.kind=lidar",
    "sensors.lidar0.model=vlp-16",
]
CATALOGUE = """\
assets:
  - {file: pipe.stl, class: box, count: 2}
  - {file: torus.ply, class: box, count: 2}
  - {file: chair.obj, class: chair, count: 2}
"""


def meshes() -> dict[str, trimesh.Trimesh]:
    """The three test meshes, in metres, z up, resting on z = 0."""
    pipe = trimesh.creation.annulus(r_min=0.15, r_max=0.2, height=0.8)  # a tube stood upright
    torus = trimesh.creation.torus(major_radius=0.35, minor_radius=0.08)
    legs = [trimesh.creation.box((0.04, 0.04, 0.43)) for _ in range(4)]
    for leg, (x, y) in zip(legs, [(-0.2, -0.2), (-0.2, 0.2), (0.2, -0.2), (0.2, 0.2)], strict=True):
        leg.apply_translation((x, y, 0.215))
    seat = trimesh.creation.box((0.45, 0.45, 0.05))
    seat.apply_translation((0, 0, 0.455))
    back = trimesh.creation.box((0.05, 0.45, 0.45))
    back.apply_translation((-0.2, 0, 0.7))
    chair = trimesh.util.concatenate([*legs, seat, back])
    out = {"pipe.stl": pipe, "torus.ply": torus, "chair.obj": chair}
    for mesh in out.values():
        mesh.apply_translation((0, 0, -mesh.bounds[0][2]))
    return out


def coacd_times(folder: Path) -> dict[str, dict]:
    """Per mesh: CoACD's parts and seconds cold, then the cached call's seconds."""
    from twinsim.meshdata import MeshData
    from twinsim.scene.assets.catalogue import CollisionConfig
    from twinsim.scene.assets.collision import collision_parts

    results = {}
    for name, mesh in meshes().items():
        data = MeshData(
            vertices=np.asarray(mesh.vertices, float),
            faces=np.asarray(mesh.faces, np.int32),
            base_rgba=np.array([0.6, 0.6, 0.6, 1.0]),
            parts=(),
        )
        timings = []
        for _ in range(2):
            t0 = time.perf_counter()
            collision = collision_parts(data, CollisionConfig())
            timings.append(time.perf_counter() - t0)
        results[name] = {
            "method": collision.method,
            "parts": len(collision.parts),
            "cold_s": timings[0],
            "cached_s": timings[1],
            "note": collision.note,
        }
    return results


def frame_cost(folder: Path, seconds: float, seed: int) -> dict:
    """Recording seconds per camera frame of the tiny world without and with the catalogue:
    runs of `seconds` and twice that, the difference per frame (start-up cancels out), and
    the start-up each pays."""
    from twinsim.config import load_config
    from twinsim.sequence import open_sequence
    from twinsim.sim import run

    catalogue = folder / "catalogue"
    catalogue.mkdir()
    for name, mesh in meshes().items():
        mesh.export(catalogue / name)
    (catalogue / "assets.yaml").write_text(CATALOGUE, encoding="utf-8")
    furnished = [f"scene.assets=[{catalogue}]"]
    warm = load_config("tiny", [*OVERRIDES, *furnished], seed=seed, duration_s=0.2)
    run(warm, folder / "warm-up")  # CoACD cuts the catalogue's meshes (as read) into the cache
    costs = {}
    for label, extra in (("primitives", []), ("furnished", furnished)):
        walls, frames = [], []
        for seconds_run in (seconds, 2 * seconds):  # the difference cancels the start-up
            cfg = load_config("tiny", [*OVERRIDES, *extra], seed=seed, duration_s=seconds_run)
            t0 = time.perf_counter()
            path = run(cfg, folder / f"{label}_{seconds_run:g}")
            walls.append(time.perf_counter() - t0)
            seq = open_sequence(path)
            frames.append(len(seq.camera("cam0")))
        costs[label] = {
            "wall_s": walls,
            "frames": frames,
            "s_per_frame": (walls[1] - walls[0]) / (frames[1] - frames[0]),
            "start_up_s": walls[0] - frames[0] * (walls[1] - walls[0]) / (frames[1] - frames[0]),
            "assets": len(seq.scene.mesh_assets),
        }
    costs["ratio"] = costs["furnished"]["s_per_frame"] / costs["primitives"]["s_per_frame"]
    return costs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=3.0)
    parser.add_argument("--seed", type=int, default=4)
    parser.add_argument(
        "--json", type=Path, default=Path(__file__).parent / "results" / "mesh_assets.json"
    )
    args = parser.parse_args()
    from twinsim.engine.backend import configure_backend

    configure_backend("auto")
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["TWINSIM_CACHE_DIR"] = str(Path(tmp) / "cache")
        coacd = coacd_times(Path(tmp))
        for name, r in coacd.items():
            print(
                f"{name}: {r['method']} {r['parts']} parts, cold {r['cold_s']:.2f} s, "
                f"cached {1000 * r['cached_s']:.1f} ms" + (f" ({r['note']})" if r["note"] else "")
            )
        frames = frame_cost(Path(tmp), args.duration, args.seed)
    print(
        f"frame cost furnished / primitives: {frames['ratio']:.2f} "
        f"({1000 * frames['furnished']['s_per_frame']:.1f} vs "
        f"{1000 * frames['primitives']['s_per_frame']:.1f} ms a frame; start-up "
        f"{frames['furnished']['start_up_s']:.1f} vs {frames['primitives']['start_up_s']:.1f} s; "
        f"{frames['furnished']['assets']} assets)"
    )
    args.json.parent.mkdir(parents=True, exist_ok=True)
    report = {"coacd": coacd, "frame_cost": frames, "seed": args.seed}
    args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"written to {args.json}")


if __name__ == "__main__":
    main()
