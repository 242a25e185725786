"""Boxes as meshes with per-face texture coordinates in world metres.

MuJoCo maps a 2D texture onto a primitive box by projecting along z, so vertical faces
(every wall, every cabinet side) show streaks. A mesh with its own UVs per face fixes that;
taking the UVs from world coordinates makes the pattern run on across neighbouring pieces
(a wall split around a door keeps one continuous wallpaper).
"""

from __future__ import annotations

import numpy as np

_QUAD = ((-1, -1), (1, -1), (1, 1), (-1, 1))


def textured_box(
    half: np.ndarray,
    R_world_geom: np.ndarray,
    p_world_geom: np.ndarray,
    repeat_per_m: tuple[float, float],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(vertices (24, 3) in the geom frame, uvs (24, 2), triangles (12, 3)) of a box."""
    verts, uvs, faces = [], [], []
    for axis in range(3):
        b, c = [i for i in range(3) if i != axis]
        for sign in (-1.0, 1.0):
            quad = []
            for sb, sc in _QUAD:
                p = np.zeros(3)
                p[axis], p[b], p[c] = sign * half[axis], sb * half[b], sc * half[c]
                quad.append(p)
            n_world = R_world_geom[:, axis] * sign
            base = len(verts)
            for p in quad:
                verts.append(p)
                uvs.append(_world_uv(R_world_geom @ p + p_world_geom, n_world, repeat_per_m))
            tri = [(base, base + 1, base + 2), (base, base + 2, base + 3)]
            normal = np.cross(quad[1] - quad[0], quad[2] - quad[0])
            if normal[axis] * sign < 0:
                tri = [(i, k, j) for i, j, k in tri]
            faces.extend(tri)
    return np.array(verts), np.array(uvs), np.array(faces, dtype=int)


def _world_uv(p: np.ndarray, n: np.ndarray, repeat: tuple[float, float]) -> tuple[float, float]:
    """Texture coordinates of a world point on a face with world normal n."""
    if abs(n[2]) > 0.5:  # floor, ceiling, table top: plan view
        u, v = p[0], p[1]
    else:  # vertical face: along the face horizontally, and up
        t = np.array([-n[1], n[0]]) / np.hypot(n[0], n[1])
        u, v = p[0] * t[0] + p[1] * t[1], p[2]
    return (u * repeat[0], v * repeat[1])
