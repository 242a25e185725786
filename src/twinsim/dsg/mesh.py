"""The metric-semantic mesh layer of the ground truth: the static geometry, labelled by class.

Every geom of every static object is tessellated in world coordinates: boxes exactly (8 vertices,
12 triangles), spheres and ellipsoids as latitude-longitude spheres, cylinders as prisms with
capped ends, capsules as spheres split at the equator and pulled apart by the cylinder length;
a terrain's hills as their own triangles (`scene.terrain.terrain_mesh`), a mesh object's asset
as its own triangles.
Each vertex carries the object's semantic class id (spark-dsg mesh labels).
"""

from __future__ import annotations

import itertools

import numpy as np
import spark_dsg as dsg

from twinsim.geometry import quat_wxyz_to_matrix
from twinsim.model.scene import GeomSpec, ObjectSpec, SceneSpec
from twinsim.scene.assets.posed import world_triangles
from twinsim.scene.terrain import terrain_mesh
from twinsim.scene.vocabulary import CLASS_ID

_SEGMENTS = 16
_RINGS = 8  # even: a ring on the equator splits capsules
_BOX_V = np.array(list(itertools.product((-1.0, 1.0), repeat=3)))
_BOX_F = np.array(
    [
        [0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
        [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3],
    ]
)  # fmt: skip


def _sphere() -> tuple[np.ndarray, np.ndarray]:
    """Unit latitude-longitude sphere: poles plus _RINGS - 1 rings of _SEGMENTS vertices."""
    lat = np.linspace(0.0, np.pi, _RINGS + 1)[1:-1]
    lon = np.linspace(0.0, 2 * np.pi, _SEGMENTS, endpoint=False)
    ring = np.stack(
        [
            np.outer(np.sin(lat), np.cos(lon)),
            np.outer(np.sin(lat), np.sin(lon)),
            np.repeat(np.cos(lat)[:, None], _SEGMENTS, axis=1),
        ],
        axis=-1,
    ).reshape(-1, 3)
    verts = np.vstack([[0.0, 0.0, 1.0], ring, [0.0, 0.0, -1.0]])
    n, s, faces = 0, len(verts) - 1, []
    for j in range(_SEGMENTS):
        k = (j + 1) % _SEGMENTS
        faces.append([n, 1 + j, 1 + k])
        last = 1 + (_RINGS - 2) * _SEGMENTS
        faces.append([s, last + k, last + j])
        for r in range(_RINGS - 2):
            a, b = 1 + r * _SEGMENTS, 1 + (r + 1) * _SEGMENTS
            faces += [[a + j, b + j, b + k], [a + j, b + k, a + k]]
    return verts, np.array(faces)


def _cylinder() -> tuple[np.ndarray, np.ndarray]:
    """Unit cylinder (radius 1, z in [-1, 1]) with capped ends."""
    lon = np.linspace(0.0, 2 * np.pi, _SEGMENTS, endpoint=False)
    circle = np.stack([np.cos(lon), np.sin(lon)], axis=1)
    verts = np.vstack(
        [
            np.c_[circle, np.ones(_SEGMENTS)],
            np.c_[circle, -np.ones(_SEGMENTS)],
            [0, 0, 1],
            [0, 0, -1],
        ]
    )
    top, bottom, faces = 2 * _SEGMENTS, 2 * _SEGMENTS + 1, []
    for j in range(_SEGMENTS):
        k = (j + 1) % _SEGMENTS
        faces += [[j, _SEGMENTS + j, _SEGMENTS + k], [j, _SEGMENTS + k, k]]
        faces += [[top, j, k], [bottom, _SEGMENTS + k, _SEGMENTS + j]]
    return verts, np.array(faces)


_UNIT_SPHERE = _sphere()
_UNIT_CYLINDER = _cylinder()


def _local(geom: GeomSpec) -> tuple[np.ndarray, np.ndarray]:
    """Vertices and faces of a geom in its own frame."""
    s = geom.size
    if geom.type == "box":
        return _BOX_V * np.asarray(s[:3]), _BOX_F
    if geom.type in ("sphere", "ellipsoid"):
        v, f = _UNIT_SPHERE
        return v * (np.full(3, s[0]) if geom.type == "sphere" else np.asarray(s[:3])), f
    if geom.type == "cylinder":
        v, f = _UNIT_CYLINDER
        return v * np.array([s[0], s[0], s[1]]), f
    v, f = _UNIT_SPHERE  # capsule: radius s[0], cylinder half length s[1]
    v = v * s[0]
    return v + np.c_[np.zeros((len(v), 2)), np.where(v[:, 2] >= -1e-12, s[1], -s[1])], f


def _object_triangles(obj: ObjectSpec) -> list[tuple[np.ndarray, np.ndarray]]:
    """World vertices and triangles of each geom of an object."""
    R_obj = quat_wxyz_to_matrix(obj.quat)
    parts = []
    for geom in obj.geoms:
        v, f = _local(geom)
        R_geom = quat_wxyz_to_matrix(geom.quat)
        parts.append(((v @ R_geom.T + np.asarray(geom.pos)) @ R_obj.T + np.asarray(obj.pos), f))
    return parts


def scene_mesh(scene: SceneSpec) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """World vertices (N, 3), triangles (M, 3) and per-vertex class ids of the static geometry."""
    verts, faces, labels, base = [], [], [], 0
    for obj in scene.objects:
        if obj.dynamic:
            continue
        parts = _object_triangles(obj) if obj.mesh is None else [world_triangles(scene, obj)]
        if scene.terrain is not None and scene.terrain.instance_id == obj.instance_id:
            hills = terrain_mesh(scene.terrain)
            parts.append((hills.verts, hills.faces))
        for v, f in parts:
            verts.append(v)
            faces.append(f + base)
            labels.append(np.full(len(v), CLASS_ID[obj.semantic_class]))
            base += len(v)
    return np.concatenate(verts), np.concatenate(faces), np.concatenate(labels)


def to_spark_mesh(vertices: np.ndarray, faces: np.ndarray | None, labels: np.ndarray) -> dsg.Mesh:
    """A spark-dsg mesh with vertices coloured and labelled by semantic class."""
    mesh = dsg.Mesh(True, False, True, False)
    colours = np.array([dsg.distinct_150_color(c).to_float_array()[:3] for c in range(150)])
    mesh.set_vertices(np.vstack([vertices.T, colours[labels % 150].T]))
    if faces is not None:
        mesh.set_faces(faces.T.astype(np.int32))
    for i, label in enumerate(labels.tolist()):
        mesh.set_label(i, label)
    return mesh
