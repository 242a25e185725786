"""The simulation loop: build the world from a config, drive its robots, and stream every
sensor to disk.

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

from twinsim._numerics import numerics
from twinsim._version import __version__
from twinsim.actors.pedestrians import WALKER_PREFIX
from twinsim.actors.traffic.in_town import VEHICLE_PREFIX
from twinsim.adversity import config_atmosphere, image_weather, run_metadata, weather_writers
from twinsim.adversity.image import Weather
from twinsim.assemble import build_scene
from twinsim.checkpoint import Checkpoint, LoggedStates, write_checkpoint
from twinsim.config import TwinsimConfig
from twinsim.engine.backend import configure_backend, mujoco_version
from twinsim.errors import OutputFolderError
from twinsim.model.layout import SEQUENCE_FORMAT_VERSION
from twinsim.model.scene import RobotSpec, SceneSpec
from twinsim.recording import RobotStep, StreamRecorder
from twinsim.registries import ROBOTS, SENSORS
from twinsim.scene.vocabulary import SEMANTIC_CLASSES
from twinsim.sequence import SequenceWriter, step_to_ns
from twinsim.sequence.contacts import CONTACT_FIELDS

ProgressCallback = Callable[[int, int], None]
__all__ = [
    "Observer",
    "StepRange",
    "Tee",
    "build_metadata",
    "build_scene",
    "record",
    "run",
    "step_range",
]


@dataclass(frozen=True)
class StepRange:
    """The steps of a run: [0, start) bootstrap, [start, end) recorded."""

    start: int
    end: int


def step_range(cfg: TwinsimConfig) -> StepRange:
    hz = cfg.sim.physics_hz
    start = round(cfg.sim.bootstrap_s * hz)
    return StepRange(start, start + round(cfg.sim.duration_s * hz))


def robot_stream_metadata(cfg: TwinsimConfig, scene: SceneSpec, robot: RobotSpec) -> dict:
    """The metadata entries of one robot's streams, by its own stream names."""
    gt = cfg.groundtruth
    kinds = [(s, SENSORS.get(s.type)) for s in scene.robot_sensors(robot.name)]
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
    joints = list(ROBOTS.get(robot.kind).joint_names(robot))
    streams["joint_states"] = {
        "type": "joint_states",
        "rate_hz": gt.joint_state_rate_hz,
        "joints": joints,
        "units": "slides in m, m/s, N; hinges in rad, rad/s, N·m",
    }
    streams["contacts"] = {
        "type": "contacts",
        "rate_hz": gt.contact_rate_hz,
        "parts": list(ROBOTS.get(robot.kind).part_names(robot)),
        "fields": CONTACT_FIELDS,
    }
    streams["robot_state"] = {
        "type": "robot_state",
        "rate_hz": cfg.sim.physics_hz,
        "joints": joints,
        "note": "physics-rate state and setpoints at each step, before the step; for replay",
    }
    return streams


def build_metadata(cfg: TwinsimConfig, scene: SceneSpec, steps: StepRange) -> dict:
    """What a reader needs besides the streams: versions, seed, config, robots and their
    streams (each saying its robot), vocabulary."""
    streams: dict[str, dict] = {}
    for robot in scene.robots:
        prefix = scene.stream_prefix(robot.name)
        for name, info in robot_stream_metadata(cfg, scene, robot).items():
            streams[prefix + name] = info | {"robot": robot.name}
    return {
        "format": "twinsim-sequence",
        "format_version": SEQUENCE_FORMAT_VERSION,
        "twinsim_version": __version__,
        "mujoco_version": mujoco_version(),
        "python_version": platform.python_version(),
        "numerics": numerics(),
        "seed": cfg.seed,
        "config": cfg.model_dump(mode="json"),
        "physics_hz": cfg.sim.physics_hz,
        "bootstrap_steps": steps.start,
        "recorded_steps": [steps.start, steps.end],
        "time": "int64 nanoseconds of simulation time, t_ns = round(k * 1e9 / physics_hz)",
        "classes": list(SEMANTIC_CLASSES),
        "instances": scene.instance_table(),
        "people": {"requested": cfg.people.count, "placed": len(scene.people) - _walkers(scene)},
        **_redraw_metadata(scene),
        "flying_objects": len(scene.flying_objects) - _vehicles(scene),
        **_traffic_metadata(cfg, scene),
        "rooms": [r.model_dump(mode="json") for r in scene.rooms],
        "robots": [{"name": r.name, "kind": r.kind} for r in scene.robots],
        "streams": streams,
        **run_metadata(cfg),
    }


