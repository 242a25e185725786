"""`TwinsimNavEnv`: point-goal navigation as a gymnasium environment, on a closed-loop `Session`.

Importing this module registers `twinsim/PointNav-v0` and `twinsim/Explore-v0` (the default
world) and `twinsim/PointNav-tiny-v0`, `twinsim/Explore-tiny-v0` (the tiny test world) with
gymnasium; `twinsim` itself never
imports gymnasium. Episodes are not recorded unless `record_dir` is given (training runs many
episodes); recorded ones get their metrics beside them (`twinsim.closedloop.metrics`). The task
and the metrics are looked up by name in `twinsim.registries.TASKS` and `METRICS`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import gymnasium
import numpy as np
from gymnasium import spaces

from twinsim.assemble import build_scene
from twinsim.closedloop.metrics import MetricManager, make_metrics
from twinsim.closedloop.observations import Observations, first_camera
from twinsim.closedloop.session import EpisodeEndedError, Session
from twinsim.closedloop.tasks import (
    TaskError,
    TaskInfo,
    episode_seeds,
    make_task,
    task_rng,
)
from twinsim.config import TwinsimConfig, load_config
from twinsim.engine.backend import configure_backend
from twinsim.errors import ConfigError
from twinsim.registries import DEFAULT_LIVE_ROBOT_KIND, DEFAULT_PRESET, DEFAULT_TASK, ROBOTS
from twinsim.robots.common.commands import CommandError

#: id → (class, keyword arguments)
ENV_IDS = {
    "twinsim/PointNav-v0": ("TwinsimNavEnv", {"preset": DEFAULT_PRESET}),
    "twinsim/PointNav-tiny-v0": ("TwinsimNavEnv", {"preset": "tiny"}),
    "twinsim/Explore-v0": ("TwinsimExploreEnv", {"preset": DEFAULT_PRESET}),
    "twinsim/Explore-tiny-v0": ("TwinsimExploreEnv", {"preset": "tiny"}),
}
#: the metric the reward reads; the env adds it where `metrics` leaves it out
REWARD_METRIC = "collisions"
_SEED_BOUND = 2**31 - 1


def _depth_camera(cfg: TwinsimConfig, robot: str) -> tuple[str, object]:
    """The name and config of the robot's first camera (the depth observation's source)."""
    name, camera = first_camera(cfg, robot)
    if name is None:
        raise ConfigError(f"robots.{robot}.sensors: a camera for the depth observation")
    return name, camera


def _velocity_command(cfg: TwinsimConfig, robot: str) -> tuple[tuple[str, ...], np.ndarray]:
    """The velocity command's fields of the robot and each one's full scale (its max speed,
    or its max yaw rate for `wz`), from the spec of the config's world."""
    configure_backend(cfg.render.backend)
    spec = next(r for r in build_scene(cfg, live=True).robots if r.name == robot)
    kind = ROBOTS.get(spec.kind)
    limits = kind.base_limits(spec)
    mode = kind.command_space(spec).modes.get("velocity")
    if limits is None or mode is None:
        raise ConfigError(f"robot kind {spec.kind!r}: no velocity commands to act with")
    scale = [limits.max_yaw_rate_radps if f == "wz" else limits.max_speed_mps for f in mode.fields]
    return mode.fields, np.array(scale)


