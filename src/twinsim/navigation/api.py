"""The navigator interface and the episode loop every method runs through.

A navigator drives one robot of a `Session`: `reset(context)` once per episode, after the task
has drawn its goal, then `act(obs, info)` every control period, returning that robot's command
(`{mode: {field: value}}`, as `Session.step` takes it). `run_episode` is the one loop: reset the
session and the task, step until the task is done or the time limit, update the task's metrics,
and close the episode (written where the session records). Methods are registered in
`twinsim.registries.NAVIGATORS`, tasks in `TASKS` and metrics in `METRICS`: `run_episode` takes
each by name too.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from twinsim.closedloop.metrics import Metric, MetricManager, make_metrics
from twinsim.closedloop.observations import Observations, first_camera
from twinsim.closedloop.session import Session
from twinsim.config import TwinsimConfig
from twinsim.registries import LOCALIZERS, NAVIGATORS, ROBOTS
from twinsim.robots.common.commands import CommandSpace
from twinsim.robots.common.live_reference import BaseLimits

if TYPE_CHECKING:
    from twinsim.navigation.localization import Localizer

#: spawn key of a navigator's random stream, apart from the world's and the task's
_NAVIGATOR_STREAM = 0x4E41


def navigator_rng(seed: int) -> np.random.Generator:
    """A navigator's generator for an episode `seed`: its own stream of that seed."""
    return np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(_NAVIGATOR_STREAM,)))


class Task(Protocol):
    """What a navigator is asked to do (`twinsim.closedloop.tasks` and siblings)."""

    name: str
    robot: str | None

    def reset(self, session: Session, obs: Observations, rng: np.random.Generator) -> Any: ...

    def step(self, obs: Observations) -> Any: ...

    def metrics(self, grace_s: float) -> list[Metric]: ...

    def finished(self, info: Any) -> bool: ...


@dataclass(frozen=True)
class NavContext:
    """What a navigator knows at the start of an episode: the session (its scene is the world's
    ground truth, for methods allowed to use it), the robot it drives, that robot's limits and
    commands, the task (its goal), the first camera's name and config, and its own generator."""

    session: Session
    robot: str
    spec: Any  # the robot's spec in the episode's scene
    limits: BaseLimits | None
    command_space: CommandSpace
    task: Task
    goal: Any  # what task.reset returned (a world x, y for a point goal)
    camera: str | None
    camera_config: Any
    control_hz: int
    rng: np.random.Generator

    @property
    def config(self) -> TwinsimConfig:
        return self.session.config


class Navigator(Protocol):
    """A method that drives one robot: `reset` per episode, `act` per control period."""

    def reset(self, context: NavContext) -> None: ...

    def act(self, obs: Observations, info: Any) -> Mapping[str, Mapping[str, float]]: ...


@dataclass(frozen=True)
class NavigatorEntry:
    """A registered method: its factory (keyword parameters from the command line or a YAML
    file), the task names it solves, and a line saying what it is."""

    factory: Callable[..., Navigator]
    tasks: tuple[str, ...]
    summary: str


@dataclass
class EpisodeResult:
    """One scored episode: its folder (None when not recorded), why it ended, the metrics'
    summary, the manager with their time series, and the robot's planar path (N, 2)."""

    path: Path | None
    ended_by: str
    summary: dict
    metrics: MetricManager
    trajectory: np.ndarray
    goal: Any
    steps: int
    extra: dict = field(default_factory=dict)


StepCallback = Callable[[Observations, Any], None]


def run_episode(
    session: Session,
    task: Task | str,
    navigator: Navigator | str,
    seed: int,
    *,
    out: str | Path | None = None,
    grace_s: float = 1.0,
    on_step: StepCallback | None = None,
    metrics: Sequence[str] | None = None,
    localizer: str | Localizer | None = None,
) -> EpisodeResult:
    """Run one episode of `navigator` on `task` in the world of `seed`; the session's config
    sets the time limit. Ends when `task.finished(info)` (ended_by `task_done`) or at the time
    limit; the metrics are written beside a recorded episode (`metrics.metrics_dir`).

    `task` and `navigator` may be registered names (`TASKS`, with the task's default settings;
    `NAVIGATORS`, its factory's defaults); `metrics` names registered metrics (default: the
    task's own). Every name is checked before the session resets.

    `localizer` (a registered name or an object; None or `ground_truth`: the ground truth):
    the navigator sees the robot's poses as that estimator gives them, from the start pose on,
    while the task scores the true motion; the summary's `localization` says how far the
    estimate drifted (`DriftLog`)."""
    from twinsim.closedloop.tasks import make_task, task_rng
    from twinsim.navigation.localization import Localized

    if isinstance(task, str):
        task = make_task(task)
    if isinstance(navigator, str):
        navigator = NAVIGATORS.get(navigator).factory()
    localizer_name = localizer if isinstance(localizer, str) else type(localizer).__name__
    if isinstance(localizer, str):
        localizer = LOCALIZERS.get(localizer).factory()
    scored = task.metrics(grace_s) if metrics is None else make_metrics(metrics, grace_s)
    obs = session.reset(seed=seed, out=out)
    robot = task.robot or session.robots[0]
    task.robot = robot
    goal = task.reset(session, obs, task_rng(seed))
    spec = next(r for r in session.scene.robots if r.name == robot)
    kind = ROBOTS.get(spec.kind)
    camera, camera_config = first_camera(session.config, robot)
    context = NavContext(
        session=session,
        robot=robot,
        spec=spec,
        limits=kind.base_limits(spec),
        command_space=session.command_space(robot),
        task=task,
        goal=goal,
        camera=camera,
        camera_config=camera_config,
        control_hz=session.control_hz,
        rng=navigator_rng(seed),
    )
    navigator.reset(context)
    localized = None if localizer is None else Localized(localizer_name, localizer, context, obs)
    manager = MetricManager(scored, grace_s=grace_s)
    info = task.step(obs)
    manager.update(obs.robots[robot], info)
    path = [info.position[:2].copy()]
    steps = 0
    while not obs.done and not task.finished(info):
        seen = obs if localized is None else localized.observe(obs)
        obs = session.step({robot: navigator.act(seen, info)})
        steps += 1
        info = task.step(obs)
        manager.update(obs.robots[robot], info)
        path.append(info.position[:2].copy())
        if on_step is not None:
            on_step(obs, info)
    ended_by = "time_limit" if obs.done else "task_done"
    folder = session.close(ended_by)
    summary = manager.summary()
    if localized is not None:
        summary["localization"] = localized.drift.summary()
    if folder is not None:
        manager.write(folder)
    return EpisodeResult(
        path=folder,
        ended_by=ended_by,
        summary=summary,
        metrics=manager,
        trajectory=np.array(path),
        goal=goal,
        steps=steps,
    )
