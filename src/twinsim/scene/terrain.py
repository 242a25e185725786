"""Hills around a town: a seeded height field (`TerrainSpec`) that stays flat wherever the town
is, and its one triangulation, shared by every view of it.

Heights are smoothed noise at three scales, faded to 0 within `SHOULDER_M` of every road, pad,
building or other footprint and towards the field's border, so roads, walkers and traffic keep
their flat ground and only the land beyond them rises. The surface is the grid's cells split
along the diagonal from the cell's (x0, y0) corner to its (x1, y1) corner; MuJoCo's camera mesh,
the LiDAR's triangles, Cycles and the scene graph all take these triangles (`terrain_mesh`), so
every sensor sees the same hills; the height field given to MuJoCo for contacts has the same
samples.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import shapely
from scipy import ndimage

from twinsim.model.scene import ObjectSpec, TerrainSpec
from twinsim.scene.free_space import geom_footprint

SHOULDER_M = 4.0  # flat land kept around everything the town placed
RISE_M = 40.0  # distance over which the hills rise to their full height
MAX_SAMPLES = 160_000  # the grid's samples at most (its spacing grows for large towns)
MIN_CELL_M = 4.0
_SCALES_M = ((90.0, 1.0), (35.0, 0.35), (12.0, 0.08))  # noise wavelength and weight
_LEVELS = 65535


@dataclass(frozen=True)
class TerrainMesh:
    """The raised part of a terrain as triangles: world vertices (n, 3), faces (m, 3) with
    upward winding; cells whose corners are all flat are left to the land below."""

    verts: np.ndarray
    faces: np.ndarray


def make_terrain(
    objects: Sequence[ObjectSpec],
    instance_id: int,
    material: str,
    lo: Sequence[float],
    hi: Sequence[float],
    base_z: float,
    hills_m: float,
    rng: np.random.Generator,
) -> TerrainSpec | None:
    """Hills up to `hills_m` over the box `lo`–`hi` (xy), flat near the footprints of
    `objects`; None where no land is far enough from the town to rise."""
    size = np.asarray(hi[:2], float) - np.asarray(lo[:2], float)
    cell = max(MIN_CELL_M, math.sqrt(size[0] * size[1] / MAX_SAMPLES))
    cols, rows = (math.ceil(s / cell) + 1 for s in size)
    centre = (np.asarray(lo[:2], float) + np.asarray(hi[:2], float)) / 2
    half = np.array([(cols - 1) * cell / 2, (rows - 1) * cell / 2])
    xs = centre[0] + np.linspace(-half[0], half[0], cols)
    ys = centre[1] + np.linspace(-half[1], half[1], rows)
    noise = np.zeros((rows, cols))
    for wavelength, weight in _SCALES_M:
        sigma = wavelength / (2 * math.pi) / cell * math.sqrt(2.0)
        layer = ndimage.gaussian_filter(rng.standard_normal((rows, cols)), sigma, mode="wrap")
        noise += weight * layer / max(float(layer.std()), 1e-12)
    noise = (noise - noise.min()) / max(float(np.ptp(noise)), 1e-12)
    fade = _fade(_distance_from(objects, xs, ys, cell)) * _fade(_border_distance(rows, cols, cell))
    height = hills_m * noise * fade
    top = float(height.max())
    if top <= 0.05:
        return None
    levels = np.round(height / top * _LEVELS).astype("<u2")
    return TerrainSpec(
        instance_id=instance_id,
        material=material,
        center=(round(float(centre[0]), 4), round(float(centre[1]), 4)),
        half_size=(round(float(half[0]), 4), round(float(half[1]), 4)),
        base_z=base_z,
        top_m=round(top, 4),
        rows=rows,
        cols=cols,
        heights_b64=base64.b64encode(levels.tobytes()).decode("ascii"),
    )


def _distance_from(
    objects: Sequence[ObjectSpec], xs: np.ndarray, ys: np.ndarray, cell: float
) -> np.ndarray:
    """(rows, cols) distance (m) from each sample to the nearest footprint of `objects` (to
    within a cell: a footprint counts at every sample closer than a cell)."""
    polys = [geom_footprint(o, g)[0] for o in objects for g in o.geoms]
    if not polys:
        return np.full((len(ys), len(xs)), np.inf)
    gx, gy = np.meshgrid(xs, ys)
    points = shapely.points(gx.ravel(), gy.ravel())
    hit = shapely.STRtree(polys).query(points, predicate="dwithin", distance=cell)[0]
    taken = np.zeros(points.shape, bool)
    taken[hit] = True
    return ndimage.distance_transform_edt(~taken.reshape(gx.shape)) * cell


def _border_distance(rows: int, cols: int, cell: float) -> np.ndarray:
    """(rows, cols) distance (m) from each sample to the grid's border."""
    r = np.minimum(np.arange(rows), np.arange(rows)[::-1])[:, None]
    c = np.minimum(np.arange(cols), np.arange(cols)[::-1])[None, :]
    return np.minimum(r, c) * cell