class TwinsimNavEnv(gymnasium.Env):
    """Point-goal navigation of one robot in a twinsim world.

    Action: the robot's velocity command fields (omni `vx, vy, wz`, diff_drive `vx, wz`,
    drone `vx, vy, vz, wz`) in [-1, 1] of its max speed and yaw rate (clipped).
    Observation: `depth` (H, W, 1) float32 metres (0 = no reading) of the first camera's
    latest frame (the last one held in a step where it did not fire), `rgb` (H, W, 3) uint8
    with `include_rgb`, `pointgoal` (straight distance m, bearing rad) in the robot's frame,
    `velocity` the body-frame (vx, vy, vz, wx, wy, wz).
    Reward per step: the geodesic progress to the goal (m), plus `success_bonus` on reaching
    it, minus `collision_penalty` per new collision (`metrics.Collisions`, after its grace).
    Terminated on success (within the task's radius); truncated at the config's time limit.

    The task is `task_name` (default `pointgoal`; any registered task whose step gives a
    point-goal `TaskInfo`, e.g. `objectgoal`) with the settings `task` (its config model or a
    mapping of its fields); `metrics` names the registered metrics kept (default: the task's
    own), `collisions` always among them.
    """

    metadata: ClassVar[dict] = {"render_modes": ["rgb_array"], "render_fps": 30}
    #: the task an env of this class runs where `task_name` names none
    default_task: ClassVar[str] = DEFAULT_TASK

    def __init__(
        self,
        preset: str | Path = DEFAULT_PRESET,
        overrides: Sequence[str] = (),
        robot_kind: str | None = DEFAULT_LIVE_ROBOT_KIND,
        task: Any = None,
        *,
        task_name: str | None = None,
        metrics: Sequence[str] | None = None,
        include_rgb: bool = False,
        render_mode: str | None = None,
        record_dir: str | Path | None = None,
        control_hz: int = 30,
        success_bonus: float = 2.5,
        collision_penalty: float = 0.1,
        grace_s: float = 1.0,
    ) -> None:
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ConfigError(f"render_mode: None or 'rgb_array', got {render_mode!r}")
        kind = [f"robot.kind={robot_kind}"] if robot_kind else []
        self.config = load_config(str(preset), overrides=[*kind, *overrides])
        self.robot = next(iter(self.config.robots))
        self.camera, camera = _depth_camera(self.config, self.robot)
        self.task_name = task_name or self.default_task
        self.task = self._make_task(task)  # names checked before the world is built
        self.metric_names = self._metric_names(metrics)
        self.fields, self.scale = _velocity_command(self.config, self.robot)
        self.render_mode, self.include_rgb = render_mode, include_rgb
        self.success_bonus = success_bonus
        self.collision_penalty = collision_penalty
        self.grace_s = grace_s
        self.metadata = {**self.metadata, "render_fps": camera.rate_hz}
        self.session = (
            Session(self.config, record_dir, control_hz=control_hz)
            if record_dir is not None
            else Session(self.config, record=False, control_hz=control_hz)
        )
        self.action_space = spaces.Box(-1.0, 1.0, (len(self.fields),), np.float32)
        self.observation_space = self._observation_space(camera.height, camera.width, camera.far_m)
        self._image_shape = (camera.height, camera.width)
        self._rgb = np.zeros((*self._image_shape, 3), np.uint8)
        self._depth = np.zeros(self._image_shape, np.float32)
        self.metrics: MetricManager | None = None
        self._last_info: TaskInfo | None = None
        self._ended = True

    def _observation_space(self, height: int, width: int, far_m: float) -> spaces.Dict:
        """depth (up to the camera's far plane), optional rgb, pointgoal and velocity."""
        parts = {
            "depth": spaces.Box(0.0, far_m, (height, width, 1), np.float32),
            "pointgoal": spaces.Box(
                np.array([0.0, -math.pi], np.float32),
                np.array([np.inf, math.pi], np.float32),
                dtype=np.float32,
            ),
            "velocity": spaces.Box(-np.inf, np.inf, (6,), np.float32),
        }
        if self.include_rgb:
            parts["rgb"] = spaces.Box(0, 255, (height, width, 3), np.uint8)
        return spaces.Dict(parts)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """A new episode: the world seed is `seed` (else drawn from `np_random`), the goal
        drawn from the task's stream of that seed. Where that world leaves the task no goal
        (`TaskError`: a start too far from any), the next of `episode_seeds(seed)` is tried
        (a recorded one stays on disk, ended by `reset`); `info["world_seed"]` says which world
        the episode runs in. `options`: `weather` and `light`, this episode's config sections
        of those names (`{"weather": {"fog": 0.6}}`; `Session.reset`)."""
        super().reset(seed=seed)
        self._end_episode()
        episode_seed = int(self.np_random.integers(_SEED_BOUND)) if seed is None else int(seed)
        adversity = {k: v for k, v in (options or {}).items() if k in ("weather", "light")}
        failures = []
        for world_seed in episode_seeds(episode_seed):
            obs = self.session.reset(seed=world_seed, **adversity)
            try:
                self.task.reset(self.session, obs, task_rng(world_seed))
                break
            except TaskError as exc:
                failures.append(f"world seed {world_seed}: {exc}")
        else:
            self.session.close("error")
            tried = "; ".join(failures)
            raise TaskError(f"no world of episode seed {episode_seed} fits the task: {tried}")
        metrics = (
            self.task.metrics(self.grace_s)
            if self.metric_names is None
            else make_metrics(self.metric_names, self.grace_s)
        )
        self.metrics = MetricManager(metrics, grace_s=self.grace_s)
        self._rgb = np.zeros((*self._image_shape, 3), np.uint8)
        self._depth = np.zeros(self._image_shape, np.float32)
        self._ended = False
        info = self._observe(obs)
        return self._observation(obs, info), {**self._info(info), "world_seed": world_seed}

    def step(self, action):
        """Drive one control period with `action`; reward, termination as the class says."""
        if self._ended:
            raise EpisodeEndedError("no episode running: call reset() first")
        command = self._command(action)
        before = self.metrics["collisions"].count
        previous = self._last_info
        obs = self.session.step(command)
        info = self._observe(obs)
        collisions = self.metrics["collisions"].count - before
        terminated = info.success
        truncated = obs.done and not terminated
        reward = self._progress(previous, info) - self.collision_penalty * collisions
        if terminated:
            reward += self.success_bonus
        extra = self._info(info)
        if terminated or truncated:
            extra["metrics"] = self._end_episode()
        return self._observation(obs, info), float(reward), terminated, truncated, extra

    def render(self) -> np.ndarray | None:
        """The first camera's latest rgb frame (render_mode "rgb_array"), else None."""
        return self._rgb.copy() if self.render_mode == "rgb_array" else None

    def close(self) -> None:
        """End the running episode (written where recording)."""
        self._end_episode()

    def _make_task(self, config: Any):
        """The episode's task: `task_name` from the registry, with its settings `config`."""
        return make_task(self.task_name, config, self.robot)

    @staticmethod
    def _metric_names(metrics: Sequence[str] | None) -> tuple[str, ...] | None:
        """The metrics named (each checked now, so a misspelt one fails at construction), with
        the reward's; None: the task's own."""
        if metrics is None:
            return None
        if isinstance(metrics, str):
            raise ConfigError(f"metrics: a list of metric names, got {metrics!r}")
        names = tuple(metrics)
        if REWARD_METRIC not in names:
            names = (*names, REWARD_METRIC)
        make_metrics(names)
        return names

    def _progress(self, previous: TaskInfo, info: TaskInfo) -> float:
        """The step's task reward: geodesic progress to the goal (m)."""
        return previous.distance_to_goal - info.distance_to_goal

    def _command(self, action) -> dict:
        """The velocity command of a normalised action, checked: shape and finite values."""
        a = np.asarray(action, dtype=float)
        if a.shape != self.action_space.shape:
            raise CommandError(
                f"action: shape {self.action_space.shape} for velocity "
                f"({', '.join(self.fields)}), got {a.shape}"
            )
        if not np.all(np.isfinite(a)):
            raise CommandError(f"action: finite numbers, got {a.tolist()}")
        values = np.clip(a, -1.0, 1.0) * self.scale
        return {"velocity": {f: float(v) for f, v in zip(self.fields, values, strict=True)}}

    def _observe(self, obs: Observations) -> TaskInfo:
        """Update the task, the metrics and the held camera frame with one step."""
        robot = obs.robots[self.robot]
        info = self.task.step(obs)
        self.metrics.update(robot, info)
        frame = robot.latest_frame(self.camera)
        if frame is not None:
            self._rgb, self._depth = frame.rgb, frame.depth
        self._last_info = info
        return info

    def _observation(self, obs: Observations, info: TaskInfo) -> dict:
        """The observation dict of a step."""
        robot = obs.robots[self.robot]
        offset = info.goal - info.position[:2]
        bearing = math.remainder(math.atan2(offset[1], offset[0]) - info.yaw, 2 * math.pi)
        out = {
            "depth": self._depth[..., None].astype(np.float32),
            "pointgoal": np.array([info.euclidean_to_goal, bearing], np.float32),
            "velocity": robot.velocity.astype(np.float32),
        }
        if self.include_rgb:
            out["rgb"] = self._rgb.copy()
        return out

    def _info(self, info: TaskInfo) -> dict:
        """The step's info dict: distances, success and collisions so far."""
        return {
            "distance_to_goal": info.distance_to_goal,
            "geodesic_start_m": info.geodesic_start_m,
            "success": info.success,
            "collisions": self.metrics["collisions"].count,
        }

    def _end_episode(self) -> dict | None:
        """Close the running episode once (writing its metrics where it is recorded); its
        metrics' summary."""
        if self._ended:
            return None
        self._ended = True
        path = self.session.close()
        if path is not None:
            self.metrics.write(path)
        return self.metrics.summary()


