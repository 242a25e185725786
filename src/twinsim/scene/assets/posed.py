"""A mesh object's asset read from its scene and posed in the world: what the LiDAR's triangles,
the mesh exports and the scene graph's mesh layer take."""

from __future__ import annotations

import numpy as np

from twinsim.geometry import quat_wxyz_to_matrix
from twinsim.meshdata import MeshData, decode_mesh_data
from twinsim.model.scene import ObjectSpec, SceneSpec


def mesh_data(scene: SceneSpec, sha256: str) -> MeshData:
    """The arrays of the scene's mesh asset `sha256` (its attached bytes decoded)."""
    return decode_mesh_data(scene.asset_bytes(sha256))


def world_triangles(scene: SceneSpec, obj: ObjectSpec) -> tuple[np.ndarray, np.ndarray]:
    """The world vertices (n, 3) and faces (m, 3) of the mesh object `obj` at its pose."""
    if obj.mesh is None:
        raise ValueError(f"object {obj.name!r} shows no mesh asset")
    data = mesh_data(scene, obj.mesh)
    R = quat_wxyz_to_matrix(obj.quat)
    return data.vertices @ R.T + np.asarray(obj.pos), data.faces.astype(np.int64)