def _fade(distance: np.ndarray) -> np.ndarray:
    """0 within `SHOULDER_M`, rising smoothly (smoothstep) to 1 over `RISE_M` beyond it."""
    s = np.clip((distance - SHOULDER_M) / RISE_M, 0.0, 1.0)
    return s * s * (3.0 - 2.0 * s)


def heights(terrain: TerrainSpec) -> np.ndarray:
    """(rows, cols) heights (m) above `base_z`; row i at y = y0 + i·dy, column j at x0 + j·dx."""
    raw = np.frombuffer(base64.b64decode(terrain.heights_b64), "<u2")  # its size is checked
    return raw.reshape(terrain.rows, terrain.cols) * (terrain.top_m / _LEVELS)


def grid_axes(terrain: TerrainSpec) -> tuple[np.ndarray, np.ndarray]:
    """The samples' world x (cols,) and y (rows,)."""
    (cx, cy), (hx, hy) = terrain.center, terrain.half_size
    return np.linspace(cx - hx, cx + hx, terrain.cols), np.linspace(cy - hy, cy + hy, terrain.rows)


def terrain_mesh(terrain: TerrainSpec) -> TerrainMesh:
    """The triangles of every cell with a raised corner, vertices shared between cells."""
    h = heights(terrain)
    xs, ys = grid_axes(terrain)
    rows, cols = h.shape
    idx = np.arange(rows * cols).reshape(rows, cols)
    a, b = idx[:-1, :-1].ravel(), idx[:-1, 1:].ravel()  # (x0, y0), (x1, y0)
    c, d = idx[1:, 1:].ravel(), idx[1:, :-1].ravel()  # (x1, y1), (x0, y1)
    flat = h.ravel() <= 0.0
    raised = ~(flat[a] & flat[b] & flat[c] & flat[d])
    a, b, c, d = a[raised], b[raised], c[raised], d[raised]
    faces = np.stack([np.stack([a, b, c], 1), np.stack([a, c, d], 1)], 1).reshape(-1, 3)
    used, faces = np.unique(faces, return_inverse=True)
    gx, gy = np.meshgrid(xs, ys)
    verts = np.stack([gx.ravel(), gy.ravel(), terrain.base_z + h.ravel()], 1)[used]
    return TerrainMesh(verts, faces.reshape(-1, 3))


def surface_z(terrain: TerrainSpec, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """World z of the terrain's triangulated surface above each (x, y) (`base_z` off the grid)."""
    h = heights(terrain)
    xs, ys = grid_axes(terrain)
    x, y = np.asarray(x, float), np.asarray(y, float)
    fx = (x - xs[0]) / (xs[1] - xs[0])
    fy = (y - ys[0]) / (ys[1] - ys[0])
    inside = (fx >= 0) & (fx <= terrain.cols - 1) & (fy >= 0) & (fy <= terrain.rows - 1)
    j = np.clip(np.floor(fx).astype(int), 0, terrain.cols - 2)
    i = np.clip(np.floor(fy).astype(int), 0, terrain.rows - 2)
    u, v = fx - j, fy - i
    za, zb, zc, zd = h[i, j], h[i, j + 1], h[i + 1, j + 1], h[i + 1, j]
    lower = u >= v  # triangle (a, b, c), else (a, c, d)
    z = np.where(lower, za + u * (zb - za) + v * (zc - zb), za + v * (zd - za) + u * (zc - zd))
    return terrain.base_z + np.where(inside, z, 0.0)
