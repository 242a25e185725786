"""How well the quadruped walks its planned tour: a recorded run of the default apartment.

Records `load_config("default", ["robot.kind=quadruped", ...])` (60 s; people and flying
objects left out unless `--with-people`: its tour avoids people who stay in place, but walkers
cross it and may push it, which is not what this measures) and reports from the sequence:
the deviation of the trunk from the planned path (median, max), falls (steps where the trunk
sinks below 60 % of its standing height or tilts past 30 deg; target 0), the lowest trunk
height and largest tilt, contacts of anything but a foot, the distance walked and rooms
entered, and the camera's shake: RMS of the IMU's vertical specific force about its mean and
of its roll and pitch rates, and the frequency at which the trunk bobs. It then times the
physics and the controller alone (the same scene without sensors) for their real-time
factors.

Usage: python benchmarks/quadruped_tracking.py [--duration 60] [--seed 0] [--with-people]
       [--set key=value ...] [--keep DIR] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

from twinsim.config import load_config
from twinsim.engine.backend import configure_backend
from twinsim.model.trajectory import Trajectory
from twinsim.registries import ROBOTS
from twinsim.robots.quadruped.spec import LEGS
from twinsim.sequence import open_sequence, validate_sequence
from twinsim.sim import build_scene, record

FALL_HEIGHT, FALL_TILT_DEG = 0.6, 30.0


def _walk_figures(seq) -> dict:
    """Tracking, falls, contacts and shake of a recorded quadruped run."""
    robot = seq.scene.robot
    t_ns, T = seq.groundtruth()
    ref = Trajectory.from_path_points(robot.path).sample(t_ns / 1e9)
    err = np.hypot(*(T[:, :2, 3] - ref.pos[:, :2]).T)
    state = seq.table("robot_state")
    z, pitch, roll = (state[f"qpos_{j}"] for j in ("z", "pitch", "roll"))
    tilt = np.degrees(np.maximum(np.abs(pitch), np.abs(roll)))
    fallen = (z < FALL_HEIGHT * robot.stand_height_m) | (tilt > FALL_TILT_DEG)
    falls = int(np.count_nonzero(np.diff(np.concatenate([[0], fallen.astype(int)])) == 1))
    records = seq.contacts()
    parts = np.array(seq.metadata["streams"]["contacts"]["parts"])
    classes = np.array(seq.metadata["classes"])
    feet = {f"quad_{leg}_calf" for leg in LEGS}
    stray = ~np.isin(parts[records["part"]], list(feet)) | ~np.isin(
        classes[records["semantic"]], ["floor", "rug"]
    )
    imu = seq.table("imu0")
    hz = seq.metadata["physics_hz"]
    bob = z - z.mean()
    spectrum = np.abs(np.fft.rfft(bob * np.hanning(len(bob))))
    freq = np.fft.rfftfreq(len(bob), d=1.0 / hz)
    band = (freq > 1.0) & (freq < 20.0)
    return {
        "path_deviation_m": {"median": float(np.median(err)), "max": float(err.max())},
        "falls": falls,
        "trunk_height_m": {"min": float(z.min()), "max": float(z.max())},
        "max_tilt_deg": float(tilt.max()),
        "non_foot_contact_records": int(np.count_nonzero(stray)),
        "contact_records": len(records),
        "walked_m": float(np.hypot(*np.diff(T[:, :2, 3], axis=0).T).sum()),
        "rooms_visited": list(robot.rooms_visited),
        "camera_shake": {
            "vertical_specific_force_rms_mps2": float(np.std(imu["accel_z"])),
            "roll_rate_rms_dps": float(np.degrees(np.std(imu["gyro_x"]))),
            "pitch_rate_rms_dps": float(np.degrees(np.std(imu["gyro_y"]))),
            "trunk_bob_rms_mm": float(1e3 * np.std(bob)),
            "trunk_bob_peak_hz": float(freq[band][np.argmax(spectrum[band])]),
            "gait_step_hz": 2.0 / robot.gait_period_s,
        },
    }


def _physics_rtf(cfg, scene) -> dict:
    """Real-time factors of the physics and of the controller alone: the run's scene without
    sensors, the robot driven by its controller, each part timed on its own."""
    configure_backend(cfg.render.backend)
    from twinsim.engine.world import World

    bare = scene.model_copy(update={"sensors": ()})
    world = World(bare, cfg.render, cfg.sim.physics_hz)
    try:
        robot = bare.robots[0]
        kind, view = ROBOTS.get(robot.kind), world.robot(robot.name)
        view.set_state(*kind.initial_state(robot))
        controller = kind.controller(robot, cfg.sim.physics_hz)
        hz = cfg.sim.physics_hz
        steps = round((cfg.sim.bootstrap_s + cfg.sim.duration_s) * hz)
        physics_s = control_s = 0.0
        for k in range(steps):
            t0 = time.perf_counter()
            world.pose_actors(k / hz)
            world.step_begin()
            t1 = time.perf_counter()
            q, qd = view.qpos(), view.qvel()
            view.set_ctrl(controller.effort(controller.setpoint(k / hz, q, qd), q, qd))
            t2 = time.perf_counter()
            world.step_end()
            t3 = time.perf_counter()
            physics_s += (t1 - t0) + (t3 - t2)
            control_s += t2 - t1
    finally:
        world.close()
    sim_s = steps / hz
    return {
        "physics_rtf": sim_s / physics_s,
        "controller_rtf": sim_s / control_s,
        "physics_and_controller_rtf": sim_s / (physics_s + control_s),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=60.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--with-people", action="store_true")
    parser.add_argument("--set", dest="overrides", action="append", default=[])
    parser.add_argument("--keep", type=Path, help="record the sequence here (kept)")
    parser.add_argument(
        "--json",
        "--out",
        type=Path,
        default=Path(__file__).parent / "results" / "quadruped_tracking.json",
    )
    args = parser.parse_args()
    overrides = ["robot.kind=quadruped"]
    if not args.with_people:
        overrides += ["people.count=0", "flying_objects.count=0"]
    cfg = load_config(
        "default", overrides + args.overrides, seed=args.seed, duration_s=args.duration
    )
    scene = build_scene(cfg)
    scratch = None if args.keep else Path(tempfile.mkdtemp())
    out = args.keep or scratch / "seq"
    try:
        t0 = time.perf_counter()
        record(scene, cfg, out)
        record_s = time.perf_counter() - t0
        report = validate_sequence(out)
        figures = _walk_figures(open_sequence(out))
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    result = {
        "duration_s": args.duration,
        "seed": args.seed,
        "overrides": overrides + args.overrides,
        "valid": report.ok,
        "record_s": record_s,
        **figures,
        **_physics_rtf(cfg, scene),
    }
    dev, shake = result["path_deviation_m"], result["camera_shake"]
    print(
        f"deviation from the path: median {100 * dev['median']:.1f} cm, "
        f"max {100 * dev['max']:.1f} cm; falls {result['falls']}; "
        f"trunk {result['trunk_height_m']['min']:.3f}-{result['trunk_height_m']['max']:.3f} m, "
        f"tilt <= {result['max_tilt_deg']:.1f} deg; "
        f"non-foot contacts {result['non_foot_contact_records']}"
    )
    print(
        f"walked {result['walked_m']:.1f} m through rooms {result['rooms_visited']}; "
        f"shake: accel_z RMS {shake['vertical_specific_force_rms_mps2']:.2f} m/s², "
        f"roll/pitch rate RMS {shake['roll_rate_rms_dps']:.1f}/{shake['pitch_rate_rms_dps']:.1f}"
        f" deg/s, bob {shake['trunk_bob_rms_mm']:.1f} mm at {shake['trunk_bob_peak_hz']:.2f} Hz"
    )
    print(
        f"real-time factor: physics {result['physics_rtf']:.0f}x, controller "
        f"{result['controller_rtf']:.1f}x, both {result['physics_and_controller_rtf']:.1f}x; "
        f"recording took {record_s:.0f} s; valid {result['valid']}"
    )
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
