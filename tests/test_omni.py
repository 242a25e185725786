"""GRADE's omnidirectional ground robot (`kind: omni`): a planar base on x, y, yaw joints under
PID, on a planned ground tour, records, validates and replays in an apartment and a warehouse.

The kind is registered here for the module (until `twinsim.robots.builtin` registers it)."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import digest_folder
from twinsim.config import load_config
from twinsim.model.trajectory import Trajectory
from twinsim.registries import ROBOTS
from twinsim.replay import replay
from twinsim.robots.omni.robot import Omni
from twinsim.robots.omni.spec import (
    BODY_Z_M,
    CAMERA_HEIGHT_M,
    CAMERA_POS,
    FOOTPRINT_RADIUS_M,
    JOINT_NAMES,
    SHAPE,
)
from twinsim.scene.free_space import build_free_space, floor_region
from twinsim.sensors.rig import resolve_sensors
from twinsim.sequence import open_sequence, validate_sequence

MAST_CAMERA = f"sensors.cam0.pos=[{CAMERA_POS[0]}, {CAMERA_POS[1]}, {CAMERA_POS[2]}]"
PATH_TOLERANCE_M = 0.005  # the PID keeps the base this close to its planned path
CLEARANCE_TOLERANCE_M = 0.005


@pytest.fixture(scope="module")
def omni_kind():
    if "omni" in ROBOTS:  # already a built-in
        yield
        return
    with ROBOTS.registered("omni", Omni()):
        yield


def _run(tmp_path_factory, name: str, overrides: list[str], duration_s: float):
    from twinsim.sim import run

    cfg = load_config("tiny", ["robot.kind=omni", MAST_CAMERA, *overrides], duration_s=duration_s)
    return run(cfg, tmp_path_factory.mktemp(name) / "seq")


@pytest.fixture(scope="module")
def omni_sequence(omni_kind, gl_backend, tmp_path_factory):
    return _run(tmp_path_factory, "omni", [], 6.0)


@pytest.fixture(scope="module")
def warehouse_sequence(omni_kind, gl_backend, tmp_path_factory):
    return _run(tmp_path_factory, "omni_warehouse", ["scene.generator=warehouse"], 3.0)


def _clearance(seq_path) -> np.ndarray:
    """Exact distance of the base centre to every static obstacle in the robot's height band,
    along the ground truth."""
    seq = open_sequence(seq_path)
    fs = build_free_space(
        floor_region(seq.scene),
        seq.scene.objects,
        flight_height_m=0.5 * (SHAPE.underside_m + SHAPE.top_m),
        clearance_z_m=0.5 * (SHAPE.top_m - SHAPE.underside_m),
        clearance_m=FOOTPRINT_RADIUS_M,
    )
    _, T = seq.groundtruth()
    return fs.clearance_at(T[:, :2, 3])


def test_an_omni_run_records_a_valid_sequence(omni_sequence):
    report = validate_sequence(omni_sequence)
    assert report.ok, report.problems
    seq = open_sequence(omni_sequence)
    assert seq.scene.robot.kind == "omni"
    assert seq.metadata["streams"]["joint_states"]["joints"] == list(JOINT_NAMES)
    state = seq.table("robot_state")
    assert {"cmd_vx", "cmd_vy", "cmd_wz", "ctrl_x", "ctrl_y", "ctrl_yaw"} <= set(state)


def test_the_default_camera_sits_on_the_mast():
    cfg = load_config("tiny", ["robots.ground.kind=omni"])  # no template: the kind's sensors
    sensors = {s.name: s for s in resolve_sensors(cfg.robots["ground"].sensors, "ground")}
    assert set(sensors) == {"cam0", "imu0"}
    assert BODY_Z_M + sensors["cam0"].pos[2] == pytest.approx(CAMERA_HEIGHT_M)
    assert sensors["imu0"].pos == (0.0, 0.0, 0.0)


def test_the_base_rests_on_the_floor_level(omni_sequence):
    seq = open_sequence(omni_sequence)
    _, T = seq.groundtruth()
    assert np.all(T[:, 2, 3] == BODY_Z_M)
    assert np.abs(T[:, 2, :3] - [0.0, 0.0, 1.0]).max() < 1e-12  # no roll, no pitch
    _, T_cam = seq.groundtruth("groundtruth_cam0")
    assert np.allclose(T_cam[:, 2, 3], CAMERA_HEIGHT_M, atol=1e-9)


def test_it_follows_its_planned_path_within_its_limits(omni_sequence):
    seq = open_sequence(omni_sequence)
    robot = seq.scene.robot
    t_ns, T = seq.groundtruth()
    ref = Trajectory.from_path_points(robot.path).sample(t_ns / 1e9)
    err = np.hypot(*(T[:, :2, 3] - ref.pos[:, :2]).T)
    assert err.max() < PATH_TOLERANCE_M
    heading = np.unwrap(np.arctan2(T[:, 1, 0], T[:, 0, 0]))
    assert np.abs(heading - ref.yaw).max() < np.radians(1.0)
    assert np.hypot(*np.diff(T[:, :2, 3], axis=0).T).sum() > 1.0  # it went somewhere
    odom = seq.table("odometry")
    assert np.hypot(odom["vx"], odom["vy"]).max() <= robot.max_speed_mps * 1.01
    assert np.abs(odom["wz"]).max() <= np.radians(robot.max_yaw_rate_dps) * 1.01
    assert np.all(odom["vz"] == 0.0) and np.all(odom["wx"] == 0.0) and np.all(odom["wy"] == 0.0)


def test_it_never_touches_the_furniture(omni_sequence):
    assert _clearance(omni_sequence).min() >= FOOTPRINT_RADIUS_M - CLEARANCE_TOLERANCE_M


def test_the_imu_gyro_integrates_to_the_heading(omni_sequence):
    seq = open_sequence(omni_sequence)
    t_ns, T = seq.groundtruth()
    heading = np.unwrap(np.arctan2(T[:, 1, 0], T[:, 0, 0]))
    imu = seq.imu("imu0")
    dt = np.diff(imu.t_ns) / 1e9
    # the step from k to k + 1 turns by the rate MuJoCo integrates with, read at k + 1
    turned = np.concatenate([[0.0], np.cumsum(imu.gyro[1:, 2] * dt)])
    at = np.searchsorted(imu.t_ns, t_ns)
    assert np.ptp(heading) > 0.5  # the tour turns
    assert np.abs(turned[at] - (heading - heading[0])).max() < 1e-6
    assert np.allclose(imu.accel[:, 2], 9.81, atol=1e-6)  # level: gravity only on z


def test_teleport_replay_is_byte_identical(omni_sequence, tmp_path):
    twin = replay(omni_sequence, tmp_path / "twin", rerender=True)
    a, b = digest_folder(omni_sequence), digest_folder(twin)
    assert {p for p in a if a[p] != b.get(p)} == {"metadata.json"}


def test_control_replay_repeats_the_motion(omni_sequence, tmp_path):
    controlled = replay(omni_sequence, tmp_path / "control", mode="control")
    assert validate_sequence(controlled).ok
    _, T0 = open_sequence(omni_sequence).groundtruth()
    _, T1 = open_sequence(controlled).groundtruth()
    # the integral recovered from the first row restarts the PID exactly (measured: 0.0 m)
    assert np.abs(T0[:, :3, 3] - T1[:, :3, 3]).max() < 1e-9
    assert np.abs(T0[:, :3, :3] - T1[:, :3, :3]).max() < 1e-9


@pytest.mark.slow
def test_it_tours_the_free_floor_of_a_warehouse(warehouse_sequence):
    report = validate_sequence(warehouse_sequence)
    assert report.ok, report.problems
    seq = open_sequence(warehouse_sequence)
    assert seq.scene.rooms == () and seq.scene.robot.rooms_visited == ()
    assert _clearance(warehouse_sequence).min() >= FOOTPRINT_RADIUS_M - CLEARANCE_TOLERANCE_M
    _, T = seq.groundtruth()
    assert np.hypot(*np.diff(T[:, :2, 3], axis=0).T).sum() > 0.3


def test_naming_the_kind_on_a_preset_mounts_its_sensors_where_the_kind_does():
    """`--set robot.kind=omni` on `tiny` keeps tiny's 64x48 camera, on the omni's mast."""
    from twinsim.config import load_config
    from twinsim.registries import ROBOTS

    mast = ROBOTS.get("omni").default_sensors()["cam0"]["pos"]
    cam = load_config("tiny", ["robot.kind=omni"]).robot.sensors["cam0"]
    assert (cam.width, cam.height) == (64, 48) and tuple(cam.pos) == tuple(mast)
