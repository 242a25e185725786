"""Small rigid-transform helpers shared by every stage (4×4 matrices, MuJoCo wxyz quaternions)."""

from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation

# Rotation from the OpenCV optical frame (x right, y down, z forward) to MuJoCo's camera frame
# (x right, y up, looking along -z): a half turn about x.
R_OPTICAL_MJCAM = np.diag([1.0, -1.0, -1.0])


def quat_wxyz_to_matrix(q) -> np.ndarray:
    """3×3 rotation of a (w, x, y, z) quaternion."""
    w, x, y, z = q
    return Rotation.from_quat([x, y, z, w]).as_matrix()


def matrix_to_quat_wxyz(R: np.ndarray) -> tuple[float, float, float, float]:
    """(w, x, y, z) quaternion of a rotation matrix, with w >= 0."""
    x, y, z, w = Rotation.from_matrix(R).as_quat()
    if w < 0:
        x, y, z, w = -x, -y, -z, -w
    return (float(w), float(x), float(y), float(z))


def rpy_deg_to_matrix(rpy_deg) -> np.ndarray:
    """Rotation R = Rz(yaw) · Ry(pitch) · Rx(roll) from roll, pitch, yaw in degrees."""
    return Rotation.from_euler(
        "ZYX", np.asarray(rpy_deg, dtype=float)[::-1], degrees=True
    ).as_matrix()


def yaw_quat_wxyz(yaw: float) -> tuple[float, float, float, float]:
    """(w, x, y, z) quaternion of a rotation by `yaw` radians about z."""
    return (float(np.cos(yaw / 2)), 0.0, 0.0, float(np.sin(yaw / 2)))


def make_T(R: np.ndarray, t) -> np.ndarray:
    """4×4 homogeneous transform from a rotation and a translation."""
    T = np.eye(4)
    T[:3, :3] = R
    T[:3, 3] = t
    return T


def pose_to_T(pos, quat_wxyz) -> np.ndarray:
    """4×4 transform from a position and a (w, x, y, z) quaternion."""
    return make_T(quat_wxyz_to_matrix(quat_wxyz), pos)


def T_to_pos_quat_xyzw(T: np.ndarray) -> np.ndarray:
    """Row (x, y, z, qx, qy, qz, qw) of a 4×4 transform, the TUM order used in our CSV files."""
    w, x, y, z = matrix_to_quat_wxyz(T[:3, :3])
    return np.array([*T[:3, 3], x, y, z, w])
