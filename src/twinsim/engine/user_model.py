"""A user's robot file (MJCF or URDF) through MuJoCo's own compiler: read it with the files it
references, describe what it holds (bodies, sites, joints, actuators, geoms, extent) so a robot
kind can validate names and plan, and attach it into the world's `MjSpec`.

The file is always rebuilt from its recorded text (`ModelFileSpec`): its meshes and textures
come from the embedded copies, never from disk, so a replay does not need the file any more.
Unnamed geoms and joints get names here (`geom<i>`, `joint<i>`), the same on every build.
`mujoco` is imported lazily, after the GL backend is chosen: robot kinds call `read_model_file`
and `describe_model` while a run is planned, before the loop picks its renderer.
"""

from __future__ import annotations

import base64
import hashlib
import posixpath
import sys
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

import numpy as np

from twinsim.errors import ConfigError
from twinsim.model.base import ROBOT_GEOM_GROUP
from twinsim.model.body import AttachedModelSpec, JointSpec, ModelAssetSpec, ModelFileSpec

if TYPE_CHECKING:
    import mujoco

#: the spec element lists whose `file` MuJoCo reads, and the compiler folder each is under
#: the largest robot file, or file it references, that is read and embedded in scene.json
MAX_FILE_BYTES = 64 * 2**20
_ASSET_LISTS = (("meshes", "meshdir"), ("hfields", "meshdir"), ("skins", "meshdir"))
_TEXTURES = ("textures", "texturedir")


class UserModelError(ConfigError):
    """A robot file is missing, does not compile, or names something it does not have."""


@dataclass(frozen=True)
class SiteInfo:
    """A site of the file: its body and its pose in that body's frame."""

    body: str
    pos: tuple[float, float, float]
    quat: tuple[float, float, float, float]


@dataclass(frozen=True)
class ActuatorInfo:
    """An actuator of the file on a joint: `type` motor (ctrl · gain is the joint's force),
    position (ctrl is gear × the target) or velocity (ctrl is gear × the target rate)."""

    name: str
    joint: str
    type: str
    gear: float
    gain: float
    ctrlrange: tuple[float, float] | None


@dataclass(frozen=True)
class ModelDescription:
    """What a compiled robot file holds, by its own names: the root body and whether it has
    a free joint, every body, site, hinge/slide joint (radians, metres), actuator and geom,
    the total mass, and the box its geoms span in the root's frame at the reference pose."""

    root: str
    root_free_joint: bool
    root_has_joints: bool
    bodies: tuple[str, ...]
    on_root: tuple[str, ...]  # the bodies rigidly on the root: none of its joints moves them
    sites: dict[str, SiteInfo]
    joints: tuple[JointSpec, ...]
    qpos0: tuple[float, ...]
    actuators: tuple[ActuatorInfo, ...]
    geoms: tuple[str, ...]
    mass_kg: float
    extent_min: tuple[float, float, float]
    extent_max: tuple[float, float, float]


def _mujoco():
    """MuJoCo, imported after a headless GL backend is exported (importing it fixes the GL)."""
    if "mujoco" not in sys.modules:
        from twinsim.engine.backend import configure_backend

        configure_backend()
    import mujoco

    return mujoco


def _one_line(text: str) -> str:
    return "; ".join(line.strip() for line in str(text).splitlines() if line.strip())


def read_model_file(path: str | Path, fmt: str) -> ModelFileSpec:
    """The robot file at `path` as data: its text, SHA-256 and every file it references
    (relative paths against the file's folder; `package://pkg/...` against it and its parents),
    embedded; raises `UserModelError` (one line) when it or a referenced file is missing or it
    does not parse."""
    file = Path(path).expanduser().resolve()
    if not file.is_file():
        raise UserModelError(f"robot file not found: {path}")
    raw = _read_capped(file, str(file))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        reason = f"not UTF-8 text (byte {exc.start}); save it as UTF-8"
        raise UserModelError(f"{file}: {reason}") from None
    if fmt == "mjcf" and "<include" in text:
        raise UserModelError(f"{file}: <include> is not supported; merge the files into one")
    spec = _parse(text, str(file))
    assets: list[ModelAssetSpec] = []
    for _, ref in _file_refs(spec):
        data = _read_capped(_resolve_ref(file.parent, ref, str(file)), str(file))
        assets.append(
            ModelAssetSpec(
                path=ref,
                sha256=hashlib.sha256(data).hexdigest(),
                data_b64=base64.b64encode(data).decode("ascii"),
            )
        )
    return ModelFileSpec(
        format=fmt,
        source=str(file),
        sha256=hashlib.sha256(raw).hexdigest(),
        text=text,
        assets=tuple({a.path: a for a in assets}.values()),
    )


