"""Tasks, metrics and noise profiles are registry entries looked up by name: a toy task and toy
metrics defined here alone drive the gymnasium env and an episode by name, `twinsim plugins`
lists them, and an unknown name fails in one line listing the registered ones. Format 1 is read
by one `compat` package with a stated removal version."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from pydantic import Field
from typer.testing import CliRunner

from twinsim.cli import app
from twinsim.closedloop.metrics import MetricEntry, MetricManager, make_metrics
from twinsim.closedloop.tasks import TaskEntry, TaskInfo, body_yaw, make_task
from twinsim.configmodel import ConfigModel
from twinsim.errors import ConfigError, TwinsimError
from twinsim.navigation.api import NavigatorEntry
from twinsim.noise import NoiseError, NoiseProfile, resolve_profile
from twinsim.noise.profiles import LidarNoise
from twinsim.registries import (
    DEFAULT_METRICS,
    FAMILIES,
    METRICS,
    NAVIGATORS,
    NOISE_PROFILES,
    TASKS,
)

SMALL = ["sensors.cam0.width=32", "sensors.cam0.height=24"]
SEED = 1


class AheadConfig(ConfigModel):
    ahead_m: float = Field(0.5, gt=0.0)
    radius_m: float = Field(0.05, gt=0.0)


class ReachAhead:
    """Toy task: reach the point `ahead_m` straight ahead of the robot's start."""

    name = "reach_ahead"

    def __init__(self, config: AheadConfig | None = None, robot: str | None = None) -> None:
        self.config = config or AheadConfig()
        self.robot = robot
        self.goal: np.ndarray | None = None

    def reset(self, session, obs, rng) -> np.ndarray:
        self.robot = self.robot or session.robots[0]
        T = obs.robots[self.robot].T_world_body
        heading = T[:2, 0] / np.linalg.norm(T[:2, 0])
        self.goal = T[:2, 3] + self.config.ahead_m * heading
        self._t0_ns = obs.t_ns
        return self.goal.copy()

    def step(self, obs) -> TaskInfo:
        T = obs.robots[self.robot].T_world_body
        left = float(np.linalg.norm(self.goal - T[:2, 3]))
        return TaskInfo(
            t_ns=obs.t_ns,
            t_s=(obs.t_ns - self._t0_ns) / 1e9,
            position=T[:3, 3].copy(),
            yaw=body_yaw(T),
            goal=self.goal.copy(),
            distance_to_goal=left,
            euclidean_to_goal=left,
            geodesic_start_m=self.config.ahead_m,
            success=left <= self.config.radius_m,
        )

    def metrics(self, grace_s: float = 1.0):
        return make_metrics(("steps", "collisions"), grace_s)

    def finished(self, info: TaskInfo) -> bool:
        return info.success


class Steps:
    """Toy metric: the steps it was updated with."""

    name, columns = "steps", ("count",)

    def __init__(self) -> None:
        self.count = 0

    def update(self, obs, info) -> None:
        self.count += 1

    @property
    def value(self) -> tuple[float, ...]:
        return (float(self.count),)

    def summary(self) -> int:
        return self.count


class Progress:
    """Toy metric reading another one: distance to the goal gained since the first step."""

    name, columns = "progress", ("progress_m",)

    def __init__(self, distance) -> None:
        self.distance, self.first = distance, math.nan

    def update(self, obs, info) -> None:
        if math.isnan(self.first):
            self.first = self.distance.distance

    @property
    def value(self) -> tuple[float, ...]:
        return (self.first - self.distance.distance,)

    def summary(self) -> float:
        return self.value[0]


class Forward:
    """Toy navigator: straight ahead at 0.4 m/s."""

    def reset(self, context) -> None:
        self.context = context

    def act(self, obs, info):
        return {"velocity": {"vx": 0.4}}


@pytest.fixture
def toys():
    """The toy task, metrics and navigator, registered for one test."""
    with (
        TASKS.registered("reach_ahead", TaskEntry(ReachAhead, AheadConfig, "toy: reach ahead")),
        METRICS.registered("steps", MetricEntry(lambda c: Steps(), "toy: steps")),
        METRICS.registered(
            "progress", MetricEntry(lambda c: Progress(c.need("distance_to_goal")), "toy")
        ),
        NAVIGATORS.registered("forward", NavigatorEntry(Forward, ("reach_ahead",), "toy")),
    ):
        yield


