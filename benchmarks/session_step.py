"""What an in-process closed-loop step costs, against raw MuJoCo and against a scripted run.

The tiny world with an omni robot. Without rendering (an IMU only, nothing recorded): the
physics steps per second of `Session.step` against `mujoco.mj_step` on the same compiled model
(issue 15's target: a ratio ≥ 0.8). With a 640×480 RGB-D camera at 30 Hz, recording: the time
per camera frame of a closed-loop episode against the same seconds recorded by a scripted run
(`twinsim.sim.record`), the full-ground-truth frame cost.

Usage: python benchmarks/session_step.py [--seconds 5] [--repeats 3] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path

import yaml

from twinsim import Session
from twinsim.assemble import build_scene
from twinsim.config import load_config
from twinsim.engine.backend import configure_backend
from twinsim.sim import record

#: robots.robot.sensors: an IMU only (a preset's sensors are merged into `sensors:` overrides)
IMU_ONLY = {
    "extends": "tiny",
    "robots": {"robot": {"kind": "omni", "sensors": {"imu0": {"kind": "imu"}}}},
}
RGBD = {
    "extends": "tiny",
    "robots": {
        "robot": {
            "kind": "omni",
            "sensors": {
                "cam0": {"kind": "camera", "width": 640, "height": 480},
                "imu0": {"kind": "imu"},
            },
        }
    },
}
COMMAND = {"velocity": {"vx": 0.2, "wz": 0.1}}


def _config(data: dict, seconds: float, folder: Path):
    """The tiny world with an omni robot carrying the rig `data` names, for `seconds`."""
    path = folder / f"rig-{len(list(folder.iterdir()))}.yaml"
    path.write_text(yaml.safe_dump(data))
    cfg = load_config(str(path), duration_s=seconds)
    configure_backend(cfg.render.backend)
    return cfg


def raw_steps_per_s(cfg, steps: int) -> float:
    """`mj_step` alone on the model of the session's world (controls held at zero)."""
    import mujoco  # after twinsim chose the OpenGL backend (MUJOCO_GL is read on import)

    from twinsim.engine.world import World

    world = World(build_scene(cfg, live=True), cfg.render, cfg.sim.physics_hz)
    try:
        t0 = time.perf_counter()
        for _ in range(steps):
            mujoco.mj_step(world.model, world.data)
        return steps / (time.perf_counter() - t0)
    finally:
        world.close()


def session_seconds(cfg, out: Path | None) -> tuple[float, int]:
    """Wall time of the episode's steps after `reset` and the physics steps they ran."""
    with Session(cfg, out, record=out is not None) as session:
        obs = session.reset(seed=0)
        first = obs.step
        t0 = time.perf_counter()
        while not obs.done:
            obs = session.step(COMMAND)
        return time.perf_counter() - t0, obs.step - first


def scripted_seconds(cfg, out: Path) -> float:
    """Wall time of a scripted run of the same world and duration (planning excluded)."""
    scene = build_scene(cfg)
    t0 = time.perf_counter()
    record(scene, cfg, out)
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--repeats", type=int, default=3, help="no-rendering runs, best kept")
    parser.add_argument(
        "--json", type=Path, default=Path(__file__).parent / "results" / "session_step.json"
    )
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp())
    plain = _config(IMU_ONLY, args.seconds, scratch)
    # the best of a few episodes, as of a few raw runs: a shared machine's noise only slows
    runs = [session_seconds(plain, None) for _ in range(args.repeats)]
    session_rate = max(steps / wall for wall, steps in runs)
    raw_rate = max(raw_steps_per_s(plain, runs[0][1]) for _ in range(args.repeats))
    rgbd = _config(RGBD, args.seconds, scratch)
    live_s, _ = session_seconds(rgbd, scratch / "live")
    scripted_s = scripted_seconds(rgbd, scratch / "scripted")
    frames = round(args.seconds * 30)
    report = {
        "world": "tiny, omni",
        "seconds": args.seconds,
        "repeats": args.repeats,
        "no_rendering": {
            "session_physics_steps_per_s": session_rate,
            "raw_mj_step_per_s": raw_rate,
            "ratio": session_rate / raw_rate,
            # what a physics step costs beyond MuJoCo's: controller, recorder tap, observations
            "python_us_per_physics_step": 1e6 / session_rate - 1e6 / raw_rate,
        },
        "rgbd_640x480_recording": {
            "closed_loop_ms_per_frame": 1e3 * live_s / frames,
            "scripted_ms_per_frame": 1e3 * scripted_s / frames,
            "ratio": scripted_s / live_s,
        },
    }
    shutil.rmtree(scratch)
    print(
        f"no rendering: Session {session_rate:.0f} physics steps/s, raw mj_step "
        f"{raw_rate:.0f}/s, ratio {session_rate / raw_rate:.2f} "
        f"({1e6 / session_rate - 1e6 / raw_rate:.1f} us of Python per physics step)"
    )
    print(
        f"640x480 RGB-D, recording: closed loop {1e3 * live_s / frames:.1f} ms/frame, scripted "
        f"{1e3 * scripted_s / frames:.1f} ms/frame, ratio {scripted_s / live_s:.2f}"
    )
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2) + "\n")
    print(f"written to {args.json}")


if __name__ == "__main__":
    main()
