"""Places: free-space nodes sampled from the floor's distance field, with traversable edges.

The free space is the floor (a floor plan's rooms and door openings, or the floor objects of a
world without rooms, `twinsim.scene.free_space.floor_region`) minus every static obstacle whose
height range overlaps the band an agent occupies (`twinsim.scene.free_space.build_free_space`);
its distance transform gives each grid cell's clearance. A place is the cell of largest
clearance in each `spacing_m` block (a sampled medial axis, like Kimera's GVD places), plus one
place in every door opening; two places are joined when the straight segment between them keeps
at least `min_clearance_m` everywhere.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import ndimage
from scipy.spatial import cKDTree

from twinsim.model.scene import SceneSpec
from twinsim.scene.free_space import FreeSpace, build_free_space, floor_region

AGENT_HEIGHT_M = 1.0  # centre of the band agents occupy: 0.2–1.8 m above the floor
AGENT_HALF_BAND_M = 0.8


@dataclass(frozen=True)
class FreeGrid:
    """Clearance of every grid cell (metres, <= 0 in obstacles) and the room each cell is in."""

    origin: np.ndarray  # world xy of the grid's lower-left corner
    cell_m: float
    clearance_m: np.ndarray  # (ny, nx)
    room_id: np.ndarray  # (ny, nx) int, nearest room for door openings, -1 outside

    def cells(self, xy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(iy, ix) of the cells holding world points xy (..., 2), clipped to the grid."""
        ij = np.floor((np.asarray(xy, dtype=float) - self.origin) / self.cell_m).astype(int)
        iy = np.clip(ij[..., 1], 0, self.clearance_m.shape[0] - 1)
        ix = np.clip(ij[..., 0], 0, self.clearance_m.shape[1] - 1)
        return iy, ix

    def centres(self, iy: np.ndarray, ix: np.ndarray) -> np.ndarray:
        """World xy of cell centres."""
        return self.origin + (np.stack([ix, iy], axis=-1) + 0.5) * self.cell_m

    def segment_clearance(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Smallest cell clearance along each segment a[i] -> b[i] (sampled every half cell)."""
        a, b = np.atleast_2d(a).astype(float), np.atleast_2d(b).astype(float)
        if not len(a):
            return np.zeros(0)
        length = np.linalg.norm(b - a, axis=1)
        n = np.maximum(2, np.ceil(length / (0.5 * self.cell_m)).astype(int) + 1)
        first = np.cumsum(n) - n
        seg = np.repeat(np.arange(len(a)), n)
        s = (np.arange(n.sum()) - first[seg]) / (n[seg] - 1)
        iy, ix = self.cells(a[seg] + s[:, None] * (b - a)[seg])
        return np.minimum.reduceat(self.clearance_m[iy, ix], first)


@dataclass(frozen=True)
class Places:
    """Place nodes (xy, clearance, room) and traversable edges (index pairs, clearance)."""

    xy: np.ndarray  # (N, 2)
    clearance_m: np.ndarray  # (N,)
    room_id: np.ndarray  # (N,) int
    edges: np.ndarray  # (E, 2) int, i < j
    edge_clearance_m: np.ndarray  # (E,)
    network: tuple[str, ...] = ()  # per place, in a town: `lane`, `sidewalk` or `crosswalk`


def free_grid(scene: SceneSpec, cell_m: float = 0.05) -> FreeGrid:
    """The clearance grid of a scene's floor in the agents' height band."""
    space: FreeSpace = build_free_space(
        floor_region(scene),
        scene.objects,
        flight_height_m=AGENT_HEIGHT_M,
        clearance_m=0.0,
        clearance_z_m=AGENT_HALF_BAND_M,
        cell_m=cell_m,
    )
    rooms = space.room_of_cell
    outside = rooms < 0
    near = ndimage.distance_transform_edt(outside, return_distances=False, return_indices=True)
    room_id = np.where(outside & (space.grid_clearance > 0), rooms[near[0], near[1]], rooms).astype(
        int
    )
    return FreeGrid(np.asarray(space.origin, float), cell_m, space.grid_clearance, room_id)


def sample_places(
    grid: FreeGrid, door_xy: np.ndarray, spacing_m: float = 0.5, min_clearance_m: float = 0.25
) -> Places:
    """Places at the distance field's block maxima and at door centres (N, 2), joined when clear."""
    clear = grid.clearance_m
    block = max(1, round(spacing_m / grid.cell_m))
    ny, nx = clear.shape
    pad = np.full((-(-ny // block) * block, -(-nx // block) * block), -np.inf)
    pad[:ny, :nx] = clear
    blocks = pad.reshape(pad.shape[0] // block, block, pad.shape[1] // block, block)
    blocks = blocks.transpose(0, 2, 1, 3).reshape(blocks.shape[0], blocks.shape[2], -1)
    best = blocks.argmax(axis=2)
    by, bx = np.indices(best.shape)
    iy, ix = by * block + best // block, bx * block + best % block
    keep = np.take_along_axis(blocks, best[..., None], axis=2)[..., 0] >= min_clearance_m
    cells = [(iy[keep], ix[keep])]
    door_xy = np.asarray(door_xy, dtype=float).reshape(-1, 2)
    if len(door_xy):
        dy, dx = grid.cells(door_xy)
        ok = clear[dy, dx] >= min_clearance_m
        cells.append((dy[ok], dx[ok]))
    cy = np.concatenate([c[0] for c in cells])
    cx = np.concatenate([c[1] for c in cells])
    _, first = np.unique(cy * nx + cx, return_index=True)
    cy, cx = cy[np.sort(first)], cx[np.sort(first)]
    xy = grid.centres(cy, cx)
    pairs = cKDTree(xy).query_pairs(1.5 * spacing_m * math.sqrt(2.0), output_type="ndarray")
    pairs = pairs[np.lexsort((pairs[:, 1], pairs[:, 0]))] if len(pairs) else pairs.reshape(0, 2)
    seg_clear = (
        grid.segment_clearance(xy[pairs[:, 0]], xy[pairs[:, 1]]) if len(pairs) else np.zeros(0)
    )
    ok = seg_clear >= min_clearance_m
    return Places(
        xy=xy,
        clearance_m=clear[cy, cx],
        room_id=grid.room_id[cy, cx],
        edges=pairs[ok],
        edge_clearance_m=seg_clear[ok],
    )
