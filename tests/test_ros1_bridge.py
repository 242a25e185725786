"""The ROS 1 bridge: a real roscore, `twinsim ros1-bridge` in lock-step, and a plain rospy node
that drives the robot to a goal by cmd_vel; the episode is a valid sequence."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from twinsim.config import load_config
from twinsim.ros1.launch import start_roscore, stop
from twinsim.sequence import open_sequence, validate_sequence

DRIVER = Path(__file__).parent / "data" / "ros1_goal_driver.py"
TWINSIM = Path(sys.executable).parent / "twinsim"


@pytest.fixture
def ros_env(tmp_path):
    """A running roscore on a free port; yields the environment to reach it."""
    core, env = start_roscore(tmp_path)
    yield env
    stop(core)


def test_a_rospy_node_drives_the_robot_to_a_goal(ros_env, tmp_path):
    out, report = tmp_path / "episodes", tmp_path / "driver.json"
    sets = ["robot.kind=omni", "sensors.cam0.width=64", "sensors.cam0.height=48"]
    sets += ["sim.duration_s=20"]
    cmd = [str(TWINSIM), "ros1-bridge", "tiny", "--out", str(out), "--seed", "3", "--timeout", "2"]
    cmd += [a for s in sets for a in ("--set", s)]
    bridge = subprocess.Popen(
        cmd,
        env=ros_env,
        start_new_session=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    driver = subprocess.Popen(
        ["/usr/bin/python3", str(DRIVER), "1.5", "0.0", str(report)],
        env=ros_env,
        start_new_session=True,
    )
    try:
        assert driver.wait(50) == 0
        log, _ = bridge.communicate(timeout=20)
    finally:
        stop(driver)
        stop(bridge)
    assert bridge.returncode == 0, log
    assert "ended by timeout" in log
    result = json.loads(report.read_text())
    assert result["reached"]
    assert result["imu"] > 0 and result["rgb"] > 0
    # CameraInfo: the pinhole of a 64-pixel-wide, 90° camera; its mount latched on /tf_static
    fx = 32 / math.tan(math.radians(45))
    assert result["camera_info"]["w"] == 64
    assert result["camera_info"]["K"] == pytest.approx([fx, 0, 31.5, 0, fx, 23.5, 0, 0, 1])
    parent, *offset = result["mounts"]["robot/cam0_optical"]
    assert parent == "robot/base_link" and 0.05 < offset[2] < 1.5  # the camera sits above the base
    episode = out / "episode-0000"
    assert validate_sequence(episode).ok
    t_ns, T = open_sequence(episode).groundtruth()
    final = T[-1][:2, 3]
    assert np.hypot(*(final - np.array(result["goal"]))) < 0.3
    clock = np.array(result["clock_ns"], dtype=np.int64)
    assert len(clock) > 10 and np.all(np.diff(clock) > 0)
    hz = load_config("tiny", sets).sim.physics_hz
    k = np.rint(clock * hz / 1e9).astype(np.int64)  # physics steps at each tick
    assert np.array_equal(clock, [round(int(i) * 1_000_000_000 / hz) for i in k])
    assert np.all(np.diff(k) == hz // 30)  # one tick per 30 Hz control step, none skipped
    assert set(clock[:-1].tolist()) <= set(np.asarray(t_ns, dtype=np.int64).tolist())
