"""ROS 2 bag export read back with rosbags, and its pose topics with evo's bag reader."""

from __future__ import annotations

import numpy as np
import pytest
import yaml
from evo.tools import file_interface
from rosbags.highlevel import AnyReader
from rosbags.rosbag2 import Reader

from twinsim.export import export_sequence
from twinsim.export.common import T_body_sensor
from twinsim.sequence import open_sequence
from twinsim.sequence.poses import rows_to_poses


@pytest.fixture(scope="module")
def bag(dynamic_sequence, tmp_path_factory):
    return export_sequence(dynamic_sequence, "rosbag2", tmp_path_factory.mktemp("bag") / "out")


@pytest.fixture(scope="module")
def seq(dynamic_sequence):
    return open_sequence(dynamic_sequence)


def _messages(bag, topic):
    with AnyReader([bag]) as reader:
        connections = [c for c in reader.connections if c.topic == topic]
        return [
            (t, reader.deserialize(raw, c.msgtype))
            for c, t, raw in reader.messages(connections=connections)
        ]


def _row(transform) -> list[float]:
    t, q = transform.translation, transform.rotation
    return [t.x, t.y, t.z, q.x, q.y, q.z, q.w]


def _stamp_ns(msg) -> int:
    return msg.header.stamp.sec * 10**9 + msg.header.stamp.nanosec


