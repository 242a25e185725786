"""Deterministic points on a person's body surface, for the 3D trace of a whole animation."""

from __future__ import annotations

import numpy as np

from twinsim.actors.human import HumanModel
from twinsim.geometry import quat_wxyz_to_matrix
from twinsim.model.scene import GeomSpec


def _kronecker(n: int) -> np.ndarray:
    """First n points of the R3 low-discrepancy sequence in [0, 1)^3 (deterministic, even)."""
    g = 1.2207440846057596
    alpha = 1.0 / g ** np.arange(1, 4)
    return (0.5 + np.arange(1, n + 1)[:, None] * alpha) % 1.0


def _geom_area(geom: GeomSpec) -> float:
    s = geom.size
    if geom.type == "sphere":
        return 4 * np.pi * s[0] ** 2
    if geom.type == "ellipsoid":
        p = 1.6075  # Thomsen's approximation
        a, b, c = (x**p for x in s[:3])
        return 4 * np.pi * ((a * b + a * c + b * c) / 3) ** (1 / p)
    if geom.type == "box":
        x, y, z = s[:3]
        return 8 * (x * y + y * z + z * x)
    if geom.type == "capsule":
        return 4 * np.pi * s[0] * s[1] + 4 * np.pi * s[0] ** 2
    return 4 * np.pi * s[0] * s[1] + 2 * np.pi * s[0] ** 2  # cylinder


def _sphere_dirs(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    z = 1.0 - 2.0 * u
    r = np.sqrt(np.maximum(1.0 - z * z, 0.0))
    return np.stack([r * np.cos(2 * np.pi * v), r * np.sin(2 * np.pi * v), z], axis=-1)


def _geom_surface(geom: GeomSpec, q: np.ndarray) -> np.ndarray:
    """Points on the surface of `geom` in its own frame from quasi-random samples q (n, 3)."""
    u, v, w = q.T
    s = np.asarray(geom.size, dtype=float)
    if geom.type in ("sphere", "ellipsoid"):
        semi = np.full(3, s[0]) if geom.type == "sphere" else s[:3]
        return _sphere_dirs(u, v) * semi
    if geom.type == "box":
        face_area = np.array([s[1] * s[2], s[0] * s[2], s[0] * s[1]]).repeat(2)
        face = np.minimum(np.searchsorted(np.cumsum(face_area) / face_area.sum(), w), 5)
        axis, sign = face // 2, np.where(face % 2 == 0, 1.0, -1.0)
        p = np.empty((len(q), 3))
        a1, a2 = (axis + 1) % 3, (axis + 2) % 3
        rows = np.arange(len(q))
        p[rows, axis] = sign * s[axis]
        p[rows, a1] = (2 * u - 1) * s[a1]
        p[rows, a2] = (2 * v - 1) * s[a2]
        return p
    r, h = s[0], s[1]
    side = 4 * np.pi * r * h
    ang = 2 * np.pi * v
    on_side = w < side / _geom_area(geom)
    side_pts = np.stack([r * np.cos(ang), r * np.sin(ang), (2 * u - 1) * h], axis=-1)
    if geom.type == "capsule":
        d = _sphere_dirs(u, v)
        end_pts = r * d + np.stack([0 * u, 0 * u, np.sign(d[:, 2]) * h], axis=-1)
    else:
        rad = r * np.sqrt(u)
        end_pts = np.stack([rad * np.cos(ang), rad * np.sin(ang), np.where(w < 0.5, h, -h)], -1)
    return np.where(on_side[:, None], side_pts, end_pts)


def _split(n: int, weights: np.ndarray) -> np.ndarray:
    """Largest-remainder split of n items proportional to weights."""
    share = n * weights / weights.sum()
    counts = np.floor(share).astype(int)
    counts[np.argsort(-(share - counts), kind="stable")[: n - counts.sum()]] += 1
    return counts


def sample_surface_points(model: HumanModel, n_per_part: int) -> list[np.ndarray]:
    """Deterministic points on each part's geoms, (n_per_part, 3) in that part's frame.

    Points spread over the geoms in proportion to their area; transform them by
    `HumanMotion.part_poses(t)` over many t to get the 3D trace of a whole animation.
    """
    out = []
    for part in model.parts:
        counts = _split(n_per_part, np.array([_geom_area(g) for g in part.geoms]))
        pts = [
            _geom_surface(g, _kronecker(c)) @ quat_wxyz_to_matrix(g.quat).T + np.asarray(g.pos)
            for g, c in zip(part.geoms, counts, strict=True)
        ]
        out.append(np.concatenate(pts) if pts else np.zeros((0, 3)))
    return out
