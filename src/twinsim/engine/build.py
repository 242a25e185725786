"""SceneSpec → `mujoco.MjSpec` → compiled model, with the id maps annotations need.

Every object becomes a static body named `obj<instance_id>` holding its geoms (a mesh object
its mesh and convex parts instead: `engine/mesh_assets.py`); each robot is
built from the body its kind describes (links, joints, motors, or a robot model file attached
whole: `engine/user_model.py`), with what its sensors mount on its mount link (sites with
MuJoCo sensors, cameras); with several robots every robot name in MuJoCo starts with the
robot's stream prefix (`b.cam0`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import mujoco
import numpy as np

from twinsim.engine.actors import (
    actor_geom_instances,
    add_actors,
    flying_body_name,
    person_body_name,
)
from twinsim.engine.lamps import add_lamp_pool
from twinsim.engine.look import Look
from twinsim.engine.mesh_assets import add_mesh_assets, add_mesh_object
from twinsim.engine.meshes import textured_box
from twinsim.engine.primitives import GEOM_TYPES, add_primitive
from twinsim.engine.round_meshes import add_round_meshes
from twinsim.engine.terrain import add_terrain
from twinsim.engine.user_model import attach_model
from twinsim.geometry import geoms_box, quat_wxyz_to_matrix
from twinsim.model.body import BodySpec, LinkSpec
from twinsim.model.mounts import CameraMount, Mount
from twinsim.model.scene import ObjectSpec, RobotSpec, SceneSpec, TerrainSpec
from twinsim.model.sections import RenderConfig
from twinsim.registries import ROBOTS, SENSORS
from twinsim.scene.assets.posed import mesh_data
from twinsim.scene.terrain import terrain_mesh
from twinsim.scene.textures import make_texture
from twinsim.scene.vocabulary import class_id

ROBOT_LAMP = "robot_lamp"
UV_SUFFIX = "__uv"  # the variant of a textured material used by meshes with their own UVs
_SENSOR_TYPES = {
    "gyro": mujoco.mjtSensor.mjSENS_GYRO,
    "accelerometer": mujoco.mjtSensor.mjSENS_ACCELEROMETER,
}
_JOINT_TYPES = {"slide": mujoco.mjtJoint.mjJNT_SLIDE, "hinge": mujoco.mjtJoint.mjJNT_HINGE}


@dataclass(frozen=True)
class IdMaps:
    """Lookups from MuJoCo ids to twinsim's instance and semantic ids."""

    geom_instance: np.ndarray  # (ngeom,) uint16, 0 for geoms that are not instances
    instance_class: np.ndarray  # (max_instance + 1,) uint8 semantic class id per instance id
    instance_body: dict[int, int]  # instance id → MuJoCo body id
    local_box_center: dict[int, np.ndarray]  # instance id → OBB centre in the object frame
    local_box_half: dict[int, np.ndarray]  # instance id → OBB half extents in the object frame
    dynamic_geoms: dict[int, np.ndarray]  # moving instance → its geom ids (boxes fit each frame)
    dynamic_frame: dict[
        int, tuple[int, bool]
    ]  # moving instance → (body orienting its box, yaw only)
    instance_dynamic: np.ndarray  # (max_instance + 1,) bool
    robot_geoms: dict[str, np.ndarray]  # robot name → its geom ids (hidden from its own cameras)


def _add_assets(spec: mujoco.MjSpec, scene: SceneSpec) -> None:
    for tex in scene.textures:
        image = make_texture(tex)
        t = spec.add_texture()
        t.name = tex.name
        t.type = mujoco.mjtTexture.mjTEXTURE_2D
        t.height, t.width, t.nchannel = image.shape
        t.data = np.ascontiguousarray(image).tobytes()
    for mat in scene.materials:
        m = spec.add_material()
        m.name = mat.name
        if mat.texture:
            m.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = mat.texture
        m.rgba = mat.rgba
        m.specular, m.shininess, m.reflectance = mat.specular, mat.shininess, mat.reflectance
        m.texrepeat = mat.texrepeat
        m.texuniform = mat.texuniform
        if mat.texture:
            uv = spec.add_material()
            uv.name = mat.name + UV_SUFFIX
            uv.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = mat.texture
            uv.rgba = mat.rgba
            uv.specular, uv.shininess, uv.reflectance = mat.specular, mat.shininess, mat.reflectance
            uv.texrepeat, uv.texuniform = (1.0, 1.0), False


