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
from numpy.typing import ArrayLike
from skimage.measure import marching_cubes

_CHUNK_VOXELS = 1 << 21  # voxels updated at once (bounds the temporaries to a few tens of MB)


@dataclass(frozen=True)
class TriangleMesh:
    """Vertices (V, 3) in world coordinates, triangles (F, 3) indexing them and wound toward the
    observed free space, vertex normals (V, 3) pointing there."""

    vertices: np.ndarray
    faces: np.ndarray
    normals: np.ndarray


class TsdfVolume:
    """Truncated signed distances (units of the truncation, +1 = free) and fusion weights."""

    def __init__(
        self,
        lo: ArrayLike,
        hi: ArrayLike,
        voxel_m: float,
        truncation_m: float,
        max_weight: float = 64.0,
    ) -> None:
        """An unobserved volume whose voxel (0, 0, 0) has its corner at `lo`, covering `hi`."""
        self.origin = np.asarray(lo, float)
        self.voxel_m = float(voxel_m)
        self.truncation_m = float(truncation_m)
        self.max_weight = float(max_weight)
        shape = tuple(np.ceil((np.asarray(hi, float) - self.origin) / voxel_m).astype(int))
        self.tsdf = np.ones(shape, np.float32)
        self.weight = np.zeros(shape, np.float32)

    def _axis(self, n: int, start: int, stop: int) -> np.ndarray:
        return self.origin[n] + (np.arange(start, stop) + 0.5) * self.voxel_m

    def _frustum(self, K: np.ndarray, T_world_cam: np.ndarray, shape: tuple, far_m: float):
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
        vv, uu = np.mgrid[0:h, 0:w]
        rays = np.stack([(uu - K[0, 2]) / K[0, 0], (vv - K[1, 2]) / K[1, 1]])
        ray_scale = np.sqrt(1 + (rays**2).sum(axis=0)).astype(np.float32).ravel()
        flat_depth = depth.ravel()
        trunc = self.truncation_m
        lo, hi = self._frustum(K, T_world_cam, depth.shape, float(depth.max()) + trunc)
        if np.any(hi <= lo):
            return
        # rows of K [R | t] (camera from world): u * z, v * z and z of every voxel centre
        P = (K @ np.linalg.inv(T_world_cam)[:3]).astype(np.float32)
        axes = [self._axis(n, lo[n], hi[n]).astype(np.float32) for n in range(3)]
        step = max(1, _CHUNK_VOXELS // (len(axes[1]) * len(axes[2])))
        for i0 in range(lo[0], hi[0], step):
            i1 = min(i0 + step, hi[0])
            xs = axes[0][i0 - lo[0] : i1 - lo[0]]
            uz, vz, z = (
                (P[c, 0] * xs)[:, None, None]
                + (P[c, 1] * axes[1])[None, :, None]
                + (P[c, 2] * axes[2] + P[c, 3])[None, None, :]
                for c in range(3)
            )
            inside = z > 1e-6
            z[~inside] = 1.0
            u = np.floor(uz / z + 0.5)
            v = np.floor(vz / z + 0.5)
            inside &= (u >= 0) & (u <= w - 1) & (v >= 0) & (v <= h - 1)
            pixel = (v[inside] * w + u[inside]).astype(np.intp)
            measured = flat_depth[pixel]
            sdf = (measured - z[inside]) * ray_scale[pixel]
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
        values = self.tsdf[seen]
        if not len(values) or values.min() >= 0 or values.max() <= 0:
            return None
        # "descent": triangles wound toward larger values, the free space (+)
        verts, faces, _, _ = marching_cubes(self.tsdf, 0.0, gradient_direction="descent")
        # a vertex interpolates along one voxel edge: drop it unless both ends were observed
        # (the border of the observed band meets the unobserved +1 there: no real surface)
        index = verts.astype(float)
        snapped = np.abs(index - np.rint(index)) < 1e-4
        index[snapped] = np.rint(index[snapped])
        ends = [np.floor(index).astype(int), np.ceil(index).astype(int)]
        real = seen[tuple(ends[0].T)] & seen[tuple(ends[1].T)]
        world = index * self.voxel_m + self.origin + self.voxel_m / 2
        a, b, c = (world[faces[:, k]] for k in range(3))
        area2 = np.linalg.norm(np.cross(b - a, c - a), axis=1)
        faces = faces[real[faces].all(axis=1) & (area2 > 1e-9 * self.voxel_m**2)]
        if len(faces) == 0:
            return None
        used, faces = np.unique(faces, return_inverse=True)
        faces = faces.reshape(-1, 3).astype(np.int64)
        return TriangleMesh(world[used], faces, _vertex_normals(world[used], faces))


def _vertex_normals(vertices: np.ndarray, faces: np.ndarray) -> np.ndarray:
    """Area-weighted mean of the normals of the triangles around each vertex, unit length (zero on
    a fold where they cancel); from the mesh, so unobserved voxels nearby do not tilt them."""
    a, b, c = (vertices[faces[:, k]] for k in range(3))
    cross = np.cross(b - a, c - a)
    normals = np.zeros_like(vertices)
    for k in range(3):
        np.add.at(normals, faces[:, k], cross)
    length = np.linalg.norm(normals, axis=1, keepdims=True)
    return np.divide(normals, length, out=np.zeros_like(normals), where=length > 0)
