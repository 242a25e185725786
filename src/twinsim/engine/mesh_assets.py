"""Mesh objects (`ObjectSpec.mesh`) in MuJoCo: a visual mesh and the convex collision parts.

Each asset an object shows becomes MuJoCo meshes once: its visual triangles (with texture
coordinates where it has a texture: MuJoCo's v runs down the image, the asset's up, so v is
flipped) and each convex part. An object gets a visual geom, which never collides (contype and
conaffinity 0) and which cameras and rays see, and a geom per part, which collides, in the
group no camera shows and no ray sees (`CONTACT_GEOM_GROUP`, the hills' height field's).
MuJoCo colours a mesh by its material alone: a textured asset gets a material with its texture
(times its base colour); one with vertex colours shows their mean (MuJoCo has no per-vertex
colour), as does one of a plain colour: the asset's scene material.
"""

from __future__ import annotations

import mujoco
import numpy as np

from twinsim.engine.terrain import CONTACT_GEOM_GROUP
from twinsim.meshdata import MeshData
from twinsim.model.scene import MeshAssetSpec, ObjectSpec, SceneSpec
from twinsim.scene.assets.posed import mesh_data


def asset_prefix(asset: MeshAssetSpec) -> str:
    """The start of the MuJoCo names of an asset's meshes, texture and material."""
    return f"asset_{asset.sha256[:16]}"


def visual_geom_name(obj: ObjectSpec) -> str:
    """The MuJoCo name of a mesh object's visual geom."""
    return f"obj{obj.instance_id}_mesh"


def add_mesh_assets(spec: mujoco.MjSpec, scene: SceneSpec) -> dict[str, MeshData]:
    """Add the meshes (and texture, material) of every asset an object of `scene` shows;
    each one's arrays by sha256."""
    used = {obj.mesh for obj in scene.objects if obj.mesh is not None}
    data = {}
    for asset in scene.mesh_assets:
        if asset.sha256 not in used:
            continue
        mesh = data[asset.sha256] = mesh_data(scene, asset.sha256)
        prefix = asset_prefix(asset)
        textured = mesh.texture is not None
        _add_mesh(spec, prefix, mesh.vertices, mesh.faces, mesh.uv if textured else None)
        for k, (vertices, faces) in enumerate(mesh.parts):
            _add_mesh(spec, f"{prefix}_part{k}", vertices, faces, None)
        if textured:
            image = np.ascontiguousarray(mesh.texture, np.uint8)
            texture = spec.add_texture()
            texture.name = f"{prefix}_tex"
            texture.type = mujoco.mjtTexture.mjTEXTURE_2D
            texture.height, texture.width, texture.nchannel = image.shape
            texture.data = image.tobytes()
            material = spec.add_material()
            material.name = f"{prefix}_mat"
            material.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = texture.name
            material.rgba = tuple(float(c) for c in mesh.base_rgba)
    return data


def add_mesh_object(
    body: mujoco.MjsBody, obj: ObjectSpec, asset: MeshAssetSpec, mesh: MeshData
) -> None:
    """The visual geom and the collision part geoms of the mesh object `obj` on its body."""
    prefix = asset_prefix(asset)
    visual = body.add_geom()
    visual.name = visual_geom_name(obj)
    visual.type = mujoco.mjtGeom.mjGEOM_MESH
    visual.meshname = prefix
    visual.material = f"{prefix}_mat" if mesh.texture is not None else asset.material
    visual.contype = visual.conaffinity = 0
    for k in range(len(mesh.parts)):
        part = body.add_geom()
        part.name = f"obj{obj.instance_id}_part{k}"
        part.type = mujoco.mjtGeom.mjGEOM_MESH
        part.meshname = f"{prefix}_part{k}"
        part.group = CONTACT_GEOM_GROUP
        part.rgba = (0.0, 0.0, 0.0, 0.0)


def _add_mesh(
    spec: mujoco.MjSpec,
    name: str,
    vertices: np.ndarray,
    faces: np.ndarray,
    uv: np.ndarray | None,
) -> None:
    """A mesh of the given triangles (and per-vertex texture coordinates, v up)."""
    mesh = spec.add_mesh()
    mesh.name = name
    mesh.uservert = np.asarray(vertices, float).ravel().tolist()
    mesh.userface = np.asarray(faces, int).ravel().tolist()
    if uv is not None:
        flipped = np.column_stack([uv[:, 0], 1.0 - uv[:, 1]])
        mesh.usertexcoord = flipped.ravel().tolist()
        mesh.userfacetexcoord = np.asarray(faces, int).ravel().tolist()
    mesh.inertia = mujoco.mjtMeshInertia.mjMESH_INERTIA_SHELL  # static: any inertia will do