def test_bag_is_mcap_with_every_topic(bag, seq) -> None:
    info = yaml.safe_load((bag / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
    assert info["storage_identifier"] == "mcap" and info["version"] == 9
    assert (bag / "bag.mcap").read_bytes()[:8] == b"\x89MCAP0\r\n"
    with Reader(bag) as reader:
        topics = {c.topic: (c.msgtype, c.msgcount) for c in reader.connections}
        assert reader.start_time == int(seq.groundtruth()[0][0])
    n_cam, n_pose = len(seq.camera("cam0")), len(seq.groundtruth()[0])
    assert topics["/cam0/image_raw"] == ("sensor_msgs/msg/Image", n_cam)
    assert topics["/cam0/depth"] == ("sensor_msgs/msg/Image", n_cam)
    assert topics["/cam0/camera_info"] == ("sensor_msgs/msg/CameraInfo", n_cam)
    assert topics["/imu0/data"] == ("sensor_msgs/msg/Imu", len(seq.imu("imu0").t_ns))
    assert topics["/odom"] == ("nav_msgs/msg/Odometry", n_pose)
    assert topics["/tf"] == ("tf2_msgs/msg/TFMessage", n_pose)
    assert topics["/tf_static"] == ("tf2_msgs/msg/TFMessage", 1)
    n_joint = len(seq.table("joint_states")["t_ns"])
    assert topics["/joint_states"] == ("sensor_msgs/msg/JointState", n_joint)
    assert topics["/groundtruth/pose"] == ("geometry_msgs/msg/PoseStamped", n_pose)


def test_groundtruth_pose_topic_in_evo(bag, seq) -> None:
    t_ns, T = seq.groundtruth()
    with Reader(bag) as reader:
        traj = file_interface.read_bag_trajectory(reader, "/groundtruth/pose")
        cam_traj = file_interface.read_bag_trajectory(reader, "/groundtruth/cam0/pose")
    np.testing.assert_allclose(traj.timestamps, t_ns / 1e9, rtol=0, atol=1e-9)
    for trajectory, expected in (
        (traj, T),
        (cam_traj, seq.groundtruth("groundtruth_cam0")[1]),
    ):
        quat = np.roll(trajectory.orientations_quat_wxyz, -1, axis=1)
        poses = rows_to_poses(np.hstack([trajectory.positions_xyz, quat]))
        np.testing.assert_allclose(poses, expected, atol=1e-12)


def test_images_camera_info_and_static_tf(bag, seq) -> None:
    cam = seq.camera("cam0")
    images = _messages(bag, "/cam0/image_raw")
    depths = _messages(bag, "/cam0/depth")
    instances = _messages(bag, "/cam0/instance")
    info = _messages(bag, "/cam0/camera_info")
    for i in (0, len(cam) - 1):
        frame = cam[i]
        t, msg = images[i]
        assert t == _stamp_ns(msg) == frame.t_ns and msg.encoding == "rgb8"
        assert msg.header.frame_id == "cam0_optical_frame"
        np.testing.assert_array_equal(msg.data.reshape(msg.height, msg.width, 3), frame.rgb)
        _, depth = depths[i]
        assert depth.encoding == "32FC1" and depth.step == 4 * cam.width
        np.testing.assert_array_equal(
            depth.data.view("<f4").reshape(cam.height, cam.width), frame.depth
        )
        _, inst = instances[i]
        np.testing.assert_array_equal(
            inst.data.view("<u2").reshape(cam.height, cam.width), frame.instance
        )
        np.testing.assert_array_equal(info[i][1].k.reshape(3, 3), frame.K)
        np.testing.assert_array_equal(info[i][1].p.reshape(3, 4)[:, :3], frame.K)
    tf = _messages(bag, "/tf")
    t_ns, T = seq.groundtruth()
    for i in (0, len(tf) - 1):
        (tr,) = tf[i][1].transforms
        assert (tr.header.frame_id, tr.child_frame_id, _stamp_ns(tr)) == (
            "world",
            "base_link",
            t_ns[i],
        )
        np.testing.assert_allclose(rows_to_poses(_row(tr.transform))[0], T[i], atol=1e-12)
    ((_, tf_static),) = _messages(bag, "/tf_static")
    by_child = {tr.child_frame_id: tr for tr in tf_static.transforms}
    assert {"cam0_optical_frame", "imu0"} <= set(by_child)
    tr = by_child["cam0_optical_frame"]
    assert tr.header.frame_id == "base_link"
    np.testing.assert_allclose(
        rows_to_poses(_row(tr.transform))[0], T_body_sensor(seq, "cam0"), atol=1e-12
    )


def test_imu_and_odometry_messages(bag, seq) -> None:
    imu = seq.imu("imu0")
    msgs = _messages(bag, "/imu0/data")
    assert [_stamp_ns(m) for _, m in msgs] == imu.t_ns.tolist()
    gyro = np.array(
        [[m.angular_velocity.x, m.angular_velocity.y, m.angular_velocity.z] for _, m in msgs]
    )
    acc = np.array(
        [
            [m.linear_acceleration.x, m.linear_acceleration.y, m.linear_acceleration.z]
            for _, m in msgs
        ]
    )
    np.testing.assert_array_equal(gyro, imu.gyro)
    np.testing.assert_array_equal(acc, imu.accel)
    assert msgs[0][1].orientation_covariance[0] == -1.0
    odom = seq.table("odometry")
    msgs = _messages(bag, "/odom")
    assert msgs[5][1].child_frame_id == "base_link"
    twist = msgs[5][1].twist.twist
    assert (twist.linear.x, twist.angular.z) == (odom["vx"][5], odom["wz"][5])


@pytest.fixture(scope="module")
def fast_tf_sequence(tmp_path_factory, gl_backend):
    """A 0.5 s tiny run with ground-truth poses at GRADE's TF rate, 120 Hz."""
    from twinsim.config import load_config
    from twinsim.sim import run

    out = tmp_path_factory.mktemp("fast_tf") / "seq"
    overrides = ("groundtruth.pose_rate_hz=120", "groundtruth.joint_state_rate_hz=240")
    return run(load_config("tiny", overrides, seed=3, duration_s=0.5), out)


def test_tf_and_joint_states_follow_the_recorded_rates(fast_tf_sequence, tmp_path) -> None:
    seq = open_sequence(fast_tf_sequence)
    assert seq.stream_info("groundtruth_body")["rate_hz"] == 120
    bag = export_sequence(fast_tf_sequence, "rosbag2", tmp_path / "bag")
    t_ns, T = seq.groundtruth()
    tf = _messages(bag, "/tf")
    assert [t for t, _ in tf] == t_ns.tolist() and len(tf) == 60
    assert set(np.diff(t_ns).tolist()) <= {8333333, 8333334}
    for (_, msg), pose in zip(tf, T, strict=True):
        np.testing.assert_allclose(rows_to_poses(_row(msg.transforms[0].transform))[0], pose)
    table = seq.table("joint_states")
    joints = seq.stream_info("joint_states")["joints"]
    msgs = _messages(bag, "/joint_states")
    assert [t for t, _ in msgs] == [_stamp_ns(m) for _, m in msgs] == table["t_ns"].tolist()
    assert len(msgs) == 120
    for i in (0, 37, len(msgs) - 1):
        msg = msgs[i][1]
        assert msg.name == joints
        for kind in ("position", "velocity", "effort"):
            expected = [table[f"{kind}_{j}"][i] for j in joints]
            np.testing.assert_array_equal(getattr(msg, kind), expected)
