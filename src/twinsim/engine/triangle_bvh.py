"""A fixed triangle surface (the terrain's hills) as an Embree BVH, each hit refined in float64.

Embree (float32, watertight) finds the nearest triangle; the distance is recomputed on that
triangle's plane in float64, t = n·(a − o) / n·v, so ranges keep float64 precision. Where the
float64 point falls outside the triangle Embree named (by more than `EDGE_M`, a ray through a
shared edge or vertex), float32 may have picked the neighbour: the ray is unsure, for the caller
to recast exactly. Vertices are stored relative to their centroid, so float32 resolves them to
about 1e-5 m across a kilometre.
"""

from __future__ import annotations

import numpy as np
from embreex import mesh_construction, rtcore_scene

from twinsim.engine.box_bvh import embree_nearest

EDGE_M = 1e-6  # a float64 hit farther than this outside its triangle is unsure


class TriangleBVH:
    """Triangles that never move (world vertices (n, 3), faces (m, 3)), cast against as one
    Embree scene built once."""

    def __init__(self, verts: np.ndarray, faces: np.ndarray) -> None:
        verts = np.asarray(verts, np.float64).reshape(-1, 3)
        self.faces = np.asarray(faces, np.int64).reshape(-1, 3)
        self.offset = verts.mean(axis=0) if len(verts) else np.zeros(3)
        local = verts - self.offset
        self._a = local[self.faces[:, 0]]
        self._ab = local[self.faces[:, 1]] - self._a
        self._ac = local[self.faces[:, 2]] - self._a
        normal = np.cross(self._ab, self._ac)
        self._area2 = np.linalg.norm(normal, axis=1)  # twice each triangle's area
        self.normals = normal / np.maximum(self._area2, 1e-300)[:, None]
        self._scene = rtcore_scene.EmbreeScene(robust=True)
        if len(self.faces):
            mesh_construction.TriangleMesh(
                self._scene,
                np.ascontiguousarray(local, np.float32),
                np.ascontiguousarray(self.faces, np.int32),
            )
        # Embree builds (commits) the BVH at the first query: do it here, before threads share it
        self.nearest_triangles(np.zeros(3), np.array([[0.0, 0.0, 1.0]]), 1.0)

    def __len__(self) -> int:
        return len(self.faces)

    def nearest_triangles(
        self, origin: np.ndarray, dirs: np.ndarray, max_range: float
    ) -> np.ndarray:
        """Embree's nearest triangle (float32) along each of `dirs` (n, 3), −1 if none."""
        return embree_nearest(self._scene, len(self), origin - self.offset, dirs, max_range)

    def cast(
        self, origin: np.ndarray, dirs: np.ndarray, max_range: float
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Cast unit `dirs` (n, 3) from `origin`. Returns the sure hits nearer than `max_range`
        (ray index, triangle index, distance, unit normal facing the ray (hits, 3)) and the
        unsure rays."""
        tri = self.nearest_triangles(origin, dirs, max_range)
        rays = np.flatnonzero(tri >= 0)
        tri = tri[rays]
        v = dirs[rays]
        o = np.asarray(origin, np.float64) - self.offset
        n = self.normals[tri]
        facing = np.einsum("ij,ij->i", n, v)
        rel = self._a[tri] - o
        t = np.full(len(rays), -1.0)
        np.divide(np.einsum("ij,ij->i", n, rel), facing, out=t, where=facing != 0.0)
        # barycentric coordinates of the float64 point, as distances (m) inside each edge
        p = o + t[:, None] * v - self._a[tri]
        ab, ac = self._ab[tri], self._ac[tri]
        w_b = np.einsum("ij,ij->i", np.cross(p, ac), n)  # ∝ area of (a, p, c): weight of b
        w_c = np.einsum("ij,ij->i", np.cross(ab, p), n)  # weight of c
        area2 = self._area2[tri]
        w_a = area2 - w_b - w_c
        lengths = np.linalg.norm(np.stack([ac - ab, ac, ab], 1), axis=2)  # opposite a, b, c
        edge = (np.stack([w_a, w_b, w_c], 1) / np.maximum(lengths, 1e-300)).min(axis=1)
        good = (t > 0.0) & (edge >= -EDGE_M)
        sure = np.flatnonzero(good & (t <= max_range))
        toward = np.where(facing[sure, None] < 0.0, n[sure], -n[sure])
        return rays[sure], tri[sure], t[sure], toward, rays[~good]