def _add_objects(spec: mujoco.MjSpec, scene: SceneSpec) -> None:
    textured = {m.name: m for m in scene.materials if m.texture}
    meshes = add_mesh_assets(spec, scene)
    for obj in scene.objects:
        body = spec.worldbody.add_body()
        body.name = f"obj{obj.instance_id}"
        body.pos, body.quat = obj.pos, obj.quat
        if obj.mesh is not None:
            add_mesh_object(body, obj, scene.mesh_asset(obj.mesh), meshes[obj.mesh])
            continue
        R_obj = quat_wxyz_to_matrix(obj.quat)
        for j, g in enumerate(obj.geoms):
            name = f"obj{obj.instance_id}_g{j}"
            mat = textured.get(g.material)
            if g.type != "box" or mat is None:
                add_primitive(body, name, g)
                continue
            R = R_obj @ quat_wxyz_to_matrix(g.quat)
            p = R_obj @ np.asarray(g.pos) + np.asarray(obj.pos)
            verts, uvs, faces = textured_box(np.asarray(g.size), R, p, mat.texrepeat)
            mesh = spec.add_mesh()
            mesh.name = name
            mesh.uservert = verts.ravel().tolist()
            mesh.usertexcoord = uvs.ravel().tolist()
            mesh.userface = faces.ravel().tolist()
            mesh.userfacetexcoord = faces.ravel().tolist()
            geom = body.add_geom()
            geom.name = name
            geom.pos, geom.quat = g.pos, g.quat
            geom.type = mujoco.mjtGeom.mjGEOM_MESH
            geom.meshname = mesh.name
            geom.material = g.material + UV_SUFFIX
        terrain = scene.terrain
        if terrain is not None and terrain.instance_id == obj.instance_id:
            material = next(m for m in scene.materials if m.name == terrain.material)
            add_terrain(spec, body, obj, terrain, material, terrain.material + UV_SUFFIX)


def _add_lights(spec: mujoco.MjSpec, scene: SceneSpec) -> None:
    for light in scene.lights:
        lt = spec.worldbody.add_light()
        lt.name = light.name
        lt.pos, lt.dir = light.pos, light.dir
        lt.diffuse, lt.specular, lt.ambient = light.diffuse, light.specular, light.ambient
        lt.castshadow = light.castshadow
        lt.attenuation = light.attenuation
        lt.cutoff, lt.exponent = light.cutoff_deg, light.exponent
        if light.directional:
            lt.type = mujoco.mjtLightType.mjLIGHT_DIRECTIONAL


def add_link(
    spec: mujoco.MjSpec, parent: mujoco.MjsBody, link: LinkSpec, hinge_unit: str = "rad"
) -> mujoco.MjsBody:
    """A robot link: a body with explicit inertia about its centre of mass (always set: MuJoCo
    would put an unset one at the body's position in its parent), its joints and its
    (massless) geoms; hinge ranges in `hinge_unit` (`SceneSpec.hinge_range_unit`: "rad" is
    converted to the degrees the world's compiler reads)."""
    body = parent.add_body()
    body.name = link.name
    body.pos, body.quat = link.pos, link.quat
    body.mass = link.mass_kg
    body.inertia = link.inertia
    body.ipos = link.centre_of_mass
    body.explicitinertial = True
    for j in link.joints:
        joint = body.add_joint()
        joint.name = j.name
        joint.type = _JOINT_TYPES[j.type]
        joint.axis = j.axis
        joint.armature = j.armature
        if j.range is not None:
            joint.limited = mujoco.mjtLimited.mjLIMITED_TRUE
            to_degrees = j.type == "hinge" and hinge_unit == "rad"
            joint.range = np.degrees(j.range) if to_degrees else j.range
    for g in link.geoms:
        geom = body.add_geom()
        geom.name = g.name
        geom.type = GEOM_TYPES[g.type]
        geom.size = _geom_size(g.size)
        geom.pos, geom.quat = g.pos, g.quat
        geom.group = g.group
        geom.rgba = g.rgba
        geom.mass = g.mass_kg
        if g.friction is not None:
            geom.friction = g.friction
        if g.solref is not None:
            geom.solref = g.solref
        if g.solimp is not None:
            geom.solimp = g.solimp
        if g.priority:
            geom.priority = g.priority
    return body


def _geom_size(size: tuple[float, ...]) -> tuple[float, float, float]:
    return (*size, *(0.0,) * (3 - len(size)))


