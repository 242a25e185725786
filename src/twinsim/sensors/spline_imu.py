"""An IMU derived from ground-truth poses by differentiating smooth splines (CARLA-Loc's method).

Positions of the IMU get a cubic spline whose second derivative is the linear acceleration;
orientations get scipy's cubic `RotationSpline`, whose first derivative is the angular rate in
the IMU frame. Readings follow the MuJoCo IMU's conventions (docs/sequence-format.md): gyro in
rad/s and specific force (acceleration minus gravity) in m/s², both in the IMU frame, so a level
IMU at rest reads +9.81 along +z.
"""

from __future__ import annotations

import numpy as np
from scipy.interpolate import CubicSpline
from scipy.spatial.transform import Rotation, RotationSpline

from twinsim.errors import SequenceError
from twinsim.sequence import ImuData, SequenceReader, step_to_ns, stream_steps

#: Gravity of every twinsim world (MuJoCo's default), m/s² along the world axes.
GRAVITY_WORLD = np.array([0.0, 0.0, -9.81])

#: The pose stream the spline goes through.
POSE_STREAM = "groundtruth_body"


def spline_imu(
    t_pose_ns: np.ndarray,
    T_world_body: np.ndarray,
    t_ns: np.ndarray,
    T_body_imu: np.ndarray | None = None,
    gravity_world: np.ndarray = GRAVITY_WORLD,
) -> ImuData:
    """IMU readings at `t_ns` from the spline through the poses T_world_body (N, 4, 4) at t_pose_ns.

    Times outside the poses' span extrapolate the end segments (at most one pose period).
    """
    t_pose_ns = np.asarray(t_pose_ns, dtype=np.int64)
    T_world_body = np.asarray(T_world_body, dtype=np.float64)
    if len(t_pose_ns) < 4 or T_world_body.shape != (len(t_pose_ns), 4, 4):
        raise SequenceError(
            f"spline IMU: needs at least 4 poses as (N, 4, 4) matrices, got {T_world_body.shape}"
        )
    if np.any(np.diff(t_pose_ns) <= 0):
        raise SequenceError("spline IMU: pose timestamps must be strictly increasing")
    T_body_imu = np.eye(4) if T_body_imu is None else np.asarray(T_body_imu, dtype=np.float64)
    T_world_imu = T_world_body @ T_body_imu
    # seconds relative to the first pose keep full float64 resolution over long runs
    t0 = int(t_pose_ns[0])
    knots = (t_pose_ns - t0) * 1e-9
    times = (np.asarray(t_ns, dtype=np.int64) - t0) * 1e-9
    position = CubicSpline(knots, T_world_imu[:, :3, 3], axis=0)
    orientation = RotationSpline(knots, Rotation.from_matrix(T_world_imu[:, :3, :3]))
    R_world_imu = orientation(times).as_matrix()
    accel_world = position(times, 2) - np.asarray(gravity_world, dtype=np.float64)
    specific_force = np.einsum("nji,nj->ni", R_world_imu, accel_world)
    gyro = np.atleast_2d(orientation(times, 1))
    return ImuData(t_ns=np.asarray(t_ns, dtype=np.int64).copy(), gyro=gyro, accel=specific_force)


def sequence_spline_imu(seq: SequenceReader, imu: str) -> ImuData:
    """The spline IMU of sequence `seq` on the grid and mounting of its IMU stream `imu`."""
    info = seq.stream_info(imu)
    if info.get("type") != "imu":
        raise SequenceError(f"{imu} is not an IMU stream (type {info.get('type')!r})")
    pose_stream = seq.stream_prefix(imu) + POSE_STREAM  # the IMU's robot's body poses
    if pose_stream not in seq.metadata["streams"]:
        raise SequenceError(f"spline IMU needs the pose stream {pose_stream!r}, which is missing")
    t_pose_ns, T_world_body = seq.groundtruth(pose_stream)
    hz = int(seq.metadata["physics_hz"])
    k_start, k_end = seq.metadata["recorded_steps"]
    steps = stream_steps(k_start, k_end, hz // int(info["rate_hz"]))
    t_ns = np.array([step_to_ns(k, hz) for k in steps], dtype=np.int64)
    T_body_imu = np.array(info.get("T_body_sensor", np.eye(4)), dtype=np.float64)
    return spline_imu(t_pose_ns, T_world_body, t_ns, T_body_imu)
