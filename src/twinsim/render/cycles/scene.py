"""A Blender scene kept in step with a running twinsim `World`, rendered with Cycles.

Every geom a MuJoCo camera can show (groups 0–2, and the robots' parts) is one Blender object
with the mesh MuJoCo builds for it (`geometry`), its material (`materials`) and its instance
id as the object index. A render reads an `Instant` of the world (every object's pose, with
a flying object's current scale, the lights, the camera) and poses the scene to it; a
shuttered camera gives several instants across its exposure, which become keyframes that
Cycles' own motion blur (and rolling shutter) integrates over. A camera hides its own robot,
as MuJoCo's do. Outdoor worlds (with a road network) get a sky, a world with fog a volume
(`atmosphere`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from twinsim.engine.round_meshes import round_mesh_table
from twinsim.model.roads import VEHICLE_LAMP_MATERIALS
from twinsim.render.cycles.atmosphere import world_shader
from twinsim.render.cycles.blender import import_bpy, quiet
from twinsim.render.cycles.camera import apply_camera, blender_camera, blender_matrix_world
from twinsim.render.cycles.geometry import geom_mesh
from twinsim.render.cycles.lights import Lights
from twinsim.render.cycles.materials import Materials, material_key
from twinsim.render.cycles.passes import CyclesPasses, add_pass_outputs, read_passes
from twinsim.render.cycles.settings import CyclesSettings

_SHOWN_GROUPS = (0, 1, 2)  # MuJoCo's default visible geom groups


@dataclass(frozen=True)
class Instant:
    """Where everything a render shows is at one instant: each shown geom's world matrix
    (its actor's scale included), the lights, and the camera's OpenCV pose."""

    geom_matrix: np.ndarray  # (n, 4, 4)
    light_xpos: np.ndarray  # (nlight, 3)
    light_xdir: np.ndarray  # (nlight, 3)
    light_diffuse: np.ndarray  # (nlight, 3)
    headlight_diffuse: np.ndarray  # (3,)
    T_world_cam: np.ndarray  # (4, 4)


def shown_geoms(world) -> np.ndarray:
    """The geoms a Cycles scene shows: MuJoCo's visible groups and every robot's parts."""
    model = world.model
    every_robot = set().union(*(set(g.tolist()) for g in world.maps.robot_geoms.values()))
    return np.array(
        [
            g
            for g in range(model.ngeom)
            if int(model.geom_group[g]) in _SHOWN_GROUPS or g in every_robot
        ],
        dtype=int,
    )


class WorldPoser:
    """Reads `Instant`s of a running world (no Blender needed: a render pool's main process
    uses it while its workers hold the Blender scenes)."""

    def __init__(self, world) -> None:
        self._world = world
        self.geoms = shown_geoms(world)
        self._built_size = np.array(world.model.geom_size[self.geoms], float)

    def instant(self, data=None, T_world_cam: np.ndarray | None = None) -> Instant:
        """The world's state now (or `data`, a state `World.posed_at` gives) as an `Instant`,
        with the camera at `T_world_cam` (identity if not given)."""
        world = self._world
        data = world.data if data is None else data
        model, g = world.model, self.geoms
        T = np.tile(np.eye(4), (len(g), 1, 1))
        T[:, :3, :3] = np.asarray(data.geom_xmat[g]).reshape(-1, 3, 3)
        T[:, :3, 3] = data.geom_xpos[g]
        # a flying object's scale lives in its geom sizes (the mesh has the built size)
        now = np.asarray(model.geom_size[g], float)
        built = self._built_size
        scale = np.where(built > 0, now / np.where(built > 0, built, 1.0), 1.0).max(axis=1)
        T[:, :3, :3] *= scale[:, None, None]
        return Instant(
            geom_matrix=T,
            light_xpos=np.array(data.light_xpos, float),
            light_xdir=np.array(data.light_xdir, float),
            light_diffuse=np.array(model.light_diffuse, float),
            headlight_diffuse=np.array(model.vis.headlight.diffuse, float),
            T_world_cam=np.eye(4) if T_world_cam is None else np.asarray(T_world_cam, float),
        )


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
        self._robot_geoms = {n: set(g.tolist()) for n, g in world.maps.robot_geoms.items()}
        self.poser = WorldPoser(world)
        self._geoms = self.poser.geoms
        self._lights = Lights(bpy, model, scene.collection, world.lamps, self._headlamps(world))
        outdoor = world.scene.roads is not None
        ambient = self._lights.ambient()
        materials = Materials(bpy, model, world.scene, 0.0 if outdoor else ambient, settings.bump)
        meshes: dict[tuple, object] = {}
        self._objects = []
        camera_meshes, _ = round_mesh_table(model)
        for g in self._geoms.tolist():
            key = (int(model.geom_type[g]), tuple(model.geom_size[g]), int(model.geom_dataid[g]))
            key += (int(camera_meshes[g]),)
            if key not in meshes:
                meshes[key] = _blender_mesh(bpy, f"geom{g}", geom_mesh(model, g, camera_meshes))
            mesh = meshes[key]
            obj = bpy.data.objects.new(f"geom{g}", mesh)
            obj.material_slots[0].link = "OBJECT"
            has_uvs = len(mesh.uv_layers) > 0
            obj.material_slots[0].material = materials.get(material_key(model, g), has_uvs)
            obj.pass_index = int(world.maps.geom_instance[g])
            obj.rotation_mode = "QUATERNION"
            scene.collection.objects.link(obj)
            self._objects.append(obj)
        scene.world = world_shader(bpy, ambient, outdoor, world.look)
        self._camera = bpy.data.objects.new("camera", bpy.data.cameras.new("camera"))
        self._camera.rotation_mode = "QUATERNION"
        scene.collection.objects.link(self._camera)
        scene.camera = self._camera
        add_pass_outputs(bpy, scene, self._workdir)

    def _headlamps(self, world) -> np.ndarray | None:
        """Where among the shown geoms the vehicles' headlamps are, in a town whose lamps are
        on (None by day and indoors)."""
        if world.lamps is None:
            return None
        model = world.model
        head = [i for i in range(model.nmat) if model.material(i).name == VEHICLE_LAMP_MATERIALS[0]]
        return np.flatnonzero(np.isin(model.geom_matid[self._geoms], head))

    def instant(self, data=None, T_world_cam: np.ndarray | None = None) -> Instant:
        """The world's state now (or in `data`) as an `Instant` (`WorldPoser.instant`)."""
        return self.poser.instant(data, T_world_cam)

    def use_threads(self, threads: int) -> None:
        """Render on `threads` CPU threads (0: as many as the machine has)."""
        render = self._scene.render
        render.threads_mode = "FIXED" if threads > 0 else "AUTO"
        if threads > 0:
            render.threads = threads

    def render(
        self,
        T_world_cam: np.ndarray,
        robot: str,
        K: np.ndarray,
        size: tuple[int, int],
        clip: tuple[float, float],
        motion: list[Instant] | None = None,
        rolling_duration: float | None = None,
    ) -> CyclesPasses:
        """Render from a camera of robot `robot` at `T_world_cam` (OpenCV optical frame) with
        intrinsics `K`, `size` (width, height) pixels and near and far planes `clip` (m), the
        robot's own parts hidden: the world as it is now, or, with `motion` (instants evenly
        spaced across the shutter, oldest first, the last one now), motion-blurred by Cycles'
        shutter over them; `rolling_duration` (a row's share of the shutter) adds Cycles'
        rolling shutter, top row first."""
        own = self._robot_geoms.get(robot, set())
        for g, obj in zip(self._geoms.tolist(), self._objects, strict=True):
            obj.hide_render = g in own
        width, height = size
        apply_camera(self._bpy, self._camera, blender_camera(K, width, height), T_world_cam, clip)
        now = self.instant() if motion is None else motion[-1]
        self._lights.update(now, blender_matrix_world(T_world_cam))
        if motion is None or len(motion) < 2:
            self._pose(now, T_world_cam)
            return self._render(width, height)
        keyed = self._animate(motion)
        scene = self._scene
        scene.render.use_motion_blur = True
        scene.render.motion_blur_position = "END"
        scene.render.motion_blur_shutter = float(len(motion) - 1)
        if rolling_duration is not None:
            scene.cycles.rolling_shutter_type = "TOP"
            scene.cycles.rolling_shutter_duration = float(rolling_duration)
        try:
            scene.frame_set(len(motion) - 1)
            return self._render(width, height)
        finally:
            for obj in keyed:
                obj.animation_data_clear()
            scene.render.use_motion_blur = False
            scene.cycles.rolling_shutter_type = "NONE"
            scene.frame_set(0)

    def _render(self, width: int, height: int) -> CyclesPasses:
        with quiet():
            self._bpy.ops.render.render()
        return read_passes(self._bpy, self._workdir, width, height)

    def _pose(self, instant: Instant, T_world_cam: np.ndarray) -> None:
        """Every object and the camera at `instant` (no animation)."""
        import mathutils

        for obj, T in zip(self._objects, instant.geom_matrix, strict=True):
            obj.matrix_world = mathutils.Matrix(T.tolist())
        self._camera.matrix_world = mathutils.Matrix(blender_matrix_world(T_world_cam).tolist())

    def _animate(self, motion: list[Instant]) -> list:
        """Keyframes (linear, frame i = instant i) for every object that moves and the camera;
        the keyed objects."""
        import mathutils

        bpy = self._bpy
        bpy.context.preferences.edit.keyframe_new_interpolation_type = "LINEAR"
        stack = np.stack([m.geom_matrix for m in motion])  # (frames, n, 4, 4)
        moving = np.flatnonzero(np.any(np.abs(stack - stack[-1:]) > 1e-9, axis=(0, 2, 3)))
        tracks = [(self._objects[i], stack[:, i]) for i in moving.tolist()]
        cams = np.stack([blender_matrix_world(m.T_world_cam) for m in motion])
        tracks.append((self._camera, cams))
        steps = 1 + math.ceil(math.log2(max(len(motion) - 1, 1)))  # 2^(steps−1) ≥ intervals
        for obj, matrices in tracks:
            obj.cycles.motion_steps = steps
            previous = None
            for frame, T in enumerate(matrices):
                location, rotation, scale = mathutils.Matrix(T.tolist()).decompose()
                if previous is not None and previous.dot(rotation) < 0.0:
                    rotation.negate()  # keep keys on one hemisphere: interpolate the short way
                previous = rotation
                obj.location, obj.rotation_quaternion, obj.scale = location, rotation, scale
                for path in ("location", "rotation_quaternion", "scale"):
                    obj.keyframe_insert(path, frame=frame)
        for i in np.setdiff1d(np.arange(len(self._objects)), moving).tolist():
            self._objects[i].matrix_world = mathutils.Matrix(stack[-1, i].tolist())
        return [obj for obj, _ in tracks]


def _configure(scene, settings: CyclesSettings) -> None:
    """Cycles on the CPU with a fixed seed, the asked samples and denoiser, no motion blur
    until a shuttered frame asks for it."""
    scene.render.engine = "CYCLES"
    cycles = scene.cycles
    cycles.device = "CPU"
    cycles.samples = settings.samples
    cycles.use_adaptive_sampling = settings.adaptive_threshold > 0.0
    if cycles.use_adaptive_sampling:  # the same seed and threshold stop each pixel alike
        cycles.adaptive_threshold = settings.adaptive_threshold
    cycles.seed = settings.seed
    cycles.use_animated_seed = False
    cycles.use_denoising = settings.denoise
    if settings.denoise:
        cycles.denoiser = "OPENIMAGEDENOISE"
    scene.render.use_motion_blur = False
    scene.render.film_transparent = False
    scene.render.fps, scene.render.fps_base = 1, 1.0  # frames are shutter sub-instants
    scene.view_settings.view_transform = "Standard"


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