def _add_robot(spec: mujoco.MjSpec, scene: SceneSpec, robot: RobotSpec, look: Look) -> None:
    """A robot's links (root on the world), its motors, lamp and sensor mounts; with several
    robots, every name starts with the robot's stream prefix."""
    body_spec = robot_body(scene, robot)
    links: dict[str, mujoco.MjsBody] = {}
    for link in body_spec.links:
        parent = spec.worldbody if link.parent is None else links[link.parent]
        links[link.name] = add_link(spec, parent, link, scene.hinge_range_unit)
    if body_spec.model is not None:
        links[body_spec.mount] = attach_model(spec, body_spec.model, body_spec.mount)
    for a in body_spec.actuators:
        act = spec.add_actuator()
        act.name = a.name
        act.target = a.joint
        act.trntype = mujoco.mjtTrn.mjTRN_JOINT
        act.set_to_motor()
    body = links[body_spec.mount]
    if look.lamp_rgb is not None:
        _add_lamp(body, scene, robot, look.lamp_rgb)
    for mount in sensor_mounts(scene, robot.name):
        if isinstance(mount, CameraMount):
            cam = body.add_camera()
            cam.name = mount.name
            cam.pos, cam.quat = mount.pos, mount.quat
            cam.fovy = mount.fovy_deg
            continue
        site = body.add_site()
        site.name = mount.name
        site.pos, site.quat = mount.pos, mount.quat
        for kind, suffix in mount.sensors:
            s = spec.add_sensor()
            s.name = f"{mount.name}_{suffix}"
            s.type = _SENSOR_TYPES[kind]
            s.objtype = mujoco.mjtObj.mjOBJ_SITE
            s.objname = mount.name


def sensor_mounts(scene: SceneSpec, robot: str | None = None) -> list[Mount]:
    """What the scene's sensors (or those of robot `robot`) need on their robots, in sensor
    order (their kinds say), named in MuJoCo with their robot's stream prefix."""
    return [
        replace(m, name=scene.stream_prefix(s.robot) + m.name)
        for s in scene.sensors
        if robot is None or s.robot == robot
        for m in SENSORS.get(s.type).mounts(s)
    ]


def camera_mounts(scene: SceneSpec) -> list[CameraMount]:
    """The MuJoCo cameras of the scene's sensors."""
    return [m for m in sensor_mounts(scene) if isinstance(m, CameraMount)]


def robot_body(scene: SceneSpec, robot: RobotSpec) -> BodySpec:
    """The body of one of the scene's robots, as its registered kind describes it, with the
    MuJoCo names of that robot (its stream prefix)."""
    return ROBOTS.get(robot.kind).body(robot).prefixed(scene.stream_prefix(robot.name))


def _add_lamp(
    body: mujoco.MjsBody, scene: SceneSpec, robot: RobotSpec, rgb: tuple[float, float, float]
) -> None:
    """A spot light carried by the robot at its first camera, aimed along the optical axis."""
    cam = next((s for s in scene.robot_sensors(robot.name) if s.type == "camera"), None)
    lamp = body.add_light()
    lamp.name = scene.stream_prefix(robot.name) + ROBOT_LAMP
    lamp.pos = cam.pos if cam else (0.0, 0.0, 0.0)
    lamp.dir = tuple(quat_wxyz_to_matrix(cam.quat)[:, 2]) if cam else (1.0, 0.0, 0.0)
    lamp.diffuse, lamp.specular, lamp.ambient = rgb, (0.1, 0.1, 0.1), (0.0, 0.0, 0.0)
    lamp.castshadow = False  # a lamp at the lens casts no shadow the lens could see
    lamp.attenuation = (1.0, 0.0, 0.08)
    lamp.cutoff, lamp.exponent = 50.0, 4.0


def build_spec(
    scene: SceneSpec, render: RenderConfig, physics_hz: int, look: Look | None = None
) -> mujoco.MjSpec:
    """The MuJoCo model specification of a scene (physics options, visuals, bodies, sensors)."""
    look = look or Look()
    spec = mujoco.MjSpec()
    spec.modelname = "twinsim"
    spec.option.timestep = 1.0 / physics_hz
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    spec.visual.quality.shadowsize = render.shadow_size
    spec.visual.quality.offsamples = render.multisamples
    spec.visual.quality.numslices = render.geom_slices
    spec.visual.quality.numstacks = render.geom_stacks
    cams = camera_mounts(scene)
    spec.visual.global_.offwidth = max([640, *(s.width for s in cams)])
    spec.visual.global_.offheight = max([480, *(s.height for s in cams)])
    spec.visual.headlight.ambient = (0.25 * look.headlight,) * 3
    spec.visual.headlight.diffuse = (0.15 * look.headlight,) * 3
    spec.visual.headlight.specular = (0.0, 0.0, 0.0)
    _add_assets(spec, scene)
    _add_objects(spec, scene)
    _add_lights(spec, scene)
    add_actors(spec, scene)
    add_lamp_pool(spec, scene)  # after the actors: vehicles' lamps glow too
    for robot in scene.robots:
        _add_robot(spec, scene, robot, look)
    return spec