def _redraw_metadata(scene: SceneSpec) -> dict:
    """Where the seed's own draw of people left a robot no start or tour, which redraw built
    the world instead and why the earlier ones failed (nothing when the first draw built it)."""
    if scene.redraw is None:
        return {}
    return {"redraw": scene.redraw.model_dump(mode="json")}


def _walkers(scene: SceneSpec) -> int:
    """A town's walkers among the scene's people: the traffic's, not the `people` section's."""
    return sum(p.name.startswith(WALKER_PREFIX) for p in scene.people)


def _vehicles(scene: SceneSpec) -> int:
    """A town's traffic vehicles, which move as the scene's flying objects do."""
    return sum(f.name.startswith(VEHICLE_PREFIX) for f in scene.flying_objects)


def _traffic_metadata(cfg: TwinsimConfig, scene: SceneSpec) -> dict:
    """How many vehicles and walkers a town asked for and has (nothing for a world without
    roads)."""
    if scene.roads is None:
        return {}
    traffic = cfg.traffic
    return {
        "traffic": {
            "vehicles": {"requested": traffic.vehicles, "placed": _vehicles(scene)},
            "walkers": {"requested": traffic.walkers, "placed": _walkers(scene)},
            "lights": len(scene.roads.traffic_lights),
        }
    }


#: `observe(metadata, scene)` → an object that also gets the recorder's writes (any of
#: `append`, `write_frame`, `write_scan` it has), after the writer (`Tee`): a live viewer of a
#: run (`record`) or of each closed-loop episode (`closedloop.Session`)
Observer = Callable[[dict, SceneSpec], object]


def run(
    cfg: TwinsimConfig,
    out: Path,
    progress: ProgressCallback | None = None,
    *,
    observe: Observer | None = None,
) -> Path:
    """Generate a world for `cfg`, fly it, and record the sequence into the folder `out`."""
    configure_backend(cfg.render.backend)  # before planning: a kind may plan in MuJoCo (IK)
    return record(build_scene(cfg), cfg, out, progress, observe=observe)


def record(
    scene: SceneSpec,
    cfg: TwinsimConfig,
    out: Path,
    progress: ProgressCallback | None = None,
    *,
    resume: Checkpoint | None = None,
    observe: Observer | None = None,
) -> Path:
    """Drive the robots of a resolved `scene` along their paths and record every stream into
    `out`; with `resume`, finish the interrupted run in `out` from that checkpoint; `observe`
    (see `Observer`) sees every write as the writer does (weather already composited)."""
    configure_backend(cfg.render.backend)
    from twinsim.engine.world import World

    steps = step_range(cfg)
    if resume is not None and not steps.start < resume.step < steps.end:
        raise OutputFolderError(f"{out}: checkpoint step {resume.step} is outside the run")
    metadata = build_metadata(cfg, scene, steps)
    atmosphere = config_atmosphere(cfg)
    look = None if atmosphere is None else atmosphere.look
    image = None if atmosphere is None else image_weather(scene, atmosphere.weather)
    world = World(scene, cfg.render, cfg.sim.physics_hz, look)
    try:
        with SequenceWriter(
            Path(out),
            scene.to_json(),
            metadata,
            rgb_png_level=cfg.output.rgb_png_level,
            resume=None if resume is None else resume.writer,
            assets=scene.asset_files(),
        ) as writer:
            base = writer if observe is None else Tee(writer, observe(metadata, scene))
            target = base
            if atmosphere is not None:  # the weather of `twinsim.adversity`, as a twin's
                target = weather_writers(base, scene, look, atmosphere.weather, image)
            try:
                stats, clamped = _fly(
                    cfg, scene, world, writer, target, image, steps, progress, resume
                )
            finally:
                if target is not base:
                    target.flush()
            writer.close({"statistics": stats, "commands_clamped": clamped})
    finally:
        world.close()
    return Path(out)


