"""The recorded run as one USD stage, `world.usda` (or the binary `world.usdc`), for Isaac Sim,
Omniverse, Blender or usdview: the static world as meshes with materials and semantic labels,
the scene's lights, every robot moving as its ground truth says with its cameras, and the
people and flying objects (a town's vehicles too) moving as they did in the run.

Time code `c` is the instant `c / timeCodesPerSecond` s of the sequence clock, and
timeCodesPerSecond is the ground-truth pose rate, so every `groundtruth_body` row is a whole
time code. Geometry comes from the `mesh` export's builders (`export/mesh.py`); poses are
written as doubles, exactly as recorded; nothing in the file depends on where or when it was
written, so the same sequence gives the same bytes.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from pxr import Gf, Sdf, Tf, Usd, UsdGeom, UsdLux, UsdSemantics, UsdShade, Vt

from twinsim.actors.flying import FlyingMotion
from twinsim.actors.motion import motion_for
from twinsim.export.common import (
    ExportError,
    Progress,
    T_body_sensor,
    no_progress,
    prepare_output,
)
from twinsim.export.mesh import Triangles, material_colours, primitive_triangles, world_meshes
from twinsim.geometry import matrix_to_quat_wxyz, pose_to_T
from twinsim.model.scene import LightSpec, RobotSpec, SceneSpec
from twinsim.registries import ROBOTS
from twinsim.scene.vocabulary import class_id
from twinsim.sequence.reader import SequenceReader, open_sequence

FILES = {"usda": "world.usda", "usdc": "world.usdc"}
#: the illuminance (lux) that a MuJoCo light's diffuse colour of 1 stands for
REFERENCE_LUX = 1000.0
#: the radius of the sphere light that stands for a MuJoCo point or spot light
LIGHT_RADIUS_M = 0.05
#: OpenCV's optical frame (x right, y down, z forward) to USD's camera frame (x right, y up,
#: looking down −z): a half turn about x
CV_TO_USD_CAMERA = np.diag([1.0, -1.0, -1.0, 1.0])
#: every camera's film width (USD's own default); the focal length follows from fx
APERTURE = 20.955
#: the shininess of a robot part's colour (MuJoCo's default material)
ROBOT_SHININESS = 0.5


def export_usd(
    seq: SequenceReader,
    out: Path,
    *,
    file_format: str = "usda",
    progress: Progress = no_progress,
) -> Path:
    """Write the run of `seq` (every robot of it) as one USD stage into the new folder `out`:
    `world.usda` (text) or, with `file_format="usdc"`, `world.usdc` (binary)."""
    if file_format not in FILES:
        raise ExportError(f"file_format={file_format!r} must be usda (text) or usdc (binary)")
    whole = open_sequence(seq.path, check=False)  # every robot, whichever one `seq` holds
    scene = whole.scene
    robots = [(whole.for_robot(name), scene.robot_named(name)) for name in whole.robots]
    clock = _Clock(whole.metadata["physics_hz"], robots[0][0])
    layer = Sdf.Layer.CreateAnonymous(".usda")
    stage = Usd.Stage.Open(layer)
    _stage_metadata(stage, clock)
    looks = _Looks(stage, scene)
    _static(stage, scene, looks)
    progress(1, 4)
    _lights(stage, scene.lights)
    for reader, robot in robots:
        _robot(stage, reader, robot, clock, looks)
    progress(2, 4)
    _dynamic(stage, scene, clock, looks)
    progress(3, 4)
    out = prepare_output(out)
    path = out / FILES[file_format]
    if file_format == "usda":
        path.write_bytes(layer.ExportToString().encode("utf-8"))
    else:
        layer.Export(str(path))
    progress(4, 4)
    return path


class _Clock:
    """The stage's time codes: the ground-truth pose rate's samples of the first robot."""

    def __init__(self, physics_hz: int, reader: SequenceReader) -> None:
        self.physics_hz = int(physics_hz)
        self.rate_hz = int(reader.stream_info("groundtruth_body")["rate_hz"])
        self.steps = self.steps_of(reader.table("groundtruth_body")["t_ns"])

    def steps_of(self, t_ns: np.ndarray) -> np.ndarray:
        """The physics step of each stamp (a stamp is its step's time rounded to the ns)."""
        return (np.asarray(t_ns, np.int64) * self.physics_hz + 500_000_000) // 1_000_000_000

    def codes(self, steps: np.ndarray) -> list[float]:
        """The time code of each step: whole at every step of the pose rate's grid."""
        return [float(k * self.rate_hz / self.physics_hz) for k in steps.tolist()]


def _stage_metadata(stage: Usd.Stage, clock: _Clock) -> None:
    """Z up, metres, a time code per pose sample, and `/World` (the default prim) with its
    scopes in a fixed order."""
    UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.z)
    UsdGeom.SetStageMetersPerUnit(stage, 1.0)
    stage.SetTimeCodesPerSecond(clock.rate_hz)
    stage.SetFramesPerSecond(clock.rate_hz)
    codes = clock.codes(clock.steps)
    stage.SetStartTimeCode(codes[0])
    stage.SetEndTimeCode(codes[-1])
    stage.SetDefaultPrim(UsdGeom.Xform.Define(stage, "/World").GetPrim())
    for scope in ("Looks", "Static", "Lights", "Robots", "Dynamic"):
        UsdGeom.Scope.Define(stage, f"/World/{scope}")