def id_maps(model: mujoco.MjModel, scene: SceneSpec) -> IdMaps:
    """Map MuJoCo geoms and bodies to instance ids, and instances to classes and boxes."""
    table = scene.instance_table()
    max_id = max((row["instance_id"] for row in table), default=0)
    instance_class = np.zeros(max_id + 1, dtype=np.uint8)  # the vocabulary has < 256 classes
    instance_dynamic = np.zeros(max_id + 1, dtype=bool)
    for row in table:
        instance_class[row["instance_id"]] = class_id(row["semantic_class"])
        instance_dynamic[row["instance_id"]] = row["dynamic"]
    geom_instance = np.zeros(model.ngeom, dtype=np.uint16)
    instance_body, centers, halves = {}, {}, {}
    for obj in scene.objects:
        iid = obj.instance_id
        body = model.body(f"obj{iid}")
        instance_body[iid] = body.id
        start = int(body.geomadr[0])
        geom_instance[start : start + int(body.geomnum[0])] = iid
        centers[iid], halves[iid] = geoms_box(obj.geoms)
        if obj.mesh is not None:  # the box around the visual mesh, not its parts' boxes
            lo, hi = mesh_data(scene, obj.mesh).bounds()
            centers[iid], halves[iid] = (lo + hi) / 2, (hi - lo) / 2
        if scene.terrain is not None and scene.terrain.instance_id == iid:
            centers[iid], halves[iid] = _with_terrain(obj, scene.terrain, centers[iid], halves[iid])
    dynamic_geoms = actor_geom_instances(model, scene)
    for iid, geoms in dynamic_geoms.items():
        geom_instance[geoms] = iid
    dynamic_frame = {}
    for person in scene.people:
        pelvis = model.body(person_body_name(person, "pelvis")).id
        for iid in (person.body_instance_id, person.clothing_instance_id):
            dynamic_frame[iid] = (pelvis, True)
    for obj in scene.flying_objects:
        dynamic_frame[obj.instance_id] = (model.body(flying_body_name(obj)).id, False)
    robot_geoms = {}
    for robot in scene.robots:
        body = robot_body(scene, robot)
        geoms = np.array([model.geom(name).id for name in body.geom_names], int)
        robot_geoms[robot.name] = geoms
        if robot.instance_id is not None:
            geom_instance[geoms] = robot.instance_id
            dynamic_geoms[robot.instance_id] = geoms
            dynamic_frame[robot.instance_id] = (model.body(body.mount).id, False)
    return IdMaps(
        geom_instance,
        instance_class,
        instance_body,
        centers,
        halves,
        dynamic_geoms,
        dynamic_frame,
        instance_dynamic,
        robot_geoms,
    )


def _with_terrain(
    obj: ObjectSpec, terrain: TerrainSpec, center: np.ndarray, half: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The object-frame box (centre, half extents) around `center` ± `half` and the hills."""
    corners = terrain_mesh(terrain).verts
    local = (corners - np.asarray(obj.pos)) @ quat_wxyz_to_matrix(obj.quat)
    lo = np.minimum(center - half, local.min(axis=0))
    hi = np.maximum(center + half, local.max(axis=0))
    return (lo + hi) / 2, (hi - lo) / 2


def _max_scales(model: mujoco.MjModel, scene: SceneSpec) -> np.ndarray:
    """(ngeom,) the largest factor a geom's size is scaled by at run time: a flying object's
    geoms take its keyframes' scales (`engine/actors.py`), every other geom keeps its own."""
    scale = np.ones(model.ngeom)
    for obj in scene.flying_objects:
        body = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, flying_body_name(obj))
        scale[model.geom_bodyid == body] = max(1.0, *(k.scale for k in obj.keyframes))
    return scale


def compile_model(
    scene: SceneSpec, render: RenderConfig, physics_hz: int, look: Look | None = None
) -> mujoco.MjModel:
    """Compile the scene, with camera meshes of the round geoms MuJoCo would draw too coarsely
    (`round_meshes`: their sizes are known once compiled); set the clip planes from the
    cameras' configuration, and the fog."""
    look = look or Look()
    spec = build_spec(scene, render, physics_hz, look)
    model = spec.compile()
    if add_round_meshes(spec, model, _max_scales(model, scene)):
        model = spec.compile()
    cams = camera_mounts(scene)
    if cams:
        model.vis.map.znear = min(s.near_m for s in cams) / model.stat.extent
        model.vis.map.zfar = max(s.far_m for s in cams) / model.stat.extent
    if look.fog_start_m is not None:  # MuJoCo scales the fog range by the model's extent
        model.vis.map.fogstart = look.fog_start_m / model.stat.extent
        model.vis.map.fogend = look.fog_end_m / model.stat.extent
        model.vis.rgba.fog = (*look.fog_rgb, 1.0)
    return model
