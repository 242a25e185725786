"""Closed-loop tasks, metrics and the gymnasium env, on the tiny world with 32x24 images."""

from __future__ import annotations

import csv
import json
import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from twinsim.closedloop import EpisodeEndedError, Session
from twinsim.closedloop.gym_env import TwinsimNavEnv
from twinsim.closedloop.metrics import MetricManager, metrics_dir
from twinsim.closedloop.observations import RobotObservations
from twinsim.closedloop.tasks import PointGoalTask, TaskInfo, body_yaw, task_rng
from twinsim.config import load_config
from twinsim.robots.common.commands import CommandError
from twinsim.scene.vocabulary import class_id
from twinsim.sequence.contacts import CONTACT_DTYPE, NO_PART
from twinsim.sequence.validate import validate_sequence

SMALL = ["sensors.cam0.width=32", "sensors.cam0.height=24"]
SEED = 1  # tiny world, omni: a goal 1.64 m away in line of sight


def _session(tmp_path, duration_s: float, record: bool = True) -> Session:
    """A session of the tiny world with an omni robot, small images and `duration_s`."""
    cfg = load_config("tiny", overrides=["robot.kind=omni", f"sim.duration_s={duration_s}", *SMALL])
    return Session(cfg, tmp_path / "episodes") if record else Session(cfg, record=False)


@pytest.fixture(scope="module")
def env():
    """One env for the checks that only reset and step it."""
    env = TwinsimNavEnv("tiny", SMALL, render_mode="rgb_array", include_rgb=True)
    yield env
    env.close()


@pytest.mark.slow
def test_env_passes_gymnasium_checker(env):
    """check_env: spaces, reset/step signatures and seeding, render."""
    env.reset(seed=SEED)  # check_env's own resets then draw their worlds from this seed
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # infinite Box bounds and make-only render checks
        check_env(env.unwrapped)
    obs, info = env.reset(seed=SEED)
    assert obs["depth"].shape == (24, 32, 1) and obs["rgb"].dtype == np.uint8
    assert obs["depth"].max() > 0.0
    assert env.render().shape == (24, 32, 3)
    assert info["geodesic_start_m"] == pytest.approx(obs["pointgoal"][0], abs=1e-4)
    assert env.action_space.shape == (3,)  # omni: vx, vy, wz


def test_env_ids_registered():
    """Importing the module registers the point-goal ids."""
    assert {"twinsim/PointNav-v0", "twinsim/PointNav-tiny-v0"} <= set(gymnasium.registry)


def test_made_env_records_episodes_with_their_metrics(tmp_path):
    """`gymnasium.make` of the tiny id with `record_dir`: the episode ends truncated at its
    time limit, its sequence validates and its metrics lie beside it."""
    env = gymnasium.make(
        "twinsim/PointNav-tiny-v0", overrides=[*SMALL, "sim.duration_s=0.5"], record_dir=tmp_path
    )
    env.reset(seed=SEED)
    truncated = terminated = False
    while not (truncated or terminated):
        _, _, terminated, truncated, info = env.step(env.action_space.sample())
    with pytest.raises(EpisodeEndedError, match="call reset"):
        env.step(env.action_space.sample())
    env.close()
    episode = tmp_path / "episode-0000"
    assert truncated and info["metrics"]["metrics"]["success"] == 0.0
    assert validate_sequence(episode).ok
    assert (metrics_dir(episode) / "summary.json").is_file()


def test_same_seed_same_goal_and_observations(env):
    """Same seed, same actions: the same goal and the same observations, step by step."""
    actions = [np.array([0.5, 0.0, 0.2], np.float32)] * 3

    def rollout() -> tuple[np.ndarray, list[dict]]:
        obs, _ = env.reset(seed=SEED + 1)
        seen = [obs] + [env.step(a)[0] for a in actions]
        return env.unwrapped.task.goal.copy(), seen

    goal_a, seen_a = rollout()
    goal_b, seen_b = rollout()
    np.testing.assert_array_equal(goal_a, goal_b)
    for a, b in zip(seen_a, seen_b, strict=True):
        for key in a:
            np.testing.assert_array_equal(a[key], b[key])
    assert not np.array_equal(seen_a[0]["velocity"], seen_a[-1]["velocity"])


def test_bad_actions_and_commands_are_refused(env, tmp_path):
    """A wrong action shape, a non-finite action and an unknown field name what is allowed."""
    env.reset(seed=SEED)
    with pytest.raises(CommandError, match=r"shape \(3,\) for velocity \(vx, vy, wz\)"):
        env.step(np.zeros(2))
    with pytest.raises(CommandError, match="finite"):
        env.step(np.array([np.nan, 0.0, 0.0]))
    session = _session(tmp_path, 1.0, record=False)
    session.reset(seed=SEED)
    with pytest.raises(CommandError, match="unknown field 'vz'; allowed: vx, vy, wz"):
        session.step({"velocity": {"vz": 1.0}})
    session.close()


def _drive(session: Session, task: PointGoalTask, manager: MetricManager, command) -> None:
    """Step until success or the time limit; `command(obs)` gives each step's command."""
    obs = session.reset(seed=SEED)
    task.reset(session, obs, task_rng(SEED))
    manager.update(obs.robots[task.robot], task.step(obs))
    while not obs.done:
        obs = session.step(command(obs))
        info = task.step(obs)
        manager.update(obs.robots[task.robot], info)
        if info.success:
            break


