"""The simulation loop: build the world from a config, fly it, and stream every sensor to disk.

Time is the integer physics step k (t_ns = round(k·1e9 / physics_hz)); a sensor with rate r
fires at every step that is a multiple of physics_hz / r. Steps before `bootstrap_s` settle the
world and are not recorded. Everything recorded at step k describes the same instant.
"""

from __future__ import annotations

import platform
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from twinsim._version import __version__
from twinsim.assemble import build_scene
from twinsim.config import TwinsimConfig
from twinsim.engine.backend import configure_backend
from twinsim.recording import StreamRecorder
from twinsim.robots.registry import ROBOTS
from twinsim.scene.spec import SceneSpec
from twinsim.scene.vocabulary import SEMANTIC_CLASSES
from twinsim.sensors.registry import SENSORS
from twinsim.sequence import SequenceWriter

ProgressCallback = Callable[[int, int], None]
__all__ = ["StepRange", "build_metadata", "build_scene", "record", "run", "step_range"]


@dataclass(frozen=True)
class StepRange:
    """The steps of a run: [0, start) bootstrap, [start, end) recorded."""

    start: int
    end: int


def step_range(cfg: TwinsimConfig) -> StepRange:
    hz = cfg.sim.physics_hz
    start = round(cfg.sim.bootstrap_s * hz)
    return StepRange(start, start + round(cfg.sim.duration_s * hz))


def build_metadata(cfg: TwinsimConfig, scene: SceneSpec, steps: StepRange) -> dict:
    """What a reader needs besides the streams: versions, seed, config, sensors, vocabulary."""
    import mujoco

    gt = cfg.groundtruth
    kinds = [(s, SENSORS.get(s.type)) for s in scene.sensors]
    streams: dict[str, dict] = {s.name: kind.metadata(s) for s, kind in kinds}
    streams["groundtruth_body"] = {
        "type": "pose",
        "rate_hz": gt.pose_rate_hz,
        "pose": "T_world_body",
    }
    for s, kind in kinds:
        streams |= kind.extra_streams(s, gt.pose_rate_hz)
    streams["odometry"] = {
        "type": "odometry",
        "rate_hz": gt.odometry_rate_hz,
        "pose": "T_world_body",
        "twist": "linear (vx, vy, vz) and angular (wx, wy, wz) velocity in the body frame",
    }
    joints = list(ROBOTS.get(scene.robot.kind).joint_names(scene.robot))
    streams["joint_states"] = {
        "type": "joint_states",
        "rate_hz": gt.joint_state_rate_hz,
        "joints": joints,
        "units": "slides in m, m/s, N; hinges in rad, rad/s, N·m",
    }
    streams["robot_state"] = {
        "type": "robot_state",
        "rate_hz": cfg.sim.physics_hz,
        "joints": joints,
        "note": "physics-rate state and setpoints at each step, before the step; for replay",
    }
    return {
        "format": "twinsim-sequence",
        "format_version": 1,
        "twinsim_version": __version__,
        "mujoco_version": mujoco.__version__,
        "python_version": platform.python_version(),
        "seed": cfg.seed,
        "config": cfg.model_dump(mode="json"),
        "physics_hz": cfg.sim.physics_hz,
        "bootstrap_steps": steps.start,
        "recorded_steps": [steps.start, steps.end],
        "time": "int64 nanoseconds of simulation time, t_ns = round(k * 1e9 / physics_hz)",
        "classes": list(SEMANTIC_CLASSES),
        "instances": scene.instance_table(),
        "people": {"requested": cfg.people.count, "placed": len(scene.people)},
        "flying_objects": len(scene.flying_objects),
        "rooms": [r.model_dump(mode="json") for r in scene.rooms],
        "streams": streams,
    }


def run(cfg: TwinsimConfig, out: Path, progress: ProgressCallback | None = None) -> Path:
    """Generate a world for `cfg`, fly it, and record the sequence into the folder `out`."""
    return record(build_scene(cfg), cfg, out, progress)


def record(
    scene: SceneSpec, cfg: TwinsimConfig, out: Path, progress: ProgressCallback | None = None
) -> Path:
    """Fly the robot of a resolved `scene` along its path and record every stream into `out`."""
    configure_backend(cfg.render.backend)
    from twinsim.engine.world import World

    steps = step_range(cfg)
    metadata = build_metadata(cfg, scene, steps)
    world = World(scene, cfg.render, cfg.sim.physics_hz)
    try:
        with SequenceWriter(
            Path(out), scene.to_json(), metadata, rgb_png_level=cfg.output.rgb_png_level
        ) as writer:
            stats = _fly(cfg, scene, world, writer, steps, progress)
            writer.close({"statistics": stats})
    finally:
        world.close()
    return Path(out)


def _fly(cfg, scene, world, writer, steps: StepRange, progress) -> dict:
    """Drive the robot through every step with its controller, recording; return statistics."""
    hz = cfg.sim.physics_hz
    recorder = StreamRecorder(cfg, scene, world, writer)
    kind = ROBOTS.get(scene.robot.kind)
    controller = kind.controller(scene.robot, hz)
    world.set_robot_state(*kind.initial_state(scene.robot))
    total = steps.end - steps.start
    for k in range(steps.end):
        world.pose_actors(k / hz, observed=recorder.observed(k))
        world.step_begin()
        q, qd = world.robot_qpos(), world.robot_qvel()
        setpoint = controller.setpoint(k / hz, q, qd)
        ctrl = controller.effort(setpoint, q, qd)
        recording = k >= steps.start
        if recording:
            recorder.before_step(k, q, qd, setpoint, ctrl)
        world.step_end(ctrl)
        if recording:
            recorder.after_step(k, q, qd)
            done = k - steps.start + 1
            if progress is not None and (done % max(1, hz // 10) == 0 or done == total):
                progress(done, total)
    return recorder.statistics()
