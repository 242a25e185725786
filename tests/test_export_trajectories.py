"""TUM, EuRoC and KITTI exports read back with evo's and KISS-ICP's own readers."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from evo.tools import file_interface
from scipy.spatial.transform import Rotation

from twinsim.export import export_sequence
from twinsim.export.common import T_body_sensor, invert, seconds_text
from twinsim.export.tum import DEPTH_SCALE
from twinsim.sequence import open_sequence
from twinsim.sequence.poses import rows_to_poses


def _poses(traj) -> np.ndarray:
    """(N, 4, 4) from an evo trajectory, via its xyz + wxyz quaternion arrays."""
    quat_xyzw = np.roll(traj.orientations_quat_wxyz, -1, axis=1)
    return rows_to_poses(np.hstack([traj.positions_xyz, quat_xyzw]))


def _same_pose(a: np.ndarray, b: np.ndarray, tol: float = 1e-12) -> None:
    np.testing.assert_allclose(a[..., :3, 3], b[..., :3, 3], atol=tol)
    np.testing.assert_allclose(a[..., :3, :3], b[..., :3, :3], atol=1e-9)


@pytest.fixture(scope="module")
def seq(dynamic_sequence):
    return open_sequence(dynamic_sequence)


@pytest.fixture(scope="module")
def tum(dynamic_sequence, tmp_path_factory):
    return export_sequence(dynamic_sequence, "tum", tmp_path_factory.mktemp("tum") / "out")


@pytest.fixture(scope="module")
def euroc(dynamic_sequence, tmp_path_factory):
    return export_sequence(dynamic_sequence, "euroc", tmp_path_factory.mktemp("euroc") / "out")


def test_seconds_text_is_exact() -> None:
    assert seconds_text(1_033_333_333) == "1.033333333"
    assert seconds_text(7) == "0.000000007"
    assert seconds_text(-1_500_000_000) == "-1.500000000"


def test_tum_groundtruth_reads_back_in_evo(tum, seq) -> None:
    traj = file_interface.read_tum_trajectory_file(tum / "groundtruth.txt")
    t_ns, T_world_cam = seq.groundtruth("groundtruth_cam0")
    np.testing.assert_array_equal(traj.timestamps, t_ns / 1e9)
    _same_pose(_poses(traj), T_world_cam)
    # the pose is the optical centre looking along +z: the camera's frames agree at frame times
    cam = seq.camera("cam0")
    index = np.searchsorted(t_ns, cam.t_ns)
    _same_pose(_poses(traj)[index], cam.T_world_cam)


def test_tum_images_depth_scale_and_associations(tum, seq) -> None:
    cam = seq.camera("cam0")
    rgb = [line.split() for line in (tum / "rgb.txt").read_text().splitlines() if line[0] != "#"]
    depth = [
        line.split() for line in (tum / "depth.txt").read_text().splitlines() if line[0] != "#"
    ]
    assoc = [line.split() for line in (tum / "associations.txt").read_text().splitlines()]
    assert len(rgb) == len(depth) == len(assoc) == len(cam)
    # associate.py's rule: rgb and depth stamps within 0.02 s; ours are identical
    for (t_rgb, f_rgb, t_d, f_d), (t1, f1), (t2, f2), t_ns in zip(
        assoc, rgb, depth, cam.t_ns, strict=True
    ):
        assert (t_rgb, f_rgb, t_d, f_d) == (t1, f1, t2, f2)
        assert abs(float(t_rgb) - float(t_d)) <= 0.02
        assert round(float(t_rgb) * 1e9) == t_ns
    for i in (0, len(cam) // 2, len(cam) - 1):
        frame = cam[i]
        image = cv2.imread(str(tum / rgb[i][1]), cv2.IMREAD_UNCHANGED)
        np.testing.assert_array_equal(image[..., ::-1], frame.rgb)
        png = cv2.imread(str(tum / depth[i][1]), cv2.IMREAD_UNCHANGED)
        assert png.dtype == np.uint16
        valid = (frame.depth > 0) & (frame.depth < 65535 / DEPTH_SCALE)
        np.testing.assert_array_less(
            np.abs(png[valid] / DEPTH_SCALE - frame.depth[valid]), 0.5 / DEPTH_SCALE + 1e-6
        )
        assert not png[~valid].any()
        assert valid.mean() > 0.5


def test_euroc_groundtruth_is_the_imu_in_evo(euroc, seq) -> None:
    traj = file_interface.read_euroc_csv_trajectory(
        euroc / "mav0/state_groundtruth_estimate0/data.csv"
    )
    t_ns, T_world_body = seq.groundtruth("groundtruth_body")
    np.testing.assert_array_equal(traj.timestamps, t_ns / 1e9)
    _same_pose(_poses(traj), T_world_body @ T_body_sensor(seq, "imu0"))
    # velocity columns: world-frame velocity, consistent with the positions' differences
    gt = np.loadtxt(euroc / "mav0/state_groundtruth_estimate0/data.csv", delimiter=",")
    step = np.diff(gt[:, 1:4], axis=0) / np.diff(gt[:, 0:1] * 1e-9, axis=0)
    np.testing.assert_allclose((gt[1:, 8:11] + gt[:-1, 8:11]) / 2, step, atol=0.02)


def test_euroc_camera_extrinsics_and_imu(euroc, seq) -> None:
    import yaml

    sensor = yaml.safe_load((euroc / "mav0/cam0/sensor.yaml").read_text())
    T_BS = np.array(sensor["T_BS"]["data"]).reshape(4, 4)
    K = seq.camera("cam0").K
    assert sensor["intrinsics"] == [K[0, 0], K[1, 1], K[0, 2], K[1, 2]]
    assert sensor["resolution"] == [seq.camera("cam0").width, seq.camera("cam0").height]
    # ground truth (IMU pose) composed with T_BS is the camera's own ground truth
    traj = file_interface.read_euroc_csv_trajectory(
        euroc / "mav0/state_groundtruth_estimate0/data.csv"
    )
    t_cam, T_world_cam = seq.groundtruth("groundtruth_cam0")
    np.testing.assert_array_equal(traj.timestamps, t_cam / 1e9)
    _same_pose(_poses(traj) @ T_BS, T_world_cam, tol=1e-9)
    imu = np.loadtxt(euroc / "mav0/imu0/data.csv", delimiter=",", dtype=object)
    data = seq.imu("imu0")
    np.testing.assert_array_equal(imu[:, 0].astype(np.int64), data.t_ns)
    np.testing.assert_array_equal(imu[:, 1:4].astype(float), data.gyro)
    np.testing.assert_array_equal(imu[:, 4:7].astype(float), data.accel)
    rows = (euroc / "mav0/cam0/data.csv").read_text().splitlines()[1:]
    cam = seq.camera("cam0")
    assert [int(r.split(",")[0]) for r in rows] == cam.t_ns.tolist()
    grey = cv2.imread(str(euroc / "mav0/cam0/data" / rows[3].split(",")[1]), cv2.IMREAD_UNCHANGED)
    assert grey.shape == (cam.height, cam.width)
    expected = cv2.cvtColor(cam[3].rgb, cv2.COLOR_RGB2GRAY)
    np.testing.assert_array_equal(grey, expected)


def test_kitti_without_lidar_reads_in_evo_and_kiss_icp(dynamic_sequence, seq, tmp_path) -> None:
    from kiss_icp.datasets.kitti import KITTIOdometryDataset

    out = export_sequence(dynamic_sequence, "kitti", tmp_path / "kitti", sequence="03")
    cam = seq.camera("cam0")
    path = file_interface.read_kitti_poses_file(out / "poses/03.txt")
    expected = invert(cam.T_world_cam[0]) @ cam.T_world_cam
    _same_pose(np.array(path.poses_se3), expected, tol=1e-9)
    data = KITTIOdometryDataset(out, "03")
    # no LiDAR: Tr is the identity, so the loader's poses are the camera's
    _same_pose(data.gt_poses, expected, tol=1e-6)
    np.testing.assert_array_equal(
        np.round(data.get_frames_timestamps()[:, 0] * 1e9).astype(np.int64), cam.t_ns
    )
    image = cv2.imread(str(out / "sequences/03/image_2/000005.png"))
    np.testing.assert_array_equal(image[..., ::-1], cam[5].rgb)
    assert len(data) == 0  # no velodyne scans without a LiDAR stream


def test_euroc_imu_sample_interval_is_documented_and_holds(euroc, seq) -> None:
    import yaml

    text = (euroc / "mav0/imu0/sensor.yaml").read_text()
    assert yaml.safe_load(text)["rate_hz"] == 240
    assert "gyro = mean angular rate over the physics step ending at t" in text
    assert "(t - 1/240 s, t]" in text and "accel = specific force at t (instantaneous" in text
    # what the comment says, checked against the logged physics state (drone joints x y z yaw
    # pitch roll, IMU at the body origin, one IMU sample per physics step)
    assert np.array_equal(T_body_sensor(seq, "imu0"), np.eye(4))
    state, joints = seq.table("robot_state"), seq.stream_info("robot_state")["joints"]
    q = np.stack([state[f"qpos_{j}"] for j in joints], axis=1)
    v = np.stack([state[f"qvel_{j}"] for j in joints], axis=1)
    imu, h = seq.imu("imu0"), 1 / 240
    assert np.array_equal(imu.t_ns, state["t_ns"])
    R = Rotation.from_euler("ZYX", q[:, 3:6])
    t_gt, T_gt = seq.groundtruth()
    at_gt = np.searchsorted(state["t_ns"], t_gt)
    np.testing.assert_allclose(R[at_gt].as_matrix(), T_gt[:, :3, :3], atol=1e-9)
    step_rate = np.array([(R[k - 1].inv() * R[k]).as_rotvec() / h for k in range(1, len(q))])
    assert np.abs(imu.gyro).max() > 0.05
    np.testing.assert_allclose(imu.gyro[1:], step_rate, atol=1e-4)  # step ending at k
    assert np.abs(imu.gyro[:-1] - step_rate).max() > 1e-3  # not the step starting at k
    specific_force = R.apply(imu.accel) - [0.0, 0.0, 9.81]
    next_step = np.diff(v[:, :3], axis=0) / h  # the acceleration integrated from k to k + 1
    np.testing.assert_allclose(specific_force[:-1], next_step, atol=1e-9)