def _read_capped(file: Path, source: str) -> bytes:
    """A robot file or one it references, refused past `MAX_FILE_BYTES` (each is embedded in
    scene.json, and a multi-GB file would be read whole into memory)."""
    size = file.stat().st_size
    if size > MAX_FILE_BYTES:
        raise UserModelError(
            f"{source}: {file.name} has {size:,} bytes, over the {MAX_FILE_BYTES:,} a robot "
            "file or a file it references may have (decimate the mesh)"
        )
    return file.read_bytes()


def _parse(text: str, source: str) -> mujoco.MjSpec:
    mujoco = _mujoco()
    try:
        return mujoco.MjSpec.from_string(text)
    except Exception as exc:  # MuJoCo raises ValueError with its parser's message
        raise UserModelError(f"{source}: {_one_line(exc)}") from None


def _file_refs(spec: mujoco.MjSpec):
    """(element, reference) of every element that reads a file: the reference is the file as
    the model names it, joined with its compiler folder."""
    for attr, folder in (*_ASSET_LISTS, _TEXTURES):
        base = getattr(spec, folder) or ""
        for element in getattr(spec, attr):
            if element.file:
                yield element, posixpath.join(base, element.file)


def _resolve_ref(folder: Path, ref: str, source: str) -> Path:
    """The file a reference names: absolute, relative to the model's folder, or a ROS
    `package://<pkg>/<rest>` (the model's folder and its parents are tried for `<rest>`)."""
    candidates: list[Path]
    if ref.startswith("package:/"):  # MuJoCo's parser folds `package://` to `package:/`
        rest = PurePosixPath(ref[len("package:") :].lstrip("/"))
        inner = Path(*rest.parts[1:]) if len(rest.parts) > 1 else Path(rest)
        candidates = [d / inner for d in (folder, *folder.parents)]
    else:
        candidates = [folder / ref]
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    raise UserModelError(f"{source}: referenced file not found: {ref} (looked in {folder})")


def _child_spec(file: ModelFileSpec) -> tuple[mujoco.MjSpec, dict[str, bytes]]:
    """The recorded file as a fresh `MjSpec` and the files it reads (by the names it now
    reads them by: content hash and file name, so two robot files never clash): static bodies
    kept (so every body of the file exists), unnamed bodies, geoms and joints named."""
    spec = _parse(file.text, file.source)
    by_ref = {a.path: a for a in file.assets}
    vfs = {}
    for element, ref in list(_file_refs(spec)):
        asset = by_ref[ref]
        key = f"{asset.sha256[:16]}_{PurePosixPath(ref).name}"
        element.file = key
        vfs[key] = base64.b64decode(asset.data_b64)
    spec.meshdir = spec.texturedir = ""
    spec.assets = vfs
    spec.compiler.fusestatic = False
    named = (("body", spec.bodies[1:]), ("geom", spec.geoms), ("joint", spec.joints))
    for kind, elements in named:
        taken = {e.name for e in elements if e.name}
        for i, element in enumerate(elements):
            if not element.name:
                name = f"{kind}{i}"
                while name in taken:
                    name += "_"
                element.name = name
                taken.add(name)
    return spec, vfs


