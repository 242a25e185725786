"""A world's hills (`SceneSpec.terrain`) in MuJoCo: a textured mesh for the cameras and a
height field for contacts, both of the terrain's object.

The mesh holds the raised cells' triangles (`scene.terrain.terrain_mesh`, the ones the LiDAR
and Cycles take too) with texture coordinates in world metres, so the grass runs on from the
flat land's box; it never collides. The height field has the same samples and collides, in a
geom group that no camera shows and no ray sees (`CONTACT_GEOM_GROUP`).
"""

from __future__ import annotations

import mujoco
import numpy as np

from twinsim.geometry import quat_wxyz_to_matrix
from twinsim.model.scene import MaterialSpec, ObjectSpec, TerrainSpec
from twinsim.scene.terrain import heights, terrain_mesh

CONTACT_GEOM_GROUP = 4  # MuJoCo shows groups 0-2 by default; rays leave this one out too
_BASE_M = 0.1  # the height field's solid depth below `base_z`


def terrain_geom_names(terrain: TerrainSpec) -> tuple[str, str]:
    """MuJoCo names of the terrain's (camera mesh, contact height field) geoms."""
    return f"obj{terrain.instance_id}_terrain", f"obj{terrain.instance_id}_hfield"


def add_terrain(
    spec: mujoco.MjSpec,
    body,
    obj: ObjectSpec,
    terrain: TerrainSpec,
    material: MaterialSpec,
    uv_material: str,
) -> None:
    """Add the terrain's mesh and height field geoms to `body`, the body of its object `obj`."""
    mesh_name, hfield_name = terrain_geom_names(terrain)
    surface = terrain_mesh(terrain)
    R = quat_wxyz_to_matrix(obj.quat)
    local = (surface.verts - np.asarray(obj.pos)) @ R  # world → the object's frame
    repeat = np.asarray(material.texrepeat if material.texture else (1.0, 1.0))
    mesh = spec.add_mesh()
    mesh.name = mesh_name
    mesh.uservert = local.ravel().tolist()
    mesh.usertexcoord = (surface.verts[:, :2] * repeat).ravel().tolist()
    mesh.userface = surface.faces.ravel().tolist()
    mesh.userfacetexcoord = surface.faces.ravel().tolist()
    mesh.inertia = mujoco.mjtMeshInertia.mjMESH_INERTIA_SHELL  # an open sheet has no volume
    geom = body.add_geom()
    geom.name = mesh_name
    geom.type = mujoco.mjtGeom.mjGEOM_MESH
    geom.meshname = mesh_name
    geom.material = uv_material if material.texture else material.name
    geom.contype = geom.conaffinity = 0

    field = spec.add_hfield()
    field.name = hfield_name
    field.nrow, field.ncol = terrain.rows, terrain.cols
    field.size = [*terrain.half_size, terrain.top_m, _BASE_M]
    field.userdata = (heights(terrain) / terrain.top_m).ravel().tolist()
    contact = body.add_geom()
    contact.name = hfield_name
    contact.type = mujoco.mjtGeom.mjGEOM_HFIELD
    contact.hfieldname = hfield_name
    world = np.array([*terrain.center, terrain.base_z])
    contact.pos = (world - np.asarray(obj.pos)) @ R
    contact.quat = (obj.quat[0], -obj.quat[1], -obj.quat[2], -obj.quat[3])
    contact.group = CONTACT_GEOM_GROUP
    contact.rgba = (0.0, 0.0, 0.0, 0.0)
