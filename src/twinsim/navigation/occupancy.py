"""A planar occupancy grid (unknown / free / occupied) built from depth frames and known poses.

Each depth pixel is back-projected to a world point. A point on the floor clears the floor
under its ray (up to the sensing range); a point in the robot's height band within the range
is an obstacle. Points above the band say nothing about the floor. Occupied cells stay
occupied (the world a navigator maps is static).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import ndimage

from twinsim.sensors.camera import backproject

UNKNOWN, FREE, OCCUPIED = 0, 1, 2


def disc(radius_cells: float) -> np.ndarray:
    """A boolean disc structuring element of the given radius (cells)."""
    r = math.ceil(radius_cells)
    y, x = np.mgrid[-r : r + 1, -r : r + 1]
    return x**2 + y**2 <= radius_cells**2


class OccupancyGrid:
    """A square grid of `size_m` centred on `centre`, cells of `cell_m`; `state` is (ny, nx)."""

    def __init__(self, centre: np.ndarray, size_m: float, cell_m: float) -> None:
        n = math.ceil(size_m / cell_m)
        self.cell_m = cell_m
        self.origin = np.asarray(centre, dtype=float)[:2] - 0.5 * n * cell_m
        self.state = np.full((n, n), UNKNOWN, dtype=np.int8)

    def cells(self, xy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Flat indices of the cells containing points (N, 2) and which lie on the grid."""
        ij = np.floor((np.asarray(xy, dtype=float) - self.origin) / self.cell_m).astype(int)
        n = self.state.shape[0]
        inside = np.all((ij >= 0) & (ij < n), axis=1)
        return ij[inside, 1] * n + ij[inside, 0], inside

    def xy(self, flat: np.ndarray) -> np.ndarray:
        """Centres (N, 2) of cells given by flat indices."""
        iy, ix = np.unravel_index(np.asarray(flat), self.state.shape)
        return self.origin + (np.stack([ix, iy], axis=-1) + 0.5) * self.cell_m

    def mark_free(self, xy: np.ndarray) -> None:
        """Cells under points (N, 2) are free unless already occupied."""
        flat, _ = self.cells(xy)
        view = self.state.ravel()
        view[flat] = np.where(view[flat] == OCCUPIED, OCCUPIED, FREE)

    def mark_disc_free(self, centre: np.ndarray, radius_m: float) -> None:
        """The robot's own footprint is free."""
        offsets = np.argwhere(disc(radius_m / self.cell_m)) - math.ceil(radius_m / self.cell_m)
        self.mark_free(np.asarray(centre)[:2] + offsets[:, ::-1] * self.cell_m)

    def integrate(
        self,
        depth: np.ndarray,
        K: np.ndarray,
        T_world_cam: np.ndarray,
        band: tuple[float, float],
        max_range_m: float,
        stride: int = 2,
    ) -> None:
        """Add one depth frame (every `stride`-th pixel) seen from the camera pose."""
        pts = backproject(depth, K, T_world_cam)[::stride, ::stride].reshape(-1, 3)
        pts = pts[np.isfinite(pts[:, 2])]
        origin = T_world_cam[:2, 3]
        offset = pts[:, :2] - origin
        reach = np.linalg.norm(offset, axis=1)
        floor = pts[:, 2] < band[0]
        obstacle = (pts[:, 2] >= band[0]) & (pts[:, 2] <= band[1]) & (reach <= max_range_m)
        rays = floor
        length = np.minimum(reach[rays], max_range_m)
        step = 0.5 * self.cell_m
        counts = np.ceil(length / step).astype(int) + 1
        ray = np.repeat(np.arange(len(length)), counts)
        first = np.repeat(np.cumsum(counts) - counts, counts)
        t = (np.arange(len(ray)) - first) * step
        t = np.minimum(t, length[ray])
        direction = offset[rays] / np.maximum(reach[rays], 1e-9)[:, None]
        self.mark_free(origin + direction[ray] * t[:, None])
        hit, _ = self.cells(pts[obstacle, :2])
        self.state.ravel()[hit] = OCCUPIED

    def traversable(self, radius_m: float) -> tuple[np.ndarray, np.ndarray]:
        """Known-free and unknown cells (ny, nx) bool at least `radius_m` from every occupied
        cell: where the robot's centre may go, and where it might once seen."""
        grown = ndimage.binary_dilation(self.state == OCCUPIED, disc(radius_m / self.cell_m))
        return (self.state == FREE) & ~grown, (self.state == UNKNOWN) & ~grown


def frontier(free: np.ndarray, unknown: np.ndarray, min_cells: int) -> np.ndarray:
    """Cells of `free` (ny, nx) next to a connected region of `unknown` of at least
    `min_cells` cells (8-connectivity): small pockets the camera cannot see do not count."""
    eight = np.ones((3, 3), dtype=bool)
    labels, n = ndimage.label(unknown, eight)
    sizes = np.bincount(labels.ravel(), minlength=n + 1)
    sizes[0] = 0
    return free & (ndimage.maximum_filter(sizes[labels], footprint=eight) >= min_cells)
