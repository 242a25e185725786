"""Closed loop (`twinsim.Session`): every mobile kind follows live velocity and waypoint
commands on its own controller, a step returns exactly what the sequence records, and the
episode is an ordinary sequence: valid, replayed byte-identically in teleport mode and
repeated in control mode. Bad commands name what the robot takes."""

from __future__ import annotations

import json

import numpy as np
import pytest

from conftest import digest_folder
from twinsim import Session
from twinsim.closedloop import EpisodeEndedError
from twinsim.config import load_config
from twinsim.errors import ConfigError
from twinsim.replay import replay
from twinsim.robots.common.commands import CommandError
from twinsim.robots.common.live_reference import BaseLimits, LiveJoints, LiveReference
from twinsim.sequence import open_sequence, validate_sequence


def _heading(T: np.ndarray) -> float:
    return float(np.arctan2(T[1, 0], T[0, 0]))


@pytest.fixture(scope="module")
def omni_episode(tmp_path_factory, gl_backend):
    """An omni robot driven live for 1 s forward then to a waypoint; its observations and
    sequence."""
    cfg = load_config("tiny", ["robot.kind=omni"], duration_s=4.0)
    out = tmp_path_factory.mktemp("episodes")
    session = Session(cfg, out)
    observations = [session.reset()]
    for _ in range(30):
        observations.append(session.step({"velocity": {"vx": 0.3}}))
    start = observations[0].robots["robot"].T_world_body
    goal = start[:3, 3] + start[:3, :3] @ np.array([0.3, 0.0, 0.0])
    observations.append(session.step({"waypoint": {"x": goal[0], "y": goal[1]}}))
    while not observations[-1].robots["robot"].arrived and not observations[-1].done:
        observations.append(session.step())
    path = session.close()
    return observations, path, goal


def test_a_velocity_command_moves_the_robot_along_its_heading(omni_episode):
    observations, _, _ = omni_episode
    T0 = observations[0].robots["robot"].T_world_body
    T1 = observations[30].robots["robot"].T_world_body
    moved = T0[:3, :3].T @ (T1[:3, 3] - T0[:3, 3])
    # 1 s at 0.3 m/s after a ramp at the base's acceleration limit
    assert 0.2 < moved[0] < 0.31
    assert abs(moved[1]) < 0.02
    assert abs(_heading(T1) - _heading(T0)) < np.radians(2.0)


def test_a_waypoint_is_reached_and_said_so(omni_episode):
    observations, _, goal = omni_episode
    last = observations[-1].robots["robot"]
    assert last.arrived and not observations[-1].done
    assert np.linalg.norm(last.T_world_body[:2, 3] - goal[:2]) < 0.08


def test_a_step_observes_exactly_what_the_sequence_records(omni_episode):
    observations, path, _ = omni_episode
    seq = open_sequence(path)
    imu = seq.imu("imu0")
    observed = np.concatenate([o.robots["robot"].tables["imu0"].values for o in observations])
    stamps = np.concatenate([o.robots["robot"].tables["imu0"].t_ns for o in observations])
    np.testing.assert_array_equal(stamps, imu.t_ns)
    np.testing.assert_array_equal(observed, np.hstack([imu.gyro, imu.accel]))
    frames = [f for o in observations for f in o.robots["robot"].frames["cam0"]]
    camera = seq.camera("cam0")
    assert len(frames) == len(camera) > 30
    last = frames[-1]
    recorded = camera[last.index]
    np.testing.assert_array_equal(recorded.depth, last.depth)
    np.testing.assert_array_equal(recorded.rgb, last.rgb)
    # each step advances one control period (8 physics steps, 1/30 s), stamped in exact ns
    steps = np.array([o.step for o in observations])
    assert set(np.diff(steps)) == {8}
    assert all(o.t_ns == round(o.step * 1e9 / 240) for o in observations)


def test_the_episode_is_a_valid_sequence_replayed_byte_identically(omni_episode, tmp_path):
    _, path, _ = omni_episode
    assert validate_sequence(path).ok
    meta = json.loads((path / "metadata.json").read_text())
    assert meta["closed_loop"]["ended_by"] == "closed"
    assert meta["closed_loop"]["commands"] == 31
    assert json.loads((path / "scene.json").read_text())["robots"][0]["path"] == []
    twin = replay(path, tmp_path / "twin", rerender=True)
    a, b = digest_folder(path), digest_folder(twin)
    assert {p for p in a if a[p] != b.get(p)} == {"metadata.json"}
    controlled = replay(path, tmp_path / "control", mode="control")
    _, T0 = open_sequence(path).groundtruth()
    _, T1 = open_sequence(controlled).groundtruth()
    assert np.abs(T0[:, :3, 3] - T1[:, :3, 3]).max() < 1e-6


WHEELBOT = [
    "robot.kind=mjcf",
    "robot.path=examples/robots/wheelbot.xml",
    "robot.base=planar",
    "robot.mount=cam_site",
]


