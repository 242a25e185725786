"""Per-sequence motion and dynamics statistics (GRADE's Table 8) for metadata and `info`."""

from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation


def camera_motion_stats(t_ns: np.ndarray, T_world_cam: np.ndarray) -> dict[str, list[float]]:
    """Mean absolute linear/angular speed and acceleration per axis of the camera frame.

    Velocities come from central differences of the ground-truth poses (linear velocity
    rotated into the camera frame, angular velocity from relative rotations), accelerations
    from differences of those; units m/s, m/s², rad/s, rad/s².
    """
    if len(t_ns) < 3:
        zeros = [0.0, 0.0, 0.0]
        return {
            k: zeros for k in ("linear_speed", "linear_accel", "angular_speed", "angular_accel")
        }
    t = (t_ns - t_ns[0]) * 1e-9
    R = T_world_cam[:, :3, :3]
    v_world = np.gradient(T_world_cam[:, :3, 3], t, axis=0)
    v_cam = np.einsum("nji,nj->ni", R, v_world)
    rel = Rotation.from_matrix(R[:-1]).inv() * Rotation.from_matrix(R[1:])
    w_mid = rel.as_rotvec() / np.diff(t)[:, None]
    t_mid = (t[:-1] + t[1:]) / 2
    w_cam = np.stack([np.interp(t, t_mid, w_mid[:, i]) for i in range(3)], axis=1)
    a_cam = np.gradient(v_cam, t, axis=0)
    alpha = np.gradient(w_cam, t, axis=0)

    def mean_abs(x: np.ndarray) -> list[float]:
        return np.abs(x).mean(axis=0).tolist()

    return {
        "linear_speed": mean_abs(v_cam),
        "linear_accel": mean_abs(a_cam),
        "angular_speed": mean_abs(w_cam),
        "angular_accel": mean_abs(alpha),
    }


def dynamic_stats(fractions: list[float]) -> dict[str, float | int]:
    """Frames showing dynamic content, and the mean share of the image it covers."""
    f = np.asarray(fractions, dtype=float)
    return {
        "frames": len(f),
        "frames_with_dynamic_content": int(np.count_nonzero(f > 0)),
        "mean_dynamic_coverage": float(f.mean()) if len(f) else 0.0,
    }
