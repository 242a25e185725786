"""GRADE's "2 UAVs + 1 ground robot" preset (`--config team`): three robots in one apartment,
each with its own tour, sensors and streams, started apart, in one valid sequence.

The `omni` kind is registered here for the module (until `twinsim.robots.builtin` does)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from twinsim.assemble import ROBOT_START_GAP_M
from twinsim.config import load_config
from twinsim.registries import ROBOTS
from twinsim.robots.omni.robot import Omni
from twinsim.robots.omni.spec import BODY_Z_M, CAMERA_HEIGHT_M, CAMERA_POS
from twinsim.sequence import open_sequence, validate_sequence

#: a variant of a capability the everyday tier checks elsewhere (`make test` runs it)
pytestmark = pytest.mark.slow

TEAM = {"uav1": "drone", "uav2": "drone", "ugv": "omni"}
STREAMS = {
    "cam0",
    "imu0",
    "groundtruth_body",
    "groundtruth_cam0",
    "odometry",
    "joint_states",
    "robot_state",
    "contacts",
}
SMALL = [
    "sensors.cam0.width=64",  # the drones' template (the default preset's sensors)
    "sensors.cam0.height=48",
    "robots.ugv.sensors.cam0.width=64",
    "robots.ugv.sensors.cam0.height=48",
    "scene.texture_size=64",
]


@pytest.fixture(scope="module")
def omni_kind():
    if "omni" in ROBOTS:  # already a built-in
        yield
        return
    with ROBOTS.registered("omni", Omni()):
        yield


@pytest.fixture(scope="module")
def team_sequence(omni_kind, gl_backend, tmp_path_factory):
    from twinsim.sim import run

    cfg = load_config("team", SMALL, duration_s=1.0)
    return run(cfg, tmp_path_factory.mktemp("team") / "seq")


def test_the_preset_is_two_drones_and_the_ground_robot(omni_kind):
    cfg = load_config("team")
    assert {name: robot.kind for name, robot in cfg.robots.items()} == TEAM
    assert list(cfg.robots) == list(TEAM)
    assert cfg.scene.generator == "apartment" and cfg.sim.duration_s == 60.0
    for robot in cfg.robots.values():
        assert set(robot.sensors) == {"cam0", "imu0"}
        assert (robot.sensors["cam0"].width, robot.sensors["cam0"].height) == (640, 480)
    assert cfg.robots["ugv"].sensors["cam0"].pos == CAMERA_POS


@pytest.mark.slow
def test_the_team_records_three_robots_in_one_valid_sequence(team_sequence):
    report = validate_sequence(team_sequence)
    assert report.ok, report.problems
    seq = open_sequence(team_sequence)
    assert seq.robots == list(TEAM)
    assert seq.metadata["robots"] == [{"name": n, "kind": k} for n, k in TEAM.items()]
    assert set(seq.streams) == {f"{r}.{s}" for r in TEAM for s in STREAMS}
    for name in seq.streams:
        assert seq.stream_info(name)["robot"] == name.split(".")[0]
    robots = [row for row in seq.metadata["instances"] if row["semantic_class"] == "robot"]
    assert [row["robot"] for row in robots] == list(TEAM)  # each one the others' cameras see


def test_each_robot_starts_apart_and_goes_its_own_way(team_sequence):
    seq = open_sequence(team_sequence)
    robots = [seq.scene.robot_named(name) for name in TEAM]
    for a, b in itertools.combinations(robots, 2):
        assert np.hypot(*np.subtract(a.start_pos[:2], b.start_pos[:2])) >= ROBOT_START_GAP_M
        assert a.path != b.path
    for robot in robots:
        own = seq.for_robot(robot.name)
        _, T = own.groundtruth()
        reach = robot.max_speed_mps * seq.metadata["config"]["sim"]["bootstrap_s"] + 0.05
        assert np.hypot(*(T[0, :2, 3] - robot.start_pos[:2])) <= reach
        assert np.allclose(T[:, 2, 3], robot.start_pos[2], atol=0.05)  # its own height
    ugv = seq.for_robot("ugv")
    _, T_cam = ugv.groundtruth("groundtruth_cam0")
    assert np.allclose(T_cam[:, 2, 3], CAMERA_HEIGHT_M, atol=1e-9)
    assert seq.scene.robot_named("ugv").start_pos[2] == BODY_Z_M
    assert ugv.stream_info("joint_states")["joints"] == ["x", "y", "yaw"]


def test_the_scene_graph_has_each_robot_as_an_agent_and_export_takes_the_ugv(
    team_sequence, tmp_path
):
    """Each of the three robots is an agent track of the scene graph with its own poses, and
    `export --robot ugv` writes the ground robot's trajectory, not a drone's."""
    from typer.testing import CliRunner

    from twinsim.cli import app
    from twinsim.dsg.tracks import sequence_tracks

    seq = open_sequence(team_sequence)
    robots = [t for t in sequence_tracks(seq, 10) if t.kind == "robot"]
    assert [t.name for t in robots] == list(TEAM)
    for track in robots:
        _, T = seq.for_robot(track.name).groundtruth()
        assert np.array_equal(track.T_world_body, T[::6])
    out = tmp_path / "ugv_tum"
    args = ["export", str(team_sequence), "--format", "tum", "--robot", "ugv", "--out", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    rows = np.loadtxt(out / "groundtruth.txt")
    _, T = seq.for_robot("ugv").groundtruth("groundtruth_cam0")
    assert np.allclose(rows[:, 1:4], T[:, :3, 3], atol=1e-9)
    assert np.allclose(rows[:, 3], CAMERA_HEIGHT_M, atol=0.01)  # a ground robot's camera height
