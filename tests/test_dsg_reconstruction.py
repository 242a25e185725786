"""Estimated graph from RGB-D: TSDF mesh accuracy, objects, rooms, and the Kimera contrails."""

from __future__ import annotations

import json

import numpy as np
import pytest
import spark_dsg
from scipy.spatial.transform import Rotation
from typer.testing import CliRunner

from twinsim.cli import app
from twinsim.dsg.errors import DsgError
from twinsim.dsg.evaluate import evaluate
from twinsim.dsg.reconstruct import ReconstructionOptions, reconstruct
from twinsim.dsg.tsdf import TsdfVolume
from twinsim.scene.vocabulary import CLASS_ID
from twinsim.sequence import open_sequence

STRIDE = 2


@pytest.fixture(scope="module")
def reports(dynamic_sequence):
    reader = open_sequence(dynamic_sequence)
    out = {}
    for masked in (True, False):
        opts = ReconstructionOptions(frame_stride=STRIDE, voxel_m=0.05, mask_dynamic=masked)
        est = reconstruct(reader, options=opts)
        out[masked] = (est, evaluate(reader, est, stride=STRIDE))
    return out


def _triangle_areas(vertices: np.ndarray, faces: np.ndarray) -> np.ndarray:
    a, b, c = (vertices[faces[:, k]] for k in range(3))
    return np.linalg.norm(np.cross(b - a, c - a), axis=1) / 2


def _box_distance(points: np.ndarray, scene) -> np.ndarray:
    """Distance of each point to the surface of the union of the scene's static box geoms."""
    signed = np.full(len(points), np.inf)
    for obj in scene.objects:
        if obj.dynamic:
            continue
        R_obj = Rotation.from_quat(obj.quat, scalar_first=True).as_matrix()
        for geom in obj.geoms:
            if geom.type != "box":
                continue
            R = R_obj @ Rotation.from_quat(geom.quat, scalar_first=True).as_matrix()
            centre = np.asarray(obj.pos) + R_obj @ np.asarray(geom.pos)
            q = np.abs((points - centre) @ R) - np.asarray(geom.size)
            outside = np.linalg.norm(np.maximum(q, 0), axis=1)
            signed = np.minimum(signed, outside + np.minimum(q.max(axis=1), 0))
    return np.abs(signed)


def test_tsdf_meshes_a_known_step_from_one_view():
    """Looking straight down at a floor (z = 0.3) with a raised square (z = 0.8) in the middle
    and no data in the left quarter: triangles on both planes, none where nothing was seen."""
    h, w, f = 120, 160, 100.0
    K = np.array([[f, 0, (w - 1) / 2], [0, f, (h - 1) / 2], [0, 0, 1]])
    T_world_cam = np.eye(4)
    T_world_cam[:3, :3] = np.diag([1.0, -1.0, -1.0])  # optical axis down, image x along world x
    T_world_cam[:3, 3] = [0.0, 0.0, 2.0]
    depth = np.full((h, w), 1.7, np.float32)
    vv, uu = np.mgrid[0:h, 0:w]
    x, y = (uu - K[0, 2]) / f * 1.7, -(vv - K[1, 2]) / f * 1.7  # world xy on the floor
    depth[(np.abs(x) < 0.3) & (np.abs(y) < 0.3)] = 1.2
    depth[x < -0.4] = 0.0
    vol = TsdfVolume((-1.2, -1.2, 0.0), (1.2, 1.2, 1.2), 0.04, 0.12)
    vol.integrate(depth, K, T_world_cam, max_depth_m=5.0)
    once = vol.tsdf.copy()
    vol.integrate(depth, K, T_world_cam, max_depth_m=5.0)  # the same view again: same average
    np.testing.assert_array_equal(vol.tsdf, once)
    assert set(np.unique(vol.weight)) == {0.0, 2.0}
    mesh = vol.extract_mesh()
    assert mesh is not None
    v, faces = mesh.vertices, mesh.faces
    assert faces.min() == 0 and faces.max() == len(v) - 1
    assert np.all(_triangle_areas(v, faces) > 0)
    assert np.all(v[:, 0] > -0.4 - 0.08)  # no surface where the camera had no depth
    floor = (np.abs(v[:, 0]) > 0.45) | (np.abs(v[:, 1]) > 0.45)
    top = (np.abs(v[:, 0]) < 0.15) & (np.abs(v[:, 1]) < 0.15)
    assert floor.sum() > 200 and top.sum() > 50
    np.testing.assert_allclose(v[floor, 2], 0.3, atol=0.005)
    np.testing.assert_allclose(v[top, 2], 0.8, atol=0.005)
    assert np.all(mesh.normals[floor | top, 2] > 0.99)  # toward the camera
    a, b, c = (v[faces[:, k]] for k in range(3))
    on_planes = (floor | top)[faces].all(axis=1)
    assert np.all(np.cross(b - a, c - a)[on_planes, 2] > 0)  # wound toward the free space


