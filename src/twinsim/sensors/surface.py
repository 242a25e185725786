"""Per-pixel ground truth from a camera frame's geometry: surface normals and forward optical flow.

Both start from what the frame's segmentation and depth passes say each pixel sees: a MuJoCo geom
and a point on it (`backproject`). The normal is that geom's own at the point (`World.
surface_normals`), in the OpenCV optical frame. For flow the point is kept in its geom's frame
(`SurfacePoints`); at the next frame the geom's new pose carries it (static world, robots, people's
limbs, flying objects alike), and the next camera pose projects it: flow = where it lands − where
it was. `flow_valid` says whether it lands out of the image (0), on a pixel whose depth agrees (1)
or behind something nearer (2, occluded).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from twinsim.model.layout import FLOW_OCCLUDED, FLOW_OUT, FLOW_VISIBLE
from twinsim.sensors.camera import backproject

#: A landed point is visible where its depth is within this of the next frame's depth around it
#: (metres, plus `OCCLUSION_REL` of the depth): float32 depth and a slanted surface's spread
#: over the 2 × 2 pixels around the landing point stay inside it.
OCCLUSION_M = 0.01
OCCLUSION_REL = 0.01


@dataclass
class SurfacePoints:
    """The points a frame's pixels see, each in the frame of the geom it lies on."""

    pixels: np.ndarray  # (n,) flat pixel indices with a surface
    geoms: np.ndarray  # (n,) world geom ids
    local: np.ndarray  # (n, 3) points in their geoms' frames

    def state(self) -> dict[str, np.ndarray]:
        """As arrays, for a recorder's checkpoint."""
        return {"pixels": self.pixels, "geoms": self.geoms, "local": self.local}

    @classmethod
    def from_state(cls, state: dict[str, np.ndarray]) -> SurfacePoints:
        return cls(np.asarray(state["pixels"]), np.asarray(state["geoms"]), state["local"])


def _seen(geom_ids: np.ndarray, depth: np.ndarray, K: np.ndarray, T_world_cam: np.ndarray):
    """Flat indices of the pixels that see a geom at a depth, their geoms and world points."""
    pixels = np.flatnonzero((geom_ids.ravel() >= 0) & (depth.ravel() > 0.0))
    points = backproject(depth, K, T_world_cam).reshape(-1, 3)[pixels]
    return pixels, geom_ids.ravel()[pixels].astype(np.int64), points


def frame_normals(
    world, geom_ids: np.ndarray, depth: np.ndarray, K: np.ndarray, T_world_cam: np.ndarray
) -> np.ndarray:
    """(H, W, 3) float32 unit normals in the optical frame, facing the camera; 0 = none."""
    pixels, geoms, points = _seen(geom_ids, depth, K, T_world_cam)
    n_world = world.surface_normals(geoms, points, T_world_cam[:3, 3])
    out = np.zeros((depth.size, 3), np.float32)
    out[pixels] = n_world @ T_world_cam[:3, :3]  # rows: Rᵀ n
    return out.reshape(*depth.shape, 3)


def surface_points(
    world, geom_ids: np.ndarray, depth: np.ndarray, K: np.ndarray, T_world_cam: np.ndarray
) -> SurfacePoints:
    """The frame's seen points, held in their geoms' frames at the world's current state."""
    pixels, geoms, points = _seen(geom_ids, depth, K, T_world_cam)
    return SurfacePoints(pixels, geoms, world.to_geom_frame(geoms, points))


def forward_flow(
    world, previous: SurfacePoints, K: np.ndarray, T_world_cam: np.ndarray, depth: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Flow (H, W, 2) float32 (u, v pixels; NaN where a pixel saw nothing or its point moved
    behind the camera) and validity (H, W) uint8 of the previous frame's points, carried by their
    geoms to the world's current state and seen by the camera at `T_world_cam` with `depth`."""
    h, w = depth.shape
    world_pts = world.from_geom_frame(previous.geoms, previous.local)
    cam = (world_pts - T_world_cam[:3, 3]) @ T_world_cam[:3, :3]
    z = cam[:, 2]
    ahead = z > 0.0
    uv = np.full((len(z), 2), np.nan)
    uv[ahead] = cam[ahead, :2] / z[ahead, None] * K[[0, 1], [0, 1]] + K[:2, 2]
    u0, v0 = np.divmod(previous.pixels, w)[::-1]
    flow = np.full((h * w, 2), np.nan, np.float32)
    flow[previous.pixels] = uv - np.stack([u0, v0], axis=1)
    valid = np.full(h * w, FLOW_OUT, np.uint8)
    inside = ahead & (uv[:, 0] >= -0.5) & (uv[:, 0] < w - 0.5)
    inside &= (uv[:, 1] >= -0.5) & (uv[:, 1] < h - 0.5)
    rows = np.flatnonzero(inside)
    near, far = _depth_bounds(depth, uv[rows])
    tol = OCCLUSION_M + OCCLUSION_REL * z[rows]
    seen = (z[rows] >= near - tol) & (z[rows] <= far + tol)
    valid[previous.pixels[rows]] = np.where(seen, FLOW_VISIBLE, FLOW_OCCLUDED)
    return flow.reshape(h, w, 2), valid.reshape(h, w)


def _depth_bounds(depth: np.ndarray, uv: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Least and greatest depth (> 0) of the 2 × 2 pixels around each point `uv` (n, 2) (its
    own pixel where it is at the image border); ±inf where none of them saw anything."""
    h, w = depth.shape
    lo = np.floor(uv).astype(int)
    z = np.stack(
        [
            depth[np.clip(lo[:, 1] + dy, 0, h - 1), np.clip(lo[:, 0] + dx, 0, w - 1)]
            for dy in (0, 1)
            for dx in (0, 1)
        ]
    ).astype(np.float64)
    hit = z > 0.0
    near = np.where(hit, z, np.inf).min(axis=0)
    far = np.where(hit, z, -np.inf).max(axis=0)
    return near, far
