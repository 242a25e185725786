"""`Session`: drive the robots of a world live from your own code, step by step, and record the
episode as an ordinary sequence.

A session builds the world of a config (as `twinsim run` does, but the robots keep only their
start pose: `build_scene(cfg, live=True)`), settles it through the bootstrap, and then advances
one control period per `step(commands)`: each robot's command steers its kind's own follower
(`Robot.live_controller`), the physics runs `physics_hz / control_hz` steps, and the step
returns every reading the sensors made meanwhile, at their own rates and stamps. The same
`StreamRecorder` as a scripted run writes the sequence, so a closed-loop episode validates,
replays (teleport byte-identical), twins and exports like any run. An `observe` hook (as
`twinsim.sim.run`'s) hears each episode's writes as the step observes them: a live viewer.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Mapping
from pathlib import Path

from twinsim.adversity import config_atmosphere, image_weather, weather_writers
from twinsim.assemble import build_scene
from twinsim.closedloop.observations import Observations, ObservationTap, RobotObservations
from twinsim.config import TwinsimConfig, load_config, validate_config
from twinsim.configmodel import MAX_SEED
from twinsim.engine.backend import configure_backend
from twinsim.errors import ConfigError, TwinsimError
from twinsim.model.scene import SceneSpec
from twinsim.recording import RobotStep, StreamRecorder
from twinsim.registries import ROBOTS
from twinsim.robots.common.commands import CommandError, CommandSpace
from twinsim.sequence import SequenceWriter
from twinsim.sim import Observer, Tee, build_metadata, clamped_report, step_range

#: why an episode ended, as its metadata says
END_REASONS = ("closed", "task_done", "time_limit", "reset", "timeout", "error")
EpisodeCallback = Callable[[Path], None]


class EpisodeEndedError(TwinsimError):
    """`step` after the episode reached its time limit or was closed."""


class Session:
    """Closed-loop episodes in the world of `config` (a `TwinsimConfig`, a preset name or a
    YAML path): `reset(seed)` starts one, `step(commands)` advances it, `close()` ends it.

    `episodes_dir`: where each episode is recorded (`episode-0000`, … or `reset(out=...)`);
    None with `record=False` records nothing. `control_hz` sets the length of a step; it must
    divide the physics rate. The episode's time limit is the config's `sim.duration_s`.
    `observe` (a `twinsim.sim.Observer`, e.g. `twinsim.foxglove.live.live_observer`) is
    called at each reset; what it returns hears that episode's writes, recorded or not, as
    the step observes them (after the weather is composited).
    """

    def __init__(
        self,
        config: TwinsimConfig | str | Path,
        episodes_dir: str | Path | None = None,
        *,
        record: bool = True,
        control_hz: int = 30,
        on_episode_end: EpisodeCallback | None = None,
        observe: Observer | None = None,
    ) -> None:
        self.config = config if isinstance(config, TwinsimConfig) else load_config(str(config))
        hz = self.config.sim.physics_hz
        if control_hz <= 0 or hz % control_hz:
            raise ConfigError(f"control_hz: must divide the physics rate {hz} Hz, got {control_hz}")
        if record and episodes_dir is None:
            raise ConfigError("episodes_dir: a folder to record episodes in (or record=False)")
        self.control_hz = control_hz
        self.record = record
        self.episodes_dir = Path(episodes_dir) if episodes_dir is not None else None
        self.on_episode_end = on_episode_end
        self.observe = observe
        self.episodes = 0
        self.scene: SceneSpec | None = None
        self.episode_path: Path | None = None
        self._episode: _Episode | None = None

    @property
    def robots(self) -> tuple[str, ...]:
        """The robots' names, in config order."""
        return tuple(self.config.robots)

    @property
    def running(self) -> bool:
        return self._episode is not None and not self._episode.ended

    def command_space(self, robot: str | None = None) -> CommandSpace:
        """The commands `robot` (default: the only or first one) takes in the current episode."""
        episode = self._require_episode()
        return episode.spaces[episode.robot_name(robot)]

    def reset(
        self,
        seed: int | None = None,
        out: str | Path | None = None,
        *,
        weather: Mapping | None = None,
        light: Mapping | None = None,
    ) -> Observations:
        """End the current episode (if any) and start a new one: the world of the config with
        `seed` (default: the config's seed plus the episode number), settled through the
        bootstrap; returns the readings of its first control period, the robots holding still.
        `weather`, `light`: this episode's sections of those names (fields as in a config,
        e.g. `{"fog": 0.6}`), in place of the config's; `ConfigError` in one line if bad
        (checked before the current episode ends, which a refusal leaves running)."""
        base = self.config
        given = (("weather", weather), ("light", light))
        sections = {k: dict(v) for k, v in given if v is not None}
        if sections:
            base = validate_config(base.model_dump(mode="json") | sections)
        if self._episode is not None and not self._episode.ended:
            self.close("reset")
        while self.record and out is None and self._taken(self.episodes):
            self.episodes += 1  # a folder that holds episodes already: go on after them
        if seed is not None and (
            isinstance(seed, bool)
            or not isinstance(seed, numbers.Integral)
            or not 0 <= seed <= MAX_SEED
        ):
            raise ConfigError(f"reset seed: an integer from 0 to 2**63-1 or None, got {seed!r}")
        seed = self.config.seed + self.episodes if seed is None else int(seed)
        cfg = base.model_copy(update={"seed": seed})
        path = None
        if self.record:
            path = (
                Path(out) if out is not None else self.episodes_dir / f"episode-{self.episodes:04d}"
            )
        self.episodes += 1
        configure_backend(cfg.render.backend)
        scene = build_scene(cfg, live=True)
        self.scene, self.episode_path = scene, path
        self._episode = _Episode(cfg, scene, path, self.control_hz, self.observe)
        return self._episode.advance()

    def step(self, commands: Mapping | None = None) -> Observations:
        """Apply `commands` (robot name → `{mode: {field: value}}`; with one robot the
        command itself may be given) and advance one control period. A command holds until
        the next one for that robot."""
        episode = self._require_episode()
        if episode.ended:
            raise EpisodeEndedError(
                f"the episode ended ({episode.ended_by}); call reset() to start another"
            )
        episode.command(episode.parse(commands or {}))  # a refusal leaves the episode going
        try:
            observations = episode.advance()
        except BaseException:
            self.close("error")
            raise
        if observations.done:
            self.close("time_limit")
        return observations

    def close(self, ended_by: str = "closed") -> Path | None:
        """End the episode and finish its sequence (`ended_by` is recorded: one of
        `END_REASONS`); returns its folder (None when not recording)."""
        if ended_by not in END_REASONS:
            raise ValueError(f"ended_by: one of {', '.join(END_REASONS)}, got {ended_by!r}")
        episode = self._episode
        if episode is None or episode.ended:
            return self.episode_path if episode is not None else None
        episode.finish(ended_by)
        if self.on_episode_end is not None and self.episode_path is not None:
            self.on_episode_end(self.episode_path)
        return self.episode_path

    def __enter__(self) -> Session:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.close("closed" if exc_type is None else "error")

    def _taken(self, number: int) -> bool:
        return (self.episodes_dir / f"episode-{number:04d}").exists()

    def _require_episode(self) -> _Episode:
        if self._episode is None:
            raise EpisodeEndedError("no episode yet: call reset() first")
        return self._episode


