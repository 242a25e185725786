"""Camera motion during a frame: poses between samples, and images re-projected to other times.

Each pixel is back-projected with its depth from the camera pose at the frame time and projected
into the camera at another instant; sampling the frame backwards along that flow approximates
the image the camera would have seen then (exact for static scenes up to disocclusions; people
and flying objects are treated as if they stood still during the exposure). Pixels without a
depth reading are treated as very far away, so they move with the camera's rotation only.
"""

from __future__ import annotations

import cv2
import numpy as np
from scipy.interpolate import CubicSpline
from scipy.spatial.transform import Rotation, RotationSpline

#: Depth used for pixels with no reading (0): far enough that only rotation moves them.
FAR_M = 1e4


class PoseSpline:
    """Smooth interpolation of poses T (N, 4, 4) at integer times t_ns (cubic splines)."""

    def __init__(self, t_ns: np.ndarray, T: np.ndarray) -> None:
        self._t0 = int(t_ns[0])
        knots = (np.asarray(t_ns, dtype=np.int64) - self._t0) * 1e-9
        self._position = CubicSpline(knots, T[:, :3, 3], axis=0)
        self._rotation = RotationSpline(knots, Rotation.from_matrix(T[:, :3, :3]))

    def __call__(self, t_s: np.ndarray) -> np.ndarray:
        """Poses (M, 4, 4) at times in seconds since the first sample's t_ns."""
        t = np.atleast_1d(np.asarray(t_s, dtype=np.float64))
        out = np.tile(np.eye(4), (len(t), 1, 1))
        out[:, :3, :3] = self._rotation(t).as_matrix()
        out[:, :3, 3] = self._position(t)
        return out

    def seconds(self, t_ns: int) -> float:
        """A timestamp in the spline's time axis."""
        return (int(t_ns) - self._t0) * 1e-9


def world_points(depth: np.ndarray, K: np.ndarray, T_world_cam: np.ndarray) -> np.ndarray:
    """(H, W, 3) world points of every pixel (no reading → FAR_M along the pixel's ray)."""
    h, w = depth.shape
    u, v = np.meshgrid(np.arange(w, dtype=np.float64), np.arange(h, dtype=np.float64))
    z = np.where(depth > 0, depth, FAR_M).astype(np.float64)
    x = (u - K[0, 2]) / K[0, 0] * z
    y = (v - K[1, 2]) / K[1, 1] * z
    points_cam = np.stack([x, y, z], axis=-1)
    return points_cam @ T_world_cam[:3, :3].T + T_world_cam[:3, 3]


def warp_to_row_poses(
    image: np.ndarray, points_world: np.ndarray, K: np.ndarray, T_world_cam_rows: np.ndarray
) -> np.ndarray:
    """The image as seen when row r is captured from pose T_world_cam_rows[r] (float32 out).

    Backward warp: a pixel p shows what was at p − flow(p), flow being where p's scene point
    moves between the frame pose and the row's pose.
    """
    h, w = points_world.shape[:2]
    # row-vector form of R_cam_world (X − t): (X − t) @ R_world_cam, one matrix per row
    offset = points_world - T_world_cam_rows[:, None, :3, 3]
    p_cam = np.matmul(offset, T_world_cam_rows[:, :3, :3])
    z = np.maximum(p_cam[..., 2], np.float32(1e-6))
    fx, fy, cx, cy = (float(K[0, 0]), float(K[1, 1]), float(K[0, 2]), float(K[1, 2]))
    u = fx * p_cam[..., 0] / z + cx
    v = fy * p_cam[..., 1] / z + cy
    map_x = (2 * np.arange(w, dtype=np.float32)[None, :] - u).astype(np.float32, copy=False)
    map_y = (2 * np.arange(h, dtype=np.float32)[:, None] - v).astype(np.float32, copy=False)
    return cv2.remap(
        image.astype(np.float32, copy=False),
        map_x,
        map_y,
        cv2.INTER_LINEAR,
        borderMode=cv2.BORDER_REFLECT,
    )


def exposure_image(
    linear: np.ndarray,
    depth: np.ndarray,
    K: np.ndarray,
    poses: PoseSpline,
    t_s: float,
    exposure_s: float,
    readout_s: float,
    samples: int,
) -> np.ndarray:
    """Average of the image over the exposure, each row shifted by its rolling-shutter delay.

    Row r is exposed during [t_r − e/2, t_r + e/2] with t_r = t + (r / (H − 1) − ½) · readout:
    the frame time is the middle of the exposure of the middle row.
    """
    h = depth.shape[0]
    # float32 about the frame's camera position: full precision where it matters, half the work
    T_frame = poses(t_s)[0]
    origin = T_frame[:3, 3]
    points = (world_points(depth, K, T_frame) - origin).astype(np.float32)
    row_delay = (np.arange(h) / max(h - 1, 1) - 0.5) * readout_s
    if exposure_s > 0:
        offsets = (np.arange(samples) + 0.5) / samples * exposure_s - exposure_s / 2
    else:
        offsets = np.zeros(1)
    total = np.zeros(linear.shape, np.float32)
    for offset in offsets:
        rows = poses(t_s + offset + row_delay)
        rows[:, :3, 3] -= origin
        total += warp_to_row_poses(linear, points, K, rows.astype(np.float32))
    return (total / len(offsets)).astype(np.float32)