class _Looks:
    """A `UsdPreviewSurface` material per colour, defined under /World/Looks on first use."""

    def __init__(self, stage: Usd.Stage, scene: SceneSpec) -> None:
        self.stage = stage
        self.colours = material_colours(scene)
        self.shininess = {m.name: m.shininess for m in scene.materials}
        self._defined: dict[str, UsdShade.Material] = {}

    def robot_colour(self, rgba: tuple[float, ...]) -> str:
        """The name of the material of a robot part's colour (added on first use)."""
        u8 = np.round(255.0 * np.clip(np.asarray(rgba, float), 0.0, 1.0)).astype(np.uint8)
        name = "robot_" + u8.tobytes().hex()
        self.colours[name], self.shininess[name] = u8, ROBOT_SHININESS
        return name

    def material(self, name: str) -> UsdShade.Material:
        """The material `name`: diffuse colour (the base colour, sRGB to linear), opacity and
        a roughness from MuJoCo's shininess; metallic 0 (MuJoCo has no metalness)."""
        if name in self._defined:
            return self._defined[name]
        path = f"/World/Looks/{Tf.MakeValidIdentifier(name)}"
        material = UsdShade.Material.Define(self.stage, path)
        shader = UsdShade.Shader.Define(self.stage, f"{path}/PreviewSurface")
        shader.CreateIdAttr("UsdPreviewSurface")
        rgba = self.colours[name] / 255.0
        linear = np.where(rgba <= 0.04045, rgba / 12.92, ((rgba + 0.055) / 1.055) ** 2.4)
        shader.CreateInput("diffuseColor", Sdf.ValueTypeNames.Color3f).Set(
            Gf.Vec3f(*linear[:3].tolist())
        )
        shader.CreateInput("opacity", Sdf.ValueTypeNames.Float).Set(float(rgba[3]))
        shader.CreateInput("roughness", Sdf.ValueTypeNames.Float).Set(
            _roughness(self.shininess[name])
        )
        shader.CreateInput("metallic", Sdf.ValueTypeNames.Float).Set(0.0)
        material.CreateSurfaceOutput().ConnectToSource(shader.ConnectableAPI(), "surface")
        self._defined[name] = material
        return material


def _roughness(shininess: float) -> float:
    """UsdPreviewSurface roughness of MuJoCo's shininess s (a Phong exponent n = 128 s): the
    microfacet width α = √(2 / (n + 2)) of the same highlight, roughness = √α."""
    return (2.0 / (128.0 * shininess + 2.0)) ** 0.25


def _static(stage: Usd.Stage, scene: SceneSpec, looks: _Looks) -> None:
    """Every object of the scene as a mesh in world coordinates, /World/Static/<class>_<id>."""
    for mesh in world_meshes(scene, looks.colours):
        name = Tf.MakeValidIdentifier(mesh.name)
        prim = _mesh(stage, f"/World/Static/{name}", mesh, looks)
        _label(prim, mesh.semantic_class, mesh.instance_id)


