"""An estimated scene graph from RGB-D: TSDF fusion (OpenCV's 3D `Volume`), semantic labels voted
from the instance masks, dynamic masking (pixels of dynamic instances, people first, are not
fused, as in Kimera), objects by clustering each class, and places and rooms from the free space
of the reconstruction.

The mesh layer is the TSDF's zero-crossing surface as OpenCV extracts it (points with normals;
OpenCV's Python API exposes no triangle extraction), in world coordinates.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import cv2
import numpy as np
from scipy import ndimage

from twinsim.dsg import layers
from twinsim.dsg.errors import DsgError
from twinsim.dsg.places import FreeGrid, Places, sample_places
from twinsim.scene.vocabulary import CLASS_ID, SEMANTIC_CLASSES
from twinsim.sequence.frames import Frame
from twinsim.sequence.reader import SequenceReader

_BAND = (0.2, 1.8)  # heights where surfaces block an agent (as the ground-truth places)
_NOT_OBJECTS = {"unlabeled", "person", "clothing", *layers.STRUCTURE_CLASSES}

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class ReconstructionOptions:
    """TSDF, clustering and free-space parameters (metres unless named otherwise)."""

    voxel_m: float = 0.04
    truncation_voxels: float = 3.0
    max_depth_m: float = 8.0
    frame_stride: int = 1
    mask_dynamic: bool = True
    object_cell_m: float = 0.1
    min_object_points: int = 15
    grid_cell_m: float = 0.1
    room_erosion_m: float = 0.35
    min_room_area_m2: float = 1.0


@dataclass(frozen=True)
class EstimatedObject:
    """One cluster of surface points of an object class: centroid and axis-aligned box (world)."""

    semantic_class: str
    centroid: np.ndarray
    box_min: np.ndarray
    box_max: np.ndarray
    n_points: int


@dataclass(frozen=True)
class EstimatedGraph:
    """The reconstruction: labelled surface points, objects, free-space places and rooms."""

    points: np.ndarray  # (N, 3) world
    normals: np.ndarray  # (N, 3)
    labels: np.ndarray  # (N,) semantic class ids, 0 = no vote
    objects: list[EstimatedObject]
    grid: FreeGrid
    places: Places
    room_cells: np.ndarray  # (ny, nx) estimated room index per grid cell, -1 = none
    room_centroids: np.ndarray  # (R, 2)


def dynamic_ids(reader: SequenceReader) -> np.ndarray:
    """Instance ids the metadata marks dynamic (people's body and clothing, flying objects)."""
    return np.array([i["instance_id"] for i in reader.metadata["instances"] if i["dynamic"]], int)


def _volume(reader: SequenceReader, camera, opts: ReconstructionOptions) -> cv2.Volume:
    if not hasattr(cv2, "Volume"):
        raise DsgError(
            f"OpenCV {cv2.__version__} has no 3D-module Volume (TSDF fusion needs OpenCV >= 5); "
            "install it with: pip install 'opencv-python-headless>=5.0'"
        )
    scene = reader.scene
    lo = np.asarray(scene.bounds_min, float) - 0.3
    hi = np.asarray(scene.bounds_max, float) + 0.3
    settings = cv2.VolumeSettings(cv2.VolumeType_TSDF)
    settings.setVoxelSize(opts.voxel_m)
    settings.setVolumeResolution(np.ceil((hi - lo) / opts.voxel_m).astype(np.int32))
    pose = np.eye(4, dtype=np.float32)
    pose[:3, 3] = lo
    settings.setVolumePose(pose)
    settings.setDepthFactor(1.0)  # depth images are float32 metres
    settings.setTsdfTruncateDistance(opts.truncation_voxels * opts.voxel_m)
    settings.setMaxDepth(opts.max_depth_m)
    K = camera.K.astype(np.float32)
    for set_w, set_h, set_k in (
        (
            settings.setIntegrateWidth,
            settings.setIntegrateHeight,
            settings.setCameraIntegrateIntrinsics,
        ),
        (settings.setRaycastWidth, settings.setRaycastHeight, settings.setCameraRaycastIntrinsics),
    ):
        set_w(camera.width)
        set_h(camera.height)
        set_k(K)
    return cv2.Volume(cv2.VolumeType_TSDF, settings)


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


def _rooms(grid: FreeGrid, opts: ReconstructionOptions) -> tuple[np.ndarray, np.ndarray]:
    """Rooms as the free space that stays connected after closing doors (erosion), regrown."""
    free = grid.clearance_m > 0
    cores = grid.clearance_m >= opts.room_erosion_m
    lab, n = ndimage.label(cores)
    min_cells = opts.min_room_area_m2 / grid.cell_m**2
    sizes = ndimage.sum(cores, lab, range(1, n + 1))
    keep = np.zeros(n + 1, bool)
    keep[1:] = sizes >= min_cells
    lab = np.where(keep[lab], lab, 0)
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
    if not opts.voxel_m > 0 or opts.frame_stride < 1:
        raise DsgError(
            f"voxel_m={opts.voxel_m} must be > 0 and frame_stride={opts.frame_stride} >= 1"
        )
    stream = reader.camera(camera)
    volume = _volume(reader, stream, opts)
    masked = dynamic_ids(reader) if opts.mask_dynamic else np.zeros(0, int)
    indices = range(0, len(stream), opts.frame_stride)
    for k, i in enumerate(indices):
        f = stream[i]
        depth = f.depth.astype(np.float32)
        if len(masked):
            depth[np.isin(f.instance, masked)] = 0.0
        volume.integrate(depth, f.T_world_cam.astype(np.float32))
        if progress is not None:
            progress(k + 1, len(indices))
    points, normals = volume.fetchPointsNormals()
    if points is None or len(points) == 0:
        raise DsgError(f"{reader.path}: the fused volume holds no surface (no valid depth?)")
    points = points.reshape(-1, points.shape[-1])[:, :3].astype(float)
    normals = normals.reshape(-1, normals.shape[-1])[:, :3].astype(float)
    labels = _vote(points, (stream[i] for i in indices), 2 * opts.voxel_m)
    grid = _free_space(points, labels, opts)
    room_cells, centroids = _rooms(grid, opts)
    grid = FreeGrid(grid.origin, grid.cell_m, grid.clearance_m, room_cells)
    places = sample_places(grid, np.zeros((0, 2)), 0.5, 0.25)
    return EstimatedGraph(
        points,
        normals,
        labels,
        _objects(points, labels, opts),
        grid,
        places,
        room_cells,
        centroids,
    )