class _Episode:
    """One episode's world, writer, recorder, listener and live controllers."""

    def __init__(
        self,
        cfg: TwinsimConfig,
        scene: SceneSpec,
        path: Path | None,
        control_hz: int,
        observe: Observer | None = None,
    ):
        from twinsim.engine.world import World

        self.cfg, self.scene = cfg, scene
        self.hz = hz = cfg.sim.physics_hz
        self.per_step = hz // control_hz
        self.steps = step_range(cfg)
        atmosphere = config_atmosphere(cfg)  # the config's weather and light, as a run's
        self.world = World(scene, cfg.render, hz, None if atmosphere is None else atmosphere.look)
        self.writer = None
        self.ended, self.ended_by = False, ""
        self.commands = 0
        try:
            metadata = {}  # what the writer and the observer read (~25 ms: only for them)
            if path is not None or observe is not None:
                metadata = build_metadata(cfg, scene, self.steps)
            if path is not None:
                self.writer = SequenceWriter(
                    path,
                    scene.to_json(),
                    metadata,
                    rgb_png_level=cfg.output.rgb_png_level,
                    assets=scene.asset_files(),
                )
            self.tap = ObservationTap(self.writer)
            base = self.tap if observe is None else Tee(self.tap, observe(metadata, scene))
            target, image = base, None
            if atmosphere is not None:  # composited before the tap (and listener): as recorded
                look, weather = atmosphere.look, atmosphere.weather
                image = image_weather(scene, weather)
                target = weather_writers(base, scene, look, weather, image, in_flight=0)
            self.recorder = StreamRecorder(cfg, scene, self.world, target, weather=image)
            self.prefixes = {r.name: scene.stream_prefix(r.name) for r in scene.robots}
            self.drives = []
            self.spaces: dict[str, CommandSpace] = {}
            for robot in scene.robots:
                kind, view = ROBOTS.get(robot.kind), self.world.robot(robot.name)
                view.set_state(*kind.initial_state(robot))
                self.drives.append((robot.name, view, kind.live_controller(robot, hz)))
                self.spaces[robot.name] = kind.command_space(robot)
            self.k = 0
            self._run(self.steps.start)  # the bootstrap settles the world, unrecorded
        except BaseException:
            self._abandon()
            raise

    def robot_name(self, robot: str | None) -> str:
        names = [name for name, _, _ in self.drives]
        if robot is None:
            return names[0]
        if robot not in names:
            raise CommandError(f"robot {robot!r} is not in this world; robots: {', '.join(names)}")
        return robot

    def parse(self, commands: Mapping) -> dict[str, tuple[str, dict[str, float]]]:
        """Robot name → checked (mode, fields); one robot's command may be given bare."""
        if not isinstance(commands, Mapping):
            raise CommandError("commands: a mapping of robot name to {mode: {field: value}}")
        names = [name for name, _, _ in self.drives]
        if len(names) == 1 and commands and set(commands) <= set(self.spaces[names[0]].modes):
            commands = {names[0]: commands}
        parsed = {}
        for robot, command in commands.items():
            if len(names) == 1 and robot not in names:
                raise CommandError(
                    f"{robot!r} is neither a robot of this world ({names[0]}) nor a mode it "
                    f"takes: {self.spaces[names[0]].describe()}"
                )
            name = self.robot_name(str(robot))
            parsed[name] = self.spaces[name].parse(name, command)
        return parsed

    def command(self, commands: dict[str, tuple[str, dict[str, float]]]) -> None:
        """Give each robot its checked command, in the world's robot order. A controller may
        still refuse one (`CommandError`: an arm pose out of reach): that robot keeps its
        previous command, those before it have their new ones, nothing has moved."""
        for name, _, controller in self.drives:
            if name in commands:
                controller.command(*commands[name])
                self.commands += 1

    def advance(self) -> Observations:
        """Run one control period recorded and collect its readings."""
        self._run(min(self.k + self.per_step, self.steps.end))
        readings = self.tap.drain(self.prefixes)
        now = self.world.integrated_state()  # the state at t_ns, not at the last step's start
        robots = {  # both readings are fresh arrays
            name: RobotObservations(
                T_world_body=view.T_world_body(now),
                velocity=view.body_twist(now).as_array(),
                arrived=controller.arrived,
                **readings[name],
            )
            for name, view, controller in self.drives
        }
        t_ns = round(self.k * 1_000_000_000 / self.hz)
        return Observations(self.k, t_ns, robots, done=self.k >= self.steps.end)

    def _run(self, until: int) -> None:
        """Physics steps up to `until`, recording those at or after the bootstrap (every
        controller ticks at each physics step, as in a scripted run)."""
        hz, world, recorder, drives = self.hz, self.world, self.recorder, self.drives
        dt, start = 1.0 / hz, self.steps.start
        for k in range(self.k, until):
            t_s = k / hz
            world.pose_actors(t_s, observed=recorder.observed(k))
            world.step_begin()
            states = {}
            for name, view, controller in drives:
                controller.advance(dt, view.body_position())
                q, qd = view.qpos(), view.qvel()
                setpoint = controller.setpoint(t_s, q, qd)
                ctrl = controller.effort(setpoint, q, qd)
                view.set_ctrl(ctrl)
                states[name] = RobotStep(q, qd, setpoint, ctrl)
            if k >= start:
                recorder.before_step(k, states)
                world.step_end()
                recorder.after_step(k, states)
            else:
                world.step_end()
            self.k = k + 1

    def finish(self, ended_by: str) -> None:
        """End the recording at the last full step; the metadata says the recorded duration
        and how the episode ended."""
        self.ended, self.ended_by = True, ended_by
        try:
            stats = self.recorder.statistics()
            if self.writer is not None:
                recorded = self.k - self.steps.start
                self.writer.close(
                    {
                        "statistics": stats,
                        "commands_clamped": clamped_report(self.drives),
                        "recorded_steps": [self.steps.start, self.k],
                        "config": {"sim": {"duration_s": recorded / self.hz}},
                        "closed_loop": {
                            "control_hz": self.hz // self.per_step,
                            "ended_by": ended_by,
                            "commands": self.commands,
                            "time_limit_s": self.cfg.sim.duration_s,
                        },
                    }
                )
        finally:
            self.world.close()

    def _abandon(self) -> None:
        """Release what a failed start opened (the sequence stays marked incomplete)."""
        self.ended, self.ended_by = True, "error"
        if self.writer is not None:
            self.writer.__exit__(TwinsimError, None, None)
        self.world.close()