class Tee:
    """`writer` (a sequence writer, or a closed-loop step's `ObservationTap`), whose `append`,
    `write_frame` and `write_scan` also reach `listener` (those of them it has), after the
    writer took them: how an `Observer`'s listener hears a run or an episode."""

    _SHARED = ("append", "write_frame", "write_scan")

    def __init__(self, writer, listener) -> None:
        self._writer, self._listener = writer, listener

    def __getattr__(self, name: str):
        own = getattr(self._writer, name)
        heard = getattr(self._listener, name, None) if name in self._SHARED else None
        if heard is None:
            return own

        def both(*args, **kwargs):
            own(*args, **kwargs)
            heard(*args, **kwargs)

        return both


def _fly(
    cfg,
    scene,
    world,
    writer,
    target,
    image: Weather | None,
    steps: StepRange,
    progress,
    resume: Checkpoint | None,
) -> tuple[dict, dict]:
    """Drive every robot through every step with its controller, recording (through `target`:
    the writer, or the weather's writers over it; event cameras composite `image`, the image
    weather) and checkpointing; return statistics and what each robot's controller clamped
    (`clamped_report`). A resumed run replays the steps before its checkpoint without
    recording, checked against the log."""
    hz = cfg.sim.physics_hz
    recorder = StreamRecorder(cfg, scene, world, target, weather=image)
    write_pending = getattr(target, "write_pending", None)  # frames still being composited
    drives = []
    for robot in scene.robots:
        kind, view = ROBOTS.get(robot.kind), world.robot(robot.name)
        view.set_state(*kind.initial_state(robot))
        drives.append((robot.name, view, kind.controller(robot, hz)))
    first, logged = 0, None
    if resume is not None:
        recorder.restore(resume.sensors)
        streams = {r.name: scene.stream_prefix(r.name) + "robot_state" for r in scene.robots}
        first = resume.step
        logged = LoggedStates(Path(writer.path), streams, steps.start, first)
    period = round(cfg.output.checkpoint_s * hz) if recorder.resumable else 0
    config = cfg.model_dump_json()  # in the order given (metadata.json sorts keys)
    due = max(first, steps.start) + period
    total = steps.end - steps.start
    for k in range(steps.end):
        if period and k >= due:
            state = recorder.checkpoint()
            if state is not None:
                if write_pending is not None:
                    write_pending()
                streams = writer.checkpoint()
                write_checkpoint(
                    writer.path, Checkpoint(k, streams, state, config, writer.contents())
                )
                due = k + period
        world.pose_actors(k / hz, observed=recorder.observed(k))
        world.step_begin()
        states = {}
        for name, view, controller in drives:
            q, qd = view.qpos(), view.qvel()
            setpoint = controller.setpoint(k / hz, q, qd)
            ctrl = controller.effort(setpoint, q, qd)
            view.set_ctrl(ctrl)
            states[name] = RobotStep(q, qd, setpoint, ctrl)
            if steps.start <= k < first:
                row = np.concatenate([q, qd, view.qacc_warmstart(), setpoint, ctrl])
                logged.check(k, name, step_to_ns(k, hz), row)
        recording = k >= max(first, steps.start)
        if recording:
            recorder.before_step(k, states)
        world.step_end()
        if recording:
            recorder.after_step(k, states)
            done = k - steps.start + 1
            if progress is not None and (done % max(1, hz // 10) == 0 or done == total):
                progress(done, total)
    return recorder.statistics(), clamped_report(drives)


def clamped_report(drives) -> dict[str, dict]:
    """Robot name → the commands its controller clamped to the robot's limits
    (`twinsim.robots.common.limits`; empty where none was, or the controller does not count)."""
    reports = {}
    for name, _, controller in drives:
        clamped = getattr(controller, "clamped", None)
        reports[name] = clamped.report() if clamped is not None else {}
    return reports
