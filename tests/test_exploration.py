"""Exploration: coverage counts only what the camera saw; the frontier explorer covers the tiny
world, in a recorded episode that validates."""

from __future__ import annotations

import math

import numpy as np
import pytest

from twinsim.closedloop import Session
from twinsim.closedloop.exploration import ExplorationConfig, ExplorationTask
from twinsim.closedloop.metrics import metrics_dir
from twinsim.config import load_config
from twinsim.navigation.api import NavContext, run_episode
from twinsim.navigation.frontier import FrontierExplorer
from twinsim.navigation.occupancy import FREE, OCCUPIED, UNKNOWN, OccupancyGrid, frontier
from twinsim.registries import NAVIGATORS
from twinsim.sensors.camera import intrinsics
from twinsim.sequence.validate import validate_sequence

TINY = [
    "robot.kind=omni",
    "sensors.cam0.width=64",
    "sensors.cam0.height=48",
    "sensors.cam0.rate_hz=10",
    "people.count=0",
    "flying_objects.count=0",
]
SEED = 0
STILL_S = 1.0


def test_occupancy_grid_maps_floor_and_wall():
    """A level camera 0.85 m up, facing a wall 3 m away along +x: the floor before the wall is
    free, the wall occupied, what lies behind it unknown; the frontier borders the unknown."""
    K = intrinsics(64, 48, 90.0)
    v = np.arange(48)[:, None] - K[1, 2]
    with np.errstate(divide="ignore"):
        floor_z = np.where(v > 0, 0.85 * K[1, 1] / v, np.inf)
    depth = np.broadcast_to(np.minimum(floor_z, 3.0), (48, 64)).astype(np.float32)
    T = np.eye(4)
    T[:3, :3] = [[0, 0, 1], [-1, 0, 0], [0, -1, 0]]  # optical z along world +x, y down
    T[:3, 3] = [0.0, 0.0, 0.85]
    grid = OccupancyGrid(np.zeros(2), 12.0, 0.05)
    grid.integrate(depth, K, T, (0.05, 0.9), 4.0, stride=1)

    def state(x: float, y: float) -> int:
        flat, _ = grid.cells(np.array([[x, y]]))
        return int(grid.state.ravel()[flat[0]])

    assert all(state(x, 0.0) == FREE for x in (0.5, 1.5, 2.5, 2.8))
    assert state(3.02, 0.0) == OCCUPIED and state(3.02, 1.5) == OCCUPIED
    assert state(4.0, 0.0) == UNKNOWN and state(-1.0, 0.0) == UNKNOWN
    free, unknown = grid.traversable(0.27)
    assert not free[grid.state == OCCUPIED].any()
    edge = frontier(free, unknown, 100)
    assert edge.any() and not edge[grid.state != FREE].any()


class StillThenSpin:
    """Holds still for STILL_S, then turns on the spot at the base's yaw rate."""

    def reset(self, context: NavContext) -> None:
        self.wz, self.hz, self.steps = context.limits.max_yaw_rate_radps, context.control_hz, 0

    def act(self, obs, info) -> dict:
        self.steps += 1
        wz = self.wz if self.steps > STILL_S * self.hz else 0.0
        return {"velocity": {"vx": 0.0, "vy": 0.0, "wz": wz}}


def test_coverage_is_what_the_camera_cone_saw():
    """Standing still covers part of the floor, no more than the camera's cone can reach; a
    full turn on the spot covers more."""
    cfg = load_config("tiny", TINY, duration_s=STILL_S + 13.0)
    task = ExplorationTask()
    at: dict[str, float] = {}

    def watch(obs, info) -> None:
        frame = obs.robots["robot"].latest_frame("cam0")
        if frame is not None:
            at["cam_z"] = frame.T_world_cam[2, 3]
            at["pitch"] = frame.T_world_cam[2, 2]  # the optical axis' z: 0 when level
        if info.t_s <= STILL_S:
            at["still"] = info.coverage
            at["still_m2"] = info.covered_m2

    with Session(cfg, record=False) as session:
        result = run_episode(session, task, StillThenSpin(), SEED, on_step=watch)
    cam = cfg.robots["robot"].sensors["cam0"]
    assert result.ended_by == "time_limit"
    assert at["pitch"] == pytest.approx(0.0, abs=1e-6) and at["cam_z"] > 0.2
    # a level camera sees floor beyond its image's bottom edge, within its FOV and the range
    hfov = math.radians(cam.hfov_deg)
    tan_half_v = cam.height / cam.width * math.tan(hfov / 2)
    r_min, r = at["cam_z"] / tan_half_v, task.config.sense_range_m
    cone_m2 = 0.5 * hfov * (r**2 - r_min**2) + 2 * (r - r_min + hfov * r) * task.config.cell_m
    assert 0.0 < at["still"] < cone_m2 / task.free_m2
    assert at["still_m2"] <= cone_m2
    spun = result.summary["metrics"]["coverage"]["coverage"]
    assert spun > 1.2 * at["still"]  # this start sits in a small room: 0.19 against 0.14
    ring_m2 = math.pi * (r**2 - r_min**2) + 2 * math.pi * (r + r_min) * task.config.cell_m
    assert result.summary["metrics"]["coverage"]["covered_m2"] <= ring_m2


@pytest.mark.slow
def test_frontier_explorer_covers_the_tiny_world(tmp_path):
    """From its own depth map, the explorer sees 80 % of the reachable floor before the time
    limit; the recorded episode validates and its coverage series is written beside it."""
    assert NAVIGATORS.get("frontier").factory is FrontierExplorer
    cfg = load_config("tiny", TINY, duration_s=80.0)
    task = ExplorationTask(ExplorationConfig(target_coverage=0.8))
    with Session(cfg, tmp_path / "eps") as session:
        result = run_episode(session, task, FrontierExplorer(), SEED)
    assert result.ended_by == "task_done"
    summary = result.summary["metrics"]
    assert summary["coverage"]["coverage"] >= 0.8
    assert summary["coverage"]["covered_m2"] == pytest.approx(0.8 * task.free_m2, rel=0.1)
    assert summary["path_length"] > 3.0
    assert validate_sequence(result.path).ok
    series = np.loadtxt(metrics_dir(result.path) / "coverage.csv", delimiter=",", skiprows=1)
    assert np.all(np.diff(series[:, 1]) >= 0.0) and series[-1, 1] >= 0.8
