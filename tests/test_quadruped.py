"""A Go1-class quadruped (`kind: quadruped`) trots its planned ground tour on its feet' contact
forces alone: it stays upright at its standing height, follows its path, touches the floor
only with its feet, bobs at the gait's frequency, and records, validates and replays.

People and flying objects are left out: nothing in the robot sees them, and one standing in
its path holds it up (the controller then waits), which is no test of its walking."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import digest_folder
from twinsim.config import load_config
from twinsim.model.trajectory import Trajectory
from twinsim.registries import ROBOTS
from twinsim.replay import replay
from twinsim.robots.common.pose_joints import POSE_JOINTS
from twinsim.robots.quadruped.controller import SETPOINT_COLUMNS, WAIT_M, trunk_rotation
from twinsim.robots.quadruped.legs import foot_positions, leg_frames, leg_ik
from twinsim.robots.quadruped.spec import (
    CAMERA_POS,
    FOOT_RADIUS_M,
    JOINT_NAMES,
    LEGS,
    TORQUE_LIMITS,
)
from twinsim.sequence import open_sequence, validate_sequence

OVERRIDES = [
    "robot.kind=quadruped",
    "robot.min_rooms_visited=1",
    "people.count=0",
    "flying_objects.count=0",
]
DURATION_S = 6.0


@pytest.fixture(scope="module")
def quad_sequence(gl_backend, tmp_path_factory):
    from twinsim.sim import run

    cfg = load_config("tiny", OVERRIDES, duration_s=DURATION_S)
    return run(cfg, tmp_path_factory.mktemp("quadruped") / "seq")


def _state(seq):
    """The physics-rate log: times (s), trunk pose joints (N, 6), leg angles (N, 4, 3)."""
    state = seq.table("robot_state")
    pose = np.stack([state[f"qpos_{j}"] for j in POSE_JOINTS], axis=1)
    legs = np.stack([state[f"qpos_{j}"] for j in JOINT_NAMES], axis=1).reshape(-1, 4, 3)
    return state["t_ns"] / 1e9, pose, legs, state


def test_leg_kinematics_invert_and_differentiate():
    rng = np.random.default_rng(0)
    q = np.stack(
        [rng.uniform(-0.4, 0.4, 4), rng.uniform(0.2, 1.5, 4), rng.uniform(-2.5, -1.0, 4)], axis=1
    )
    feet = foot_positions(q)
    assert np.abs(leg_ik(feet) - q).max() < 1e-9
    frames = leg_frames(q)
    jac = frames.jacobian(frames.foot)
    for j in range(3):
        dq = q.copy()
        dq[:, j] += 1e-6
        assert np.abs((foot_positions(dq) - feet) / 1e-6 - jac[:, :, j]).max() < 1e-5


def test_a_quadruped_run_records_a_valid_sequence(quad_sequence):
    report = validate_sequence(quad_sequence)
    assert report.ok, report.problems
    seq = open_sequence(quad_sequence)
    assert seq.metadata["streams"]["joint_states"]["joints"] == [*POSE_JOINTS, *JOINT_NAMES]
    state = seq.table("robot_state")
    assert all(c in state for c in SETPOINT_COLUMNS)
    assert {c for c in state if c.startswith("ctrl_")} == {f"ctrl_{j}" for j in JOINT_NAMES}
    cam = next(s for s in seq.scene.sensors if s.name == "cam0")
    assert cam.pos == CAMERA_POS  # mounted at the face, as the kind's defaults say


def test_it_walks_on_its_feet_only_and_stays_upright(quad_sequence):
    seq = open_sequence(quad_sequence)
    robot = seq.scene.robot
    joints = seq.table("joint_states")
    for j in POSE_JOINTS:
        assert np.all(joints[f"effort_{j}"] == 0.0)  # no motor on the trunk
    efforts = np.stack([joints[f"effort_{j}"] for j in JOINT_NAMES], axis=1).reshape(-1, 4, 3)
    assert np.all(np.abs(efforts) <= TORQUE_LIMITS + 1e-9)
    _, pose, _, _ = _state(seq)
    h = robot.stand_height_m
    # at its standing height (measured 0.280-0.285 m; well above 60 % of it), barely tilted
    # (measured 1.1 deg at most)
    assert pose[:, 2].min() > 0.6 * h
    assert np.abs(pose[:, 2] - h).max() < 0.02
    assert np.degrees(np.abs(pose[:, 4:6])).max() < 4.0
    assert np.hypot(*np.diff(pose[:, :2], axis=0).T).sum() > 1.0  # it walked


def test_only_its_feet_touch_the_floor(quad_sequence):
    seq = open_sequence(quad_sequence)
    _, pose, legs, state = _state(seq)
    lowest_knee, lowest_trunk, feet_z = [], [], []
    for p, q in zip(pose, legs, strict=True):
        rot = trunk_rotation(p)
        frames = leg_frames(q)
        feet_z.append(p[2] + frames.foot @ rot[2])
        lowest_knee.append((p[2] + frames.o_knee @ rot[2]).min())
        corners = np.array([[x, y, -0.055] for x in (-0.19, 0.19) for y in (-0.09, 0.09)])
        lowest_trunk.append((p[2] + corners @ rot[2]).min())
    feet_z = np.array(feet_z)
    # the feet go no deeper than the contacts' softness (measured 7 mm)
    assert feet_z.min() > FOOT_RADIUS_M - 0.01
    # knees (the calves' tops) and the trunk stay well clear of the floor (measured: knees
    # 0.11 m up at the lowest)
    assert min(lowest_knee) > 0.08 and min(lowest_trunk) > 0.15
    contact = np.stack([state[f"contact_{leg}"] for leg in LEGS], axis=1) > 0.5
    # swinging feet lift (measured 7.4 cm over the floor), standing ones stay down (95 % within
    # 2 mm of resting; on a rug 1 cm higher)
    assert feet_z[~contact].max() > FOOT_RADIUS_M + 0.05
    assert np.percentile(feet_z[contact], 95) < FOOT_RADIUS_M + 0.012
    # the physics agrees: every contact is a calf's (its foot) on the floor, at floor level
    records = seq.contacts()
    parts = np.array(seq.metadata["streams"]["contacts"]["parts"])
    classes = np.array(seq.metadata["classes"])
    assert len(records) > len(pose) // 2  # ~2.5 feet down at each 120 Hz step
    assert set(parts[records["part"]]) == {f"quad_{leg}_calf" for leg in LEGS}
    assert set(classes[records["semantic"]]) <= {"floor", "rug"}
    assert np.abs(records["z"]).max() < 0.012  # measured 3 mm deep at most


def test_it_follows_its_planned_path(quad_sequence):
    seq = open_sequence(quad_sequence)
    t_ns, T = seq.groundtruth()
    ref = Trajectory.from_path_points(seq.scene.robot.path).sample(t_ns / 1e9)
    err = np.hypot(*(T[:, :2, 3] - ref.pos[:, :2]).T)
    # measured: median 1 cm, max 3.2 cm (on the first steps; the default apartment's 60 s tour
    # measures the same)
    assert np.median(err) < 0.02 and err.max() < 0.06
    heading = np.unwrap(np.arctan2(T[:, 1, 0], T[:, 0, 0]))
    assert np.degrees(np.abs(heading - ref.yaw)).max() < 5.0  # measured 1 deg


def test_the_trunk_bobs_at_the_gait_frequency(quad_sequence):
    seq = open_sequence(quad_sequence)
    t, pose, _, _ = _state(seq)
    z = pose[:, 2] - pose[:, 2].mean()
    spectrum = np.abs(np.fft.rfft(z * np.hanning(len(z))))
    freq = np.fft.rfftfreq(len(z), d=t[1] - t[0])
    band = (freq > 1.0) & (freq < 20.0)
    peak = freq[band][np.argmax(spectrum[band])]
    # each diagonal pair's stance lifts the trunk once: twice per gait period
    assert abs(peak - 2.0 / seq.scene.robot.gait_period_s) < 0.5
    assert 0.0005 < np.std(z) < 0.01  # measured 1.1 mm


def test_held_up_it_waits_on_its_path(quad_sequence):
    robot = open_sequence(quad_sequence).scene.robot
    kind = ROBOTS.get("quadruped")
    controller = kind.controller(robot, 240)
    q, qd = kind.initial_state(robot)  # held at its start (by a person standing there, say)
    path_t = [controller.setpoint(k / 240, q, qd)[3] for k in range(240 * 8)]
    ref = Trajectory.from_path_points(robot.path).sample(np.array(path_t[-1:]))
    lag = np.hypot(*(ref.pos[0, :2] - np.array(robot.start_pos[:2])))
    # the path's clock stops once the reference is WAIT_M ahead (with the heading's share)
    assert path_t[-1] < 8.0 - 2.0 and lag <= WAIT_M + 1e-6
    assert path_t[-1] - path_t[-240] < 1e-3  # it has (all but) stopped: 0.05 ms in the last s


def test_teleport_replay_is_byte_identical(quad_sequence, tmp_path):
    twin = replay(quad_sequence, tmp_path / "twin", rerender=True)
    a, b = digest_folder(quad_sequence), digest_folder(twin)
    assert {p for p in a if a[p] != b.get(p)} == {"metadata.json"}


@pytest.mark.slow
def test_control_replay_repeats_the_motion(quad_sequence, tmp_path):
    controlled = replay(quad_sequence, tmp_path / "control", mode="control")
    assert validate_sequence(controlled).ok
    _, T0 = open_sequence(quad_sequence).groundtruth()
    _, T1 = open_sequence(controlled).groundtruth()
    # the effort is a function of the logged set-point and the state alone: the same physics
    # repeats (measured: identical poses)
    assert np.abs(T0[:, :3, 3] - T1[:, :3, 3]).max() < 1e-9
