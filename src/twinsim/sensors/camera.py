"""Pinhole camera model and per-frame annotations: instance/semantic masks, 2D and 3D boxes.

Pixel centres sit at integer coordinates (OpenCV); with MuJoCo's symmetric frustum the
principal point is the image centre, ((W − 1)/2, (H − 1)/2), and fx = fy.
"""

from __future__ import annotations

import numpy as np
from scipy import ndimage

_BOX_CORNERS = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], float)
_PIXEL_MARGIN = 1e-3
_BOX_EDGES = np.array(
    [(a, b) for a in range(8) for b in range(a + 1, 8) if bin(a ^ b).count("1") == 1], int
)


def intrinsics(width: int, height: int, hfov_deg: float) -> np.ndarray:
    """3×3 camera matrix K of a square-pixel pinhole camera with the given horizontal FOV."""
    fx = width / 2 / np.tan(np.deg2rad(hfov_deg) / 2)
    return np.array([[fx, 0.0, (width - 1) / 2], [0.0, fx, (height - 1) / 2], [0.0, 0.0, 1.0]])


def tight_boxes(instance: np.ndarray) -> dict[int, tuple[int, int, int, int]]:
    """Inclusive pixel extent (x0, y0, x1, y1) of every instance id present in the image."""
    boxes = {}
    for iid, sl in enumerate(ndimage.find_objects(instance), start=1):
        if sl is not None:
            rows, cols = sl
            boxes[iid] = (cols.start, rows.start, cols.stop - 1, rows.stop - 1)
    return boxes


def loose_box(
    center: np.ndarray,
    half: np.ndarray,
    R_world_box: np.ndarray,
    T_cam_world: np.ndarray,
    K: np.ndarray,
    near: float,
    width: int,
    height: int,
) -> tuple[int, int, int, int] | None:
    """Pixel extent of a 3D box projected into the image, ignoring occlusion.

    The box edges are clipped against the near plane before projection, so boxes that reach
    behind the camera are bounded correctly; None when nothing of the box is in front or the
    projection misses the image.
    """
    corners_w = (_BOX_CORNERS * half) @ R_world_box.T + center
    pts = corners_w @ T_cam_world[:3, :3].T + T_cam_world[:3, 3]
    a, b = pts[_BOX_EDGES[:, 0]], pts[_BOX_EDGES[:, 1]]
    za, zb = a[:, 2], b[:, 2]
    keep = (za >= near) | (zb >= near)
    a, b, za, zb = a[keep], b[keep], za[keep], zb[keep]
    if len(a) == 0:
        return None
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.clip(np.where(za != zb, (near - za) / (zb - za), 0.0), 0.0, 1.0)
    a_clip = np.where((za < near)[:, None], a + (b - a) * s[:, None], a)
    b_clip = np.where((zb < near)[:, None], a + (b - a) * s[:, None], b)
    p = np.concatenate([a_clip, b_clip])
    uv = p[:, :2] / p[:, 2:3] * K[[0, 1], [0, 1]] + K[:2, 2]
    # Pixel i covers [i − 0.5, i + 0.5); the margin absorbs the renderer's float32 rounding.
    x0, y0 = np.floor(uv.min(axis=0) + 0.5 - _PIXEL_MARGIN).astype(int)
    x1, y1 = np.floor(uv.max(axis=0) + 0.5 + _PIXEL_MARGIN).astype(int)
    if x1 < 0 or y1 < 0 or x0 > width - 1 or y0 > height - 1:
        return None
    return (max(x0, 0), max(y0, 0), min(x1, width - 1), min(y1, height - 1))


def backproject(depth: np.ndarray, K: np.ndarray, T_world_cam: np.ndarray) -> np.ndarray:
    """World points (H, W, 3) of every pixel of a z-depth image (NaN where depth is 0)."""
    h, w = depth.shape
    u, v = np.meshgrid(np.arange(w), np.arange(h))
    z = np.where(depth > 0, depth, np.nan).astype(np.float64)
    x = (u - K[0, 2]) / K[0, 0] * z
    y = (v - K[1, 2]) / K[1, 1] * z
    pts = np.stack([x, y, z], axis=-1)
    return pts @ T_world_cam[:3, :3].T + T_world_cam[:3, 3]