def test_a_toy_task_and_metric_drive_the_gym_env_by_name(toys):
    from twinsim.closedloop.gym_env import TwinsimNavEnv

    env = TwinsimNavEnv(
        "tiny", [*SMALL, "sim.duration_s=0.5"], task_name="reach_ahead", task={"ahead_m": 0.7}
    )
    try:
        assert isinstance(env.task, ReachAhead) and env.task.config.ahead_m == 0.7
        obs, info = env.reset(seed=SEED)
        assert obs["pointgoal"][0] == pytest.approx(0.7, abs=1e-4)
        assert abs(obs["pointgoal"][1]) < 1e-4  # straight ahead
        steps, done = 0, False
        while not done:
            _, _, terminated, truncated, info = env.step(np.array([1.0, 0.0, 0.0]))
            steps, done = steps + 1, terminated or truncated
        summary = info["metrics"]["metrics"]
        assert list(summary) == ["steps", "collisions"]  # the task's own metrics
        assert summary["steps"] == steps + 1  # the reset's observation and every step
    finally:
        env.close()
    # metrics named: the one read by another first, the reward's collisions added
    env = TwinsimNavEnv("tiny", SMALL, task_name="reach_ahead", metrics=["progress", "steps"])
    try:
        env.reset(seed=SEED)
        for _ in range(15):
            env.step(np.array([1.0, 0.0, 0.0]))
        assert [m.name for m in env.metrics.metrics] == [
            "distance_to_goal",
            "progress",
            "steps",
            "collisions",
        ]
        assert env.metrics["progress"].value[0] > 0.03  # it drove towards the goal
    finally:
        env.close()


def test_an_episode_runs_a_toy_task_navigator_and_metrics_by_name(toys):
    from twinsim.closedloop.session import Session
    from twinsim.config import load_config
    from twinsim.navigation.api import run_episode

    cfg = load_config("tiny", ["robot.kind=omni", *SMALL], duration_s=4.0)
    result = run_episode(
        Session(cfg, record=False), "reach_ahead", "forward", SEED, metrics=["progress", "steps"]
    )
    assert result.ended_by == "task_done"
    metrics = result.summary["metrics"]
    assert list(metrics) == ["distance_to_goal", "progress", "steps"]
    assert metrics["steps"] == result.steps + 1
    assert metrics["progress"] == pytest.approx(0.5 - metrics["distance_to_goal"])
    assert metrics["distance_to_goal"] <= AheadConfig().radius_m


def test_twinsim_plugins_lists_tasks_metrics_and_noise_profiles(toys):
    assert {"tasks", "metrics", "noise_profiles"} <= set(FAMILIES)
    runner = CliRunner()
    for family, names in [
        ("tasks", {"pointgoal", "objectgoal", "exploration", "reach_ahead"}),
        ("metrics", {*DEFAULT_METRICS, "coverage", "steps", "progress"}),
        ("noise_profiles", {"rotors-default", "grade", "kinect", "gnss"}),
    ]:
        done = runner.invoke(app, ["plugins", family], env={"COLUMNS": "200"})
        assert done.exit_code == 0, done.output
        rows = [line.split() for line in done.output.splitlines()[1:]]
        assert {r[1] for r in rows} >= names
        assert {(r[0], r[2], r[3]) for r in rows} == {(family, "twinsim", f"twinsim.{family}")}


def _one_line(exc: pytest.ExceptionInfo) -> str:
    message = str(exc.value)
    assert "\n" not in message
    return message


def test_unknown_task_metric_and_noise_profile_names_fail_in_one_line(tmp_path):
    with pytest.raises(ConfigError) as exc:
        make_task("teleport")
    assert _one_line(exc) == (
        "task: unknown task 'teleport'; registered: pointgoal, objectgoal, exploration"
    )
    with pytest.raises(ConfigError) as exc:
        make_metrics(["spl", "speed"])
    assert _one_line(exc).startswith(
        "metrics: unknown metric 'speed'; registered: distance_to_goal, time_to_goal, success"
    )
    with pytest.raises(ConfigError, match="unknown metric 'speed'"):
        MetricManager(["speed"])
    with pytest.raises(NoiseError) as exc:
        resolve_profile("realsense")
    assert _one_line(exc).startswith(
        "unknown noise profile 'realsense'; registered: rotors-default, carla-loc"
    )
    done = CliRunner().invoke(
        app, ["noise", str(tmp_path), "--out", str(tmp_path / "o"), "--profile", "realsense"]
    )
    assert done.exit_code == 2
    assert "unknown noise profile 'realsense'; registered: rotors-default" in done.output
    assert len(done.output.strip().splitlines()) == 1


