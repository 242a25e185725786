"""Conversions between 4x4 poses and the file rows x,y,z,qx,qy,qz,qw (quaternion scalar last)."""

from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation


def pose_to_row(T: np.ndarray) -> np.ndarray:
    """A 4x4 rigid transform as (x, y, z, qx, qy, qz, qw), with qw >= 0 so the row is unique."""
    T = np.asarray(T, dtype=np.float64)
    if T.shape != (4, 4):
        raise ValueError(f"pose must be a 4x4 matrix, got shape {T.shape}")
    quat = Rotation.from_matrix(T[:3, :3]).as_quat(canonical=True)
    return np.concatenate([T[:3, 3], quat])


def rows_to_poses(rows: np.ndarray) -> np.ndarray:
    """(N, 7) rows x,y,z,qx,qy,qz,qw as (N, 4, 4) float64 transforms."""
    rows = np.asarray(rows, dtype=np.float64).reshape(-1, 7)
    poses = np.zeros((len(rows), 4, 4))
    if len(rows):
        poses[:, :3, :3] = Rotation.from_quat(rows[:, 3:]).as_matrix()
    poses[:, :3, 3] = rows[:, :3]
    poses[:, 3, 3] = 1.0
    return poses