@pytest.mark.parametrize(
    ("overrides", "command", "forward", "turn"),
    [
        (["robot.kind=drone"], {"vx": 0.3, "vz": 0.1}, 0.15, 0.0),
        (["robot.kind=diff_drive"], {"vx": 0.2, "wz": 0.3}, 0.1, 0.15),
        (["robot.kind=quadruped"], {"vx": 0.2}, 0.08, 0.0),
        (WHEELBOT, {"vx": 0.2, "wz": 0.2}, 0.15, 0.1),
    ],
    ids=["drone", "diff_drive", "quadruped", "mjcf"],
)
def test_every_mobile_kind_follows_velocity_commands(overrides, command, forward, turn, gl_backend):
    cfg = load_config("tiny", overrides, duration_s=2.0)
    with Session(cfg, record=False) as session:
        obs = session.reset()
        T0 = obs.robots["robot"].T_world_body
        for _ in range(45):
            obs = session.step({"velocity": command})
        T1 = obs.robots["robot"].T_world_body
    moved = T0[:3, :3].T @ (T1[:3, 3] - T0[:3, 3])
    assert moved[0] > forward
    turned = np.arctan2(np.sin(_heading(T1) - _heading(T0)), np.cos(_heading(T1) - _heading(T0)))
    assert turned > turn - 0.05
    if "vz" in command:
        assert moved[2] > 0.05  # the drone climbs
    else:
        assert abs(moved[2]) < 0.03  # ground robots stay on the floor


def test_bad_commands_name_what_the_robot_takes(gl_backend):
    cfg = load_config("tiny", ["robot.kind=diff_drive"], duration_s=0.2)
    with Session(cfg, record=False) as session:
        with pytest.raises(EpisodeEndedError, match="reset"):
            session.step({})
        session.reset()
        with pytest.raises(CommandError, match=r"unknown field 'vy'; allowed: vx, wz"):
            session.step({"velocity": {"vy": 0.2}})
        with pytest.raises(
            CommandError,
            match=r"'joints' is neither a robot.*nor a mode it takes: velocity \(vx, wz\)",
        ):
            session.step({"joints": {"a": 1.0}})
        with pytest.raises(CommandError, match=r"command for robot 'robot': unknown mode 'zulu'"):
            session.step({"robot": {"zulu": {"vx": 0.1}}})
        with pytest.raises(CommandError, match=r"waypoint: missing field 'y'"):
            session.step({"waypoint": {"x": 1.0}})
        with pytest.raises(CommandError, match=r"vx: a finite number"):
            session.step({"velocity": {"vx": float("nan")}})
        obs = session.step({"velocity": {"vx": 0.1}})  # still usable after refusals
        while not obs.done:
            obs = session.step()
        with pytest.raises(EpisodeEndedError, match="time_limit"):
            session.step()
    with pytest.raises(ConfigError, match="control_hz: must divide the physics rate 240"):
        Session(cfg, record=False, control_hz=7)
    with pytest.raises(ConfigError, match="episodes_dir"):
        Session(cfg)


def test_the_same_seed_gives_the_same_episode(tmp_path, gl_backend):
    cfg = load_config("tiny", ["robot.kind=omni"], duration_s=0.5)
    paths = []
    for name in ("a", "b"):
        with Session(cfg, tmp_path / name) as session:
            obs = session.reset(seed=5)
            while not obs.done:
                obs = session.step({"velocity": {"vx": 0.2, "wz": 0.2}})
            paths.append(session.episode_path)
    a, b = digest_folder(paths[0]), digest_folder(paths[1])
    assert a == b
    assert json.loads((paths[0] / "metadata.json").read_text())["seed"] == 5
    # a new session in a folder with episodes goes on after them
    with Session(cfg, tmp_path / "a") as session:
        session.reset(seed=5)
        assert session.episode_path.name == "episode-0001"


def test_a_live_reference_respects_the_base_limits():
    """Speed, acceleration and yaw rate stay within the limits; the leash holds the
    reference near a body that does not move."""
    limits = BaseLimits(0.5, 1.0, np.radians(30.0), holonomic=False)
    ref = LiveReference((0.0, 0.0, 0.1), 0.0, limits)
    ref.command("velocity", {"vx": 2.0, "vy": 1.0, "wz": 3.0})
    dt, speeds, rates, accels = 1 / 240, [], [], []
    for _ in range(480):
        ref.advance(dt, ref.pos.copy())  # a body that keeps up
        r = ref.reference(0.0)
        speeds.append(np.linalg.norm(r.vel))
        rates.append(r.yaw_rate)
        accels.append(np.linalg.norm(r.acc))
    # tangential acceleration within the limit, plus the turn's centripetal v·ω
    assert max(speeds) <= 0.5 + 1e-12 and max(accels) <= 1.0 + 0.5 * np.radians(30.0) + 1e-6
    assert max(rates) <= np.radians(30.0) + 1e-12
    heading = np.array([np.cos(ref.yaw), np.sin(ref.yaw)])
    sideways = heading[0] * ref.vel[1] - heading[1] * ref.vel[0]
    assert abs(sideways) < 1e-9  # a unicycle never slides sideways
    still = np.zeros(3)
    for _ in range(480):
        ref.advance(dt, still)
    assert np.linalg.norm(ref.pos[:2]) <= 0.25 + 1e-12


def test_live_joints_reach_their_targets_at_the_speed_limit():
    joints = LiveJoints(("a", "b"), np.zeros(2), np.array([1.0, 0.5]))
    joints.command("joints", {"b": 0.4})
    dt, peak = 1 / 240, 0.0
    for _ in range(480):
        joints.advance(dt)
        peak = max(peak, abs(joints.qd[1]))
    assert joints.arrived and joints.q[1] == 0.4 and joints.q[0] == 0.0
    assert peak <= 0.5 + 1e-12
