"""The static world as triangle meshes: `world.ply` (binary PLY, per-face `semantic` and
`instance`, per-vertex colour) and `world.glb` (glTF binary, a node per instance).

Every object of `scene.json` is made of trimesh primitives of its geoms (boxes, cylinders,
capsules, spheres, ellipsoids as scaled spheres) placed in the world, plus the hills'
triangles (`scene.terrain.terrain_mesh`, as every sensor sees them) for the terrain's object;
a mesh object (`ObjectSpec.mesh`) is its asset's own triangles, posed, coloured by its vertex
colours where it has them, else by its material (a texture's mean texel).
Round primitives are tessellated finely enough that their facets lie within the tolerance the
cameras keep (`engine/round_meshes.surface_tolerance`: 1 mm or 0.1 % of the size) inside the
exact surface. A vertex takes its material's base colour: the material's RGBA times its
texture's mean colour (what the LiDAR's intensity reads too).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import trimesh

from twinsim.engine.round_meshes import (
    cylinder_slices,
    sphere_grid_depth,
    surface_tolerance,
)
from twinsim.export.common import Progress, no_progress, prepare_output
from twinsim.geometry import pose_to_T
from twinsim.model.body import LinkGeomSpec
from twinsim.model.scene import GeomSpec, ObjectSpec, SceneSpec
from twinsim.scene.assets.posed import mesh_data, world_triangles
from twinsim.scene.terrain import terrain_mesh
from twinsim.scene.textures import make_texture
from twinsim.scene.vocabulary import class_id
from twinsim.sequence.reader import SequenceReader

PLY_FILE = "world.ply"
GLB_FILE = "world.glb"


@dataclass(frozen=True)
class Triangles:
    """Triangles with a colour per vertex and the name of the material of each face."""

    vertices: np.ndarray  # (n, 3) float64
    faces: np.ndarray  # (m, 3) int64
    colors: np.ndarray  # (n, 4) uint8 RGBA
    face_material: np.ndarray  # (m,) str

    @classmethod
    def join(cls, parts: Sequence[Triangles]) -> Triangles:
        """One set of triangles holding every part, in order."""
        offsets = np.cumsum([0] + [len(p.vertices) for p in parts[:-1]])
        return cls(
            np.concatenate([p.vertices for p in parts]),
            np.concatenate([p.faces + o for p, o in zip(parts, offsets, strict=True)]),
            np.concatenate([p.colors for p in parts]),
            np.concatenate([p.face_material for p in parts]),
        )


@dataclass(frozen=True)
class InstanceMesh(Triangles):
    """One object's triangles in the world frame, with its class."""

    instance_id: int
    semantic_class: str

    @property
    def name(self) -> str:
        """`<class>_<instance>`: the glTF node's name."""
        return f"{self.semantic_class}_{self.instance_id}"


def export_mesh(seq: SequenceReader, out: Path, *, progress: Progress = no_progress) -> Path:
    """Write the static world of `seq` as `world.ply` and `world.glb` into the new folder `out`."""
    meshes = world_meshes(seq.scene)
    out = prepare_output(out)
    _write_ply(out / PLY_FILE, meshes)
    progress(1, 2)
    _write_glb(out / GLB_FILE, meshes)
    progress(2, 2)
    return out


def world_meshes(
    scene: SceneSpec, colours: dict[str, np.ndarray] | None = None
) -> list[InstanceMesh]:
    """The triangles of every object of `scene`, one `InstanceMesh` per object, in order
    (`colours`: the scene's `material_colours`, where the caller has them already)."""
    colours = material_colours(scene) if colours is None else colours
    result = []
    for obj in scene.objects:
        T_world_obj = pose_to_T(obj.pos, obj.quat)
        if obj.mesh is not None:
            parts = [_asset_triangles(scene, obj, colours)]
        else:
            parts = [primitive_triangles(g, T_world_obj, colours, g.material) for g in obj.geoms]
        terrain = scene.terrain
        if terrain is not None and terrain.instance_id == obj.instance_id:
            hills = terrain_mesh(terrain)
            colour = np.tile(colours[terrain.material], (len(hills.verts), 1))
            material = np.full(len(hills.faces), terrain.material)
            parts.append(Triangles(hills.verts, hills.faces, colour, material))
        whole = Triangles.join(parts)
        result.append(
            InstanceMesh(
                **vars(whole), instance_id=obj.instance_id, semantic_class=obj.semantic_class
            )
        )
    return result


