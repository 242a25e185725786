"""The MuJoCo IMU reads gravity at rest, and its gyro integrates back to the true rotation."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from conftest import box_room_scene
from twinsim.config import TwinsimConfig
from twinsim.model.scene import PathPoint
from twinsim.sensors.kinds.camera import CameraConfig
from twinsim.sequence import open_sequence
from twinsim.sim import record


def _flight(scene, path, duration_s, tmp_path, horizontal=False):
    robot = scene.robot.model_copy(update={"path": path, "horizontal": horizontal})
    cfg = TwinsimConfig(
        sim={"duration_s": duration_s, "bootstrap_s": 0.5},
        cameras={"cam0": CameraConfig(width=32, height=24, rate_hz=10)},
    )
    scene = scene.model_copy(update={"robots": (robot,)})
    return open_sequence(record(scene, cfg, tmp_path / "seq"))


def _hover_path(pos, yaw):
    return tuple(PathPoint(t_s=t, pos=tuple(pos), yaw=yaw) for t in (0.0, 1.0, 2.0))


def _wavy_path(start, duration_s):
    pts = []
    for t in np.arange(0.0, duration_s + 0.05, 0.05):
        x = start[0] + 0.6 * np.sin(0.4 * t)
        y = start[1] + 0.4 * (1 - np.cos(0.4 * t))
        z = start[2] + 0.15 * np.sin(0.5 * t)
        pts.append(PathPoint(t_s=float(t), pos=(x, y, z), yaw=float(0.5 * np.sin(0.45 * t))))
    return tuple(pts)


def test_imu_at_rest_reads_gravity_up(gl_backend, tmp_path):
    scene = box_room_scene(start=(0.0, 0.0, 1.2), start_yaw=0.7)
    seq = _flight(scene, _hover_path((0.0, 0.0, 1.2), 0.7), 1.0, tmp_path)
    imu = seq.imu("imu0")
    assert len(imu.t_ns) == 240
    np.testing.assert_allclose(imu.accel, np.tile([0.0, 0.0, 9.81], (240, 1)), atol=1e-6)
    np.testing.assert_allclose(imu.gyro, 0.0, atol=1e-9)


@pytest.mark.parametrize("horizontal", [False, True])
def test_gyro_integrates_to_ground_truth_rotation(gl_backend, tmp_path, horizontal):
    start = (-0.5, -0.4, 1.2)
    scene = box_room_scene(start=start, start_yaw=0.0)
    seq = _flight(scene, _wavy_path(start, 5.0), 4.0, tmp_path, horizontal=horizontal)
    imu = seq.imu("imu0")
    t_gt, T_gt = seq.groundtruth()
    dt = 1.0 / seq.metadata["physics_hz"]
    # MuJoCo's semi-implicit Euler advances the pose with the *next* step's velocity
    i0, i1 = np.searchsorted(imu.t_ns, [t_gt[0], t_gt[-1]])
    assert imu.t_ns[i0] == t_gt[0] and imu.t_ns[i1] == t_gt[-1]
    R = Rotation.from_matrix(T_gt[0, :3, :3])
    for w in imu.gyro[i0 + 1 : i1 + 1]:
        R = R * Rotation.from_rotvec(w * dt)
    R_true = Rotation.from_matrix(T_gt[-1, :3, :3])
    angle = (R.inv() * R_true).magnitude()
    travelled = np.sum(np.linalg.norm(imu.gyro, axis=1)) * dt
    assert travelled > 0.3  # the flight really turned
    assert np.rad2deg(angle) < 0.05
    if horizontal:
        roll_pitch = Rotation.from_matrix(T_gt[:, :3, :3]).as_euler("ZYX")[:, 1:]
        np.testing.assert_allclose(roll_pitch, 0.0, atol=1e-9)
    else:
        roll_pitch = Rotation.from_matrix(T_gt[:, :3, :3]).as_euler("ZYX")[:, 1:]
        assert np.abs(roll_pitch).max() > np.deg2rad(0.3)  # tilts to accelerate
