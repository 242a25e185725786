"""ROS 1 bag export read back by Debian's real ROS 1 tools: `rosbag info --yaml` and a script run
by Debian's /usr/bin/python3 (`rosbag.Bag`, tf2's `BufferCore`, `sensor_msgs.point_cloud2`),
compared with the sequence as twinsim's own reader gives it. The tools come from
scripts/install-ros1.sh (run by `make install`); without them these tests fail."""

from __future__ import annotations

import base64
import functools
import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest
import yaml
from rosbags.rosbag1 import Reader
from typer.testing import CliRunner

from twinsim.cli import app
from twinsim.export import FORMATS, export_sequence
from twinsim.export.common import T_body_sensor
from twinsim.sequence import open_sequence
from twinsim.sequence.poses import rows_to_poses

ROS_PYTHON = "/usr/bin/python3"
INSTALL_HINT = "Debian's ROS 1 rosbag is missing: run scripts/install-ros1.sh (make install does)"
IMAGE_TOPICS = ("/cam0/image_raw", "/cam0/depth", "/cam0/instance")

pytestmark = pytest.mark.ros  # Debian's rosbag reads the bags

#: Run by Debian's python3: everything the tests compare, as JSON (floats round-trip exactly).
READ_BAG = r"""
import base64, json, sys, warnings
import roslib.message, rosbag, rospy, tf2_py
from sensor_msgs import point_cloud2

warnings.simplefilter("ignore")  # tf2: the bag's generated classes are not geometry_msgs' own
path, lookup_ns = sys.argv[1], int(sys.argv[2])
bag = rosbag.Bag(path)
out = {"connections": {}, "topics": {}, "images": {}, "imu": [], "clouds": [], "tf": []}
tf = tf2_py.BufferCore(rospy.Duration(3600))
for topic, msg, t, connection in bag.read_messages(return_connection_header=True):
    if topic not in out["connections"]:
        conn = {k: v.decode() for k, v in connection.items()}  # the connection record's fields
        installed = roslib.message.get_message_class(conn["type"])._md5sum
        same = conn["md5sum"] == installed == msg._md5sum
        out["connections"][topic] = [conn["type"], same, conn.get("latching")]
    header = msg.transforms[0].header if hasattr(msg, "transforms") else msg.header
    rows = out["topics"].setdefault(topic, {"bag_ns": [], "stamp_ns": [], "seq": []})
    rows["bag_ns"].append(t.to_nsec())
    rows["stamp_ns"].append(header.stamp.to_nsec())
    rows["seq"].append(header.seq)
    if hasattr(msg, "transforms"):
        for tr in msg.transforms:
            v, q = tr.transform.translation, tr.transform.rotation
            row = [topic, tr.header.frame_id, tr.child_frame_id, v.x, v.y, v.z, q.x, q.y, q.z, q.w]
            out["tf"].append(row)
            if topic == "/tf_static":
                tf.set_transform_static(tr, "bag")
            else:
                tf.set_transform(tr, "bag")
    elif msg._type == "sensor_msgs/Image":
        fields = ("width", "height", "encoding", "step", "is_bigendian")
        image = {f: getattr(msg, f) for f in fields} | {"frame_id": header.frame_id}
        image["data"] = base64.b64encode(msg.data).decode()
        out["images"].setdefault(topic, []).append(image)
    elif msg._type == "sensor_msgs/CameraInfo":
        out["camera_info"] = {"K": list(msg.K), "P": list(msg.P), "D": list(msg.D)}
    elif msg._type == "sensor_msgs/Imu":
        w, a = msg.angular_velocity, msg.linear_acceleration
        out["imu"].append([w.x, w.y, w.z, a.x, a.y, a.z, msg.orientation_covariance[0]])
    elif msg._type == "sensor_msgs/PointCloud2":
        fields = [[f.name, f.offset, f.datatype, f.count] for f in msg.fields]
        points = [list(p) for p in point_cloud2.read_points(msg)]
        cloud = {"fields": fields, "width": msg.width, "height": msg.height, "points": points}
        out["clouds"].append(cloud | {"frame_id": header.frame_id, "step": msg.point_step})
camera = [c for c in out["connections"] if c.endswith("/image_raw")][0].split("/")[1]
looked_up = tf.lookup_transform_core("world", camera + "_optical_frame", rospy.Time(0, lookup_ns))
v, q = looked_up.transform.translation, looked_up.transform.rotation
out["lookup"] = [v.x, v.y, v.z, q.x, q.y, q.z, q.w]
print(json.dumps(out))
"""