def test_reconstruction_matches_the_static_world(reports, dynamic_sequence):
    est, rep = reports[True]
    assert rep.mesh_accuracy_m < 0.03
    assert rep.mesh_completeness > 0.95
    assert rep.object_recall >= 0.5 and rep.object_precision >= 0.5
    assert sum(r["true"] for r in rep.objects_by_class.values()) >= 2
    assert rep.rooms_observed >= 1 and rep.room_recall > 0
    # a proper triangle mesh: valid, used, distinct indices, no zero-area triangles
    v, faces = est.vertices, est.faces
    assert len(faces) > 2 * 10**4 and faces.shape[1] == 3
    assert faces.min() == 0 and faces.max() == len(v) - 1
    assert len(np.unique(faces)) == len(v)
    assert np.all((faces[:, 0] != faces[:, 1]) & (faces[:, 1] != faces[:, 2]))
    assert np.all(faces[:, 0] != faces[:, 2])
    assert np.all(_triangle_areas(v, faces) > 0)  # slivers of a 4 cm voxel's corner may stay
    # fused labels: floors and walls where the scene's boxes are, within a few centimetres (the
    # worst are the chamfers marching cubes cuts into corners: half a 5 cm voxel)
    floor = v[est.labels == CLASS_ID["floor"]]
    assert len(floor) > 100
    assert np.median(np.abs(floor[:, 2])) < 0.005 and np.percentile(np.abs(floor[:, 2]), 90) < 0.02
    assert np.percentile(np.abs(floor[:, 2]), 99) < 0.03
    assert np.median(est.normals[est.labels == CLASS_ID["floor"], 2]) > 0.99
    walls = v[est.labels == CLASS_ID["wall"]]
    assert len(walls) > 100
    off = _box_distance(walls, open_sequence(dynamic_sequence).scene)
    assert np.median(off) < 0.005 and np.percentile(off, 99) < 0.03
    assert len(est.places.xy) > 0


def test_dynamic_masking_removes_people_contrails(reports):
    masked, unmasked = reports[True][1], reports[False][1]
    assert unmasked.trail_points > 0
    assert masked.trail_error_m < unmasked.trail_error_m
    assert masked.trail_outliers < unmasked.trail_outliers
    assert masked.mesh_accuracy_m < unmasked.mesh_accuracy_m
    est_masked, est_unmasked = reports[True][0], reports[False][0]
    person = CLASS_ID["person"], CLASS_ID["clothing"]
    assert np.isin(est_masked.labels, person).sum() < np.isin(est_unmasked.labels, person).sum()


def test_bad_options_are_refused_by_name(dynamic_sequence):
    reader = open_sequence(dynamic_sequence)
    with pytest.raises(DsgError, match="truncation_voxels=0"):
        reconstruct(reader, options=ReconstructionOptions(truncation_voxels=0))
    with pytest.raises(DsgError, match=r"voxel_m=0\.001 gives"):
        reconstruct(reader, options=ReconstructionOptions(voxel_m=0.001))


def test_cli_report_and_estimated_graph_in_spark_dsg(dynamic_sequence, tmp_path):
    report, graph_file = tmp_path / "report.json", tmp_path / "estimate.json"
    args = ["dsg-reconstruct", str(dynamic_sequence), "--out", str(report)]
    result = CliRunner().invoke(app, [*args, "--graph", str(graph_file), "--stride", "6"])
    assert result.exit_code == 0, result.output
    data = json.loads(report.read_text())
    for key in ("masked", "unmasked"):
        assert {"mesh_accuracy_m", "trail_error_m", "object_recall"} <= set(data[key])
    graph = spark_dsg.DynamicSceneGraph.load(str(graph_file))
    assert graph.has_mesh()
    vertices = graph.mesh.get_vertices()
    labels = np.array(graph.mesh.get_labels())
    assert vertices.shape[1] == len(labels) > 1000
    faces = np.asarray(graph.mesh.get_faces())
    assert faces.shape[0] == 3 and faces.shape[1] > 1000
    assert faces.min() == 0 and faces.max() == vertices.shape[1] - 1
    assert np.all(_triangle_areas(vertices[:3].T.astype(float), faces.T.astype(int)) > 0)
    floor = vertices[2, labels == CLASS_ID["floor"]]
    assert len(floor) > 50 and np.median(np.abs(floor)) < 0.05
    assert graph.get_layer("OBJECTS").num_nodes() >= 1
    again = CliRunner().invoke(app, args)
    assert again.exit_code == 2 and "exists" in again.output


def test_rooms_stay_apart_through_an_open_door():
    """Two 4 × 3 m rooms joined by a 1 m door in a 10 cm wall: the erosion sweep closes the door
    (a fixed 0.35 m erosion would not), so each room gets its own centroid inside it."""
    from scipy import ndimage

    from twinsim.dsg.places import FreeGrid
    from twinsim.dsg.reconstruct import ReconstructionOptions, _rooms

    cell = 0.1
    free = np.zeros((32, 83), bool)  # y, x with a one-cell border of obstacle
    free[1:31, 1:41] = free[1:31, 42:82] = True  # rooms at x in [0.1, 4.1] and [4.2, 8.2]
    free[10:20, 41] = True  # the door: 1 m wide
    clearance = ndimage.distance_transform_edt(free) * cell - cell / 2
    grid = FreeGrid(np.zeros(2), cell, clearance, np.full(free.shape, -1))
    rooms, centroids = _rooms(grid, ReconstructionOptions())
    assert len(centroids) == 2
    assert sorted(np.round(centroids[:, 0], 1).tolist()) == [2.1, 6.2]
    assert set(np.unique(rooms[free])) == {0, 1}  # every free cell is in one of them
