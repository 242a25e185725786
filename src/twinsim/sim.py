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

import numpy as np

from twinsim._version import __version__
from twinsim.actors.flying import (
    generate_flying_objects,
    pass_in_front_object,
    pass_times,
    planned_camera_pose,
)
from twinsim.actors.population import generate_people
from twinsim.config import TwinsimConfig
from twinsim.engine.backend import configure_backend
from twinsim.recording import StreamRecorder
from twinsim.robots.controller import FlightController
from twinsim.robots.drone import JOINT_NAMES, drone_body, pose_to_qpos
from twinsim.robots.planner import plan_flight
from twinsim.robots.trajectory import Trajectory
from twinsim.scene.apartment import generate_apartment
from twinsim.scene.placement import clear_of_traces, place_people
from twinsim.scene.spec import RobotSpec, SceneSpec
from twinsim.scene.vocabulary import SEMANTIC_CLASSES
from twinsim.sensors.rig import resolve_sensors, sensor_metadata
from twinsim.sequence import SequenceWriter

ProgressCallback = Callable[[int, int], None]
START_CLEARANCE_M = 1.0  # the drone starts at least this far from any person's walking trace


def build_scene(cfg: TwinsimConfig) -> SceneSpec:
    """Resolve a config into a complete world: layout, people, robot path, flying objects, sensors.

    Each stage draws from its own stream of the seed, so adding people or flying objects to a
    config keeps the same apartment.
    """
    layout_rng, people_rng, flight_rng, objects_rng = (
        np.random.default_rng(s) for s in np.random.SeedSequence(cfg.seed).spawn(4)
    )
    total_s = cfg.sim.bootstrap_s + cfg.sim.duration_s
    layout = generate_apartment(cfg.scene, layout_rng)
    next_id = max(o.instance_id for o in layout.objects) + 1
    population = generate_people(
        cfg.people,
        layout.rooms,
        layout.objects,
        people_rng,
        next_id,
        placement_fn=lambda candidates: place_people(
            candidates,
            layout.objects,
            layout.rooms,
            layout.wall_height,
            total_s,
            people_rng,
            cfg.people.placement_attempts,
            cfg.people.max_trace_intersections,
        ),
    )
    next_id += 2 * population.placed
    plan = plan_flight(
        rooms=layout.rooms,
        doors=layout.doors,
        objects=layout.objects,
        wall_height=layout.wall_height,
        robot_cfg=cfg.robot,
        duration_s=total_s,
        rng=flight_rng,
        start_allowed=(
            (lambda xy: clear_of_traces(xy, population.traces, START_CLEARANCE_M))
            if population.people
            else None
        ),
    )
    body = drone_body(cfg.robot)
    robot = RobotSpec(
        mass_kg=body.mass_kg,
        inertia=body.inertia,
        half_size=body.half_size,
        start_pos=tuple(plan.start_pos),
        start_yaw=plan.start_yaw,
        horizontal=cfg.robot.horizontal,
        max_speed_mps=cfg.robot.max_speed_mps,
        max_roll_pitch_rate_dps=cfg.robot.max_roll_pitch_rate_dps,
        max_yaw_rate_dps=cfg.robot.max_yaw_rate_dps,
        max_roll_pitch_deg=cfg.robot.max_roll_pitch_deg,
        path=plan.path,
        rooms_visited=tuple(plan.rooms_visited),
    )
    sensors = resolve_sensors(cfg)
    flying, flying_materials = generate_flying_objects(
        cfg.flying_objects,
        layout.bounds_min,
        layout.bounds_max,
        layout.rooms,
        total_s,
        objects_rng,
        next_id,
    )
    if cfg.flying_objects.pass_in_front:
        occluder, materials = _occluder(
            robot, sensors, layout, total_s, objects_rng, next_id + len(flying)
        )
        flying, flying_materials = (*flying, occluder), (*flying_materials, *materials)
    scene = layout.to_scene(cfg.seed, robot, sensors)
    return scene.model_copy(
        update={
            "people": population.people,
            "flying_objects": flying,
            "materials": (*scene.materials, *population.materials, *flying_materials),
            "textures": (*scene.textures, *population.textures),
        }
    )


def _occluder(robot: RobotSpec, sensors, layout, total_s: float, rng, instance_id: int):
    """GRADE's WO: an object passing right in front of the first camera's lens now and then."""
    camera = next(s for s in sensors if s.type == "camera")
    return pass_in_front_object(
        planned_camera_pose(robot, camera),
        pass_times(1.0, total_s, rng),
        total_s,
        layout.bounds_min,
        layout.bounds_max,
        rng,
        instance_id,
    )


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

    streams: dict[str, dict] = {s.name: sensor_metadata(s) for s in scene.sensors}
    gt = cfg.groundtruth
    streams["groundtruth_body"] = {
        "type": "pose",
        "rate_hz": gt.pose_rate_hz,
        "pose": "T_world_body",
    }
    for s in scene.sensors:
        if s.type == "camera":
            streams[f"groundtruth_{s.name}"] = {
                "type": "pose",
                "rate_hz": gt.pose_rate_hz,
                "pose": f"T_world_{s.name} (OpenCV optical frame)",
            }
    streams["odometry"] = {
        "type": "odometry",
        "rate_hz": gt.odometry_rate_hz,
        "pose": "T_world_body",
        "twist": "linear (vx, vy, vz) and angular (wx, wy, wz) velocity in the body frame",
    }
    streams["joint_states"] = {
        "type": "joint_states",
        "rate_hz": gt.joint_state_rate_hz,
        "joints": list(JOINT_NAMES),
        "units": "slides in m, m/s, N; hinges in rad, rad/s, N·m",
    }
    streams["robot_state"] = {
        "type": "robot_state",
        "rate_hz": cfg.sim.physics_hz,
        "joints": list(JOINT_NAMES),
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
    """Fly the planned path through every step, recording the streams; return the statistics."""
    hz = cfg.sim.physics_hz
    recorder = StreamRecorder(cfg, scene, world, writer)
    robot = scene.robot
    controller = FlightController(robot, Trajectory.from_path_points(robot.path), hz)
    world.set_robot_state(pose_to_qpos(robot.start_pos, robot.start_yaw), np.zeros(6))
    total = steps.end - steps.start
    for k in range(steps.end):
        world.pose_actors(k / hz, observed=recorder.observed(k))
        world.step_begin()
        q, qd = world.robot_qpos(), world.robot_qvel()
        sp = controller.setpoint(k / hz, yaw_now=q[3])
        ctrl = controller.effort(sp, q, qd)
        recording = k >= steps.start
        if recording:
            recorder.before_step(k, q, qd, sp, ctrl)
        world.step_end(ctrl)
        if recording:
            recorder.after_step(k, q, qd)
            done = k - steps.start + 1
            if progress is not None and (done % max(1, hz // 10) == 0 or done == total):
                progress(done, total)
    return recorder.statistics()
