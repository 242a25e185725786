"""Fixed boxes as an Embree triangle BVH; each hit refined on its box face's plane in float64.

Embree (float32, robust = watertight triangles) finds the nearest of the boxes' triangles, 12 per
box with outward winding. The triangle names the box and face, and the distance is recomputed on
that face's plane in float64, t = (d − n·o) / (n·v), with the face's float64 outward normal, so
ranges keep float64 precision. float32 may pick another face than exact arithmetic would where
the ray passes at a face's border or where two boxes' faces share a plane: such hits (the float64
point outside its face or within `EDGE_M` of its border, a back face, or a face sharing its plane
with another box's face) are marked unsure, for the caller to recast exactly.
"""

from __future__ import annotations

import numpy as np
from embreex import mesh_construction, rtcore_scene

EDGE_M = 1e-6  # a float64 hit nearer than this to its face's border is unsure
_PLANE_M = 1e-5  # faces of two boxes whose planes are this close share a plane
_CORNER_SIGNS = np.array([[(c >> 2) & 1, (c >> 1) & 1, c & 1] for c in range(8)]) * 2 - 1


def _box_triangles() -> np.ndarray:
    """(12, 3) corner indices of a box's triangles: face f = 2 axis + (sign > 0), two each,
    counter-clockwise seen from outside (outward winding)."""
    tris = []
    for axis in range(3):
        u, w = (axis + 1) % 3, (axis + 2) % 3
        for side in (0, 1):
            quad = []
            for su, sw in ((0, 0), (1, 0), (1, 1), (0, 1)):  # CCW seen from +axis
                bits = [0, 0, 0]
                bits[axis], bits[u], bits[w] = side, su, sw
                quad.append(4 * bits[0] + 2 * bits[1] + bits[2])
            if side == 0:
                quad.reverse()
            tris += [(quad[0], quad[1], quad[2]), (quad[0], quad[2], quad[3])]
    return np.array(tris)


_CHUNK_PAIRS = 1 << 21  # candidate pairs looked at in one go (bounds memory)


