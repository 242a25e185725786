"""Scale of the outdoor worlds: full-GT frame cost in a city with traffic, and the LiDAR's speed.

Measured in one run, on the `carla_loc` preset's `mid_city` (its car, its route, its rig):
- frame cost: one full-ground-truth frame per camera (colour + depth pass, segmentation pass,
  read back, metric depth and geom ids, the sky outdoors: `CameraRenderer.render`), at poses
  of the car's planned drive with every actor posed at that instant, for the city with 200
  vehicles and 50 walkers (`dense`), the same city, route and rig with the traffic taken out
  (`empty`), and the indoor default world (the drone's apartment, `indoor`) at the poses of
  its flight; each at 640x480 mono (the left camera at that size) and 1280x720 stereo
  (CARLA-Loc's pair; indoors the one camera twice). The dense city is also drawn without
  view culling (`dense_unculled`: what raw MuJoCo draws) for the gain of culling. Ratios are
  within this run.
- LiDAR: CARLA-Loc's HDL-32E (`carla-hdl-32e`, 20 Hz, 10 sectors a turn at 200 Hz physics)
  swept along the drive in the dense city, each sector at its own instant; only the LiDAR's
  own work is timed (casting, labels, intensity, assembling). points/s against the real
  sensor's 1 329 920 (real-time factor; target >= 1.0).

Usage: python benchmarks/town_scale.py [--seed 0] [--poses 12] [--sweeps 10] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import numpy as np

REAL_POINTS_PER_S = 41_563 * 32
TRAFFIC = ["traffic.vehicles=200", "traffic.walkers=50"]
RIGS = {"mono_640x480": ((640, 480), 1), "stereo_1280x720": ((1280, 720), 2)}


def _world(preset: str, overrides: list[str], seed: int, empty: bool = False):
    """The scene and running world of a preset; `empty`: the same scene without its actors."""
    from twinsim.config import load_config
    from twinsim.engine.backend import configure_backend
    from twinsim.sim import build_scene

    cfg = load_config(preset, overrides, seed=seed, duration_s=20.0)
    configure_backend(cfg.render.backend)
    from twinsim.engine.world import World

    scene = build_scene(cfg)
    if empty:
        scene = scene.model_copy(update={"people": (), "flying_objects": ()})
    return scene, World(scene, cfg.render, cfg.sim.physics_hz), cfg


def _pose_robot(world, scene, point) -> None:
    """Put the robot at a planned path point (a drone hovers; a car stands on its joints)."""
    if scene.robot.kind == "drone":
        from twinsim.robots.drone.spec import pose_to_qpos

        velocity = np.zeros(6)  # a free joint
    else:
        from twinsim.robots.omni.spec import pose_to_qpos

        velocity = np.zeros(3)  # planar joints x, y, yaw
    world.robot().set_state(pose_to_qpos(point.pos, point.yaw), velocity)


def _frame_costs(scene, world, poses: int, culled: bool = True) -> dict[str, float]:
    """Milliseconds per rig frame (every camera of the rig, full GT) at `poses` path points."""
    from twinsim.engine.render import CameraRenderer
    from twinsim.scene.sky import sky_level

    sky = sky_level(scene)
    cams = [s.name for s in scene.sensors if s.type == "camera"]
    path = scene.robot.path
    points = [path[int(i)] for i in np.linspace(0, len(path) - 1, poses)]
    costs = {}
    for rig, ((w, h), count) in RIGS.items():
        names = (cams * 2)[:count] if len(cams) < count else cams[:count]
        renderers = [
            CameraRenderer(
                world.model, n, w, h, culling=world.culling if culled else None, sky_level=sky
            )
            for n in names
        ]
        spent = []
        try:
            for point in points:
                world.pose_actors(1.0 + point.t_s)
                _pose_robot(world, scene, point)
                t0 = time.perf_counter()
                for r in renderers:
                    r.render(world.data)
                spent.append(time.perf_counter() - t0)
        finally:
            for r in renderers:
                r.close()
        costs[rig] = 1000 * float(np.mean(sorted(spent)[1:]))  # the first uploads textures
    return costs


def _lidar(scene, world, sweeps: int) -> dict:
    """CARLA-Loc's HDL-32E swept along the drive: points/s of its own work, real-time factor."""
    from twinsim.geometry import pose_to_T
    from twinsim.sensors.lidar import LidarScanner

    sensor = next(s for s in scene.sensors if s.type == "lidar")
    hz = 200
    steps = hz // sensor.rate_hz
    t0 = time.perf_counter()
    scanner = LidarScanner(world.robot(), sensor, steps)
    setup = time.perf_counter() - t0
    T_body_lidar = pose_to_T(sensor.pos, sensor.quat)
    path = scene.robot.path
    points, spent = 0, 0.0
    try:
        for i in range(sweeps):
            for s in range(steps):
                t = 1.0 + (i * steps + s) / hz
                point = min(path, key=lambda p, t=t: abs(1.0 + p.t_s - t))
                world.pose_actors(t)
                _pose_robot(world, scene, point)
                world.step_begin()
                T = world.robot().T_world_body() @ T_body_lidar
                t1 = time.perf_counter()
                if s == 0:
                    scanner.begin(i, 0, T)
                scanner.cast_sector(s, s, T)
                if s == steps - 1:
                    points += len(scanner.finish())
                spent += time.perf_counter() - t1
    finally:
        scanner.close()
    return {
        "sensor": "carla-hdl-32e: 32 beams x 2078 columns, 20 Hz, 10 sectors a turn",
        "sweeps": sweeps,
        "setup_seconds": setup,
        "points": points,
        "sweep_ms": 1000 * spent / sweeps,
        "points_per_s": points / spent,
        "real_time_factor": points / spent / REAL_POINTS_PER_S,
        "meets_target": points / spent >= REAL_POINTS_PER_S,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--poses", type=int, default=12)
    parser.add_argument("--sweeps", type=int, default=10)
    parser.add_argument(
        "--json", type=Path, default=Path(__file__).parent / "results" / "town_scale.json"
    )
    args = parser.parse_args()
    from twinsim.actors.traffic.in_town import VEHICLE_PREFIX

    load_before, t0 = os.getloadavg()[0], time.perf_counter()
    frames, geoms = {}, {}
    scene, world, _ = _world("carla_loc", TRAFFIC, args.seed)
    try:
        placed = {
            "vehicles": sum(f.name.startswith(VEHICLE_PREFIX) for f in scene.flying_objects),
            "walkers": len(scene.people),
        }
        geoms["dense"] = int(world.model.ngeom)
        frames["dense"] = _frame_costs(scene, world, args.poses)
        frames["dense_unculled"] = _frame_costs(scene, world, args.poses, culled=False)
        lidar = _lidar(scene, world, args.sweeps)
    finally:
        world.close()
    for name, preset, overrides, empty in (
        ("empty", "carla_loc", TRAFFIC, True),
        ("indoor", "default", [], False),
    ):
        scene, world, _ = _world(preset, overrides, args.seed, empty)
        try:
            geoms[name] = int(world.model.ngeom)
            frames[name] = _frame_costs(scene, world, args.poses)
        finally:
            world.close()
    ratios = {
        rig: {
            "dense_over_empty": frames["dense"][rig] / frames["empty"][rig],
            "dense_over_indoor": frames["dense"][rig] / frames["indoor"][rig],
            "unculled_over_culled": frames["dense_unculled"][rig] / frames["dense"][rig],
        }
        for rig in RIGS
    }
    result = {
        "world": f"carla_loc preset (mid_city), seed {args.seed}; indoor: default preset",
        "traffic_placed": placed,
        "geoms": geoms,
        "poses": args.poses,
        "frame_ms": frames,
        "ratios": ratios,
        "lidar": lidar,
        "cpu_count": os.cpu_count(),
        "load_average_1min": [load_before, os.getloadavg()[0]],
        "benchmark_seconds": time.perf_counter() - t0,
        "python": platform.python_version(),
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=1) + "\n")
    for rig in RIGS:
        row = ", ".join(f"{name} {frames[name][rig]:.0f} ms" for name in frames)
        r = ratios[rig]
        print(
            f"{rig}: {row}; dense/empty {r['dense_over_empty']:.2f}, dense/indoor "
            f"{r['dense_over_indoor']:.2f}, unculled/culled {r['unculled_over_culled']:.2f}"
        )
    print(
        f"LiDAR carla-hdl-32e in the dense city: {lidar['points_per_s'] / 1e6:.2f} M points/s, "
        f"real-time factor {lidar['real_time_factor']:.2f}"
    )
    print(f"written to {args.json}")


if __name__ == "__main__":
    main()
