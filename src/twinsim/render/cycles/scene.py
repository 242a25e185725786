"""A Blender scene kept in step with a running twinsim `World`, rendered with Cycles.

Every geom a MuJoCo camera can show (groups 0–2, and the robots' parts) is one Blender object
with the mesh MuJoCo builds for it (`geometry`), its material (`materials`) and its instance
id as the object index; before each render every object takes its geom's current pose from
MuJoCo (people, flying objects and robots move), the lights theirs (`lights`), and the camera
the recorded pose and intrinsics (`camera`). A camera hides its own robot, as MuJoCo's do.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from twinsim.render.cycles.blender import import_bpy, quiet
from twinsim.render.cycles.camera import apply_camera, blender_camera, blender_matrix_world
from twinsim.render.cycles.geometry import geom_mesh
from twinsim.render.cycles.lights import Lights
from twinsim.render.cycles.materials import Materials, material_key
from twinsim.render.cycles.passes import CyclesPasses, add_pass_outputs, read_passes
from twinsim.render.cycles.settings import CyclesSettings

_SHOWN_GROUPS = (0, 1, 2)  # MuJoCo's default visible geom groups


class CyclesScene:
    """The world `world` (a `twinsim.engine.world.World`) as a Cycles scene; `workdir` (inside
    the output folder) receives each render's passes until they are read back."""

    def __init__(self, world, settings: CyclesSettings, workdir: Path) -> None:
        bpy = self._bpy = import_bpy()
        with quiet():  # Blender logs its devices (no CUDA here) while Cycles starts
            self._build(bpy, world, settings, workdir)

    def _build(self, bpy, world, settings: CyclesSettings, workdir: Path) -> None:
        """Create the Blender scene: settings, a mesh object per geom, lights, camera, passes."""
        bpy.ops.wm.read_factory_settings(use_empty=True)
        self._world, self._workdir = world, Path(workdir)
        self._workdir.mkdir(parents=True, exist_ok=True)
        scene = self._scene = bpy.context.scene
        _configure(scene, settings)
        model = world.model
        robot_geoms = world.maps.robot_geoms
        self._robot_geoms = {name: set(g.tolist()) for name, g in robot_geoms.items()}
        every_robot = set().union(*self._robot_geoms.values())
        self._geoms = [
            g
            for g in range(model.ngeom)
            if int(model.geom_group[g]) in _SHOWN_GROUPS or g in every_robot
        ]
        self._lights = Lights(bpy, model, scene.collection)
        materials = Materials(bpy, model, world.scene, self._lights.ambient())
        meshes: dict[tuple, object] = {}
        self._objects = []
        for g in self._geoms:
            key = (int(model.geom_type[g]), tuple(model.geom_size[g]), int(model.geom_dataid[g]))
            if key not in meshes:
                meshes[key] = _blender_mesh(bpy, f"geom{g}", geom_mesh(model, g))
            mesh = meshes[key]
            obj = bpy.data.objects.new(f"geom{g}", mesh)
            obj.material_slots[0].link = "OBJECT"
            has_uvs = len(mesh.uv_layers) > 0
            obj.material_slots[0].material = materials.get(material_key(model, g), has_uvs)
            obj.pass_index = int(world.maps.geom_instance[g])
            scene.collection.objects.link(obj)
            self._objects.append(obj)
        scene.world = _black_world(bpy)
        self._camera = bpy.data.objects.new("camera", bpy.data.cameras.new("camera"))
        scene.collection.objects.link(self._camera)
        scene.camera = self._camera
        add_pass_outputs(bpy, scene, self._workdir)

    def render(
        self,
        T_world_cam: np.ndarray,
        robot: str,
        K: np.ndarray,
        size: tuple[int, int],
        clip: tuple[float, float],
    ) -> CyclesPasses:
        """Render the world's current state from a camera of robot `robot` at `T_world_cam`
        (OpenCV optical frame) with intrinsics `K`, `size` (width, height) pixels and near and
        far planes `clip` (m); the robot's own parts are hidden."""
        import mathutils

        data = self._world.data
        own = self._robot_geoms.get(robot, set())
        for g, obj in zip(self._geoms, self._objects, strict=True):
            T = np.eye(4)
            T[:3, :3], T[:3, 3] = np.asarray(data.geom_xmat[g]).reshape(3, 3), data.geom_xpos[g]
            obj.matrix_world = mathutils.Matrix(T.tolist())
            obj.hide_render = g in own
        width, height = size
        apply_camera(self._bpy, self._camera, blender_camera(K, width, height), T_world_cam, clip)
        self._lights.update(data, blender_matrix_world(T_world_cam))
        with quiet():
            self._bpy.ops.render.render()
        return read_passes(self._bpy, self._workdir, width, height)


def _configure(scene, settings: CyclesSettings) -> None:
    """Cycles on the CPU with a fixed seed, the asked samples and denoiser, no motion blur."""
    scene.render.engine = "CYCLES"
    cycles = scene.cycles
    cycles.device = "CPU"
    cycles.samples = settings.samples
    cycles.use_adaptive_sampling = False  # every pixel takes all its samples: reproducible
    cycles.seed = settings.seed
    cycles.use_animated_seed = False
    cycles.use_denoising = settings.denoise
    if settings.denoise:
        cycles.denoiser = "OPENIMAGEDENOISE"
    scene.render.use_motion_blur = False
    scene.render.film_transparent = False
    scene.view_settings.view_transform = "Standard"


def _black_world(bpy):
    """A black world, as MuJoCo's background (the ambient light is in the materials)."""
    world = bpy.data.worlds.new("black")
    world.color = (0.0, 0.0, 0.0)
    world.node_tree.nodes["Background"].inputs["Color"].default_value = (0.0, 0.0, 0.0, 1.0)
    return world


def _blender_mesh(bpy, name: str, shape) -> object:
    """A Blender mesh of a `GeomMesh` (with its UVs, smooth-shaded if round)."""
    mesh = bpy.data.meshes.new(name)
    mesh.from_pydata(shape.verts.tolist(), [], shape.faces.tolist())
    if shape.loop_uvs is not None:
        layer = mesh.uv_layers.new(name="UVMap")
        layer.data.foreach_set("uv", np.asarray(shape.loop_uvs, np.float32).ravel())
    mesh.shade_smooth() if shape.smooth else mesh.shade_flat()
    mesh.materials.append(None)
    mesh.update()
    return mesh
