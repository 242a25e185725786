"""Baseline navigators through the one episode loop (`run_episode`), and `twinsim navbench`:
the planner follows the ground-truth shortest path within its clearance, the depth-only policy
reaches the goal too, episodes are valid sequences scored by the task's metrics, and navbench
writes Table I, resumes without re-running, and refuses bad input in one line."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from twinsim.closedloop.metrics import metrics_dir
from twinsim.closedloop.session import Session
from twinsim.closedloop.tasks import PointGoalConfig, PointGoalTask
from twinsim.config import load_config
from twinsim.navigation.api import run_episode
from twinsim.navigation.bench import NavBenchSpec, navbench
from twinsim.registries import NAVIGATORS
from twinsim.sequence import validate_sequence

OVERRIDES = ["robot.kind=omni", "sensors.cam0.width=64", "sensors.cam0.height=48"]
TWINSIM = str(Path(sys.executable).with_name("twinsim"))
GOAL = PointGoalConfig(min_distance_m=2.0, max_distance_m=4.0)


def _episode(method: str, out: Path, seed: int = 1):
    cfg = load_config("tiny", OVERRIDES, duration_s=25)
    task = PointGoalTask(GOAL)
    result = run_episode(Session(cfg, out), task, NAVIGATORS.get(method).factory(), seed)
    return result, task


@pytest.fixture(scope="module")
def planned(tmp_path_factory, gl_backend):
    return _episode("planner", tmp_path_factory.mktemp("planner"))


def test_the_planner_reaches_the_goal_along_the_shortest_path(planned):
    result, task = planned
    metrics = result.summary["metrics"]
    assert result.ended_by == "task_done" and metrics["success"] == 1.0
    assert metrics["collisions"] == 0
    # the distance driven is the geodesic, less the success radius, plus little
    assert metrics["path_length"] <= 1.15 * task.geodesic_m
    assert metrics["path_length"] >= task.geodesic_m - GOAL.success_radius_m - 0.05
    # every point driven keeps the robot's clearance from the static obstacles (with 5 cm of
    # tracking slack): the free space is the ground truth the planner planned on
    fs = task.grid.fs
    clearance = np.asarray(fs.clearance_at(result.trajectory))
    assert clearance.min() >= fs.clearance_m - 0.05


def test_an_episode_is_a_valid_sequence_with_its_metrics_beside_it(planned):
    result, _ = planned
    assert validate_sequence(result.path).ok
    summary = json.loads((metrics_dir(result.path) / "summary.json").read_text())
    assert summary["metrics"]["success"] == 1.0
    meta = json.loads((result.path / "metadata.json").read_text())
    assert meta["closed_loop"]["ended_by"] == "task_done"


@pytest.mark.slow
def test_the_depth_only_policy_reaches_the_goal(tmp_path, gl_backend):
    result, _ = _episode("reactive_depth", tmp_path)
    assert result.summary["metrics"]["success"] == 1.0
    assert result.summary["metrics"]["distance_to_goal"] <= GOAL.success_radius_m


def test_a_method_refuses_a_task_it_cannot_do(tmp_path, gl_backend):
    from twinsim.closedloop.tasks import TaskError

    class NoGoal(PointGoalTask):
        def reset(self, session, obs, rng):
            super().reset(session, obs, rng)

    cfg = load_config("tiny", OVERRIDES, duration_s=2)
    with pytest.raises(TaskError, match="planner"):
        run_episode(
            Session(cfg, record=False), NoGoal(GOAL), NAVIGATORS.get("planner").factory(), 1
        )


def _navbench(out: Path, *extra: str) -> subprocess.CompletedProcess:
    args = [TWINSIM, "navbench", "--methods", "planner,reactive_depth", "--worlds", "apartment"]
    args += ["--adversity", "none", "--trials", "1", "--preset", "tiny", "--duration", "20"]
    args += ["--goal-min", "2", "--goal-max", "4", "--out", str(out), *extra]
    return subprocess.run(args, capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_navbench_writes_table_one_and_resumes(tmp_path, gl_backend):
    out = tmp_path / "nb"
    done = _navbench(out)
    assert done.returncode == 0, done.stderr
    with open(out / "table.csv") as f:
        rows = {r["method"]: r for r in csv.DictReader(f)}
    assert set(rows) == {"planner", "reactive_depth"}
    assert float(rows["planner"]["success_rate"]) == 100.0
    with open(out / "results.csv") as f:
        trials = list(csv.DictReader(f))
    # both methods met the same world and goal: the same geodesic distance from the start
    assert trials[0]["geodesic_start_m"] == trials[1]["geodesic_start_m"]
    for name in ("table.md", "table.tex", "plots/apartment_none_trial00.png"):
        assert (out / name).stat().st_size > 0
    assert "SR" in (out / "table.md").read_text() and r"\toprule" in (out / "table.tex").read_text()
    status = out / "runs/planner/apartment/none/trial_00/status.json"
    before = status.stat().st_mtime_ns
    again = _navbench(out)  # resumed: nothing runs again
    assert again.returncode == 0 and status.stat().st_mtime_ns == before
    changed = _navbench(out, "--seed", "5")
    assert changed.returncode == 2 and "seed" in changed.stderr
    assert "Traceback" not in changed.stderr
    # a resume with a trial to do removes the old report first: killed midway, the folder
    # must not look finished
    more = NavBenchSpec(("planner",), ("apartment",), ("none",), trials=2, duration_s=20.0)
    more = replace(more, goal_m=(2.0, 4.0), preset="tiny")
    seen: list[bool] = []
    navbench(more, out, workers=1, progress=lambda *_: seen.append((out / "results.csv").exists()))
    assert seen and not any(seen) and (out / "results.csv").exists()


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (["--methods", "teleport"], "unknown navigation method 'teleport'"),
        (["--worlds", "moon"], "--worlds"),
        (["--adversity", "extreme"], "--adversity"),
        (["--trials", "0"], "--trials"),
    ],
)
def test_navbench_refuses_bad_input_in_one_line(tmp_path, extra, says):
    done = _navbench(tmp_path / "nb", *extra)
    assert done.returncode == 2, done.stderr
    assert says in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "nb").exists()


@pytest.mark.slow
def test_the_planner_reaches_an_object_goal_by_its_footprint(tmp_path, gl_backend):
    import shapely

    from twinsim.closedloop.object_goal import ObjectGoalConfig, ObjectGoalTask

    cfg = load_config("tiny", OVERRIDES, duration_s=30)
    task = ObjectGoalTask(ObjectGoalConfig(object_class="sofa"))
    session = Session(cfg, record=False)
    result = run_episode(session, task, NAVIGATORS.get("planner").factory(), 1)
    assert result.summary["metrics"]["success"] == 1.0
    sofas = [o for o in session.scene.objects if o.semantic_class == "sofa"]
    assert set(task.instances) == {o.instance_id for o in sofas}
    # it stopped within the success radius of a sofa, beyond its own clearance: exactly there
    end = shapely.Point(result.trajectory[-1])
    gap = float(shapely.distance(task.footprint, end))
    assert task.grid.fs.clearance_m - 0.05 <= gap <= task.reach_m
    assert result.summary["metrics"]["distance_to_goal"] == 0.0


def test_an_object_goal_missing_from_the_world_names_what_is_there(gl_backend):
    from twinsim.closedloop.object_goal import ObjectGoalConfig, ObjectGoalTask
    from twinsim.closedloop.tasks import TaskError

    cfg = load_config("tiny", OVERRIDES, duration_s=2)
    task = ObjectGoalTask(ObjectGoalConfig(object_class="piano"))
    with pytest.raises(TaskError, match=r"no reachable piano .*reachable: .*sofa"):
        run_episode(Session(cfg, record=False), task, NAVIGATORS.get("planner").factory(), 1)