def material_colours(scene: SceneSpec) -> dict[str, np.ndarray]:
    """Each material's RGBA (uint8): its colour times its texture's mean texel."""
    texture_mean = {
        t.name: make_texture(t).reshape(-1, 3).mean(axis=0) / 255.0 for t in scene.textures
    }
    colours = {}
    for mat in scene.materials:
        rgba = np.asarray(mat.rgba, float)
        if mat.texture:
            rgba[:3] *= texture_mean[mat.texture]
        colours[mat.name] = np.round(255.0 * np.clip(rgba, 0.0, 1.0)).astype(np.uint8)
    return colours


def _asset_triangles(
    scene: SceneSpec, obj: ObjectSpec, colours: dict[str, np.ndarray]
) -> Triangles:
    """A mesh object's asset in the world frame, coloured by its vertex colours or else by its
    material's colour."""
    vertices, faces = world_triangles(scene, obj)
    material = scene.mesh_asset(obj.mesh).material
    vertex_colours = mesh_data(scene, obj.mesh).colors
    if vertex_colours is None:
        vertex_colours = np.tile(colours[material], (len(vertices), 1))
    return Triangles(vertices, faces, vertex_colours, np.full(len(faces), material))


def primitive_triangles(
    g: GeomSpec | LinkGeomSpec, T_frame: np.ndarray, colours: dict[str, np.ndarray], material: str
) -> Triangles:
    """One primitive, placed at its `pos`/`quat` in a frame posed at `T_frame`, its vertices
    coloured `colours[material]`."""
    size = np.asarray(g.size, float)
    if g.type == "box":
        mesh = trimesh.creation.box(extents=2 * size[:3])
    elif g.type == "cylinder":
        slices = cylinder_slices(surface_tolerance("cylinder", size) / size[0])
        mesh = trimesh.creation.cylinder(radius=size[0], height=2 * size[1], sections=slices)
    elif g.type == "capsule":
        n = _sphere_count(surface_tolerance("capsule", size) / size[0], bands_of=lambda c: c)
        mesh = trimesh.creation.capsule(height=2 * size[1], radius=size[0], count=[n, 2 * n])
    else:  # sphere, ellipsoid: a unit sphere scaled by the semi-axes
        axes = np.full(3, size[0]) if g.type == "sphere" else size[:3]
        n = _sphere_count(surface_tolerance(g.type, size) / axes.max(), bands_of=lambda c: c - 1)
        mesh = trimesh.creation.uv_sphere(radius=1.0, count=[n, n])
        mesh.apply_scale(axes)
    T = T_frame @ pose_to_T(g.pos, g.quat)
    vertices = np.asarray(mesh.vertices) @ T[:3, :3].T + T[:3, 3]
    faces = np.asarray(mesh.faces, np.int64)
    colour = np.tile(colours[material], (len(vertices), 1))
    return Triangles(vertices, faces, colour, np.full(len(faces), material))


def _sphere_count(depth: float, bands_of) -> int:
    """The fewest (even) latitude count `c` of trimesh's sphere grids, with `2c` sections around
    and `bands_of(c)` bands from pole to pole, whose facets lie within `depth` of the unit
    sphere."""
    c = 4
    while sphere_grid_depth(2 * c, bands_of(c)) > depth:
        c += 2
    return c


def _write_ply(path: Path, meshes: list[InstanceMesh]) -> None:
    """Every instance in one binary PLY: vertex colours, per-face `semantic` and `instance`."""
    offsets = np.cumsum([0] + [len(m.vertices) for m in meshes[:-1]])
    world = trimesh.Trimesh(
        vertices=np.concatenate([m.vertices for m in meshes]),
        faces=np.concatenate([m.faces + o for m, o in zip(meshes, offsets, strict=True)]),
        vertex_colors=np.concatenate([m.colors for m in meshes]),
        process=False,
    )
    world.face_attributes["semantic"] = np.concatenate(
        [np.full(len(m.faces), class_id(m.semantic_class), np.int32) for m in meshes]
    )
    world.face_attributes["instance"] = np.concatenate(
        [np.full(len(m.faces), m.instance_id, np.int32) for m in meshes]
    )
    path.write_bytes(trimesh.exchange.ply.export_ply(world, encoding="binary"))


def _write_glb(path: Path, meshes: list[InstanceMesh]) -> None:
    """A glTF binary with one node per instance, its extras the class and the instance id."""
    scene = trimesh.Scene()
    for m in meshes:
        mesh = trimesh.Trimesh(m.vertices, m.faces, vertex_colors=m.colors, process=False)
        extras = {
            "semantic_class": m.semantic_class,
            "semantic_id": class_id(m.semantic_class),
            "instance_id": m.instance_id,
        }
        scene.add_geometry(mesh, node_name=m.name, geom_name=m.name, metadata=extras)
    path.write_bytes(trimesh.exchange.gltf.export_glb(scene))
