"""The ground-truth point-cloud map of one LiDAR: every return of every sweep placed in the world
with the true LiDAR pose at its own capture time, optionally without the moving things, thinned
to one point per voxel; written as `map.pcd` (PCD v0.7, binary) and `map.ply` (binary PLY).

A sweep's points are raw (each in the LiDAR frame at `t_ns + t_offset_ns`); the LiDAR's pose
then is the body's ground truth (`groundtruth_body`, interpolated: position linearly,
orientation at a constant rate between samples, and on at the last interval's rate past the
last sample) times the LiDAR's mounting `T_body_sensor`. A voxel keeps its first point in time:
a measured point, so the map's points lie on the surfaces as the returns did.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

from twinsim.export.common import (
    ExportError,
    Progress,
    T_body_sensor,
    class_palette,
    no_progress,
    pick_stream,
    prepare_output,
)
from twinsim.sequence.reader import SequenceReader
from twinsim.sequence.scans import LidarScan

PCD_FILE = "map.pcd"
PLY_FILE = "map.ply"
#: the map's point record: PCD's FIELDS in this order, little-endian and packed
MAP_DTYPE = np.dtype(
    [
        ("x", "<f4"),
        ("y", "<f4"),
        ("z", "<f4"),
        ("intensity", "<f4"),
        ("semantic", "<u2"),
        ("instance", "<u4"),
    ]
)
_KEY_BITS = 21  # bits per axis of a packed voxel index (±2^20 voxels a side)


def export_pointcloud(
    seq: SequenceReader,
    out: Path,
    *,
    lidar: str | None = None,
    static_only: bool = False,
    voxel_m: float = 0.05,
    progress: Progress = no_progress,
) -> Path:
    """Write the world-frame map of the LiDAR `lidar` of `seq` (`static_only`: without points
    on people, flying objects and robots) thinned to `voxel_m` (0: every point) into `out`."""
    if not (math.isfinite(voxel_m) and voxel_m >= 0.0):
        raise ExportError(
            f"voxel_m={voxel_m!r} must be a voxel size in metres ≥ 0 (0: every point)"
        )
    lidar = pick_stream(seq, "lidar", lidar, "lidar")
    scans = seq.lidar(lidar)
    t_gt, T_world_body = seq.groundtruth("groundtruth_body")
    T_body_lidar = T_body_sensor(seq, lidar)
    moving = {row["instance_id"] for row in seq.metadata.get("instances", []) if row["dynamic"]}
    parts, keys = [], []
    for i, scan in enumerate(scans):
        points = _world_points(scan, t_gt, T_world_body, T_body_lidar)
        if static_only:
            points = points[~np.isin(points["instance"], list(moving)) & ~scan.dynamic]
        if voxel_m > 0.0:
            key = _voxel_keys(points, voxel_m)
            key, first = np.unique(key, return_index=True)  # each voxel's first point here
            order = np.argsort(first, kind="stable")
            points, key = points[first[order]], key[order]
            keys.append(key)
        parts.append(points)
        progress(i + 1, len(scans))
    cloud = np.concatenate(parts) if parts else np.empty(0, MAP_DTYPE)
    if voxel_m > 0.0 and len(cloud):
        _, first = np.unique(np.concatenate(keys), return_index=True)
        cloud = cloud[np.sort(first)]  # the first point of each voxel, in time order
    out = prepare_output(out)
    _write_pcd(out / PCD_FILE, cloud)
    _write_ply(out / PLY_FILE, cloud, len(seq.metadata["classes"]))
    return out


def _world_points(
    scan: LidarScan, t_gt: np.ndarray, T_world_body: np.ndarray, T_body_lidar: np.ndarray
) -> np.ndarray:
    """The scan's points as `MAP_DTYPE` records in the world, each moved with the LiDAR's pose
    at its own capture time."""
    times, sector = np.unique(scan.t_offset_ns, return_inverse=True)
    T = pose_at(t_gt, T_world_body, scan.t_ns + times) @ T_body_lidar  # (sectors, 4, 4)
    p = scan.points.astype(np.float64)
    world = np.einsum("nij,nj->ni", T[sector, :3, :3], p) + T[sector, :3, 3]
    records = np.empty(len(p), MAP_DTYPE)
    records["x"], records["y"], records["z"] = world.T
    records["intensity"], records["semantic"] = scan.intensity, scan.semantic
    records["instance"] = scan.instance
    return records


def pose_at(t_ns: np.ndarray, T: np.ndarray, query_ns: np.ndarray) -> np.ndarray:
    """Poses (m, 4, 4) at `query_ns` from samples `T` (n, 4, 4) at sorted `t_ns`: position
    linearly, rotation at the constant rate of the interval holding the query (the first or the
    last interval's beyond the samples)."""
    if len(t_ns) < 2:
        raise ExportError("groundtruth_body: needs two samples or more to place the sweeps")
    i = np.clip(np.searchsorted(t_ns, query_ns, side="right") - 1, 0, len(t_ns) - 2)
    f = ((query_ns - t_ns[i]) / (t_ns[i + 1] - t_ns[i]))[:, None]
    R0, R1 = T[i, :3, :3], T[i + 1, :3, :3]
    step = Rotation.from_matrix(np.swapaxes(R0, 1, 2) @ R1).as_rotvec()
    out = np.zeros((len(query_ns), 4, 4))
    out[:, :3, :3] = R0 @ Rotation.from_rotvec(f * step).as_matrix()
    out[:, :3, 3] = T[i, :3, 3] + f * (T[i + 1, :3, 3] - T[i, :3, 3])
    out[:, 3, 3] = 1.0
    return out


def _voxel_keys(points: np.ndarray, voxel_m: float) -> np.ndarray:
    """Each point's voxel index packed into one int64 (`_KEY_BITS` bits an axis)."""
    xyz = np.stack([points["x"], points["y"], points["z"]], axis=1).astype(np.float64)
    index = np.floor(xyz / voxel_m).astype(np.int64)
    limit = 1 << (_KEY_BITS - 1)
    if len(index) and (index.min() < -limit or index.max() >= limit):
        raise ExportError(
            f"voxel_m={voxel_m!r} is too fine for this world (at most {2 * limit} voxels a side)"
        )
    index += limit
    return (index[:, 0] << (2 * _KEY_BITS)) | (index[:, 1] << _KEY_BITS) | index[:, 2]


def _write_pcd(path: Path, cloud: np.ndarray) -> None:
    """PCD v0.7, `DATA binary`: the records as they are, after PCL's header."""
    header = (
        "# .PCD v0.7 - Point Cloud Data file format\n"
        "VERSION 0.7\n"
        "FIELDS x y z intensity semantic instance\n"
        "SIZE 4 4 4 4 2 4\n"
        "TYPE F F F F U U\n"
        "COUNT 1 1 1 1 1 1\n"
        f"WIDTH {len(cloud)}\n"
        "HEIGHT 1\n"
        "VIEWPOINT 0 0 0 1 0 0 0\n"
        f"POINTS {len(cloud)}\n"
        "DATA binary\n"
    )
    path.write_bytes(header.encode("ascii") + cloud.tobytes())


def _write_ply(path: Path, cloud: np.ndarray, n_classes: int) -> None:
    """Binary PLY: the PCD's fields and each point's class colour (as the other exports')."""
    dtype = np.dtype([*MAP_DTYPE.descr, ("red", "u1"), ("green", "u1"), ("blue", "u1")])
    records = np.empty(len(cloud), dtype)
    for name in MAP_DTYPE.names:
        records[name] = cloud[name]
    colours = class_palette(n_classes)[cloud["semantic"]]
    records["red"], records["green"], records["blue"] = colours.T
    header = (
        "ply\n"
        "format binary_little_endian 1.0\n"
        "comment twinsim ground-truth LiDAR map, world frame (z up), metres\n"
        f"element vertex {len(cloud)}\n"
        "property float x\n"
        "property float y\n"
        "property float z\n"
        "property float intensity\n"
        "property ushort semantic\n"
        "property uint instance\n"
        "property uchar red\n"
        "property uchar green\n"
        "property uchar blue\n"
        "end_header\n"
    )
    path.write_bytes(header.encode("ascii") + records.tobytes())
