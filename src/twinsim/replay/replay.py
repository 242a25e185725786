"""Experiment repetition: run a recorded sequence again, exactly or in a changed world (a twin).

The source folder holds all a replay needs: the resolved config, the world (`scene.json`) and
the robot's state and set-points before every recorded physics step (`robot_state`). Two modes,
as in GRADE:

- teleport (default): before each step the logged qpos, qvel and solver warm start are set,
  so poses repeat bit for bit whatever the twin changes; an unchanged twin is byte-identical.
- control: the logged state is set once, at the first recorded step (the robot kind restarts
  its controller from that row, e.g. the drone recovers its PID integral from the logged
  effort), then the logged set-points drive the controller and physics again, so a change
  that touches physics changes the motion.

Streams are written by the same `StreamRecorder` as a generated run, so every sensor type the
simulator records is recorded by twins too, at the same timestamps; camera frames the source
provably holds already are copied from it instead of rendered (`twinsim.replay.reuse`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from twinsim.config import TwinsimConfig
from twinsim.engine.backend import configure_backend
from twinsim.engine.look import Look
from twinsim.model.layout import frame_path
from twinsim.model.scene import SceneSpec
from twinsim.recording import RobotStep, StreamRecorder
from twinsim.registries import ROBOTS
from twinsim.render.cycles.settings import CyclesSettings
from twinsim.replay.actors import remove_actors
from twinsim.replay.light import look_for, relight
from twinsim.replay.materials import rematerial
from twinsim.replay.populate import add_actors, added_people_config
from twinsim.replay.renderer import (
    check_recolourable,
    copied_from_source,
    cycles_sources,
    pending_frames,
    renderer_metadata,
    renderer_settings,
)
from twinsim.replay.reuse import reusable_cameras
from twinsim.replay.sensors import twin_sensors
from twinsim.replay.source import ReplaySource, load_source
from twinsim.replay.variations import ReplayMode, Variations
from twinsim.replay.weather import Weather
from twinsim.sensors.camera import intrinsics
from twinsim.sensors.lidar_weather import LidarWeather, LidarWeatherWriter
from twinsim.sequence import SequenceWriter
from twinsim.sequence.frames import CameraFrame, CopiedFrame
from twinsim.sequence.images import read_npy
from twinsim.sequence.writer import check_output_folder
from twinsim.sim import StepRange, build_metadata

ProgressCallback = Callable[[int, int], None]
_VISUAL = ("fog", "rain", "snow", "smoke")
_WEATHER_IN_FLIGHT = 2  # frames composited ahead of the writer


@dataclass(frozen=True)
class TwinPlan:
    """Everything a twin run needs, resolved before anything is written."""

    config: TwinsimConfig
    scene: SceneSpec
    look: Look
    weather: dict[str, float]  # rain, snow, smoke in [0, 1] and the particle seed
    variations: Variations
    added_people: int = 0  # placed of the `add_people` asked for (fewer when they do not fit)


def _inherited(source: ReplaySource) -> tuple[Look, dict[str, float]]:
    """The look and weather of a source that is itself a twin (none for a generated run)."""
    twin = source.metadata.get("twin") or {}
    look = Look(
        **{k: tuple(v) if isinstance(v, list) else v for k, v in twin.get("look", {}).items()}
    )
    return look, dict(twin.get("weather", {}))


def plan_twin(source: ReplaySource, variations: Variations) -> TwinPlan:
    """Apply the variations to the recorded world; `ConfigError` for unknown names or values."""
    v = variations.resolved()
    scene = remove_actors(source.scene, v.static, v.remove_classes, v.remove_instances)
    kept_people = len(scene.people)
    if v.add_people or v.add_flying_objects:
        cfg = source.config
        scene, _ = add_actors(
            scene,
            np.concatenate([log.qpos[:, :2] for log in source.logs.values()]),
            added_people_config(cfg.people, v.add_people, v.add_people_motions),
            cfg.flying_objects.model_copy(update={"count": v.add_flying_objects}),
            cfg.sim.bootstrap_s + cfg.sim.duration_s,
            np.random.default_rng(np.random.SeedSequence([v.seed, 0xADD])),
        )
    scene = relight(scene, v.light)
    if v.materials_seed is not None:
        scene = rematerial(scene, v.materials_seed)
    config, scene = twin_sensors(source.config, scene, v)
    look, weather = _inherited(source)
    visual = v.light.preset is not None or v.light.flicker > 0 or v.light.intensity != 1.0
    if visual or any(getattr(v, k) is not None for k in _VISUAL):
        look = look_for(v.light, v.fog, v.seed)
        weather = {k: float(getattr(v, k) or 0.0) for k in ("rain", "snow", "smoke")}
        weather["seed"] = v.seed
    return TwinPlan(config, scene, look, weather, variations, len(scene.people) - kept_people)


class _WeatherWriter:
    """A writer that composites the weather onto each colour image before writing it.

    Compositing runs on one worker thread (NumPy releases the GIL) while the simulation renders
    the next frames; frames are handed to the writer in the order they came.
    """

    def __init__(self, writer: SequenceWriter, weather: Weather, scene: SceneSpec) -> None:
        self._writer, self._weather = writer, weather
        self._K = {
            scene.stream_prefix(s.robot) + s.name: intrinsics(s.width, s.height, s.hfov_deg)
            for s in scene.sensors
            if s.type == "camera"
        }
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="weather")
        self._pending: deque[tuple[Callable, str, CameraFrame | CopiedFrame, Future | None]]
        self._pending = deque()

    def __getattr__(self, name: str):
        return getattr(self._writer, name)

    def write_frame(self, name: str, frame: CameraFrame) -> None:
        self._queue(self._writer.write_frame, name, frame, frame.depth)

    def write_copied_frame(self, name: str, frame: CopiedFrame) -> None:
        """A copied frame with a new colour image gets weather; one copied whole has it."""
        depth = None
        if frame.rgb is not None:
            depth = read_npy(frame_path(frame.source, "depth", frame.index), name)
        self._queue(self._writer.write_copied_frame, name, frame, depth)

    def _queue(self, write: Callable, name: str, frame, depth: np.ndarray | None) -> None:
        future = None
        if depth is not None:
            args = (frame.rgb, depth, self._K[name], frame.T_world_cam, frame.t_ns / 1e9)
            future = self._pool.submit(self._weather.apply, *args)
        self._pending.append((write, name, frame, future))
        while len(self._pending) > _WEATHER_IN_FLIGHT:
            self._write_oldest()

    def _write_oldest(self) -> None:
        write, name, frame, future = self._pending.popleft()
        if future is not None:
            frame.rgb = future.result()
        write(name, frame)

    def flush(self) -> None:
        """Write every frame still being composited (before the writer closes)."""
        try:
            while self._pending:
                self._write_oldest()
        finally:
            self._pool.shutdown(wait=True)


def _twin_metadata(source: ReplaySource, plan: TwinPlan, mode: ReplayMode, steps) -> dict:
    metadata = build_metadata(plan.config, plan.scene, steps)
    added = plan.variations.resolved().add_people  # asked for, by the user or the adversity
    if plan.config == source.config:  # the recorded text, even if newer configs have more fields
        metadata["config"] = source.metadata["config"]
    metadata["people"] = {
        "requested": source.metadata.get("people", {}).get("requested", 0) + added,
        "placed": metadata["people"]["placed"],  # a town's walkers are the traffic's
    }
    metadata["twin"] = {
        "source": str(source.path.resolve()),
        "source_seed": source.metadata.get("seed"),
        "source_twinsim_version": source.metadata.get("twinsim_version"),
        "mode": mode.value,
        "people_added": {"requested": added, "placed": plan.added_people},
        "variations": plan.variations.summary(),
        "look": asdict(plan.look),
        "weather": plan.weather,
    }
    if "commands_clamped" in source.metadata:  # the replay repeats the source's commands
        metadata["commands_clamped"] = source.metadata["commands_clamped"]
    return metadata


def replay(
    source: str | Path,
    out: str | Path,
    variations: Variations | None = None,
    mode: ReplayMode | str = ReplayMode.teleport,
    progress: ProgressCallback | None = None,
    rerender: bool = False,
    renderer: str = "mujoco",
    cycles: CyclesSettings | None = None,
) -> Path:
    """Replay the sequence `source` into the new folder `out` with `variations` applied.

    Camera frames the source provably holds already are copied (`twinsim.replay.reuse`);
    `rerender` renders every frame again instead (slower; the same bytes). `renderer="cycles"`
    renders the colour images with Blender Cycles (`cycles` its settings), every other stream
    taken or recorded as before (`twinsim.replay.renderer`).
    """
    out, mode = Path(out), ReplayMode(mode)
    settings = renderer_settings(renderer, cycles)
    check_output_folder(out)  # outside every sequence, the source too
    src = load_source(source)
    plan = plan_twin(src, variations or Variations())
    cfg, scene = plan.config, plan.scene
    configure_backend(cfg.render.backend)
    from twinsim.engine.world import World

    k0, k1 = src.steps
    metadata = _twin_metadata(src, plan, mode, StepRange(k0, k1))
    weather = Weather(
        scene,
        plan.weather.get("rain", 0.0),
        plan.weather.get("snow", 0.0),
        plan.weather.get("smoke", 0.0),
        int(plan.weather.get("seed", 0)),
    )
    lidar_weather = _lidar_weather(plan)
    if lidar_weather.active:
        metadata["twin"]["lidar_weather"] = lidar_weather.summary()
    same_look = (plan.look, plan.weather) == _inherited(src)
    reused = reusable_cameras(src, cfg, scene, same_look, mode, rerender)
    if settings is not None:
        check_recolourable(scene, reused)
        metadata["twin"]["renderer"] = renderer_metadata(settings)
    metadata["twin"]["copied_from_source"] = {
        name: copied_from_source(settings, s) for name, s in reused.items()
    }
    world = World(scene, cfg.render, cfg.sim.physics_hz, plan.look)
    scene_json = src.scene_json if scene == src.scene else scene.to_json()
    try:
        with SequenceWriter(
            out, scene_json, metadata, rgb_png_level=cfg.output.rgb_png_level
        ) as writer:
            sources = (
                nullcontext(reused)
                if settings is None
                else cycles_sources(world, scene, reused, settings, out, cfg.render.backend)
            )
            with sources as frame_sources:
                target = writer
                if lidar_weather.active:
                    target = LidarWeatherWriter(target, lidar_weather, _min_ranges(scene))
                if weather.active:
                    target = _WeatherWriter(target, weather, scene)
                target = pending_frames(target, settings)
                recorder = StreamRecorder(cfg, scene, world, target, frame_sources)
                try:
                    _drive(src, world, recorder, mode, cfg.sim.physics_hz, progress)
                    statistics = recorder.statistics()
                finally:
                    if target is not writer:
                        target.flush()
            writer.close({"statistics": statistics})
    finally:
        world.close()
    return out


def _lidar_weather(plan: TwinPlan) -> LidarWeather:
    """The fog (at the camera fog's distance), rain and snow the twin's LiDARs see."""
    fog = plan.look.fog_end_m if plan.look.fog_start_m is not None else None
    rain, snow = plan.weather.get("rain", 0.0), plan.weather.get("snow", 0.0)
    return LidarWeather(fog, rain, snow, int(plan.weather.get("seed", 0)))


def _min_ranges(scene: SceneSpec) -> dict[str, float]:
    """Each LiDAR stream's minimum range, by stream name."""
    return {
        scene.stream_prefix(s.robot) + s.name: s.lidar.min_range_m
        for s in scene.sensors
        if s.type == "lidar"
    }


def _drive(src: ReplaySource, world, recorder, mode: ReplayMode, hz: int, progress) -> None:
    """Step through the recorded steps, every robot teleported or controlled from its log."""
    k0, k1 = src.steps
    drives = []
    for robot in src.scene.robots:
        log, view = src.logs[robot.name], world.robot(robot.name)
        controller = None
        if mode is ReplayMode.control:
            controller = ROBOTS.get(robot.kind).restarted_controller(robot, log, hz)
        view.set_state(log.qpos[0], log.qvel[0])
        drives.append((robot.name, view, log, controller))
    for i, k in enumerate(range(k0, k1)):
        # the first step poses every actor, as the run did when it was last observed
        world.pose_actors(k / hz, observed=i == 0 or recorder.observed(k))
        world.apply_lighting(k / hz)
        for _, view, log, controller in drives:
            if controller is None or i == 0:
                view.set_step_state(log.qpos[i], log.qvel[i], log.qacc_warmstart[i])
        world.step_begin()
        states = {}
        for name, view, log, controller in drives:
            q, qd = view.qpos(), view.qvel()
            setpoint = log.setpoint[i]
            ctrl = log.ctrl[i] if controller is None else controller.effort(setpoint, q, qd)
            view.set_ctrl(ctrl)
            states[name] = RobotStep(q, qd, setpoint, ctrl)
        recorder.before_step(k, states)
        world.step_end()
        recorder.after_step(k, states)
        done = i + 1
        if progress is not None and (done % max(1, hz // 10) == 0 or done == k1 - k0):
            progress(done, k1 - k0)
