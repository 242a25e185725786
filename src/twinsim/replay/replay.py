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

from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from twinsim.adversity import (
    atmosphere_for,
    image_weather,
    lidar_weather,
    relight,
    weather_writers,
)
from twinsim.adversity.atmosphere import recorded_atmosphere
from twinsim.config import TwinsimConfig
from twinsim.engine.backend import configure_backend
from twinsim.engine.look import Look
from twinsim.model.scene import SceneSpec
from twinsim.recording import RobotStep, StreamRecorder
from twinsim.registries import ROBOTS
from twinsim.render.cycles.settings import CyclesSettings
from twinsim.replay.actors import remove_actors
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
from twinsim.sequence import SequenceWriter
from twinsim.sequence.writer import check_output_folder
from twinsim.sim import StepRange, build_metadata

ProgressCallback = Callable[[int, int], None]


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
    """The look and weather of a source that is itself a twin or a run recorded in weather or
    light (`twinsim.adversity`); none for a run in clear air."""
    return recorded_atmosphere(source.metadata)


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
    atmosphere = atmosphere_for(v.light, v.fog, v.rain, v.snow, v.smoke, v.seed)
    if atmosphere is not None:
        look, weather = atmosphere.look, atmosphere.weather
    return TwinPlan(config, scene, look, weather, variations, len(scene.people) - kept_people)


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
    lidar = lidar_weather(plan.look, plan.weather)
    if lidar.active:
        metadata["twin"]["lidar_weather"] = lidar.summary()
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
            out,
            scene_json,
            metadata,
            rgb_png_level=cfg.output.rgb_png_level,
            assets=scene.asset_files(),
        ) as writer:
            sources = (
                nullcontext(reused)
                if settings is None
                else cycles_sources(world, scene, reused, settings, out, cfg.render.backend)
            )
            with sources as frame_sources:
                image = image_weather(scene, plan.weather)
                target = weather_writers(writer, scene, plan.look, plan.weather, image)
                target = pending_frames(target, settings)
                recorder = StreamRecorder(cfg, scene, world, target, frame_sources, image)
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
