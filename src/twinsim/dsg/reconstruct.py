"""An estimated scene graph from RGB-D: TSDF fusion and marching-cubes mesh extraction
(`twinsim.dsg.tsdf`), semantic labels voted per mesh vertex from the instance masks, dynamic
masking (pixels of dynamic instances, people first, are not fused, as in Kimera), objects by
clustering each class, and places and rooms from the free space of the reconstruction.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np
from scipy import ndimage

from twinsim.dsg import layers
from twinsim.dsg.errors import DsgError
from twinsim.dsg.places import FreeGrid, Places, sample_places
from twinsim.dsg.tsdf import TsdfVolume
from twinsim.scene.vocabulary import CLASS_ID, SEMANTIC_CLASSES
from twinsim.sequence.frames import Frame
from twinsim.sequence.reader import SequenceReader

_BAND = (0.2, 1.8)  # heights where surfaces block an agent (as the ground-truth places)
_MAX_VOXELS = 200_000_000  # 1.6 GB of TSDF and weights
_NOT_OBJECTS = {"unlabeled", "person", "clothing", *layers.STRUCTURE_CLASSES}

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class ReconstructionOptions:
    """TSDF, clustering and free-space parameters (metres unless named otherwise)."""

    voxel_m: float = 0.04
    truncation_voxels: float = 3.0
    max_weight: float = 64.0
    max_depth_m: float = 8.0
    frame_stride: int = 1
    mask_dynamic: bool = True
    object_cell_m: float = 0.1
    min_object_points: int = 15
    grid_cell_m: float = 0.1
    # rooms: the free space is eroded by each radius from min to max (step `grid_cell_m` / 2)
    # and the radius that leaves the most room-sized parts wins (doors here are 0.9–1 m wide)
    room_erosion_min_m: float = 0.3
    room_erosion_max_m: float = 0.8
    min_room_area_m2: float = 1.0


@dataclass(frozen=True)
class EstimatedObject:
    """One cluster of mesh vertices of an object class: centroid and axis-aligned box (world)."""

    semantic_class: str
    centroid: np.ndarray
    box_min: np.ndarray
    box_max: np.ndarray
    n_points: int


@dataclass(frozen=True)
class EstimatedGraph:
    """The reconstruction: labelled triangle mesh, objects, free-space places and rooms."""

    vertices: np.ndarray  # (V, 3) world
    faces: np.ndarray  # (F, 3) vertex indices, wound toward the observed free space
    normals: np.ndarray  # (V, 3) unit (0 on folds), toward the free space
    labels: np.ndarray  # (V,) semantic class ids, 0 = no vote
    objects: list[EstimatedObject]
    grid: FreeGrid
    places: Places
    room_cells: np.ndarray  # (ny, nx) estimated room index per grid cell, -1 = none
    room_centroids: np.ndarray  # (R, 2)


def dynamic_ids(reader: SequenceReader) -> np.ndarray:
    """Instance ids the metadata marks dynamic (people's body and clothing, flying objects)."""
    return np.array([i["instance_id"] for i in reader.metadata["instances"] if i["dynamic"]], int)


def _check(opts: ReconstructionOptions) -> None:
    """Refuse the first out-of-range option by name."""
    for name, ok, allowed in (
        ("voxel_m", opts.voxel_m > 0, "> 0"),
        ("truncation_voxels", opts.truncation_voxels > 0, "> 0"),
        ("max_weight", opts.max_weight >= 1, ">= 1"),
        ("max_depth_m", opts.max_depth_m > 0, "> 0"),
        ("frame_stride", opts.frame_stride >= 1, ">= 1"),
        ("room_erosion_min_m", opts.room_erosion_min_m > 0, "> 0"),
        ("room_erosion_max_m", opts.room_erosion_max_m >= opts.room_erosion_min_m, ">= min"),
    ):
        if not ok:
            raise DsgError(f"{name}={getattr(opts, name)} must be {allowed}")


def _volume(reader: SequenceReader, opts: ReconstructionOptions) -> TsdfVolume:
    """An empty TSDF over the scene bounds grown by 30 cm."""
    scene = reader.scene
    lo = np.asarray(scene.bounds_min, float) - 0.3
    hi = np.asarray(scene.bounds_max, float) + 0.3
    voxels = int(np.prod(np.ceil((hi - lo) / opts.voxel_m)))
    if voxels > _MAX_VOXELS:
        raise DsgError(
            f"voxel_m={opts.voxel_m} gives {voxels} voxels over the scene bounds "
            f"(at most {_MAX_VOXELS}); use a larger voxel"
        )
    truncation = opts.truncation_voxels * opts.voxel_m
    return TsdfVolume(lo, hi, opts.voxel_m, truncation, opts.max_weight)


def _vote(points: np.ndarray, frames: Iterable[Frame], tol_m: float) -> np.ndarray:
    """Majority semantic class of each point over the frames that see it at its depth."""
    votes = np.zeros((len(points), len(SEMANTIC_CLASSES)), dtype=np.int32)
    rows = np.arange(len(points))
    for f in frames:
        T_cam_world = np.linalg.inv(f.T_world_cam)
        pc = points @ T_cam_world[:3, :3].T + T_cam_world[:3, 3]
        z = pc[:, 2]
        with np.errstate(divide="ignore", invalid="ignore"):
            u = np.round(f.K[0, 0] * pc[:, 0] / z + f.K[0, 2]).astype(np.int64)
            v = np.round(f.K[1, 1] * pc[:, 1] / z + f.K[1, 2]).astype(np.int64)
        h, w = f.depth.shape
        ok = (z > 0) & (u >= 0) & (u < w) & (v >= 0) & (v < h)
        ok[ok] &= np.abs(f.depth[v[ok], u[ok]] - z[ok]) < tol_m
        ok[ok] &= f.depth[v[ok], u[ok]] > 0
        np.add.at(votes, (rows[ok], f.semantic[v[ok], u[ok]].astype(np.int64)), 1)
    votes[:, 0] = 0
    labels = votes.argmax(axis=1)
    labels[votes.max(axis=1) == 0] = 0
    return labels


def _objects(points: np.ndarray, labels: np.ndarray, opts: ReconstructionOptions):
    """Connected clusters of each object class on a voxel grid of `object_cell_m`."""
    found = []
    for cid in np.unique(labels):
        name = SEMANTIC_CLASSES[int(cid)]
        if name in _NOT_OBJECTS:
            continue
        pts = points[labels == cid]
        cells = np.floor(pts / opts.object_cell_m).astype(np.int64)
        base = cells.min(axis=0)
        occ = np.zeros(tuple(cells.max(axis=0) - base + 1), dtype=bool)
        occ[tuple((cells - base).T)] = True
        lab, _ = ndimage.label(occ, structure=np.ones((3, 3, 3)))
        of_point = lab[tuple((cells - base).T)]
        for k in np.unique(of_point):
            member = pts[of_point == k]
            if len(member) >= opts.min_object_points:
                found.append(
                    EstimatedObject(
                        name,
                        member.mean(axis=0),
                        member.min(axis=0),
                        member.max(axis=0),
                        len(member),
                    )
                )
    return found


def _free_space(points: np.ndarray, labels: np.ndarray, opts: ReconstructionOptions) -> FreeGrid:
    """Observed floor minus anything in the agents' height band, with its distance transform."""
    cell = opts.grid_cell_m
    origin = points[:, :2].min(axis=0) - 2 * cell
    shape = tuple((np.ceil((points[:, :2].max(axis=0) - origin) / cell) + 2).astype(int))[::-1]
    ij = np.floor((points[:, :2] - origin) / cell).astype(int)
    floor = np.zeros(shape, bool)
    is_floor = (labels == CLASS_ID["floor"]) | (points[:, 2] < 0.05)
    floor[ij[is_floor, 1], ij[is_floor, 0]] = True
    floor = ndimage.binary_closing(floor, iterations=2)
    blocked = np.zeros(shape, bool)
    in_band = (points[:, 2] > _BAND[0]) & (points[:, 2] < _BAND[1])
    blocked[ij[in_band, 1], ij[in_band, 0]] = True
    free = floor & ~blocked
    clearance = ndimage.distance_transform_edt(free) * cell - cell / 2
    return FreeGrid(origin, cell, clearance, np.full(shape, -1))


def _room_cores(grid: FreeGrid, opts: ReconstructionOptions) -> np.ndarray:
    """Labels of the room-sized parts of the free space eroded by the radius that leaves the
    most of them (the smallest such radius): too small a radius leaves doors open and joins
    rooms, too large one erases small rooms (Kimera truncates its ESDF slice at one distance)."""
    min_cells = opts.min_room_area_m2 / grid.cell_m**2
    step = grid.cell_m / 2
    radii = np.arange(opts.room_erosion_min_m, opts.room_erosion_max_m + step / 2, step)
    best, best_count = np.zeros(grid.clearance_m.shape, int), 0
    for radius in radii:
        cores = grid.clearance_m >= radius
        lab, n = ndimage.label(cores)
        keep = np.zeros(n + 1, bool)
        keep[1:] = ndimage.sum(cores, lab, range(1, n + 1)) >= min_cells
        if keep.sum() > best_count:
            best, best_count = np.where(keep[lab], lab, 0), int(keep.sum())
    return best


def _rooms(grid: FreeGrid, opts: ReconstructionOptions) -> tuple[np.ndarray, np.ndarray]:
    """Rooms as the free space that stays apart with its doors closed (erosion), regrown."""
    free = grid.clearance_m > 0
    lab = _room_cores(grid, opts)
    if not lab.any():
        return np.full(free.shape, -1), np.zeros((0, 2))
    _, (iy, ix) = ndimage.distance_transform_edt(lab == 0, return_indices=True)
    grown = np.where(free, lab[iy, ix], 0)
    ids = np.unique(grown[grown > 0])
    remap = np.full(grown.max() + 1, -1)
    remap[ids] = np.arange(len(ids))
    rooms = remap[grown]
    centroids = np.array(
        [grid.centres(*np.nonzero(rooms == r)).mean(axis=0) for r in range(len(ids))]
    )
    return rooms, centroids


def reconstruct(
    reader: SequenceReader,
    camera: str = "cam0",
    options: ReconstructionOptions | None = None,
    progress: Progress | None = None,
) -> EstimatedGraph:
    """Fuse a camera's depth at its ground-truth poses and build the estimated graph."""
    opts = options or ReconstructionOptions()
    _check(opts)
    stream = reader.camera(camera)
    volume = _volume(reader, opts)
    masked = dynamic_ids(reader) if opts.mask_dynamic else np.zeros(0, int)
    indices = range(0, len(stream), opts.frame_stride)
    for k, i in enumerate(indices):
        f = stream[i]
        depth = f.depth.astype(np.float32)
        if len(masked):
            depth[np.isin(f.instance, masked)] = 0.0
        volume.integrate(depth, f.K, f.T_world_cam, opts.max_depth_m)
        if progress is not None:
            progress(k + 1, len(indices))
    mesh = volume.extract_mesh()
    if mesh is None:
        raise DsgError(f"{reader.path}: the fused volume holds no surface (no valid depth?)")
    vertices = mesh.vertices
    labels = _vote(vertices, (stream[i] for i in indices), 2 * opts.voxel_m)
    grid = _free_space(vertices, labels, opts)
    room_cells, centroids = _rooms(grid, opts)
    grid = FreeGrid(grid.origin, grid.cell_m, grid.clearance_m, room_cells)
    places = sample_places(grid, np.zeros((0, 2)), 0.5, 0.25)
    return EstimatedGraph(
        vertices,
        mesh.faces,
        mesh.normals,
        labels,
        _objects(vertices, labels, opts),
        grid,
        places,
        room_cells,
        centroids,
    )
