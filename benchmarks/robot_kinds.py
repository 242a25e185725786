"""What each robot kind costs in the static apartment (`S`), and how far a wheel odometry drifts.

Measured in one run, each figure in its own process (world generation excluded):
- physics-only real-time factor: the controller and MuJoCo stepping the world (people and
  flying objects posed, nothing rendered or written) for `--physics` seconds, as steps per
  second over `physics_hz` (240);
- full-ground-truth frame cost: `record` of the kind's run with the default preset's sensors
  (640×480 RGB-D camera at 30 Hz, IMU at 240 Hz; the wheel odometry too for a diff_drive) for
  `--record` seconds, per camera frame, and its ratio to the drone's;
- wheel odometry drift: a diff_drive's 60 s tour with only its wheel odometry recorded; the
  dead-reckoned pose against the ground truth at the end, and the path length.

Every kind the registry has that records from `robot.kind=<kind>` alone is measured (a kind
that needs a file, as `mjcf`, is left out).

Usage: python benchmarks/robot_kinds.py [--physics 10] [--record 5] [--drift 60] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

_CHILD = """
import json, shutil, sys, tempfile, time
from pathlib import Path
import numpy as np
import twinsim
from twinsim.config import load_config
from twinsim.engine.backend import configure_backend
from twinsim.registries import ROBOTS
from twinsim.sim import build_scene, record

kind, mode, duration, scratch = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
overrides = [f"robot.kind={kind}", *json.loads(sys.argv[5])]
if mode == "drift":
    overrides = [f"robot.kind={kind}", "sensors.cam0.rate_hz=1", "sensors.cam0.width=32",
                 "sensors.cam0.height=24", "sensors.wheel_odom.kind=wheel_odometry"]
cfg = load_config("S", overrides, seed=0, duration_s=duration)
scene = build_scene(cfg)
result = {}
if mode == "physics":
    configure_backend(cfg.render.backend)
    from twinsim.engine.world import World
    hz = cfg.sim.physics_hz
    world = World(scene, cfg.render, hz)
    drives = []
    for robot in scene.robots:
        spec, view = ROBOTS.get(robot.kind), world.robot(robot.name)
        view.set_state(*spec.initial_state(robot))
        drives.append((view, spec.controller(robot, hz)))
    steps = round(duration * hz)
    t0 = time.perf_counter()
    for k in range(steps):
        world.pose_actors(k / hz, observed=False)
        world.step_begin()
        for view, controller in drives:
            q, qd = view.qpos(), view.qvel()
            view.set_ctrl(controller.effort(controller.setpoint(k / hz, q, qd), q, qd))
        world.step_end()
    wall = time.perf_counter() - t0
    world.close()
    result = {"steps_per_s": steps / wall, "real_time_factor": steps / wall / hz}
else:
    root = Path(tempfile.mkdtemp(dir=scratch))
    t0 = time.perf_counter()
    seq_path = record(scene, cfg, root / "seq")
    wall = time.perf_counter() - t0
    from twinsim.sequence import open_sequence
    seq = open_sequence(seq_path)
    frames = seq.metadata["streams"]["cam0"]["count"]
    result = {"record_s": wall, "frames": frames, "ms_per_frame": 1e3 * wall / frames}
    if mode == "drift":
        odom = seq.table("wheel_odom")
        t_ns, T = seq.groundtruth()
        i = np.searchsorted(t_ns, odom["t_ns"][-1])
        truth = T[i, :2, 3]
        est = np.array([odom["x"][-1], odom["y"][-1]])
        path = np.sum(np.linalg.norm(np.diff(T[:, :2, 3], axis=0), axis=1))
        yaw = np.unwrap(np.arctan2(T[:, 1, 0], T[:, 0, 0]))
        result |= {
            "duration_s": duration,
            "path_m": float(path),
            "position_error_m": float(np.linalg.norm(est - truth)),
            "position_error_pct_of_path": float(100 * np.linalg.norm(est - truth) / path),
            "heading_error_deg": float(np.degrees(odom["yaw"][-1] - yaw[i])),
        }
    shutil.rmtree(root)
print(json.dumps(result))
"""

#: kinds recorded from `robot.kind=<kind>` alone, in the order the table shows
KINDS = ("drone", "omni", "diff_drive", "quadruped", "arm")
#: the arm's default 120° scan needs ~16 s: a 60° arc at twice the joint speed fits short runs
EXTRA = {"arm": ["robot.arc_span_deg=60", "robot.max_joint_speed_dps=120"]}


def _child(kind: str, mode: str, duration: float, scratch: str) -> dict:
    extra = json.dumps(EXTRA.get(kind, []))
    cmd = [sys.executable, "-c", _CHILD, kind, mode, str(duration), scratch, extra]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _registered() -> list[str]:
    from twinsim.registries import ROBOTS

    return [k for k in KINDS if k in ROBOTS]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--physics", type=float, default=10.0)
    parser.add_argument("--record", type=float, default=5.0)
    parser.add_argument("--drift", type=float, default=60.0)
    parser.add_argument(
        "--json", type=Path, default=Path(__file__).parent / "results" / "robot_kinds.json"
    )
    args = parser.parse_args()
    scratch = "/dev/shm" if Path("/dev/shm").is_dir() else "/tmp"
    kinds: dict[str, dict] = {}
    for kind in _registered():
        physics = _child(kind, "physics", args.physics, scratch)
        recorded = _child(kind, "record", args.record, scratch)
        kinds[kind] = {"physics": physics, "record": recorded}
        print(
            f"{kind:>10}: physics x{physics['real_time_factor']:.1f} real time, "
            f"{recorded['ms_per_frame']:.1f} ms a recorded frame",
            flush=True,
        )
    drone_ms = kinds["drone"]["record"]["ms_per_frame"]
    for entry in kinds.values():
        entry["frame_cost_over_drone"] = entry["record"]["ms_per_frame"] / drone_ms
    drift = _child("diff_drive", "drift", args.drift, scratch)
    print(
        f"diff_drive wheel odometry after {args.drift:.0f} s: "
        f"{drift['position_error_m']:.3f} m over {drift['path_m']:.1f} m "
        f"({drift['position_error_pct_of_path']:.2f} %), "
        f"heading {drift['heading_error_deg']:.2f} deg"
    )
    result = {
        "physics_s": args.physics,
        "record_s": args.record,
        "kinds": kinds,
        "wheel_odometry_drift": drift,
    }
    args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