def test_waypoint_drive_reaches_point_goal(tmp_path):
    """Waypoints along the task's shortest path reach the goal: Success 1, SPL in (0, 1], the
    series written beside the episode (which still validates), the distance falling."""
    session, task, manager = _session(tmp_path, 5.0), PointGoalTask(), MetricManager()
    waypoints: list[np.ndarray] = []

    def command(obs):
        if not waypoints:
            waypoints.extend(task.path[1:])
        elif obs.robots[task.robot].arrived and len(waypoints) > 1:
            waypoints.pop(0)
        return {"waypoint": {"x": float(waypoints[0][0]), "y": float(waypoints[0][1])}}

    _drive(session, task, manager, command)
    path = session.close()
    assert 1.5 <= task.geodesic_m <= 4.0
    summary = manager.summary()["metrics"]
    assert summary["success"] == 1.0 and summary["sc"] == 1.0
    assert 0.0 < summary["spl"] <= 1.0
    assert 0.0 < summary["time_to_goal"] < 5.0
    out = manager.write(path)
    assert out == metrics_dir(path) and validate_sequence(path).ok
    with (out / "distance_to_goal.csv").open() as f:
        rows = list(csv.DictReader(f))
    distances = [float(r["distance_m"]) for r in rows]
    assert distances[-1] < task.config.success_radius_m < distances[0]
    assert {p.name for p in out.iterdir()} >= {"spl.csv", "collisions.csv", "summary.json"}
    assert json.loads((out / "summary.json").read_text())["metrics"]["success"] == 1.0


def test_driving_into_an_obstacle_counts_a_collision(tmp_path):
    """Full speed straight at the nearest obstacle: at least one collision, SC below 1."""
    session, task = _session(tmp_path, 3.0, record=False), PointGoalTask()
    manager = MetricManager(grace_s=0.5)
    heading: list[dict] = []

    def command(obs):
        if not heading:
            T = obs.robots[task.robot].T_world_body
            yaws = np.linspace(-np.pi, np.pi, 72, endpoint=False)
            toward = yaws[np.argmin(task.grid.fs.ray_lengths(T[:2, 3], yaws))] - body_yaw(T)
            heading.append({"velocity": {"vx": 0.5 * np.cos(toward), "vy": 0.5 * np.sin(toward)}})
        return heading[0]

    _drive(session, task, manager, command)
    session.close()
    assert manager["collisions"].count >= 1
    assert manager.summary()["metrics"]["sc"] < 1.0


def _step(t_s: float, semantic: list[int], success: bool = False) -> tuple:
    """Synthetic observations and task info of one step with contacts of these classes."""
    records = np.zeros(len(semantic), CONTACT_DTYPE)
    records["semantic"], records["other_part"] = semantic, NO_PART
    obs = RobotObservations(np.eye(4), np.zeros(6), contacts={"contacts": records})
    info = TaskInfo(
        t_ns=round(t_s * 1e9),
        t_s=t_s,
        position=np.array([t_s, 0.0, 0.0]),
        yaw=0.0,
        goal=np.array([2.0, 0.0]),
        distance_to_goal=2.0 - t_s,
        euclidean_to_goal=2.0 - t_s,
        geodesic_start_m=1.0,
        success=success,
    )
    return obs, info


def test_collisions_grace_floor_and_timeout():
    """A collision is a new non-floor contact after the grace; nothing counts past timeout."""
    manager = MetricManager(grace_s=1.0, timeout_s=4.0)
    wall, floor = class_id("wall"), class_id("floor")
    for t, classes in [(0.5, [wall]), (1.0, [wall]), (1.5, [floor]), (2.0, [wall, floor])]:
        manager.update(*_step(t, classes))
    manager.update(*_step(2.5, [], success=True))
    manager.update(*_step(3.0, [wall]))
    manager.update(*_step(4.5, [floor]))
    manager.update(*_step(5.0, [wall]))
    summary = manager.summary()
    assert manager["collisions"].count == 2 and summary["timed_out"]
    assert summary["metrics"]["path_length"] == pytest.approx(2.0)  # 0.5 → 2.5 m, then frozen
    assert summary["metrics"]["spl"] == pytest.approx(0.5)
    assert summary["metrics"]["sc"] == pytest.approx(1 / 3)
    assert summary["metrics"]["time_to_goal"] == 2.5


@pytest.mark.slow
def test_explore_env_passes_the_checker_and_pays_for_new_floor():
    """The exploration env: check_env passes, and its rewards add up to the floor seen (m²)."""
    env = gymnasium.make("twinsim/Explore-tiny-v0", overrides=[*SMALL, "sim.duration_s=1.0"])
    try:
        env.reset(seed=SEED)  # check_env's own resets then draw their worlds from this seed
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            check_env(env.unwrapped)
        obs, info = env.reset(seed=SEED)
        assert "pointgoal" not in obs and info["covered_m2"] > 0.0
        start, total, done = info["covered_m2"], 0.0, False
        while not done:
            obs, reward, terminated, truncated, info = env.step(np.array([0.0, 0.0, 1.0]))
            total += reward
            done = terminated or truncated
        assert info["covered_m2"] > start  # turning on the spot shows more floor
        assert total == pytest.approx(info["covered_m2"] - start)
        assert info["metrics"]["metrics"]["coverage"]["coverage"] == pytest.approx(info["coverage"])
    finally:
        env.close()
