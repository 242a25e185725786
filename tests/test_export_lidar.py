"""LiDAR in the exports, on a real recorded sequence with a spinning LiDAR: KITTI velodyne and
SemanticKITTI labels through KISS-ICP's loaders, PointCloud2 through rosbags and KISS-ICP, and
the scans in the Rerun recording."""

from __future__ import annotations

import numpy as np
import pytest
import yaml
from kiss_icp.datasets.kitti import KITTIOdometryDataset
from kiss_icp.datasets.rosbag import RosbagDataset
from kiss_icp.tools.point_cloud2 import read_point_cloud, read_points
from rerun.chunk import RrdReader
from rosbags.highlevel import AnyReader

from twinsim.export import export_sequence
from twinsim.export.common import T_body_sensor, invert
from twinsim.scene.vocabulary import SEMANTIC_CLASSES
from twinsim.sequence import open_sequence

LIDAR_OVERRIDES = (
    "people.count=3",
    "flying_objects.count=2",
    "lidars.lidar0.model=vlp-16",
    "lidars.lidar0.columns=360",
)


@pytest.fixture(scope="module")
def lidar_sequence(tmp_path_factory, gl_backend):
    """A 1 s tiny world with people, flying objects and a 16-beam LiDAR at 10 Hz."""
    from twinsim.config import load_config
    from twinsim.sim import run

    out = tmp_path_factory.mktemp("lidar") / "seq"
    return run(load_config("tiny", LIDAR_OVERRIDES, seed=2, duration_s=1.0), out)


@pytest.fixture(scope="module")
def scans(lidar_sequence):
    stream = open_sequence(lidar_sequence).lidar("lidar0")
    return [stream[i] for i in range(len(stream))]


def test_kitti_velodyne_labels_and_poses_in_kiss_icp(lidar_sequence, scans, tmp_path) -> None:
    seq = open_sequence(lidar_sequence)
    out = export_sequence(lidar_sequence, "kitti", tmp_path / "kitti")
    data = KITTIOdometryDataset(out, "00")
    assert len(data) == len(scans) == 10
    folder = out / "sequences/00"
    for i in (0, len(scans) - 1):
        scan = scans[i]
        raw = np.fromfile(folder / f"velodyne/{i:06d}.bin", dtype="<f4").reshape(-1, 4)
        np.testing.assert_array_equal(raw[:, :3], scan.points)
        np.testing.assert_array_equal(raw[:, 3], scan.intensity)
        points, _ = data[i]  # KISS-ICP also applies KITTI's small scan correction
        assert points.shape == (len(scan), 3)
        np.testing.assert_allclose(points, scan.points, atol=0.01 * scan.range.max())
        label = np.fromfile(folder / f"labels/{i:06d}.label", dtype="<u4")
        np.testing.assert_array_equal(label & 0xFFFF, scan.semantic)
        np.testing.assert_array_equal(label >> 16, scan.instance)
    assert any((s.instance > 0).any() and s.dynamic.any() for s in scans)
    # the loader maps camera poses through Tr into LiDAR poses: T_lidar0_lidar_i
    T_world_lidar = np.stack([s.T_world_lidar for s in scans])
    np.testing.assert_allclose(data.gt_poses, invert(T_world_lidar[0]) @ T_world_lidar, atol=1e-6)
    Tr = np.eye(4)
    Tr[:3] = data.calibration["Tr"].reshape(3, 4)
    T_cam_lidar = invert(T_body_sensor(seq, "cam0")) @ T_body_sensor(seq, "lidar0")
    np.testing.assert_allclose(Tr, T_cam_lidar, atol=1e-7)
    times = data.get_frames_timestamps()[:, 0]
    assert np.round(times * 1e9).astype(np.int64).tolist() == [s.t_ns for s in scans]
    # camera and LiDAR share instants here (30 Hz and 10 Hz), so the images come along
    assert len(list((folder / "image_2").glob("*.png"))) == len(scans)


