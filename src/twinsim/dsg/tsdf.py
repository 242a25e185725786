"""A dense TSDF over the scene bounds, fused by vectorised projective integration, and its zero
level set as a triangle mesh (scikit-image's marching cubes).

Our own volume rather than OpenCV's `cv2.Volume`: OpenCV's Python API neither extracts triangles
nor exposes its voxels, so a mesh needs the TSDF in our hands. The update is KinectFusion's (as
OpenCV's): every voxel in the camera frustum that projects onto a valid depth pixel takes the
signed distance along the ray, truncated to +1 in front and skipped more than one truncation
behind, averaged with a weight capped at `max_weight`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from skimage.measure import marching_cubes

_CHUNK_VOXELS = 1 << 21  # voxels updated at once (bounds the temporaries to a few tens of MB)


@dataclass(frozen=True)
class TriangleMesh:
    """Vertices (V, 3) in world coordinates, triangles (F, 3) indexing them, unit normals (V, 3)
    pointing to the observed free space."""

    vertices: np.ndarray
    faces: np.ndarray
    normals: np.ndarray


class TsdfVolume:
    """Truncated signed distances (units of the truncation, +1 = free) and fusion weights."""

    def __init__(
        self, lo, hi, voxel_m: float, truncation_m: float, max_weight: float = 64.0
    ) -> None:
        self.origin = np.asarray(lo, float)
        self.voxel_m = float(voxel_m)
        self.truncation_m = float(truncation_m)
        self.max_weight = float(max_weight)
        shape = tuple(np.ceil((np.asarray(hi, float) - self.origin) / voxel_m).astype(int))
        self.tsdf = np.ones(shape, np.float32)
        self.weight = np.zeros(shape, np.float32)

    def _axis(self, n: int, start: int, stop: int) -> np.ndarray:
        return self.origin[n] + (np.arange(start, stop) + 0.5) * self.voxel_m

    def _frustum(self, K: np.ndarray, T_world_cam: np.ndarray, shape, far_m: float):
        """Voxel index ranges of the box around the camera frustum up to `far_m`."""
        h, w = shape
        u = np.array([0.0, w - 1.0, 0.0, w - 1.0])
        v = np.array([0.0, 0.0, h - 1.0, h - 1.0])
        corners = np.stack([(u - K[0, 2]) / K[0, 0], (v - K[1, 2]) / K[1, 1], np.ones(4)], 1)
        pts = np.vstack([np.zeros(3), far_m * corners]) @ T_world_cam[:3, :3].T
        pts += T_world_cam[:3, 3]
        lo = np.floor((pts.min(axis=0) - self.origin) / self.voxel_m).astype(int)
        hi = np.ceil((pts.max(axis=0) - self.origin) / self.voxel_m).astype(int) + 1
        return np.clip(lo, 0, self.tsdf.shape), np.clip(hi, 0, self.tsdf.shape)

    def integrate(
        self, depth: np.ndarray, K: np.ndarray, T_world_cam: np.ndarray, max_depth_m: float
    ) -> None:
        """Fuse one depth image (metres, 0 = no data) seen from `T_world_cam` with intrinsics K."""
        depth = np.where(np.isfinite(depth) & (depth <= max_depth_m), depth, 0).astype(np.float32)
        if not (depth > 0).any():
            return
        h, w = depth.shape
        fx, fy, cx, cy = K[0, 0], K[1, 1], K[0, 2], K[1, 2]
        vv, uu = np.mgrid[0:h, 0:w]
        ray_scale = np.sqrt(1 + ((uu - cx) / fx) ** 2 + ((vv - cy) / fy) ** 2).astype(np.float32)
        trunc = self.truncation_m
        lo, hi = self._frustum(K, T_world_cam, depth.shape, float(depth.max()) + trunc)
        if np.any(hi <= lo):
            return
        T_cam_world = np.linalg.inv(T_world_cam)
        R, t = T_cam_world[:3, :3], T_cam_world[:3, 3]
        ys, zs = self._axis(1, lo[1], hi[1]), self._axis(2, lo[2], hi[2])
        step = max(1, _CHUNK_VOXELS // (len(ys) * len(zs)))
        for i0 in range(lo[0], hi[0], step):
            i1 = min(i0 + step, hi[0])
            xs = self._axis(0, i0, i1)
            x, y, z = (
                (R[c, 0] * xs[:, None, None] + R[c, 1] * ys[None, :, None])
                + (R[c, 2] * zs + t[c])[None, None, :]
                for c in range(3)
            )
            inside = z > 1e-6
            with np.errstate(divide="ignore", invalid="ignore"):
                u = np.rint(fx * x / z + cx)
                v = np.rint(fy * y / z + cy)
            inside &= (u >= 0) & (u <= w - 1) & (v >= 0) & (v <= h - 1)
            pu, pv = u[inside].astype(np.intp), v[inside].astype(np.intp)
            measured = depth[pv, pu]
            sdf = (measured - z[inside]) * ray_scale[pv, pu]
            keep = (measured > 0) & (sdf >= -trunc)
            update = np.zeros_like(inside)
            update[inside] = keep
            tsdf = self.tsdf[i0:i1, lo[1] : hi[1], lo[2] : hi[2]]
            weight = self.weight[i0:i1, lo[1] : hi[1], lo[2] : hi[2]]
            old_w = weight[update]
            value = np.minimum(sdf[keep] / trunc, 1.0)
            tsdf[update] = (tsdf[update] * old_w + value) / (old_w + 1)
            weight[update] = np.minimum(old_w + 1, self.max_weight)

    def extract_mesh(self) -> TriangleMesh | None:
        """The zero level set between observed voxels as triangles in world coordinates; None
        when the volume holds no surface."""
        seen = self.weight > 0
        cube = np.zeros_like(seen)
        core = seen[:-1, :-1, :-1].copy()
        for dx, dy, dz in np.ndindex(2, 2, 2):
            core &= seen[dx : dx + core.shape[0], dy : dy + core.shape[1], dz : dz + core.shape[2]]
        cube[:-1, :-1, :-1] = core
        values = self.tsdf[seen]
        if not cube.any() or values.min() >= 0 or values.max() <= 0:
            return None
        verts, faces, normals, _ = marching_cubes(
            self.tsdf, 0.0, spacing=(self.voxel_m,) * 3, gradient_direction="ascent", mask=cube
        )
        if len(faces) == 0:
            return None
        verts = verts.astype(float) + self.origin + self.voxel_m / 2
        a, b, c = (verts[faces[:, k]] for k in range(3))
        faces = faces[np.linalg.norm(np.cross(b - a, c - a), axis=1) > 1e-12 * self.voxel_m**2]
        used, faces = np.unique(faces, return_inverse=True)
        return TriangleMesh(verts[used], faces.reshape(-1, 3).astype(np.int64), normals[used])
