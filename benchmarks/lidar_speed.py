"""LiDAR simulation speed: an HDL-32E at 10 Hz in the static apartment (`S`), points/s vs real time.

Measured in one run: sweeps of the `hdl-32e` preset (32 beams × 2170 columns, 24 sectors per
sweep at 240 Hz physics) cast along the planned flight of the default world, static and with
10 people and 5 flying objects, each sector at its own instant (robot pose and actors posed
at that step), as `twinsim run` does. Only the LiDAR's own work is timed (ray casting, labels,
intensity, assembling the scan); the world's kinematics between sectors is not, nor building
the caster's models and BVH (`setup_seconds`, once per scanner). The casters of
`twinsim.engine.rays` take turns at every sector (the same world state; load drift on a shared
machine hits them alike): `embree` (the one `twinsim run` uses: static boxes in Embree, curved
objects and actors in their own MuJoCo models) with 1 worker thread (its default) and with 2,
the former `split` (the static world in `mj_multiRay`) and the reference `whole` (one
`mj_multiRay` into the world model) with 1. Reported:
- wall-clock points/s, as measured on this (2-core) machine, and the best of the `embree` runs
  against the target (on a shared machine this depends on its load, recorded);
- CPU points/s: points per CPU-second the process used, and the two-worker CPU efficiency
  (CPU points/s with 2 workers over 1: what threading costs);
- the real-time factor: points/s over the real sensor's (21 700 columns/s × 32 beams =
  694 400 points/s), so > 1 means faster than the sensor; the target is ≥ 700 000 points/s;
- agreement with `whole`, ray by ray (untimed, same rays and state): the fraction of rays with
  the same geom id (or both missing), the largest distance and normal differences where the
  ids agree, and the largest distance difference where they do not;
- per sector, the time of the caster alone and of the scanner's other work (labels,
  intensity, assembling), from the 1-worker `embree` runs.

Usage: python benchmarks/lidar_speed.py [--seed 0] [--sweeps 20] [--json PATH]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import time
from pathlib import Path

import numpy as np

REAL_POINTS_PER_S = 21_700 * 32
TARGET_POINTS_PER_S = 700_000
MAX_RANGE_M = 120.0

WORLDS = {"static": [], "dynamic": ["people.count=10", "flying_objects.count=5"]}
CASTERS = (("embree", 1), ("embree", 2), ("split", 1), ("whole", 1))  # (caster, threads)


def _world(seed: int, overrides: list[str]):
    from twinsim.config import load_config
    from twinsim.engine.backend import configure_backend
    from twinsim.sim import build_scene

    overrides = [*overrides, "lidars.lidar0.model=hdl-32e"]
    cfg = load_config("S", overrides, seed=seed, duration_s=30.0)
    configure_backend(cfg.render.backend)
    from twinsim.engine.world import World

    scene = build_scene(cfg)
    return scene, World(scene, cfg.render, cfg.sim.physics_hz)


class _Agreement:
    """Ray-by-ray comparison of one caster with the `whole` reference."""

    def __init__(self) -> None:
        self.rays = self.same = 0
        self.dist = self.normal = self.other_dist = 0.0

    def add(self, got: tuple, want: tuple) -> None:
        geom, dist, normal = got
        w_geom, w_dist, w_normal = want
        same = geom == w_geom
        hit = same & (geom >= 0)
        self.rays += len(geom)
        self.same += int(same.sum())
        if hit.any():
            self.dist = max(self.dist, float(np.abs(dist[hit] - w_dist[hit]).max()))
            self.normal = max(self.normal, float(np.abs(normal[hit] - w_normal[hit]).max()))
        if (~same).any():
            self.other_dist = max(self.other_dist, float(np.abs(dist[~same] - w_dist[~same]).max()))

    def report(self) -> dict:
        return {
            "rays": self.rays,
            "same_geom_fraction": self.same / self.rays,
            "rays_with_other_geom": self.rays - self.same,
            "max_distance_diff_same_geom_m": self.dist,
            "max_normal_diff_same_geom": self.normal,
            "max_distance_diff_other_geom_m": self.other_dist,
        }


def _measure(scene, world, sweeps: int) -> tuple[list[dict], dict, float]:
    """Cast `sweeps` sweeps along the flight with every scanner of `CASTERS` in turn at each
    sector; the runs (seconds, points, digest), the agreement of the `embree` and `split`
    casters with `whole`, and the seconds the 1-worker `embree` caster spent alone."""
    from twinsim.engine.rays import RayCaster, split_world
    from twinsim.geometry import pose_to_T
    from twinsim.model.trajectory import Trajectory
    from twinsim.robots.drone.spec import pose_to_qpos
    from twinsim.sensors.lidar import LidarScanner, beam_directions, sector_bounds

    sensor = next(s for s in scene.sensors if s.type == "lidar")
    steps = 240 // sensor.rate_hz
    runs, scanners = [], []
    for caster, workers in CASTERS:
        t0 = time.perf_counter()
        scanners.append(LidarScanner(world.robot(), sensor, steps, workers, caster))
        setup = time.perf_counter() - t0
        runs.append(
            {"caster": caster, "workers": workers, "setup_seconds": setup, "seconds": 0.0}
            | {"cpu_seconds": 0.0, "points": 0, "digest": hashlib.sha256()}
        )
    parts = split_world(world)
    casters = {
        "embree": RayCaster(world.model, world.robot().body_id, 1, parts),
        "split": RayCaster(world.model, world.robot().body_id, 1, parts, boxes=False),
        "whole": RayCaster(world.model, world.robot().body_id, 1),
    }
    agreement = {"embree": _Agreement(), "split": _Agreement()}
    cast_seconds = 0.0
    dirs = beam_directions(sensor.lidar).reshape(-1, 3)
    bounds = sector_bounds(sensor.lidar.columns, steps) * len(sensor.lidar.elevations_deg)
    traj = Trajectory.from_path_points(scene.robot.path)
    T_body_lidar = pose_to_T(sensor.pos, sensor.quat)
    try:
        for i in range(sweeps):
            for s in range(steps):
                t = 1.0 + (i * steps + s) / 240
                ref = traj.reference(t)
                world.robot().set_state(pose_to_qpos(ref.pos, ref.yaw), np.zeros(6))
                world.pose_actors(t)
                world.step_begin()
                T = world.robot().T_world_body() @ T_body_lidar
                for run, scanner in zip(runs, scanners, strict=True):
                    t0, c0 = time.perf_counter(), time.process_time()
                    if s == 0:
                        scanner.begin(i, 0, T)
                    scanner.cast_sector(s, s, T)
                    scan = scanner.finish() if s == steps - 1 else None
                    run["seconds"] += time.perf_counter() - t0
                    run["cpu_seconds"] += time.process_time() - c0
                    if scan is not None:
                        run["points"] += len(scan)
                        for field in (scan.instance, scan.range, scan.intensity):
                            run["digest"].update(field.tobytes())
                sector_dirs = dirs[bounds[s] : bounds[s + 1]] @ T[:3, :3].T
                t0 = time.perf_counter()
                got = casters["embree"].cast(world.data, T[:3, 3], sector_dirs, MAX_RANGE_M)
                cast_seconds += time.perf_counter() - t0
                want = casters["whole"].cast(world.data, T[:3, 3], sector_dirs, MAX_RANGE_M)
                agreement["embree"].add(got, want)
                split = casters["split"].cast(world.data, T[:3, 3], sector_dirs, MAX_RANGE_M)
                agreement["split"].add(split, want)
    finally:
        for closable in (*scanners, *casters.values()):
            closable.close()
    rays = sweeps * sensor.lidar.columns * len(sensor.lidar.elevations_deg)
    for run in runs:
        points, spent = run["points"], run["seconds"]
        run.update(
            sweeps=sweeps,
            rays=rays,
            points_sha256=run.pop("digest").hexdigest(),
            points_per_s=points / spent,
            cpu_points_per_s=points / run["cpu_seconds"],
            real_time_factor=points / spent / REAL_POINTS_PER_S,
            sweep_ms=1000 * spent / sweeps,
        )
    return runs, {k: a.report() for k, a in agreement.items()}, cast_seconds


def _measure_world(seed: int, overrides: list[str], sweeps: int) -> dict:
    scene, world = _world(seed, overrides)
    try:
        runs, agreement, cast_seconds = _measure(scene, world, sweeps)
    finally:
        world.close()
    one, two, split, whole = runs
    sectors = sweeps * 240 // next(s for s in scene.sensors if s.type == "lidar").rate_hz
    best_wall = max(one["points_per_s"], two["points_per_s"])
    return {
        "geoms": int(world.model.ngeom),
        "runs": runs,
        "agreement_with_whole": agreement,
        "embree_and_whole_points_identical": one["points_sha256"] == whole["points_sha256"],
        "split_and_whole_points_identical": split["points_sha256"] == whole["points_sha256"],
        "embree_over_split_cpu": one["cpu_points_per_s"] / split["cpu_points_per_s"],
        "embree_over_whole_cpu": one["cpu_points_per_s"] / whole["cpu_points_per_s"],
        "cast_ms_per_sector": 1000 * cast_seconds / sectors,
        "other_ms_per_sector": 1000 * (one["seconds"] - cast_seconds) / sectors,
        "cpu_points_per_s_one_worker": one["cpu_points_per_s"],
        "two_worker_cpu_efficiency": two["cpu_points_per_s"] / one["cpu_points_per_s"],
        "best_wall_points_per_s": best_wall,
        "best_real_time_factor": best_wall / REAL_POINTS_PER_S,
        "meets_target": best_wall >= TARGET_POINTS_PER_S,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sweeps", type=int, default=20)
    parser.add_argument("--json", type=Path, default=Path("benchmarks/results/lidar_speed.json"))
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    t0 = time.perf_counter()
    worlds = {name: _measure_world(args.seed, o, args.sweeps) for name, o in WORLDS.items()}
    result = {
        "sensor": "hdl-32e, 10 Hz, 32 beams x 2170 columns, 24 sectors per sweep",
        "world": f"default apartment, seed {args.seed}; dynamic: 10 people, 5 flying objects",
        "cpu_count": os.cpu_count(),
        "load_average_1min": [load_before, os.getloadavg()[0]],
        "benchmark_seconds": time.perf_counter() - t0,
        "python": platform.python_version(),
        "real_sensor_points_per_s": REAL_POINTS_PER_S,
        "target_points_per_s": TARGET_POINTS_PER_S,
        "worlds": worlds,
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
