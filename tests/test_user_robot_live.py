"""A user's robot file driven live: a `joints` command takes a scripted joint off its script to
the target (kept in its range) on the file's own actuators, the joints never named keep their
script, and the episode replays byte-identically like any run."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import digest_folder
from test_user_robot import ARM_URDF, PAN_TILT_MJCF, _write
from twinsim import Session
from twinsim.config import load_config
from twinsim.replay import replay
from twinsim.robots.common.commands import CommandError
from twinsim.sequence import open_sequence, validate_sequence


def _config(tmp_path, kind: str, name: str, text: str, *extra: str):
    path = _write(tmp_path, name, text)
    return load_config("tiny", [f"robot.kind={kind}", f"robot.path={path}", *extra], duration_s=8.0)


@pytest.fixture(scope="module")
def arm_episode(gl_backend, tmp_path_factory):
    """A fixed-base URDF arm: 1 s on its script, then the shoulder to 0.5 rad, then the elbow
    past its range; the recorded episode."""
    folder = tmp_path_factory.mktemp("urdf_live")
    cfg = _config(folder, "urdf", "arm.urdf", ARM_URDF, "robot.mount=fore")
    with Session(cfg, folder / "episodes") as session:
        obs = session.reset(seed=0)
        assert session.command_space().describe() == "joints (shoulder, elbow)"
        for _ in range(30):
            obs = session.step()
        obs = session.step({"joints": {"shoulder": 0.5}})
        while not obs.robots["robot"].arrived and not obs.done:
            obs = session.step()
        commanded_at = obs.step
        for _ in range(20):
            obs = session.step()
        obs = session.step({"joints": {"elbow": 9.0}})
        while not obs.robots["robot"].arrived and not obs.done:
            obs = session.step()
        for _ in range(20):
            obs = session.step()
        path = session.close()
    return path, commanded_at


def test_a_commanded_joint_reaches_its_target_and_the_others_keep_their_script(arm_episode):
    path, commanded_at = arm_episode
    assert validate_sequence(path).ok
    seq = open_sequence(path)
    state = seq.table("robot_state")
    k = np.asarray(state["t_ns"]) * seq.metadata["physics_hz"] // 1_000_000_000
    holding = (k >= commanded_at) & (k < commanded_at + 20 * 8)
    assert np.all(state["q_ref_shoulder"][holding] == 0.5)
    error = np.abs(state["qpos_shoulder"][holding] - 0.5)
    assert error.max() < 0.03 and error[-40:].max() < 0.002  # it lags the target, then settles
    # the elbow was still on its script (a slow sine) while the shoulder held
    assert np.ptp(state["q_ref_elbow"][holding]) > 1e-3
    # then a target past the elbow's range is kept at the range's end, 2 rad
    assert state["q_ref_elbow"][-1] == 2.0 and abs(state["qpos_elbow"][-1] - 2.0) < 0.05


def test_a_live_user_model_episode_replays_byte_identically(arm_episode, tmp_path):
    path, _ = arm_episode
    twin = replay(path, tmp_path / "twin")
    a, b = digest_folder(path), digest_folder(twin)
    assert {p for p in a if a[p] != b.get(p)} == {"metadata.json"}


def test_joints_and_the_base_take_commands_side_by_side(gl_backend, tmp_path):
    cfg = _config(
        tmp_path, "mjcf", "rover.xml", PAN_TILT_MJCF, "robot.mount=cam_site", "robot.base=planar"
    )
    with Session(cfg, record=False) as session:
        obs = session.reset(seed=0)
        modes = session.command_space().modes
        assert set(modes) == {"velocity", "waypoint", "joints"}
        assert modes["joints"].fields == ("pan", "tilt")
        T0 = obs.robots["robot"].T_world_body
        session.step({"velocity": {"vx": 0.2}})
        for _ in range(30):
            obs = session.step({"joints": {"pan": 0.6}})  # the velocity command holds
        T1 = obs.robots["robot"].T_world_body
        assert (T0[:3, :3].T @ (T1[:3, 3] - T0[:3, 3]))[0] > 0.1
        with pytest.raises(CommandError, match=r"unknown field 'wheel'; allowed: pan, tilt"):
            session.step({"joints": {"wheel": 1.0}})