def test_the_gym_env_checks_its_task_and_metric_names_first():
    from twinsim.closedloop.gym_env import TwinsimNavEnv

    with pytest.raises(ConfigError, match=r"^task: unknown task 'teleport'; registered: "):
        TwinsimNavEnv("tiny", SMALL, task_name="teleport")
    with pytest.raises(ConfigError, match=r"^metrics: unknown metric 'speed'; registered: "):
        TwinsimNavEnv("tiny", SMALL, metrics=["spl", "speed"])
    with pytest.raises(
        ConfigError,
        match=r"task 'exploration': settings of type ExplorationConfig, got PointGoalConfig",
    ):
        from twinsim.closedloop.tasks import PointGoalConfig

        TwinsimNavEnv("tiny", SMALL, task_name="exploration", task=PointGoalConfig())


def test_a_task_s_settings_are_checked_against_its_config_model():
    task = make_task("objectgoal", {"object_class": "sofa"})
    assert task.config.object_class == "sofa" and task.config.success_radius_m == 0.5
    with pytest.raises(ConfigError, match=r"task 'pointgoal': .*min_distance_m"):
        make_task("pointgoal", {"min_distance_m": -1.0})
    with pytest.raises(ConfigError, match=r"task 'exploration': unknown config field"):
        make_task("exploration", {"min_distance_m": 1.0})


def test_navbench_names_its_task_from_the_registry():
    from twinsim.navigation.bench import NavBenchSpec

    NavBenchSpec(("planner",), ("apartment",)).check()
    NavBenchSpec(("planner",), ("apartment",), task="objectgoal").check()
    with pytest.raises(ConfigError, match=r"^task: unknown task 'teleport'"):
        NavBenchSpec(("planner",), ("apartment",), task="teleport").check()
    with pytest.raises(TwinsimError, match=r"'frontier' does not do the task 'pointgoal'"):
        NavBenchSpec(("frontier",), ("apartment",)).check()
    with pytest.raises(ConfigError, match=r"task 'exploration': unknown config field"):
        NavBenchSpec(("frontier",), ("apartment",), task="exploration").check()


def test_metrics_another_one_reads_are_made_once_before_it():
    made = make_metrics(["sc", "spl"])
    assert [m.name for m in made] == ["success", "collisions", "sc", "path_length", "spl"]
    spl, sc = made[4], made[2]
    assert spl.success is made[0] and sc.success is made[0] and spl.path is made[3]
    assert [m.name for m in make_metrics(DEFAULT_METRICS)] == list(DEFAULT_METRICS)
    with pytest.raises(ConfigError, match="name each metric once"):
        make_metrics(["spl", "spl"])
    loop = MetricEntry(lambda c: c.need("loop"), "reads itself")
    with METRICS.registered("loop", loop), pytest.raises(ConfigError, match="needs itself"):
        make_metrics(["loop"])
    with (
        METRICS.registered("misnamed", MetricEntry(lambda c: Steps(), "makes 'steps'")),
        pytest.raises(ConfigError, match=r"metric 'misnamed' .* makes a metric named 'steps'"),
    ):
        make_metrics(["misnamed"])


def test_a_registered_noise_profile_resolves_under_its_name():
    toy = NoiseProfile(name="other", requires=("lidar",), lidar=LidarNoise(enabled=True))
    with NOISE_PROFILES.registered("toy-lidar", toy):
        resolved = resolve_profile("toy-lidar", ["lidar.dropout=0.5"])
        assert resolved.name == "toy-lidar" and resolved.lidar.dropout == 0.5
    assert "toy-lidar" not in NOISE_PROFILES


def test_format_1_support_states_its_removal_version():
    import twinsim
    import twinsim.compat
    from twinsim.compat import REMOVAL_VERSION

    def version(text: str) -> tuple[int, ...]:
        return tuple(int(part) for part in text.split(".")[:3])

    # format 1 must be gone (the `compat` package and its call sites) by this version
    assert version(twinsim.__version__) < version(REMOVAL_VERSION)
    docs = Path(__file__).parent.parent / "docs"
    for page in ("architecture.md", "sequence-format.md"):
        assert f"removed in twinsim {REMOVAL_VERSION}" in (docs / page).read_text(), page
    assert f"removed in twinsim {REMOVAL_VERSION}" in twinsim.compat.__doc__
