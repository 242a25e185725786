"""Occupancy of the static world from its exact geometry (not from any sensor): a 2D map of a
height band as ROS `map_server` reads it (`map.yaml` + `map.pgm`) and a 3D voxel map
(`voxels.npz`).

A cell (or voxel) is occupied when a solid of `scene.json` overlaps it, reaching more than
`EPS_M` into it (a solid that only touches a cell, as a wall's face on the cell's side, leaves
it free). The solids are the objects' primitives, tested exactly for boxes (any orientation),
spheres and upright cylinders and capsules; a tilted cylinder or capsule and an ellipsoid
occupy the cells whose circumscribed sphere they reach (a few more than they overlap, never
fewer), and, under hills, the ground up to the triangulated surface: a cell is occupied where
the surface over one of its corners rises above its bottom. The 2D map's cell is occupied when
any part of its column between `z_min_m` and `z_max_m` is.
"""

from __future__ import annotations

import io
import math
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from twinsim.export.common import ExportError, Progress, float_text, no_progress, prepare_output
from twinsim.geometry import pose_to_T, primitive_half_extents
from twinsim.model.scene import SceneSpec
from twinsim.scene.terrain import grid_axes, surface_z
from twinsim.sequence.reader import SequenceReader

YAML_FILE = "map.yaml"
PGM_FILE = "map.pgm"
VOXEL_FILE = "voxels.npz"
#: map_saver's trinary pixels (its unknown, 205, is never written: the geometry is known)
FREE, OCCUPIED = 254, 0
#: the most cells a grid (2D or 3D) may hold: finer is refused as absurd
MAX_CELLS = 400_000_000
_CHUNK = 200_000  # cells tested at once
#: a solid must reach this far into a cell to occupy it: one only touching it (a wall's face
#: on a cell's side) leaves it free
EPS_M = 1e-6


@dataclass(frozen=True)
class Grid:
    """A regular grid (3 axes, or 2 for a plan): cell (i, j, k) spans origin + (i, j, k) · cell
    to one cell further."""

    origin: np.ndarray  # the lower corner of cell (0, 0, 0)
    cell: np.ndarray  # cell size per axis
    shape: tuple[int, ...]


def export_occupancy(
    seq: SequenceReader,
    out: Path,
    *,
    resolution_m: float = 0.05,
    z_min_m: float = 0.1,
    z_max_m: float = 2.0,
    voxel_m: float = 0.1,
    progress: Progress = no_progress,
) -> Path:
    """Write the 2D map of the band `z_min_m`–`z_max_m` at `resolution_m` (`map.yaml`,
    `map.pgm`) and the 3D map at `voxel_m` (`voxels.npz`) of `seq`'s static world into `out`."""
    _check_size("resolution_m", resolution_m)
    _check_size("voxel_m", voxel_m)
    for name, value in (("z_min_m", z_min_m), ("z_max_m", z_max_m)):
        if not math.isfinite(value):
            raise ExportError(f"{name}={value!r} must be a finite height in metres")
    if z_min_m >= z_max_m:
        raise ExportError(f"z_min_m={z_min_m!r} must be below z_max_m={z_max_m!r}")
    scene = seq.scene
    lo, hi = _world_box(scene)
    plan = _grid(lo[:2], hi[:2], resolution_m, "resolution_m")
    layers = math.ceil((z_max_m - z_min_m) / resolution_m - 1e-9)  # the band in slabs
    band = Grid(
        np.array([*plan.origin, z_min_m]),
        np.array([resolution_m, resolution_m, (z_max_m - z_min_m) / layers]),
        (*plan.shape, layers),
    )
    voxels = _grid(lo, hi, voxel_m, "voxel_m")
    out = prepare_output(out)
    taken = np.zeros(band.shape[:2], bool)
    for index, block in _occupied_blocks(scene, band):
        window = tuple(slice(i, i + n) for i, n in zip(index[:2], block.shape[:2], strict=True))
        taken[window] |= block.any(axis=2)
    _write_map(out, taken, band, z_min_m, z_max_m)
    progress(1, 2)
    occupancy = np.zeros(voxels.shape, bool)
    for index, block in _occupied_blocks(scene, voxels):
        window = tuple(slice(i, i + n) for i, n in zip(index, block.shape, strict=True))
        occupancy[window] |= block
    _write_npz(
        out / VOXEL_FILE,
        {"occupancy": occupancy, "origin": voxels.origin, "voxel_size": np.float64(voxel_m)},
    )
    progress(2, 2)
    return out


def _check_size(name: str, value: float) -> None:
    """A cell size is a positive, finite number of metres."""
    if not (math.isfinite(value) and value > 0.0):
        raise ExportError(f"{name}={value!r} must be a cell size in metres > 0")


