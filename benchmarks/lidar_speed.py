"""LiDAR simulation speed: an HDL-32E at 10 Hz in the default apartment, points/s vs real time.

Measured in one run: sweeps of the `hdl-32e` preset (32 beams × 2170 columns, 24 sectors per
sweep at 240 Hz physics) cast along the planned flight of the default world, static and with
10 people and 5 flying objects, each sector at its own instant (robot pose and actors posed
at that step), as `twinsim run` does. Only the LiDAR's own work is timed (ray casting, labels,
intensity, assembling the scan); the world's kinematics between sectors is not, nor building
the caster's models (`setup_seconds`, once per scanner). Three casters take turns at every
sector (the same world state; load drift on a shared machine hits them alike): the one
`twinsim run` uses (`split`: every ray into the static world, rays near an actor into that
actor's own model, the nearer hit kept; see `twinsim.engine.rays`) with 1 worker thread and
with 2 (MuJoCo releases the GIL while casting), and the former one (`whole`: every ray into the
whole world model) with 1, for `split_over_whole_cpu` and a check that their points (instance,
range, intensity) are byte-identical. Reported:
- wall-clock points/s, as measured (on a shared machine this depends on its load, recorded);
- CPU points/s: points per CPU-second the process used, i.e. the speed of one unshared core,
  and `two_idle_cores_points_per_s` = one core's CPU points/s × 2 × the two-worker efficiency
  (CPU points/s with 2 workers over 1: what threading costs) — an estimate, not a measurement;
- the real-time factor: points/s over the real sensor's (21 700 columns/s × 32 beams =
  694 400 points/s), so > 1 means faster than the sensor; the target is ≥ 700 000 points/s.

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


WORLDS = {"static": [], "dynamic": ["people.count=10", "flying_objects.count=5"]}


def _world(seed: int, overrides: list[str]):
    from twinsim.config import load_config
    from twinsim.engine.backend import configure_backend
    from twinsim.sim import build_scene

    overrides = [*overrides, "lidars.lidar0.model=hdl-32e"]
    cfg = load_config("default", overrides, seed=seed, duration_s=30.0)
    configure_backend(cfg.render.backend)
    from twinsim.engine.world import World

    scene = build_scene(cfg)
    return scene, World(scene, cfg.render, cfg.sim.physics_hz)


CASTERS = (("split", 1), ("split", 2), ("whole", 1))  # (caster, worker threads)


def _measure(scene, world, sweeps: int) -> list[dict]:
    """Cast `sweeps` sweeps along the flight with every caster of `CASTERS`, in turn at each
    sector (the same world state, and the machine's load shared alike); seconds spent in the
    LiDAR, points returned, a digest of them."""
    from twinsim.geometry import pose_to_T
    from twinsim.robots.drone import pose_to_qpos
    from twinsim.robots.trajectory import Trajectory
    from twinsim.sensors.lidar import LidarScanner

    sensor = next(s for s in scene.sensors if s.type == "lidar")
    steps = 240 // sensor.rate_hz
    runs, scanners = [], []
    for caster, workers in CASTERS:
        t0 = time.perf_counter()
        scanners.append(LidarScanner(world, sensor, steps, workers, split=caster == "split"))
        setup = time.perf_counter() - t0
        runs.append(
            {"caster": caster, "workers": workers, "setup_seconds": setup, "seconds": 0.0}
            | {"cpu_seconds": 0.0, "points": 0, "digest": hashlib.sha256()}
        )
    traj = Trajectory.from_path_points(scene.robot.path)
    T_body_lidar = pose_to_T(sensor.pos, sensor.quat)
    try:
        for i in range(sweeps):
            for s in range(steps):
                t = 1.0 + (i * steps + s) / 240
                ref = traj.reference(t)
                world.set_robot_state(pose_to_qpos(ref.pos, ref.yaw), np.zeros(6))
                world.pose_actors(t)
                world.step_begin()
                T = world.T_world_body() @ T_body_lidar
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
    finally:
        for scanner in scanners:
            scanner.close()
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
    return runs


def _measure_world(seed: int, overrides: list[str], sweeps: int) -> dict:
    scene, world = _world(seed, overrides)
    try:
        one, two, whole = _measure(scene, world, sweeps)
    finally:
        world.close()
    # how much CPU time per point the second worker thread costs (1.0 = none)
    efficiency = min(1.0, two["cpu_points_per_s"] / one["cpu_points_per_s"])
    estimate = one["cpu_points_per_s"] * 2 * efficiency
    return {
        "geoms": int(world.model.ngeom),
        "runs": [one, two, whole],
        "split_over_whole_cpu": one["cpu_points_per_s"] / whole["cpu_points_per_s"],
        "split_and_whole_points_identical": one["points_sha256"] == whole["points_sha256"],
        "best_wall_points_per_s": max(one["points_per_s"], two["points_per_s"]),
        "cpu_points_per_s_one_core": one["cpu_points_per_s"],
        "two_worker_cpu_efficiency": efficiency,
        "two_idle_cores_points_per_s": estimate,
        "two_idle_cores_real_time_factor": estimate / REAL_POINTS_PER_S,
        "meets_target_on_two_idle_cores": estimate >= TARGET_POINTS_PER_S,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sweeps", type=int, default=20)
    parser.add_argument("--json", type=Path, default=Path("benchmarks/results/lidar_speed.json"))
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    worlds = {name: _measure_world(args.seed, o, args.sweeps) for name, o in WORLDS.items()}
    result = {
        "sensor": "hdl-32e, 10 Hz, 32 beams x 2170 columns, 24 sectors per sweep",
        "world": f"default apartment, seed {args.seed}; dynamic: 10 people, 5 flying objects",
        "cpu_count": os.cpu_count(),
        "load_average_1min": [load_before, os.getloadavg()[0]],
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