def _mesh(stage: Usd.Stage, path: str, triangles: Triangles, looks: _Looks) -> Usd.Prim:
    """A triangle mesh (float32 points, no subdivision) with its faces' materials bound: one
    material for the whole mesh, or a `GeomSubset` of faces per material."""
    mesh = UsdGeom.Mesh.Define(stage, path)
    points = np.ascontiguousarray(triangles.vertices, np.float32)
    mesh.CreatePointsAttr(Vt.Vec3fArray.FromNumpy(points))
    mesh.CreateFaceVertexCountsAttr(Vt.IntArray.FromNumpy(np.full(len(triangles.faces), 3, "i4")))
    indices = np.ascontiguousarray(triangles.faces.ravel(), np.int32)
    mesh.CreateFaceVertexIndicesAttr(Vt.IntArray.FromNumpy(indices))
    mesh.CreateSubdivisionSchemeAttr(UsdGeom.Tokens.none)
    mesh.CreateExtentAttr(Vt.Vec3fArray.FromNumpy(np.stack([points.min(0), points.max(0)])))
    binding = UsdShade.MaterialBindingAPI.Apply(mesh.GetPrim())
    names = list(dict.fromkeys(triangles.face_material.tolist()))
    if len(names) == 1:
        binding.Bind(looks.material(names[0]))
        return mesh.GetPrim()
    for name in names:
        faces = np.flatnonzero(triangles.face_material == name).astype(np.int32)
        subset = binding.CreateMaterialBindSubset(
            Tf.MakeValidIdentifier(name), Vt.IntArray.FromNumpy(faces), UsdGeom.Tokens.face
        )
        UsdShade.MaterialBindingAPI.Apply(subset.GetPrim()).Bind(looks.material(name))
    return mesh.GetPrim()


def _label(prim: Usd.Prim, semantic_class: str, instance_id: int) -> None:
    """The instance's class (`SemanticsLabelsAPI` taxonomy `class`, as Isaac Sim 5 reads it,
    and `twinsim:semanticClass`, `twinsim:semanticId`) and its `twinsim:instanceId`."""
    UsdSemantics.LabelsAPI.Apply(prim, "class").CreateLabelsAttr().Set([semantic_class])
    for name, kind, value in (
        ("twinsim:semanticClass", Sdf.ValueTypeNames.String, semantic_class),
        ("twinsim:semanticId", Sdf.ValueTypeNames.Int, class_id(semantic_class)),
        ("twinsim:instanceId", Sdf.ValueTypeNames.Int, int(instance_id)),
    ):
        prim.CreateAttribute(name, kind, custom=True).Set(value)


def _lights(stage: Usd.Stage, lights: tuple[LightSpec, ...]) -> None:
    """Directional lights as `DistantLight`s, the others as small `SphereLight`s (a spot's cone
    by `ShapingAPI`), and the lights' summed ambient as a `DomeLight`: each gives the
    illuminance its diffuse colour stands for (`REFERENCE_LUX` per unit)."""
    for light in lights:
        path = f"/World/Lights/{Tf.MakeValidIdentifier(light.name)}"
        diffuse = np.asarray(light.diffuse, float)
        peak = float(diffuse.max())
        lux = REFERENCE_LUX * peak
        if light.directional:
            usd_light = UsdLux.DistantLight.Define(stage, path)
            usd_light.CreateIntensityAttr(lux)  # normalized: illuminance in lux
        else:
            usd_light = UsdLux.SphereLight.Define(stage, path)
            usd_light.CreateRadiusAttr(LIGHT_RADIUS_M)
            usd_light.CreateIntensityAttr(_sphere_intensity(light, lux))
            if light.cutoff_deg < 90.0:
                shaping = UsdLux.ShapingAPI.Apply(usd_light.GetPrim())
                shaping.CreateShapingConeAngleAttr(float(light.cutoff_deg))
                shaping.CreateShapingFocusAttr(float(light.exponent))
        usd_light.CreateNormalizeAttr(True)
        colour = diffuse / peak if peak > 0.0 else np.ones(3)
        usd_light.CreateColorAttr(Gf.Vec3f(*colour.tolist()))
        UsdLux.ShadowAPI.Apply(usd_light.GetPrim()).CreateShadowEnableAttr(light.castshadow)
        T = np.eye(4)
        T[:3, :3] = _looking_along(np.asarray(light.dir, float))
        T[:3, 3] = light.pos
        _place(usd_light, T)
    ambient = sum((np.asarray(light.ambient, float) for light in lights), np.zeros(3))
    if ambient.max() > 0.0:
        dome = UsdLux.DomeLight.Define(stage, "/World/Lights/ambient")
        # a uniform sky of radiance L lights an open surface with π L
        dome.CreateIntensityAttr(REFERENCE_LUX * float(ambient.max()) / math.pi)
        dome.CreateColorAttr(Gf.Vec3f(*(ambient / ambient.max()).tolist()))


def _sphere_intensity(light: LightSpec, lux: float) -> float:
    """The normalized sphere light's intensity giving `lux` (times MuJoCo's attenuation) at
    its reference distance d, its height above the floor (at least 1 m): a normalized sphere
    light of intensity I lights a surface facing it at distance d with I / (4 d²)."""
    d = max(float(light.pos[2]), 1.0)
    a0, a1, a2 = light.attenuation
    return 4.0 * d * d * lux / (a0 + a1 * d + a2 * d * d)