def _world_box(scene: SceneSpec) -> tuple[np.ndarray, np.ndarray]:
    """The box (lo, hi) holding the scene's bounds, every solid and the hills."""
    lo, hi = np.array(scene.bounds_min, float), np.array(scene.bounds_max, float)
    for kind, size, T in _solids(scene):
        half = np.abs(T[:3, :3]) @ primitive_half_extents(kind, size)
        lo, hi = np.minimum(lo, T[:3, 3] - half), np.maximum(hi, T[:3, 3] + half)
    terrain = scene.terrain
    if terrain is not None:
        (cx, cy), (hx, hy) = terrain.center, terrain.half_size
        lo = np.minimum(lo, [cx - hx, cy - hy, terrain.base_z])
        hi = np.maximum(hi, [cx + hx, cy + hy, terrain.base_z + terrain.top_m])
    return lo, hi


def _grid(lo: np.ndarray, hi: np.ndarray, cell: float, option: str) -> Grid:
    """Square (cubic) cells of `cell` metres covering lo–hi (2 or 3 axes), their corners on
    multiples of `cell`."""
    origin = np.round(np.floor(lo / cell) * cell, 9)  # without the product's rounding noise
    shape = np.maximum(np.ceil((hi - origin) / cell - 1e-9), 1).astype(np.int64)
    if shape.prod() > MAX_CELLS:
        size = " × ".join(map(str, shape.tolist()))
        raise ExportError(
            f"{option}={cell!r} is too fine for this world: a {size} grid (at most "
            f"{MAX_CELLS:,} cells)"
        )
    return Grid(origin, np.full(len(shape), cell), tuple(int(n) for n in shape))


