"""The arm driven live in task space: a `tool` command (the hand's pose in the world) is solved
by IK and reached on the arm's own torque control; the recorded hand pose ends where it was
asked; an unreachable pose or half an orientation is refused naming what is wrong."""

from __future__ import annotations

import numpy as np
import pytest

from twinsim import Session
from twinsim.config import load_config
from twinsim.geometry import ypr_to_matrices
from twinsim.robots.common.commands import CommandError
from twinsim.sequence import open_sequence, validate_sequence

#: a scan plan (resolved also for a live arm) that fits the 5 s a live plan is given
ARM = ["robot.kind=arm", "robot.arc_span_deg=60", "robot.max_joint_speed_dps=120"]


def _angle_deg(A: np.ndarray, B: np.ndarray) -> float:
    cos = (np.trace(A.T @ B) - 1.0) / 2.0
    return float(np.degrees(np.arccos(np.clip(cos, -1.0, 1.0))))


@pytest.fixture(scope="module")
def arm_session(gl_backend, tmp_path_factory):
    cfg = load_config("tiny", ARM, duration_s=6.0)
    session = Session(cfg, tmp_path_factory.mktemp("arm_live"))
    yield session, session.reset(seed=0)
    if session.running:
        session.close()


def test_a_tool_pose_is_reached_by_ik_and_recorded(arm_session):
    session, first = arm_session
    start = first.robots["robot"].T_world_body
    assert "tool" in session.command_space().modes
    # 8 cm along the hand's own x and 4 cm down, turned 10 degrees about the world z
    goal = start[:3, 3] + start[:3, :3] @ np.array([0.08, 0.0, 0.0]) + np.array([0, 0, -0.04])
    R_goal = ypr_to_matrices(np.radians(10.0), 0.0, 0.0) @ start[:3, :3]
    yaw = float(np.arctan2(R_goal[1, 0], R_goal[0, 0]))
    pitch = float(np.arcsin(-R_goal[2, 0]))
    roll = float(np.arctan2(R_goal[2, 1], R_goal[2, 2]))
    obs = session.step({"tool": {"x": goal[0], "y": goal[1], "z": goal[2], "roll": roll,
                                 "pitch": pitch, "yaw": yaw}})  # fmt: skip
    while not obs.robots["robot"].arrived and not obs.done:
        obs = session.step()
    for _ in range(30):  # let the torque control settle on the reached targets
        obs = session.step()
    T = obs.robots["robot"].T_world_body
    assert np.linalg.norm(T[:3, 3] - goal) < 0.005
    assert _angle_deg(T[:3, :3], R_goal) < 1.0
    # position only keeps the orientation the hand has
    lower = T[:3, 3] - np.array([0.0, 0.0, 0.03])
    obs = session.step({"tool": {"x": lower[0], "y": lower[1], "z": lower[2]}})
    while not obs.robots["robot"].arrived and not obs.done:
        obs = session.step()
    for _ in range(30):
        obs = session.step()
    T2 = obs.robots["robot"].T_world_body
    assert np.linalg.norm(T2[:3, 3] - lower) < 0.005 and _angle_deg(T2[:3, :3], R_goal) < 1.0
    path = session.close()
    assert validate_sequence(path).ok
    _, poses = open_sequence(path).groundtruth("groundtruth_body")
    assert np.linalg.norm(poses[-1][:3, 3] - lower) < 0.005


def test_an_unreachable_pose_or_half_an_orientation_is_refused(gl_backend, tmp_path):
    cfg = load_config("tiny", ARM, duration_s=2.0)
    with Session(cfg, tmp_path) as session:
        first = session.reset(seed=0)
        x, y, _ = first.robots["robot"].T_world_body[:3, 3]
        with pytest.raises(CommandError, match=r"robot\.tool: pose out of reach"):
            session.step({"tool": {"x": x, "y": y, "z": 5.0}})
        with pytest.raises(CommandError, match="roll, pitch and yaw together"):
            session.step({"tool": {"x": x, "y": y, "z": 1.0, "yaw": 0.3}})
        with pytest.raises(CommandError, match="missing field 'z'"):
            session.step({"tool": {"x": x, "y": y}})