def _ros_env(tmp: Path) -> dict[str, str]:
    """The environment for Debian's ROS tools: no venv paths, a writable ROS_HOME and HOME."""
    venv = ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")
    env = {k: v for k, v in os.environ.items() if k not in venv}
    return env | {"ROS_HOME": str(tmp), "ROS_LOG_DIR": str(tmp / "log"), "HOME": str(tmp)}


@functools.cache
def _check_ros1_installed() -> None:
    """Fail (never skip) with the install hint when Debian's rosbag CLI or modules are missing."""
    assert shutil.which("rosbag") and Path(ROS_PYTHON).exists(), INSTALL_HINT
    probe = [ROS_PYTHON, "-c", "import rosbag, tf2_py, sensor_msgs.point_cloud2"]
    env = _ros_env(Path(tempfile.gettempdir()))
    found = subprocess.run(probe, capture_output=True, text=True, env=env, check=False)
    assert found.returncode == 0, f"{INSTALL_HINT}\n{found.stderr}"


def _rosbag_info(bag: Path, tmp: Path) -> dict:
    """`rosbag info --yaml` of a bag, parsed."""
    _check_ros1_installed()
    run = subprocess.run(
        [shutil.which("rosbag"), "info", "--yaml", str(bag)],
        capture_output=True, text=True, env=_ros_env(tmp), check=False, timeout=120,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    return yaml.safe_load(run.stdout)


def _read_with_rosbag(bag: Path, lookup_ns: int, tmp: Path) -> dict:
    """The bag as Debian's `rosbag.Bag` reads it (`READ_BAG`), with a tf2 lookup at lookup_ns."""
    _check_ros1_installed()
    run = subprocess.run(
        [ROS_PYTHON, "-c", READ_BAG, str(bag), str(lookup_ns)],
        capture_output=True, text=True, env=_ros_env(tmp), check=False, timeout=300,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def _expected_stamps(seq) -> dict[str, list[int]]:
    """Every topic of the bag and the t_ns of the stream it comes from."""
    t_body = seq.groundtruth()[0].tolist()
    stamps = {"/tf_static": t_body[:1], "/tf": t_body, "/groundtruth/pose": t_body}
    stamps["/groundtruth/cam0/pose"] = seq.groundtruth("groundtruth_cam0")[0].tolist()
    stamps["/odom"] = seq.table("odometry")["t_ns"].tolist()
    stamps["/joint_states"] = seq.table("joint_states")["t_ns"].tolist()
    stamps["/imu0/data"] = seq.imu("imu0").t_ns.tolist()
    for kind in ("image_raw", "depth", "instance", "semantic", "camera_info"):
        stamps[f"/cam0/{kind}"] = seq.camera("cam0").t_ns.tolist()
    if "lidar0" in seq.streams:
        stamps["/lidar0/points"] = seq.lidar("lidar0").t_ns.tolist()
    return stamps


@pytest.fixture(scope="module")
def seq(dynamic_sequence):
    return open_sequence(dynamic_sequence)


@pytest.fixture(scope="module")
def bag(dynamic_sequence, tmp_path_factory) -> Path:
    return export_sequence(dynamic_sequence, "rosbag1", tmp_path_factory.mktemp("bag1") / "out")


@pytest.fixture(scope="module")
def ros_tmp(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("ros_home")


@pytest.fixture(scope="module")
def read(bag, seq, ros_tmp) -> dict:
    """The bag of the dynamic sequence read by Debian's rosbag, tf2 looked up at camera frame 5."""
    return _read_with_rosbag(bag, int(seq.camera("cam0").t_ns[5]), ros_tmp)


@pytest.fixture(scope="module")
def lidar_sequence(tmp_path_factory, gl_backend) -> Path:
    """A 0.5 s tiny world with people and a 16-beam LiDAR (5 sweeps of 90 columns)."""
    from twinsim.config import load_config
    from twinsim.sim import run

    overrides = ("people.count=2", "cameras.cam0.width=64", "cameras.cam0.height=48",
                 "lidars.lidar0.model=vlp-16", "lidars.lidar0.columns=90")  # fmt: skip
    out = tmp_path_factory.mktemp("lidar1") / "seq"
    return run(load_config("tiny", overrides, seed=2, duration_s=0.5), out)


def test_debian_ros1_tools_are_installed() -> None:
    _check_ros1_installed()


def test_rosbag_info_lists_every_topic_with_its_count(bag, seq, ros_tmp) -> None:
    assert bag.name == "twinsim.bag" and bag.read_bytes()[:13] == b"#ROSBAG V2.0\n"
    info = _rosbag_info(bag, ros_tmp)
    expected = _expected_stamps(seq)
    assert info["version"] == 2.0 and info["indexed"] and info["compression"] == "none"
    assert {t["topic"]: t["messages"] for t in info["topics"]} == {
        topic: len(stamps) for topic, stamps in expected.items()
    }
    assert info["messages"] == sum(len(s) for s in expected.values())
    t0, t1 = min(min(s) for s in expected.values()), max(max(s) for s in expected.values())
    assert (info["start"], info["end"]) == pytest.approx((t0 / 1e9, t1 / 1e9), abs=1e-6)
    types = {t["topic"]: t["type"] for t in info["topics"]}
    assert types["/tf"] == "tf2_msgs/TFMessage" and types["/odom"] == "nav_msgs/Odometry"
    assert types["/cam0/image_raw"] == "sensor_msgs/Image"
    with Reader(bag) as reader:
        assert len(reader.chunk_infos) > 1  # chunked (1 MiB chunks)


def test_types_match_installed_ros1_definitions(read) -> None:
    for topic, (datatype, md5_matches, latching) in read["connections"].items():
        assert md5_matches, f"{topic}: {datatype} md5sum differs from Debian's ROS 1 message"
        assert latching == ("1" if topic == "/tf_static" else None), topic


def test_every_topic_keeps_the_exact_stamps_of_its_stream(read, seq) -> None:
    expected = _expected_stamps(seq)
    assert set(read["topics"]) == set(expected)
    for topic, stamps in expected.items():
        rows = read["topics"][topic]
        assert rows["bag_ns"] == rows["stamp_ns"] == stamps, topic
        assert rows["seq"] == list(range(len(stamps))), topic


def test_images_equal_the_sequence_frames(read, seq) -> None:
    cam = seq.camera("cam0")
    images = {topic: read["images"][topic] for topic in IMAGE_TOPICS}
    assert all(len(msgs) == len(cam) for msgs in images.values())
    for i in (0, len(cam) // 2, len(cam) - 1):
        frame = cam[i]
        for topic, encoding, dtype, expected in (
            ("/cam0/image_raw", "rgb8", np.uint8, frame.rgb),
            ("/cam0/depth", "32FC1", "<f4", frame.depth),
            ("/cam0/instance", "16UC1", "<u2", frame.instance),
        ):
            msg = images[topic][i]
            assert (msg["width"], msg["height"], msg["encoding"]) == (
                cam.width,
                cam.height,
                encoding,
            )
            assert msg["frame_id"] == "cam0_optical_frame" and msg["is_bigendian"] == 0
            data = np.frombuffer(base64.b64decode(msg["data"]), dtype)
            assert msg["step"] == data.nbytes // cam.height
            np.testing.assert_array_equal(data.reshape(expected.shape), expected)
    assert frame.depth.dtype == np.float32
    info = read["camera_info"]
    np.testing.assert_array_equal(np.reshape(info["K"], (3, 3)), cam.K)
    np.testing.assert_array_equal(np.reshape(info["P"], (3, 4))[:, :3], cam.K)
    assert info["D"] == [0.0] * 5


def test_imu_values_equal_imu_csv(read, seq) -> None:
    imu = seq.imu("imu0")
    rows = np.array(read["imu"])
    np.testing.assert_array_equal(rows[:, :3], imu.gyro)
    np.testing.assert_array_equal(rows[:, 3:6], imu.accel)
    assert (rows[:, 6] == -1.0).all()  # orientation not provided


def test_tf_equals_groundtruth_and_tf2_composes_the_camera_pose(read, seq) -> None:
    t_ns, T = seq.groundtruth()
    dynamic = [row for row in read["tf"] if row[0] == "/tf"]
    assert len(dynamic) == len(t_ns)
    assert {(row[1], row[2]) for row in dynamic} == {("world", "base_link")}
    poses = rows_to_poses(np.array([row[3:] for row in dynamic]))
    np.testing.assert_array_equal(poses[:, :3, 3], T[:, :3, 3])
    np.testing.assert_allclose(poses, T, rtol=0, atol=1e-12)
    static = {row[2]: row for row in read["tf"] if row[0] == "/tf_static"}
    assert {"cam0_optical_frame", "imu0"} <= set(static)
    assert static["cam0_optical_frame"][1] == "base_link"
    np.testing.assert_allclose(
        rows_to_poses(static["cam0_optical_frame"][3:])[0], T_body_sensor(seq, "cam0"), atol=1e-12
    )
    t_cam, T_cam = seq.groundtruth("groundtruth_cam0")
    k = t_cam.tolist().index(int(seq.camera("cam0").t_ns[5]))
    np.testing.assert_allclose(rows_to_poses(read["lookup"])[0], T_cam[k], rtol=0, atol=1e-9)


def test_pointcloud2_in_an_lz4_bag_equals_the_scans(lidar_sequence, tmp_path, ros_tmp) -> None:
    seq = open_sequence(lidar_sequence)
    bag = export_sequence(lidar_sequence, "rosbag1", tmp_path / "bag", compression="lz4")
    assert _rosbag_info(bag, ros_tmp)["compression"] == "lz4"
    read = _read_with_rosbag(bag, int(seq.camera("cam0").t_ns[0]), ros_tmp)
    lidar = seq.lidar("lidar0")
    assert read["topics"]["/lidar0/points"]["stamp_ns"] == lidar.t_ns.tolist()
    assert len(read["clouds"]) == len(lidar)
    names = ["x", "y", "z", "intensity", "t", "ring", "semantic", "instance", "dynamic"]
    for i, cloud in enumerate(read["clouds"]):
        scan = lidar[i]
        assert [f[0] for f in cloud["fields"]] == names and cloud["step"] == 32
        assert cloud["fields"][:3] == [["x", 0, 7, 1], ["y", 4, 7, 1], ["z", 8, 7, 1]]
        assert (cloud["width"], cloud["height"], cloud["frame_id"]) == (len(scan), 1, "lidar0")
        points = np.array(cloud["points"])
        np.testing.assert_array_equal(points[:, :3], scan.points.astype(np.float32))
        np.testing.assert_array_equal(points[:, 4], scan.t_offset_ns)
        np.testing.assert_array_equal(points[:, 5], scan.ring)
        np.testing.assert_array_equal(points[:, 7], scan.instance)


def test_bz2_bag_reads_the_same(lidar_sequence, tmp_path, ros_tmp) -> None:
    seq = open_sequence(lidar_sequence)
    bag = export_sequence(lidar_sequence, "rosbag1", tmp_path / "bag", compression="bz2")
    info = _rosbag_info(bag, ros_tmp)
    assert info["compression"] == "bz2" and info["compressed"] < info["uncompressed"]
    read = _read_with_rosbag(bag, int(seq.camera("cam0").t_ns[0]), ros_tmp)
    expected = _expected_stamps(seq)
    assert {t: rows["stamp_ns"] for t, rows in read["topics"].items()} == expected


def test_unknown_compression_is_refused_in_one_line(dynamic_sequence, tmp_path) -> None:
    assert FORMATS["rosbag1"].options() == {"compression": "none"}
    out = tmp_path / "o"
    result = CliRunner().invoke(
        app, ["export", str(dynamic_sequence), "--format", "rosbag1", "--out", str(out),
              "-o", "compression=zstd"],
    )  # fmt: skip
    assert result.exit_code == 2
    text = " ".join(result.output.split())
    assert text.startswith("error:") and "Traceback" not in result.output, text
    assert re.search(r"compression='zstd' is not .*; allowed: none, bz2, lz4", text), text
    assert len(result.output.strip().splitlines()) == 1 and not out.exists()