def test_kitti_labels_yaml_as_semantic_kitti_api_loads_it(lidar_sequence, tmp_path) -> None:
    out = export_sequence(lidar_sequence, "kitti", tmp_path / "kitti")
    data = yaml.safe_load((out / "labels.yaml").read_text())  # evaluate_semantics.py, visualize.py
    keys = ("labels", "color_map", "learning_map", "learning_map_inv", "learning_ignore", "split")
    assert set(keys) <= set(data)
    assert [data["labels"][i] for i in range(len(SEMANTIC_CLASSES))] == list(SEMANTIC_CLASSES)
    # evaluate_semantics.py: remap LUT over learning_map keys, classes = len(learning_map_inv)
    remap = np.zeros(max(data["learning_map"]) + 100, dtype=np.int32)
    remap[list(data["learning_map"])] = list(data["learning_map"].values())
    n_classes = len(data["learning_map_inv"])
    assert set(data["learning_ignore"]) == set(range(n_classes)) and data["learning_ignore"][0]
    assert data["split"]["valid"] == [0]
    # laserscan.py SemLaserScan: colour LUT of max key + 100, colours as 0..255 BGR triples
    colors = np.zeros((max(data["color_map"]) + 100, 3), np.float32)
    for key, value in data["color_map"].items():
        assert len(value) == 3 and all(0 <= c <= 255 for c in value)
        colors[key] = np.array(value, np.float32) / 255.0
    ids = set()
    for path in sorted((out / "sequences/00/labels").glob("*.label")):
        ids |= set(np.unique(np.fromfile(path, dtype=np.int32) & 0xFFFF).tolist())
    assert len(ids) > 2 and ids <= set(data["color_map"]) & set(data["learning_map"])
    assert all(0 <= remap[i] < n_classes and remap[i] in data["learning_map_inv"] for i in ids)
    assert len({tuple(c) for c in data["color_map"].values()}) == len(data["color_map"])


def test_pointcloud2_in_rosbags_and_kiss_icp(lidar_sequence, scans, tmp_path) -> None:
    bag = export_sequence(lidar_sequence, "rosbag2", tmp_path / "bag")
    with AnyReader([bag]) as reader:
        connections = [c for c in reader.connections if c.topic == "/lidar0/points"]
        messages = [
            (t, reader.deserialize(raw, c.msgtype))
            for c, t, raw in reader.messages(connections=connections)
        ]
        (static,) = [
            reader.deserialize(raw, c.msgtype)
            for c, _, raw in reader.messages(
                connections=[c for c in reader.connections if c.topic == "/tf_static"]
            )
        ]
    assert len(messages) == len(scans)
    for (t, msg), scan in zip(messages, scans, strict=True):
        assert t == scan.t_ns == msg.header.stamp.sec * 10**9 + msg.header.stamp.nanosec
        assert msg.header.frame_id == "lidar0"
        points, stamps = read_point_cloud(msg)
        np.testing.assert_array_equal(points, scan.points.astype(np.float64))
        np.testing.assert_array_equal(stamps, scan.t_offset_ns)
        fields = read_points(msg)
        for name in ("ring", "semantic", "instance", "intensity"):
            np.testing.assert_array_equal(fields[name], getattr(scan, name))
        np.testing.assert_array_equal(fields["dynamic"].astype(bool), scan.dynamic)
    assert "lidar0" in {tr.child_frame_id for tr in static.transforms}
    dataset = RosbagDataset(bag, topic="/lidar0/points")
    assert len(dataset) == len(scans)
    points, stamps = dataset[0]
    assert points.shape == (len(scans[0]), 3) and stamps.max() == scans[0].t_offset_ns.max()


def test_rerun_recording_has_the_scans(lidar_sequence, scans, tmp_path) -> None:
    rrd = export_sequence(lidar_sequence, "rerun", tmp_path / "rrd")
    rows = 0
    for chunk in RrdReader(rrd).stream().collect().stream().to_chunks():
        if chunk.entity_path == "/world/lidar0/points" and not chunk.is_static:
            rows += chunk.num_rows
            batch = chunk.to_record_batch()
            times = batch.column("sim_time").cast("int64").to_pylist()
            positions = batch.column("Points3D:positions").to_pylist()
            for t, value in zip(times, positions, strict=True):
                scan = next(s for s in scans if s.t_ns == t)
                np.testing.assert_array_equal(np.array(value, np.float32), scan.points)
    assert rows == len(scans)