def _actuator_info(model: mujoco.MjModel, i: int, source: str) -> ActuatorInfo:
    """Classify actuator i as a motor, a position or a velocity servo (MuJoCo's shortcuts)."""
    mujoco = _mujoco()
    act = model.actuator(i)
    if model.actuator_trntype[i] != mujoco.mjtTrn.mjTRN_JOINT:
        raise UserModelError(f"{source}: actuator {act.name!r} must act on a joint")
    gain, bias = model.actuator_gainprm[i], model.actuator_biasprm[i]
    fixed = model.actuator_gaintype[i] == mujoco.mjtGain.mjGAIN_FIXED
    plain = model.actuator_dyntype[i] == mujoco.mjtDyn.mjDYN_NONE
    biastype = model.actuator_biastype[i]
    kind = None
    if fixed and plain and biastype == mujoco.mjtBias.mjBIAS_NONE:
        kind = "motor"
    elif fixed and plain and biastype == mujoco.mjtBias.mjBIAS_AFFINE and bias[0] == 0.0:
        if bias[1] == -gain[0] and bias[2] <= 0.0:
            kind = "position"
        elif bias[1] == 0.0 and bias[2] == -gain[0]:
            kind = "velocity"
    if kind is None:
        raise UserModelError(
            f"{source}: actuator {act.name!r}: only motor, position and velocity actuators "
            "are supported"
        )
    limited = bool(model.actuator_ctrllimited[i])
    return ActuatorInfo(
        name=act.name,
        joint=model.joint(int(model.actuator_trnid[i, 0])).name,
        type=kind,
        gear=float(model.actuator_gear[i, 0]),
        gain=float(gain[0]),
        ctrlrange=tuple(float(v) for v in model.actuator_ctrlrange[i]) if limited else None,
    )


def describe_model(file: ModelFileSpec) -> ModelDescription:
    """Compile the recorded file alone and list what it holds (see `ModelDescription`);
    raises `UserModelError` with MuJoCo's message (file and line) when it does not compile,
    and for what twinsim cannot drive (several root bodies, ball joints, free joints below
    the root, actuators on tendons or of other types)."""
    mujoco = _mujoco()
    spec, _ = _child_spec(file)
    roots = list(spec.worldbody.bodies)
    if len(roots) != 1:
        names = ", ".join(b.name or "(unnamed)" for b in roots) or "none"
        raise UserModelError(
            f"{file.source}: the worldbody must hold exactly one body, the robot's root; "
            f"it holds {len(roots)}: {names}"
        )
    try:
        model = spec.compile()
    except Exception as exc:
        raise UserModelError(f"{file.source}: {_one_line(exc)}") from None
    root = model.body(roots[0].name)
    root_joints = [model.joint(j) for j in range(model.njnt) if model.jnt_bodyid[j] == root.id]
    free = mujoco.mjtJoint.mjJNT_FREE
    root_free = any(model.jnt_type[j.id] == free for j in root_joints)
    joints, qpos0 = [], []
    kinds = {int(mujoco.mjtJoint.mjJNT_HINGE): "hinge", int(mujoco.mjtJoint.mjJNT_SLIDE): "slide"}
    for j in range(model.njnt):
        jtype = int(model.jnt_type[j])
        if jtype == free and model.jnt_bodyid[j] == root.id:
            continue
        if jtype not in kinds:
            raise UserModelError(
                f"{file.source}: joint {model.joint(j).name!r}: only hinge and slide joints "
                "(and a free joint on the root body) are supported"
            )
        limited = bool(model.jnt_limited[j])
        joints.append(
            JointSpec(
                name=model.joint(j).name,
                type=kinds[jtype],
                axis=tuple(float(v) for v in model.jnt_axis[j]),
                range=tuple(float(v) for v in model.jnt_range[j]) if limited else None,
                armature=float(model.dof_armature[model.jnt_dofadr[j]]),
            )
        )
        qpos0.append(float(model.qpos0[model.jnt_qposadr[j]]))
    sites = {
        model.site(i).name: SiteInfo(
            body=model.body(int(model.site_bodyid[i])).name,
            pos=tuple(float(v) for v in model.site_pos[i]),
            quat=tuple(float(v) for v in model.site_quat[i]),
        )
        for i in range(model.nsite)
        if model.site(i).name and model.site_bodyid[i] != 0
    }
    lo, hi = _extent(model, root.id)
    return ModelDescription(
        root=root.name,
        root_free_joint=root_free,
        root_has_joints=bool(root_joints),
        bodies=tuple(model.body(i).name for i in range(1, model.nbody) if model.body(i).name),
        on_root=tuple(
            model.body(i).name
            for i in range(1, model.nbody)
            if model.body(i).name and model.body_weldid[i] == model.body_weldid[root.id]
        ),
        sites=sites,
        joints=tuple(joints),
        qpos0=tuple(qpos0),
        actuators=tuple(_actuator_info(model, i, file.source) for i in range(model.nu)),
        geoms=tuple(model.geom(i).name for i in range(model.ngeom) if model.geom_bodyid[i] != 0),
        mass_kg=float(model.body_subtreemass[root.id]),
        extent_min=lo,
        extent_max=hi,
    )