def _occupied_blocks(scene: SceneSpec, grid: Grid) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Per solid, (index of the block's first cell (3,), bool block of the cells of `grid`
    around the solid's box that it overlaps)."""
    half = grid.cell / 2
    for kind, size, T in _solids(scene):
        extent = np.abs(T[:3, :3]) @ primitive_half_extents(kind, size)
        first, centres = _cells_within(grid, T[:3, 3] - extent - half, T[:3, 3] + extent + half)
        if first is None:
            continue
        shape = tuple(len(c) for c in centres)
        points = np.stack(np.meshgrid(*centres, indexing="ij"), axis=-1).reshape(-1, 3)
        block = np.empty(len(points), bool)
        for start in range(0, len(points), _CHUNK):
            chunk = slice(start, start + _CHUNK)
            block[chunk] = _overlaps(kind, size, T, points[chunk] - T[:3, 3], half)
        yield first, block.reshape(shape)
    if scene.terrain is not None:
        yield from _hill_blocks(scene, grid)


def _cells_within(
    grid: Grid, lo: np.ndarray, hi: np.ndarray
) -> tuple[np.ndarray | None, list[np.ndarray]]:
    """The first index and the centres per axis of the cells whose centres lie in lo–hi."""
    first = np.maximum(np.ceil((lo - grid.origin) / grid.cell - 0.5), 0).astype(np.int64)
    last = np.minimum(np.floor((hi - grid.origin) / grid.cell - 0.5), np.array(grid.shape) - 1)
    if np.any(last < first):
        return None, []
    return first, [
        grid.origin[a] + (np.arange(first[a], last[a] + 1) + 0.5) * grid.cell[a] for a in range(3)
    ]


def _solids(scene: SceneSpec) -> Iterator[tuple[str, np.ndarray, np.ndarray]]:
    """(kind, size, world pose (4, 4)) of every primitive of every object."""
    for obj in scene.objects:
        T_world_obj = pose_to_T(obj.pos, obj.quat)
        for g in obj.geoms:
            yield g.type, np.asarray(g.size, float), T_world_obj @ pose_to_T(g.pos, g.quat)


def _overlaps(
    kind: str, size: np.ndarray, T: np.ndarray, d: np.ndarray, half: np.ndarray
) -> np.ndarray:
    """Whether the primitive posed at `T` reaches more than `EPS_M` into each axis-aligned
    cell of half extents `half` centred `d` (n, 3) from it: exact for boxes (separating axes),
    spheres and upright cylinders and capsules; for the others the cell's circumscribed sphere
    stands in for it."""
    R = T[:3, :3]
    if kind == "box":
        return _boxes_overlap(d, half, R, size[:3])
    outside = np.linalg.norm(np.maximum(np.abs(d) - half, 0.0), axis=1)  # the cell to the centre
    if kind == "sphere":
        return outside < size[0] - EPS_M
    if kind in ("cylinder", "capsule") and abs(abs(R[2, 2]) - 1.0) < 1e-9:  # axis along z
        across = np.linalg.norm(np.maximum(np.abs(d[:, :2]) - half[:2], 0.0), axis=1)
        along = np.abs(d[:, 2]) - half[2] - size[1]  # the cell's gap to the axis' ends
        if kind == "cylinder":
            return (across < size[0] - EPS_M) & (along < -EPS_M)
        return np.hypot(across, np.maximum(along, 0.0)) < size[0] - EPS_M
    return _distance(kind, size, d @ R) < float(np.linalg.norm(half)) - EPS_M


def _boxes_overlap(d: np.ndarray, half: np.ndarray, R: np.ndarray, e: np.ndarray) -> np.ndarray:
    """Whether boxes of half extents `half` (axis-aligned, centred `d` (n, 3) from the other's
    centre) overlap the box of half extents `e` turned by R by more than `EPS_M` on every
    separating axis: the world's, the box's and their cross products (parallel pairs left out)."""
    axes = np.concatenate([np.eye(3), R.T, np.cross(np.eye(3)[:, None], R.T[None]).reshape(9, 3)])
    length = np.linalg.norm(axes, axis=1)
    axes = axes[length > 1e-9] / length[length > 1e-9, None]
    reach = np.abs(axes) @ half + np.abs(axes @ R) @ e
    return np.all(np.abs(d @ axes.T) < reach - EPS_M, axis=1)


def _distance(kind: str, size: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Distance (negative inside) from points `p` (n, 3) in a primitive's frame to a capsule or
    cylinder; for an ellipsoid a lower bound (the distance in the unit sphere's space times
    the least semi-axis)."""
    if kind == "capsule":
        axial = p[:, 2] - np.clip(p[:, 2], -size[1], size[1])
        return np.sqrt(p[:, 0] ** 2 + p[:, 1] ** 2 + axial**2) - size[0]
    if kind == "cylinder":
        q = np.stack([np.hypot(p[:, 0], p[:, 1]) - size[0], np.abs(p[:, 2]) - size[1]], axis=1)
        return np.linalg.norm(np.maximum(q, 0.0), axis=1) + np.minimum(q.max(axis=1), 0.0)
    return (np.linalg.norm(p / size[:3], axis=1) - 1.0) * size[:3].min()  # ellipsoid


def _hill_blocks(scene: SceneSpec, grid: Grid) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The cells under the hills: above `base_z` and below the highest of the surface's heights
    at the cell's four corners (the hills' facets span metres, so that is their top over the
    cell to within a hair), a row of columns at a time."""
    terrain = scene.terrain
    xs, ys = grid_axes(terrain)
    lo = np.array([xs[0], ys[0], terrain.base_z])
    hi = np.array([xs[-1], ys[-1], terrain.base_z + terrain.top_m])
    first, centres = _cells_within(grid, lo - grid.cell / 2, hi + grid.cell / 2)
    if first is None:
        return
    cx, cy, cz = centres
    edges_x = np.append(cx - grid.cell[0] / 2, cx[-1] + grid.cell[0] / 2)
    edges_y = np.append(cy - grid.cell[1] / 2, cy[-1] + grid.cell[1] / 2)
    bottom, top = cz - grid.cell[2] / 2, cz + grid.cell[2] / 2
    below = surface_z(terrain, edges_x, np.full_like(edges_x, edges_y[0]))
    for j, y in enumerate(edges_y[1:]):
        above = surface_z(terrain, edges_x, np.full_like(edges_x, y))
        peak = np.maximum.reduce([below[:-1], below[1:], above[:-1], above[1:]])
        below = above
        block = (bottom[None, :] < peak[:, None] - EPS_M) & (top[None, :] > terrain.base_z + EPS_M)
        if block.any():
            yield first + np.array([0, j, 0]), block[:, None, :]


def _write_map(out: Path, taken: np.ndarray, band: Grid, z_min_m: float, z_max_m: float) -> None:
    """`map.pgm` (P5, row 0 at the top: the highest y) and `map.yaml` as map_saver writes them."""
    pixels = np.where(taken, OCCUPIED, FREE).astype(np.uint8).T[::-1]  # (rows: y down, cols: x)
    resolution = float(band.cell[0])
    header = (
        f"P5\n# CREATOR: twinsim {resolution:.3f} m/pix, z {float_text(z_min_m)} to "
        f"{float_text(z_max_m)} m\n{pixels.shape[1]} {pixels.shape[0]}\n255\n"
    )
    (out / PGM_FILE).write_bytes(header.encode("ascii") + np.ascontiguousarray(pixels).tobytes())
    x0, y0 = (float_text(v) for v in band.origin[:2])
    (out / YAML_FILE).write_text(
        f"image: {PGM_FILE}\n"
        "mode: trinary\n"
        f"resolution: {float_text(resolution)}\n"
        f"origin: [{x0}, {y0}, 0.0]\n"
        "negate: 0\n"
        "occupied_thresh: 0.65\n"
        "free_thresh: 0.196\n",
        encoding="utf-8",
    )


def _write_npz(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """`np.savez_compressed`'s layout with fixed entry dates, so equal maps give equal bytes."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, array in arrays.items():
            buffer = io.BytesIO()
            np.lib.format.write_array(buffer, np.asarray(array), allow_pickle=False)
            entry = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            entry.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(entry, buffer.getvalue())