def _coplanar_candidates(
    offset: np.ndarray, normal: np.ndarray, box: np.ndarray, low: np.ndarray, high: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Ordered face pairs (f, g), sorted by f then g, of different boxes whose planes lie within
    `_PLANE_M` of each other with (nearly) the same outward normal and whose padded world
    bounds (`low`, `high`) meet."""
    order = np.argsort(offset, kind="stable")
    sorted_offset = offset[order]
    first = np.searchsorted(sorted_offset, sorted_offset - _PLANE_M, "left")
    last = np.searchsorted(sorted_offset, sorted_offset + _PLANE_M, "right")
    count = last - first
    found_f, found_g = [np.empty(0, int)], [np.empty(0, int)]
    start = 0
    while start < len(order):
        stop = start + 1 + np.searchsorted(np.cumsum(count[start:]), _CHUNK_PAIRS, "right")
        stop = min(stop, len(order))
        reps = count[start:stop]
        rank = np.repeat(np.arange(start, stop), reps)
        within = np.arange(len(rank)) - np.repeat(np.cumsum(reps) - reps, reps)
        f, g = order[rank], order[first[rank] + within]
        keep = box[f] != box[g]
        keep &= np.einsum("pi,pi->p", normal[f], normal[g]) > 1.0 - 1e-9
        keep &= (low[f] <= high[g]).all(axis=1) & (low[g] <= high[f]).all(axis=1)
        found_f.append(f[keep])
        found_g.append(g[keep])
        start = stop
    f, g = np.concatenate(found_f), np.concatenate(found_g)
    pairs = np.lexsort((g, f))
    return f[pairs], g[pairs]


def embree_nearest(
    scene, triangles: int, origin: np.ndarray, dirs: np.ndarray, max_range: float
) -> np.ndarray:
    """The nearest of an Embree `scene`'s `triangles` (float32) along each of `dirs` (n, 3)
    from `origin` (in the scene's coordinates), −1 if none within `max_range`."""
    n = len(dirs)
    if n == 0 or triangles == 0:
        return np.full(n, -1, np.int32)
    o32 = np.broadcast_to(np.asarray(origin, np.float32), (n, 3))
    reach = np.full(n, max_range * (1.0 + 1e-5) + 1e-5, np.float32)  # float32 rounding
    out = scene.run(
        np.ascontiguousarray(o32), np.ascontiguousarray(dirs, np.float32), dists=reach, output=1
    )
    return out["primID"]


class BoxBVH:
    """Boxes that never move (centres, rotations whose columns are the box axes, half sizes),
    cast against as one Embree scene built once."""

    def __init__(self, centers: np.ndarray, rotations: np.ndarray, halves: np.ndarray) -> None:
        self.centers = np.asarray(centers, np.float64).reshape(-1, 3)
        self.rotations = np.asarray(rotations, np.float64).reshape(-1, 3, 3)
        self.halves = np.asarray(halves, np.float64).reshape(-1, 3)
        k = len(self.centers)
        local = _CORNER_SIGNS[None] * self.halves[:, None, :]  # (k, 8, 3)
        corners = np.einsum("kij,kcj->kci", self.rotations, local) + self.centers[:, None, :]
        tris = _box_triangles()[None] + 8 * np.arange(k)[:, None, None]
        self._scene = rtcore_scene.EmbreeScene(robust=True)
        if k:
            mesh_construction.TriangleMesh(
                self._scene,
                np.ascontiguousarray(corners.reshape(-1, 3), np.float32),
                np.ascontiguousarray(tris.reshape(-1, 3), np.int32),
            )
        # face 6 box + f: normal axis f // 2, outward sign by f % 2; the face's frame: rows
        # (outward normal, in-plane axis u, in-plane axis w), offsets (n·x, u·x, w·x) at its centre
        axis = np.tile(np.repeat(np.arange(3), 2), k)
        sign = np.tile([-1.0, 1.0], 3 * k)
        box = np.repeat(np.arange(k), 6)
        rows = np.stack([axis, (axis + 1) % 3, (axis + 2) % 3], axis=1)
        frame = np.ascontiguousarray(self.rotations[box[:, None], :, rows])  # (6 k, 3, 3)
        frame[:, 0] *= sign[:, None]
        at = np.einsum("fij,fj->fi", frame, self.centers[box])
        at[:, 0] += self.halves[box, axis]
        self._face_box, self._frame, self._at = box, frame, at
        self._face_half = self.halves[box[:, None], rows[:, 1:]]  # (6 k, 2)
        self.normals = frame[:, 0]
        self._pairs_start, self._pairs_lo, self._pairs_hi = self._coplanar_overlaps()
        self._has_pair = np.diff(self._pairs_start) > 0
        # Embree builds (commits) the BVH at the first query: do it here, before threads share it
        self.nearest_triangles(np.zeros(3), np.array([[0.0, 0.0, 1.0]]), 1.0)

    def __len__(self) -> int:
        return len(self.centers)

    def _coplanar_overlaps(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per face, where other boxes' faces facing the same way in (nearly) its plane overlap
        it, float32 may pick either: rectangles (lo, hi) in the face's (u, w) coordinates from
        its centre, (6 k + 1,) starts then (pairs, 2) each; the whole face if not aligned.

        Candidates come from faces sorted by plane offset (a window of `_PLANE_M`), kept where
        the normals agree and the world bounds meet, in chunks of bounded size: a town has
        thousands of faces in the plane z = 0 but few that overlap."""
        frame, at, box = self._frame, self._at, self._face_box
        n = frame[:, 0]
        mid = (
            self.centers[box]
            + (at[:, 0] - np.einsum("fi,fi->f", n, self.centers[box]))[:, None] * n
        )  # each face's centre
        signs = np.array([[-1, -1], [-1, 1], [1, -1], [1, 1]], float)
        corners = mid[:, None] + np.einsum("cj,fj,fjk->fck", signs, self._face_half, frame[:, 1:])
        low, high = corners.min(axis=1) - _PLANE_M, corners.max(axis=1) + _PLANE_M
        f, g = _coplanar_candidates(at[:, 0], n, box, low, high)
        # g's corners in f's (u, w) coordinates, cut to f's rectangle
        uw = np.einsum("pck,pjk->pcj", corners[g], frame[f, 1:]) - at[f, None, 1:]
        cut_lo = np.maximum(uw.min(axis=1), -self._face_half[f])
        cut_hi = np.minimum(uw.max(axis=1), self._face_half[f])
        meet = (cut_hi - cut_lo > _PLANE_M).all(axis=1)  # more than an edge in common
        f, g, cut_lo, cut_hi = f[meet], g[meet], cut_lo[meet], cut_hi[meet]
        cross = np.abs(np.einsum("pik,pjk->pij", frame[g, 1:], frame[f, 1:]))
        eye = np.eye(2)
        aligned = (np.abs(cross - eye).max(axis=(1, 2)) < 1e-9) | (
            np.abs(cross - 1 + eye).max(axis=(1, 2)) < 1e-9
        )
        whole = self._face_half[f]
        lo = np.where(aligned[:, None], cut_lo, -whole)
        hi = np.where(aligned[:, None], cut_hi, whole)
        starts = np.concatenate([[0], np.cumsum(np.bincount(f, minlength=len(frame)))])
        return starts, lo.reshape(-1, 2), hi.reshape(-1, 2)

    def _on_overlap(self, face: np.ndarray, uw: np.ndarray) -> np.ndarray:
        """Whether each hit at (u, w) on `face` lies (within `EDGE_M`) where another box's
        face overlaps it."""
        count = self._pairs_start[face + 1] - self._pairs_start[face]
        hit = np.repeat(np.arange(len(face)), count)
        first = np.repeat(self._pairs_start[face] - np.cumsum(count) + count, count)
        pair = first + np.arange(len(hit))
        at = uw[hit]
        inside = (
            (at >= self._pairs_lo[pair] - EDGE_M) & (at <= self._pairs_hi[pair] + EDGE_M)
        ).all(axis=1)
        return np.bincount(hit[inside], minlength=len(face)) > 0

    def nearest_triangles(
        self, origin: np.ndarray, dirs: np.ndarray, max_range: float
    ) -> np.ndarray:
        """Embree's nearest triangle (float32) along each of `dirs` (n, 3), −1 if none."""
        return embree_nearest(self._scene, len(self), origin, dirs, max_range)

    def cast(
        self, origin: np.ndarray, dirs: np.ndarray, max_range: float
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Cast unit `dirs` (n, 3) from `origin`. Returns the sure hits nearer than `max_range`
        (ray index, box index, distance, outward unit normal (hits, 3)) and the unsure rays."""
        prim = self.nearest_triangles(origin, dirs, max_range)
        rays = np.flatnonzero(prim >= 0)
        face = prim[rays] >> 1
        v = dirs if len(rays) == len(dirs) else dirs.take(rays, axis=0)
        # in the face's frame: n·v (< 0 on a front face), u·v, w·v; and n·o − d, u·o, w·o
        dots = np.einsum("fij,fj->fi", self._frame.take(face, axis=0), v)
        start = (self._frame.reshape(-1, 3) @ origin).reshape(-1, 3) - self._at
        start = start.take(face, axis=0)
        t = np.full(len(rays), -1.0)
        np.divide(-start[:, 0], dots[:, 0], out=t, where=dots[:, 0] < 0.0)
        uw = start[:, 1:] + t[:, None] * dots[:, 1:]
        half, size = self._face_half.take(face, axis=0), np.abs(uw)
        margin = np.minimum(half[:, 0] - size[:, 0], half[:, 1] - size[:, 1])
        good = (t > 0.0) & (margin >= EDGE_M)  # t ≤ 0: a back face (inside a box) or behind
        shared = np.flatnonzero(good & self._has_pair[face])
        if len(shared):
            good[shared] = ~self._on_overlap(face[shared], uw[shared])
        sure = np.flatnonzero(good & (t <= max_range))
        face = face.take(sure)
        return (
            rays.take(sure),
            self._face_box.take(face),
            t.take(sure),
            self.normals.take(face, axis=0),
            rays[~good],
        )