def _extent(model: mujoco.MjModel, root: int) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """The box the geoms' bounding boxes span in the root body's frame at qpos0 (planes,
    which have no extent, left out)."""
    mujoco = _mujoco()
    data = mujoco.MjData(model)
    mujoco.mj_kinematics(model, data)
    R_root, p_root = data.xmat[root].reshape(3, 3), data.xpos[root]
    signs = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])
    points = []
    for g in range(model.ngeom):
        if model.geom_bodyid[g] == 0 or model.geom_type[g] == mujoco.mjtGeom.mjGEOM_PLANE:
            continue
        centre, half = model.geom_aabb[g, :3], model.geom_aabb[g, 3:]
        local = centre + signs * half
        world = local @ data.geom_xmat[g].reshape(3, 3).T + data.geom_xpos[g]
        points.append((world - p_root) @ R_root)
    if not points:
        return (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)
    cloud = np.concatenate(points)
    return tuple(float(v) for v in cloud.min(0)), tuple(float(v) for v in cloud.max(0))


def _add_joint(body: mujoco.MjsBody, joint: JointSpec) -> None:
    mujoco = _mujoco()
    j = body.add_joint()
    j.name = joint.name
    j.type = mujoco.mjtJoint.mjJNT_SLIDE if joint.type == "slide" else mujoco.mjtJoint.mjJNT_HINGE
    j.axis = joint.axis
    j.armature = joint.armature
    if joint.range is not None:
        j.limited = mujoco.mjtLimited.mjLIMITED_TRUE
        j.range = joint.range


def attach_model(spec: mujoco.MjSpec, model: AttachedModelSpec, mount: str) -> mujoco.MjsBody:
    """Attach the recorded file's root body (and everything under it, with the actuators,
    assets and defaults it uses) on the world, names prefixed: placed at the model's pose,
    its free joint replaced by the base joints, its geoms in the robot group; a welded root
    does not collide with the bodies on it (as MuJoCo filters a parent and its child, except
    on the world). Returns the body named `mount` (added at the mount frame where the model
    has one)."""
    mujoco = _mujoco()
    child, files = _child_spec(model.file)
    spec.assets = {**spec.assets, **files}
    frame = spec.worldbody.add_frame()
    root = frame.attach_body(child.body(model.root), model.prefix, "")
    root.pos, root.quat = model.pos, model.quat
    for joint in list(root.joints):
        if joint.type == mujoco.mjtJoint.mjJNT_FREE:
            spec.delete(joint)
    for joint in model.base_joints:
        _add_joint(root, joint)
    if not list(root.joints):  # welded to the world, where MuJoCo's parent filter stops
        for child_body in root.bodies:
            exclude = spec.add_exclude()
            exclude.bodyname1, exclude.bodyname2 = root.name, child_body.name
    for name in model.geoms:
        spec.geom(name).group = ROBOT_GEOM_GROUP
    if model.mount_parent is None:
        return spec.body(mount)
    body = spec.body(model.mount_parent).add_body()
    body.name = mount
    body.pos, body.quat = model.mount_pos, model.mount_quat
    return body


def joint_inertia(model: AttachedModelSpec, mount: str, qpos: dict[str, float]) -> dict[str, float]:
    """Each joint's effective inertia (kg or kg·m², the mass matrix's diagonal) with the model
    alone on the world at `qpos` (joint name → position; the rest at their reference)."""
    mujoco = _mujoco()
    spec = mujoco.MjSpec()
    attach_model(spec, model, mount)
    compiled = spec.compile()
    data = mujoco.MjData(compiled)
    for name, value in qpos.items():
        data.qpos[compiled.joint(name).qposadr[0]] = value
    mujoco.mj_forward(compiled, data)
    full = np.zeros((compiled.nv, compiled.nv))
    mujoco.mj_fullM(compiled, data, full)
    names = (*(j.name for j in model.base_joints), *(j.name for j in model.joints))
    return {n: float(full[compiled.joint(n).dofadr[0], compiled.joint(n).dofadr[0]]) for n in names}
