"""The spline IMU reads analytic motion correctly, and both IMUs dead-reckon a real 10 s flight."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from twinsim.errors import SequenceError
from twinsim.sensors.spline_imu import GRAVITY_WORLD, sequence_spline_imu, spline_imu
from twinsim.sequence import ImuData, open_sequence

HZ = 240


def _ns(t_s: np.ndarray) -> np.ndarray:
    return np.rint(np.asarray(t_s) * 1e9).astype(np.int64)


def _helix(t: np.ndarray):
    """A body on a helix (radius 1 m, 0.5 rad/s) yawing with the path and rocking in roll."""
    w, r = 0.5, 1.0
    pos = np.stack([r * np.cos(w * t), r * np.sin(w * t), 1.0 + 0.1 * t], axis=1)
    acc = np.stack([-r * w**2 * np.cos(w * t), -r * w**2 * np.sin(w * t), 0 * t], axis=1)
    yaw, roll = w * t + np.pi / 2, 0.2 * np.sin(t)
    R = Rotation.from_euler("ZX", np.stack([yaw, roll], axis=1))
    # body rate of R = Rz(yaw) Rx(roll): yaw rate about the rolled z axis plus the roll rate
    gyro = np.stack([0.2 * np.cos(t), w * np.sin(roll), w * np.cos(roll)], axis=1)
    T = np.tile(np.eye(4), (len(t), 1, 1))
    T[:, :3, :3], T[:, :3, 3] = R.as_matrix(), pos
    return T, acc, gyro


def test_spline_imu_matches_analytic_motion():
    t_pose = np.arange(0.0, 6.0 + 1e-9, 1 / 60)
    T, _, _ = _helix(t_pose)
    t = np.arange(0.5, 5.5, 1 / HZ)
    _, acc, gyro = _helix(t)
    R = _helix(t)[0][:, :3, :3]
    imu = spline_imu(_ns(t_pose), T, _ns(t))
    expected_accel = np.einsum("nji,nj->ni", R, acc - GRAVITY_WORLD)
    np.testing.assert_allclose(imu.gyro, gyro, atol=2e-5)
    np.testing.assert_allclose(imu.accel, expected_accel, atol=2e-4)


def test_spline_imu_lever_arm_feels_centripetal_acceleration():
    """An IMU 0.3 m ahead of a body spinning in place at 1 rad/s reads ω² r towards the axis."""
    t_pose = np.arange(0.0, 4.0 + 1e-9, 1 / 60)
    T = np.tile(np.eye(4), (len(t_pose), 1, 1))
    T[:, :3, :3] = Rotation.from_euler("z", t_pose[:, None]).as_matrix()
    T_body_imu = np.eye(4)
    T_body_imu[0, 3] = 0.3
    imu = spline_imu(_ns(t_pose), T, _ns(np.arange(1.0, 3.0, 1 / HZ)), T_body_imu)
    np.testing.assert_allclose(imu.gyro, np.tile([0, 0, 1.0], (len(imu.t_ns), 1)), atol=1e-6)
    np.testing.assert_allclose(imu.accel, np.tile([-0.3, 0, 9.81], (len(imu.t_ns), 1)), atol=1e-4)


def test_spline_imu_refuses_too_few_poses():
    with pytest.raises(SequenceError, match="at least 4 poses"):
        spline_imu(_ns([0.0, 0.1]), np.tile(np.eye(4), (2, 1, 1)), _ns([0.05]))


@pytest.fixture(scope="module")
def flight(tmp_path_factory, gl_backend):
    """A real 10 s flight of the tiny world without cameras (physics and IMU only)."""
    from twinsim.config import load_config
    from twinsim.sim import run

    cfg = load_config("tiny", ["cameras={}"], seed=3, duration_s=10.0)
    return open_sequence(run(cfg, tmp_path_factory.mktemp("flight") / "seq"))


def _initial_state(seq):
    t_gt, T_gt = seq.groundtruth()
    odom = seq.table("odometry")
    assert odom["t_ns"][0] == t_gt[0]
    v_body = np.array([odom["vx"][0], odom["vy"][0], odom["vz"][0]])
    return t_gt, T_gt, T_gt[0, :3, :3] @ v_body


def _dead_reckon_mujoco(imu: ImuData, R0, p0, v0, dt):
    """MuJoCo's semi-implicit Euler: v += a_k dt, then p += v dt; the pose advances with ω_{k+1}."""
    R, p, v = Rotation.from_matrix(R0), p0.copy(), v0.copy()
    out = [p.copy()]
    for k in range(len(imu.t_ns) - 1):
        v = v + dt * (R.apply(imu.accel[k]) + GRAVITY_WORLD)
        R = R * Rotation.from_rotvec(imu.gyro[k + 1] * dt)
        p = p + dt * v
        out.append(p.copy())
    return np.array(out)


def _dead_reckon_continuous(imu: ImuData, R0, p0, v0, dt):
    """Trapezoidal integration of continuous-time readings (the spline IMU's nature)."""
    rotations = [Rotation.from_matrix(R0)]
    for k in range(len(imu.t_ns) - 1):
        rotations.append(
            rotations[-1] * Rotation.from_rotvec(0.5 * dt * (imu.gyro[k] + imu.gyro[k + 1]))
        )
    acc = np.array([r.apply(f) for r, f in zip(rotations, imu.accel, strict=True)]) + GRAVITY_WORLD
    p, v, out = p0.copy(), v0.copy(), [p0.copy()]
    for k in range(len(acc) - 1):
        p = p + v * dt + dt * dt * (acc[k] / 3 + acc[k + 1] / 6)
        v = v + 0.5 * dt * (acc[k] + acc[k + 1])
        out.append(p.copy())
    return np.array(out)


@pytest.mark.parametrize("source", ["mujoco", "spline"])
def test_noise_free_imu_dead_reckons_the_ground_truth(flight, source):
    t_gt, T_gt, v0 = _initial_state(flight)
    imu = flight.imu("imu0") if source == "mujoco" else sequence_spline_imu(flight, "imu0")
    assert imu.t_ns[0] == t_gt[0] and (imu.t_ns[-1] - imu.t_ns[0]) >= 9.99e9
    dt = 1.0 / flight.metadata["physics_hz"]
    integrate = _dead_reckon_mujoco if source == "mujoco" else _dead_reckon_continuous
    positions = integrate(imu, T_gt[0, :3, :3], T_gt[0, :3, 3], v0, dt)
    at_poses = positions[np.searchsorted(imu.t_ns, t_gt)]
    error = np.linalg.norm(at_poses - T_gt[:, :3, 3], axis=1)
    path = np.sum(np.linalg.norm(np.diff(T_gt[:, :3, 3], axis=0), axis=1))
    assert path > 2.0  # the drone really flew
    assert error[-1] < 0.05 and error.max() < 0.05


def test_spline_and_mujoco_imus_agree_in_flight(flight):
    mujoco, spline = flight.imu("imu0"), sequence_spline_imu(flight, "imu0")
    np.testing.assert_array_equal(mujoco.t_ns, spline.t_ns)
    inner = slice(8, -8)  # away from the extrapolated ends
    assert np.median(np.abs(spline.accel[inner] - mujoco.accel[inner])) < 1e-3
    assert np.median(np.abs(spline.gyro[inner] - mujoco.gyro[inner])) < 1e-3


def test_sequence_spline_imu_wants_an_imu_stream(flight):
    with pytest.raises(SequenceError, match="odometry is not an IMU stream"):
        sequence_spline_imu(flight, "odometry")