class TwinsimExploreEnv(TwinsimNavEnv):
    """Exploration of one robot in a twinsim world (`closedloop.exploration.ExplorationTask`).

    As `TwinsimNavEnv`, but the observation has no `pointgoal`, the task reward is the floor
    newly seen by the camera (m²) and an episode terminates once the task's target coverage is
    reached. The task is `exploration` (`task` an `ExplorationConfig` or a mapping of its
    fields); `success_bonus` defaults to 0.
    """

    default_task: ClassVar[str] = "exploration"

    def __init__(self, *args, success_bonus: float = 0.0, **kwargs) -> None:
        super().__init__(*args, success_bonus=success_bonus, **kwargs)

    def _progress(self, previous, info) -> float:
        return info.covered_m2 - previous.covered_m2

    def _observation_space(self, height: int, width: int, far_m: float) -> spaces.Dict:
        parts = dict(super()._observation_space(height, width, far_m).spaces)
        del parts["pointgoal"]
        return spaces.Dict(parts)

    def _observation(self, obs: Observations, info) -> dict:
        robot = obs.robots[self.robot]
        out = {
            "depth": self._depth[..., None].astype(np.float32),
            "velocity": robot.velocity.astype(np.float32),
        }
        if self.include_rgb:
            out["rgb"] = self._rgb.copy()
        return out

    def _info(self, info) -> dict:
        return {
            "coverage": info.coverage,
            "covered_m2": info.covered_m2,
            "success": info.success,
            "collisions": self.metrics["collisions"].count,
        }


def register_envs() -> None:
    """Register the twinsim environments with gymnasium (once per process)."""
    for env_id, (cls, kwargs) in ENV_IDS.items():
        if env_id not in gymnasium.registry:
            gymnasium.register(env_id, entry_point=f"{__name__}:{cls}", kwargs=kwargs)


register_envs()