def _looking_along(direction: np.ndarray) -> np.ndarray:
    """A rotation whose −z axis points along `direction` (UsdLux lights shine down −z)."""
    z = -direction / np.linalg.norm(direction)
    helper = np.array([1.0, 0.0, 0.0]) if abs(z[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    y = np.cross(z, helper)
    y /= np.linalg.norm(y)
    return np.column_stack([np.cross(y, z), y, z])


def _place(xformable: UsdGeom.Xformable, T: np.ndarray) -> None:
    """A fixed pose as translate and orient ops (doubles)."""
    xformable.AddTranslateOp(UsdGeom.XformOp.PrecisionDouble).Set(Gf.Vec3d(*T[:3, 3].tolist()))
    q = np.asarray(matrix_to_quat_wxyz(T[:3, :3])) + 0.0  # no −0 in the file
    xformable.AddOrientOp(UsdGeom.XformOp.PrecisionDouble).Set(Gf.Quatd(*q.tolist()))


def _animate(
    xformable: UsdGeom.Xformable,
    codes: list[float],
    positions: np.ndarray,
    quats_wxyz: np.ndarray,
    scales: np.ndarray | None = None,
) -> None:
    """Time-sampled translate, orient (and uniform scale) ops, one sample per time code."""
    q = np.asarray(quats_wxyz, float).copy()
    flips = np.cumsum(np.einsum("ij,ij->i", q[1:], q[:-1]) < 0.0) % 2  # no sign jumps, so
    q[1:][flips == 1] *= -1.0  # every reader interpolates the short way
    ops = [
        (xformable.AddTranslateOp(UsdGeom.XformOp.PrecisionDouble), Gf.Vec3d, positions),
        (xformable.AddOrientOp(UsdGeom.XformOp.PrecisionDouble), Gf.Quatd, q),
    ]
    if scales is not None:
        uniform = np.repeat(np.asarray(scales, float)[:, None], 3, axis=1)
        ops.append((xformable.AddScaleOp(UsdGeom.XformOp.PrecisionDouble), Gf.Vec3d, uniform))
    layer = xformable.GetPrim().GetStage().GetEditTarget().GetLayer()
    with Sdf.ChangeBlock():
        for op, kind, values in ops:
            path = op.GetAttr().GetPath()
            for code, value in zip(codes, np.asarray(values, float).tolist(), strict=True):
                layer.SetTimeSample(path, code, kind(*value))


def _robot(
    stage: Usd.Stage, reader: SequenceReader, robot: RobotSpec, clock: _Clock, looks: _Looks
) -> None:
    """/World/Robots/<robot>: the body frame at every `groundtruth_body` row, its body's shapes,
    a `Camera` per camera and an Xform per other sensor at its mounting."""
    path = f"/World/Robots/{Tf.MakeValidIdentifier(robot.name)}"
    xform = UsdGeom.Xform.Define(stage, path)
    xform.GetPrim().CreateAttribute(
        "twinsim:robotKind", Sdf.ValueTypeNames.String, custom=True
    ).Set(robot.kind)
    table = reader.table("groundtruth_body")
    positions = np.column_stack([table[c] for c in ("x", "y", "z")])
    quats = np.column_stack([table[c] for c in ("qw", "qx", "qy", "qz")])
    _animate(xform, clock.codes(clock.steps_of(table["t_ns"])), positions, quats)
    body = _robot_triangles(robot, looks)
    if body is not None:
        prim = _mesh(stage, f"{path}/body", body, looks)
        if robot.instance_id is not None:
            _label(prim, "robot", robot.instance_id)
    for stream in reader.streams:
        info = reader.stream_info(stream)
        if "T_body_sensor" not in info:
            continue
        name = f"{path}/{Tf.MakeValidIdentifier(stream)}"
        if info.get("type") == "camera":
            camera = UsdGeom.Camera.Define(stage, name)
            _lens(camera, info)
            _place(camera, T_body_sensor(reader, stream) @ CV_TO_USD_CAMERA)
        else:
            sensor = UsdGeom.Xform.Define(stage, name)
            _place(sensor, T_body_sensor(reader, stream))
        stage.GetPrimAtPath(name).CreateAttribute(
            "twinsim:sensorType", Sdf.ValueTypeNames.String, custom=True
        ).Set(str(info.get("type")))


def _lens(camera: UsdGeom.Camera, info: dict) -> None:
    """The pinhole `K` of a W × H image as USD's film back: aperture `APERTURE` wide, focal
    length fx in the same units, the principal point as aperture offsets, clipping range."""
    K = np.asarray(info["K"], float).reshape(3, 3)
    width, height = int(info["width"]), int(info["height"])
    fx, fy, cx, cy = K[0, 0], K[1, 1], K[0, 2], K[1, 2]
    unit = APERTURE / width  # film units per pixel along x
    camera.CreateProjectionAttr(UsdGeom.Tokens.perspective)
    camera.CreateFocalLengthAttr(float(fx * unit))
    camera.CreateHorizontalApertureAttr(float(width * unit))
    camera.CreateVerticalApertureAttr(float(height * unit * fx / fy))
    # pixel centres are at 0..W-1 (OpenCV), so the image's middle is at (W - 1) / 2
    camera.CreateHorizontalApertureOffsetAttr(float(((width - 1) / 2 - cx) * unit))
    camera.CreateVerticalApertureOffsetAttr(float((cy - (height - 1) / 2) * unit * fx / fy))
    near, far = info.get("near_m"), info.get("far_m")
    if near is not None and far is not None:
        camera.CreateClippingRangeAttr(Gf.Vec2f(float(near), float(far)))


def _robot_triangles(robot: RobotSpec, looks: _Looks) -> Triangles | None:
    """The shapes of the link the body frame is (the sensors' mount) and of the links below
    it, at their joints' zero (a joint's motion is not exported); None without shapes."""
    body = ROBOTS.get(robot.kind).body(robot)
    frames = {body.mount: np.eye(4)}
    grew = True
    while grew:  # each link below the mount, after its parent
        grew = False
        for link in body.links:
            if link.name not in frames and link.parent in frames:
                frames[link.name] = frames[link.parent] @ pose_to_T(link.pos, link.quat)
                grew = True
    parts = [
        primitive_triangles(g, frames[link.name], looks.colours, looks.robot_colour(g.rgba))
        for link in body.links
        if link.name in frames
        for g in link.geoms
    ]
    return Triangles.join(parts) if parts else None


def _dynamic(stage: Usd.Stage, scene: SceneSpec, clock: _Clock, looks: _Looks) -> None:
    """People as /World/Dynamic/person_<body id> with an Xform per body part (its skin and
    clothing meshes), flying objects and vehicles as /World/Dynamic/<class>_<id>, each posed
    at every time code as the run posed them (at step k, time k / physics_hz)."""
    codes = clock.codes(clock.steps)
    t_s = clock.steps / clock.physics_hz
    for person in scene.people:
        path = f"/World/Dynamic/person_{person.body_instance_id}"
        xform = UsdGeom.Xform.Define(stage, path)
        _label(xform.GetPrim(), "person", person.body_instance_id)
        motion = motion_for(person)
        positions, quats = motion.part_pos_quat(t_s)
        for j, part in enumerate(motion.model.parts):
            part_path = f"{path}/{part.name}"
            _animate(UsdGeom.Xform.Define(stage, part_path), codes, positions[:, j], quats[:, j])
            for layer, iid, cls in (
                ("skin", person.body_instance_id, "person"),
                ("clothing", person.clothing_instance_id, "clothing"),
            ):
                shapes = [
                    primitive_triangles(g, np.eye(4), looks.colours, g.material)
                    for g, own in zip(part.geoms, part.layers, strict=True)
                    if own == layer
                ]
                if shapes:
                    prim = _mesh(stage, f"{part_path}/{layer}", Triangles.join(shapes), looks)
                    _label(prim, cls, iid)
    for obj in scene.flying_objects:
        name = Tf.MakeValidIdentifier(f"{obj.semantic_class}_{obj.instance_id}")
        path = f"/World/Dynamic/{name}"
        xform = UsdGeom.Xform.Define(stage, path)
        _label(xform.GetPrim(), obj.semantic_class, obj.instance_id)
        motion = FlyingMotion(obj)
        poses = [motion.pose(float(t)) for t in t_s]
        positions = np.array([p for p, _, _ in poses])
        quats = np.array([matrix_to_quat_wxyz(R) for _, R, _ in poses])
        _animate(xform, codes, positions, quats, np.array([s for _, _, s in poses]))
        parts = [primitive_triangles(g, np.eye(4), looks.colours, g.material) for g in obj.geoms]
        prim = _mesh(stage, f"{path}/geometry", Triangles.join(parts), looks)
        _label(prim, obj.semantic_class, obj.instance_id)
