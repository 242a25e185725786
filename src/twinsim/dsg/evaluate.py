"""Evaluation of an estimated graph against the ground truth of the same sequence.

Mesh accuracy (estimated mesh → true static surfaces) and completeness (true static surfaces
seen by the camera → estimated mesh), both over points on the mesh's triangles; object precision
and recall by class and position; room recall (of the ground-truth graph's rooms: the floor
plan's, or a roomless world's free-space rooms); and Kimera's "contrails": the error of the mesh
near where people walked.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import shapely
from scipy.spatial import cKDTree

from twinsim.dsg import layers
from twinsim.dsg.ground_truth import MIN_CLEARANCE_M, object_box
from twinsim.dsg.places import free_grid
from twinsim.dsg.reconstruct import EstimatedGraph, dynamic_ids
from twinsim.dsg.rooms import room_layer
from twinsim.sequence.reader import SequenceReader

HIT_M = 0.05  # a surface point within this of the other surface counts as matched
OBJECT_MARGIN_M = 0.15  # an estimated centroid inside the true box grown by this is a match
TRAIL_RADIUS_M = 0.15  # surface within this of where a person was seen: "crossed" by people
MIN_OBJECT_PIXELS = 30


@dataclass(frozen=True)
class Report:
    mesh_accuracy_m: float  # mean distance of mesh samples to the true static surface
    mesh_completeness: float  # fraction of observed true surface within HIT_M of the mesh
    trail_error_m: float  # mean error of mesh samples where dynamic things were seen
    trail_points: int  # mesh samples where dynamic things were seen
    trail_outliers: int  # of those, points farther than 2 * HIT_M from the static surface
    object_precision: float
    object_recall: float
    objects_by_class: dict[str, dict[str, int]]  # class -> {"true", "estimated", "matched"}
    room_recall: float
    rooms_observed: int

    def as_dict(self) -> dict:
        return self.__dict__.copy()


def _surface(reader: SequenceReader, camera: str, stride: int, dynamic: bool) -> np.ndarray:
    """World points of every depth pixel on a static (or a dynamic) instance, 1 cm apart."""
    stream = reader.camera(camera)
    moving = dynamic_ids(reader)
    clouds = [np.zeros((0, 3))]
    for i in range(0, len(stream), stride):
        f = stream[i]
        ok = (f.depth > 0) & (f.instance > 0) & (np.isin(f.instance, moving) == dynamic)
        v, u = np.nonzero(ok)
        z = f.depth[v, u].astype(float)
        pc = np.stack([(u - f.K[0, 2]) * z / f.K[0, 0], (v - f.K[1, 2]) * z / f.K[1, 1], z], axis=1)
        clouds.append(pc @ f.T_world_cam[:3, :3].T + f.T_world_cam[:3, 3])
    pts = np.concatenate(clouds)
    cells = np.floor(pts / 0.01).astype(np.int64)
    cells -= cells.min(axis=0, initial=0)
    span = cells.max(axis=0, initial=0) + 1
    key = (cells[:, 0] * span[1] + cells[:, 1]) * span[2] + cells[:, 2]  # one int per 1 cm cell
    _, keep = np.unique(key, return_index=True)
    return pts[np.sort(keep)]


def static_surface(reader: SequenceReader, camera: str, stride: int) -> np.ndarray:
    """The observed true static surface: depth pixels of static instances, in world frame."""
    return _surface(reader, camera, stride, dynamic=False)


def dynamic_surface(reader: SequenceReader, camera: str, stride: int) -> np.ndarray:
    """Everywhere the camera saw a dynamic instance (people, flying objects) over the run."""
    return _surface(reader, camera, stride, dynamic=True)


def mesh_samples(vertices: np.ndarray, faces: np.ndarray) -> np.ndarray:
    """Points on a triangle mesh: its vertices, edge midpoints and triangle centroids (a voxel-
    sized triangle is then covered about every voxel / 3)."""
    pairs = np.sort(faces[:, [0, 1, 1, 2, 2, 0]].reshape(-1, 2), axis=1)
    edges = np.unique(pairs[:, 0] * len(vertices) + pairs[:, 1])
    midpoints = (vertices[edges // len(vertices)] + vertices[edges % len(vertices)]) / 2
    return np.concatenate([vertices, midpoints, vertices[faces].mean(axis=1)])


def _observed_objects(reader: SequenceReader, camera: str, stride: int) -> set[int]:
    stream = reader.camera(camera)
    counts: dict[int, int] = {}
    for i in range(0, len(stream), stride):
        ids, n = np.unique(stream[i].instance, return_counts=True)
        for k, c in zip(ids.tolist(), n.tolist(), strict=True):
            counts[k] = max(counts.get(k, 0), c)
    return {k for k, c in counts.items() if c >= MIN_OBJECT_PIXELS}


def evaluate(
    reader: SequenceReader, est: EstimatedGraph, camera: str = "cam0", stride: int = 1
) -> Report:
    """Compare an estimated graph with the sequence's ground truth."""
    scene = reader.scene
    truth = static_surface(reader, camera, stride)
    samples = mesh_samples(est.vertices, est.faces)
    d_est, _ = cKDTree(truth).query(samples)
    d_true, _ = cKDTree(samples).query(truth)
    swept = dynamic_surface(reader, camera, stride)
    trail = np.zeros(len(samples), bool)
    if len(swept):
        near, _ = cKDTree(swept).query(samples, distance_upper_bound=TRAIL_RADIUS_M)
        trail = near < TRAIL_RADIUS_M

    seen = _observed_objects(reader, camera, stride)
    true_objs = [
        o
        for o in scene.objects
        if not o.dynamic
        and o.semantic_class not in layers.STRUCTURE_CLASSES
        and o.instance_id in seen
    ]
    by_class: dict[str, dict[str, int]] = {}
    matched_est: set[int] = set()
    matched_true = 0
    for obj in true_objs:
        centre, half, R = object_box(obj)
        row = by_class.setdefault(obj.semantic_class, {"true": 0, "estimated": 0, "matched": 0})
        row["true"] += 1
        for k, e in enumerate(est.objects):
            if k in matched_est or e.semantic_class != obj.semantic_class:
                continue
            local = R.T @ (e.centroid - centre)
            if np.all(np.abs(local) <= half + OBJECT_MARGIN_M):
                matched_est.add(k)
                row["matched"] += 1
                matched_true += 1
                break
    for e in est.objects:
        by_class.setdefault(e.semantic_class, {"true": 0, "estimated": 0, "matched": 0})[
            "estimated"
        ] += 1

    floor_pts = truth[truth[:, 2] < 0.05]
    rooms = [r.polygon for r in room_layer(scene, free_grid(scene), MIN_CLEARANCE_M).rooms]
    observed_rooms = [
        poly
        for poly in rooms
        if len(floor_pts) and shapely.contains_xy(poly, *floor_pts[:, :2].T).sum() * 1e-4 >= 0.5
    ]
    recalled = sum(
        any(poly.covers(shapely.Point(c)) for c in est.room_centroids) for poly in observed_rooms
    )
    return Report(
        mesh_accuracy_m=float(d_est.mean()),
        mesh_completeness=float((d_true < HIT_M).mean()),
        trail_error_m=float(d_est[trail].mean()) if trail.any() else 0.0,
        trail_points=int(trail.sum()),
        trail_outliers=int((d_est[trail] > 2 * HIT_M).sum()),
        object_precision=len(matched_est) / len(est.objects) if est.objects else 0.0,
        object_recall=matched_true / len(true_objs) if true_objs else 0.0,
        objects_by_class=dict(sorted(by_class.items())),
        room_recall=recalled / len(observed_rooms) if observed_rooms else 0.0,
        rooms_observed=len(observed_rooms),
    )
