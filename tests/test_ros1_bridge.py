"""The ROS 1 bridge: a real roscore, `twinsim ros1-bridge` in lock-step, and a plain rospy node
that drives the robot to a goal by cmd_vel; the episode is a valid sequence."""

from __future__ import annotations

import base64
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from live_truth import KINDS, MOBILE, SETS, RecordedTruth, quat_xyzw_to_matrix
from twinsim.config import load_config
from twinsim.processes import stop
from twinsim.ros1.launch import start_roscore
from twinsim.sequence import open_sequence, validate_sequence

pytestmark = pytest.mark.ros  # a roscore and rospy nodes

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


POSE_GOAL_NODE = Path(__file__).parent / "data" / "ros1_pose_goal_node.py"
CLOCK_LISTENER = Path(__file__).parent / "data" / "ros1_clock_listener.py"
LIDAR_SETS = [
    "sensors.lidar0.kind=lidar",
    "sensors.lidar0.model=vlp-16",
    "sensors.lidar0.columns=90",
    "sensors.imu1.kind=imu",
    "sensors.imu1.pos=[0.05,0.0,0.2]",
]


def _start_bridge(
    env: dict, out: Path, sets: list[str], *extra: str, preset: str = "tiny"
) -> subprocess.Popen:
    """`twinsim ros1-bridge PRESET` with these overrides, in a process group of its own."""
    cmd = [str(TWINSIM), "ros1-bridge", preset, "--out", str(out), "--seed", "3", *extra]
    cmd += [a for s in sets for a in ("--set", s)]
    return subprocess.Popen(
        cmd,
        env=env,
        start_new_session=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _run_node(env: dict, bridge: subprocess.Popen, argv: list[str], wait_s: float) -> str:
    """Run a rospy node with Debian's python next to the bridge; the bridge's log."""
    node = subprocess.Popen(["/usr/bin/python3", *argv], env=env, start_new_session=True)
    try:
        assert node.wait(wait_s) == 0
        log, _ = bridge.communicate(timeout=20)
    finally:
        stop(node)
        stop(bridge)
    assert bridge.returncode == 0, log
    return log


@pytest.fixture(scope="module")
def pose_goal_run(tmp_path_factory):
    """One lock-step episode with a LiDAR and two IMUs, driven by PoseStamped goals."""
    tmp = tmp_path_factory.mktemp("pose_goal")
    core, env = start_roscore(tmp)
    sets = ["robot.kind=omni", "sensors.cam0.width=32", "sensors.cam0.height=24", *LIDAR_SETS]
    sets += ["sim.duration_s=15"]
    out, report = tmp / "episodes", tmp / "node.json"
    try:
        bridge = _start_bridge(env, out, sets, "--timeout", "2")
        log = _run_node(env, bridge, [str(POSE_GOAL_NODE), "1.5", "0.0", str(report)], 40)
    finally:
        stop(core)
    return json.loads(report.read_text()), out / "episode-0000", log


def test_a_pose_stamped_goal_brings_the_robot_there(pose_goal_run):
    result, episode, log = pose_goal_run
    assert "ended by timeout" in log
    assert result["reached"]
    assert validate_sequence(episode).ok
    _, T = open_sequence(episode).groundtruth()
    assert np.hypot(*(T[-1][:2, 3] - np.array(result["goal"]))) < 0.2
    assert np.hypot(*(T[-1][:2, 3] - T[0][:2, 3])) > 1.3  # it did travel there


def test_every_lidar_sweep_arrives_as_the_recorded_point_cloud(pose_goal_run):
    from twinsim.export.ros_messages import CLOUD_DTYPE, cloud_fields

    result, episode, _ = pose_goal_run
    scans = open_sequence(episode).lidar("lidar0")
    # every sweep but the few made before the node's subscription connected or after it left
    assert len(scans.t_ns) - 3 <= result["cloud_count"] <= len(scans.t_ns) and len(scans.t_ns) > 5
    cfg = load_config("tiny", LIDAR_SETS)
    lidar = cfg.robots["robot"].sensors["lidar0"]
    for cloud in result["clouds"]:
        assert cloud["frame_id"] == "robot/lidar0"
        assert cloud["fields"] == [[n, o, d, 1] for n, o, d in cloud_fields()]
        assert cloud["height"] == 1 and cloud["width"] == 16 * 90
        assert cloud["point_step"] == CLOUD_DTYPE.itemsize
        assert cloud["row_step"] == CLOUD_DTYPE.itemsize * cloud["width"]
        points = np.frombuffer(base64.b64decode(cloud["data"]), CLOUD_DTYPE)
        assert len(points) == cloud["width"]
        xyz = np.stack([points[a] for a in "xyz"], axis=1).astype(float)
        assert np.isfinite(xyz).all()
        r = np.linalg.norm(xyz, axis=1)
        assert np.all((r >= lidar.min_range_m - 1e-3) & (r <= 100.0)) and np.median(r) > 0.3
        # the very sweep the sequence recorded, stamped at its start to the nanosecond
        index = int(np.flatnonzero(np.asarray(scans.t_ns) == cloud["stamp_ns"])[0])
        recorded = scans[index]
        assert np.array_equal(xyz.astype(np.float32), np.asarray(recorded.points, np.float32))


def test_every_imu_and_every_sensor_mount_is_published(pose_goal_run):
    result, _, _ = pose_goal_run
    assert set(result["imus"]) == {"imu0", "imu1"}
    assert all(v["rows"] > 100 for v in result["imus"].values())
    assert result["imus"]["imu1"]["frame_id"] == "robot/imu1"
    mounts = result["mounts"]
    assert set(mounts) == {"robot/cam0_optical", "robot/imu0", "robot/imu1", "robot/lidar0"}
    assert all(parent == "robot/base_link" for parent, *_ in mounts.values())
    assert mounts["robot/imu1"][1:] == pytest.approx([0.05, 0.0, 0.2])
    assert mounts["robot/lidar0"][1:] == pytest.approx([0.0, 0.0, 0.12])


def test_free_running_sim_time_follows_the_real_time_factor(ros_env, tmp_path):
    sets = ["robot.kind=omni", "sensors.cam0.width=32", "sensors.cam0.height=24"]
    sets += ["sim.duration_s=5"]
    report = tmp_path / "clock.json"
    bridge = _start_bridge(ros_env, tmp_path / "episodes", sets, "--rtf", "1.0")
    log = _run_node(ros_env, bridge, [str(CLOCK_LISTENER), "25", str(report)], 35)
    assert "ended by time_limit" in log
    ticks = np.array(json.loads(report.read_text())["ticks"], dtype=float)
    assert len(ticks) > 60  # nobody commanded anything, yet the clock ran
    wall, sim = ticks[:, 0] - ticks[0, 0], (ticks[:, 1] - ticks[0, 1]) / 1e9
    rtf = sim[-1] / wall[-1]
    assert 0.5 < rtf < 1.5, rtf
    assert np.all(np.diff(ticks[:, 1]) > 0)


TRUTH_LISTENER = Path(__file__).parent / "data" / "ros1_truth_listener.py"


def _check_truth(received: dict, seq, names) -> None:
    """Every /odom message and /tf transform of each robot equals, field by field, the
    `groundtruth_body` and `odometry` rows its stamp recorded."""
    checked = {name: 0 for name in names}
    for name, t_ns, parent, child, *values in received["odom"]:
        assert (parent, child) == ("world", f"{name}/base_link")
        T = np.eye(4)
        T[:3, :3], T[:3, 3] = quat_xyzw_to_matrix(values[3:7]), values[:3]
        checked[name] += RecordedTruth.of(seq, name).check(t_ns, T, np.array(values[7:]), name)
    assert min(checked.values()) >= 9, checked
    poses = {name: RecordedTruth.of(seq, name).poses for name in names}
    on_tf = 0
    for t_ns, parent, child, *values in received["tf"]:
        name = child.removesuffix("/base_link")
        if parent != "world" or t_ns not in poses[name]:
            continue
        T = poses[name][t_ns]
        np.testing.assert_array_equal(values[:3], T[:3, 3])
        np.testing.assert_allclose(quat_xyzw_to_matrix(values[3:]), T[:3, :3], atol=1e-12)
        on_tf += 1
    assert on_tf >= 9 * len(names)


def test_tf_and_odom_are_the_recorded_rows_for_every_kind(ros_env, tmp_path):
    """Every /tf transform and /odom message of every robot kind equals, field by field, the
    `groundtruth_body` and `odometry` rows the same step recorded (stamp, frame, pose, twist
    in the body frame: linear then angular); the apartment's kinds, then the car's town."""
    out, report = tmp_path / "episodes", tmp_path / "received.json"
    bridge = _start_bridge(ros_env, out, [*SETS, "sim.duration_s=6"], "--timeout", "2")
    node = [str(TRUTH_LISTENER), ",".join(KINDS), ",".join(MOBILE), "10", str(report), "0.25"]
    log = _run_node(ros_env, bridge, node, 120)
    assert "ended by timeout" in log
    _check_truth(json.loads(report.read_text()), open_sequence(out / "episode-0000"), KINDS)

    out, report = tmp_path / "car", tmp_path / "car.json"
    sets = ["robot.kind=car", "traffic.vehicles=0", "sensors.cam0.width=32"]
    sets += ["sensors.cam0.height=24", "sim.duration_s=6"]
    bridge = _start_bridge(ros_env, out, sets, "--timeout", "2", preset="town")
    node = [str(TRUTH_LISTENER), "robot", "robot", "10", str(report), "3"]
    log = _run_node(ros_env, bridge, node, 120)
    assert "ended by timeout" in log
    _check_truth(json.loads(report.read_text()), open_sequence(out / "episode-0000"), ["robot"])
