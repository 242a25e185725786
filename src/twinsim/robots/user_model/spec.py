"""A user's robot file (`kind: mjcf` / `kind: urdf`) as data: its config, its resolved spec and
its body, the file attached whole through MuJoCo's compiler (`twinsim.engine.user_model`).

The spec keeps the file's text, SHA-256 and the files it references (embedded), so a replay
needs nothing on disk. `base` says how the root body meets the world: `fixed` (welded at the
start pose), `planar` (twinsim's x, y, yaw pose joints at a fixed height) or `free` (the six
pose joints of `common/pose_joints.py`, replacing the file's free joint so every joint has one
coordinate); `auto` is `free` where the root has a free joint, else `fixed`, and is refused
where that would weld the body frame (`mount`) still, since nothing would move. The root's
placement in the file is replaced: its lowest point stands `floor_clearance_m` above the floor.

Joint coordinates, in qpos order: the base joints (`base_x`, `base_y`, [`base_z`], `base_yaw`,
[`base_pitch`, `base_roll`]), then the file's hinges and slides by their own names. Every
MuJoCo name from the file starts with `MODEL_PREFIX` (after the robot's stream prefix).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from twinsim.model.base import IDENTITY_QUAT, Quat, Vec3
from twinsim.model.body import (
    ActuatorSpec,
    AttachedModelSpec,
    BodySpec,
    JointSpec,
    ModelFileSpec,
)
from twinsim.model.scene import RobotSpec
from twinsim.robots.common.ground_tour import GroundConfig
from twinsim.robots.common.pose_joints import POSE_AXES, POSE_IS_SLIDE, POSE_JOINTS

MODEL_PREFIX = "model/"
BASE_PREFIX = "base_"
#: which pose joints each base has (robots/common/pose_joints.py order)
BASE_POSE_JOINTS: dict[str, tuple[str, ...]] = {
    "fixed": (),
    "planar": ("x", "y", "yaw"),
    "free": POSE_JOINTS,
}
BASE_ARMATURE = 1e-4  # as the omni's pose joints: keeps a light base's joints well conditioned
#: default sine amplitudes of joints without limits (a limited joint's is a fraction of its range)
UNLIMITED_AMPLITUDE = {"hinge": 0.3, "slide": 0.05}


class UserModelConfig(GroundConfig):
    """A robot from a user's MJCF or URDF file: where the file is, how its base meets the
    world, where its sensors mount, and how its joints move (a held pose, or a slow sine per
    joint about it). Speed limits and room counts are the ground tour's (`GroundConfig`)."""

    kind: str
    path: str
    base: Literal["auto", "fixed", "planar", "free"] = "auto"
    mount: str | None = None  # a body or site of the file; None: the root body
    joint_motion: Literal["hold", "sine"] = "sine"
    joint_pose: dict[str, float] = Field(default_factory=dict)  # hold positions (rad, m)
    sine_fraction: float = Field(0.25, ge=0.0, le=0.5)  # amplitude / a limited joint's range
    sine_amplitude: dict[str, float] = Field(default_factory=dict)  # per joint (rad, m)
    sine_period_s: float = Field(8.0, gt=0.0)
    #: the lowest point's height above the floor (the omni's: 1 cm rugs pass beneath)
    floor_clearance_m: float = Field(0.02, ge=0.0)


class MjcfConfig(UserModelConfig):
    """A robot from a user's MJCF file."""

    kind: Literal["mjcf"] = "mjcf"


class UrdfConfig(UserModelConfig):
    """A robot from a user's URDF file (compiled by MuJoCo's URDF reader)."""

    kind: Literal["urdf"] = "urdf"


class _Data(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ScriptedJoint(_Data):
    """A joint coordinate the run moves: target hold + amplitude · sin(2π t / period + phase),
    clamped to `range` (joint_states name)."""

    name: str
    hold: float
    amplitude: float = 0.0
    phase: float = 0.0
    range: tuple[float, float] | None = None


class UserActuatorSpec(_Data):
    """One of the file's actuators (file names): `type` motor (ctrl · gain is the joint's force
    or torque), position or velocity (ctrl is gear × the target position or rate)."""

    name: str
    joint: str
    type: Literal["motor", "position", "velocity"]
    gear: float
    gain: float
    ctrlrange: tuple[float, float] | None = None


class UserModelSpec(RobotSpec):
    """A user's robot of a run: the file as read, how it is based, mounted and driven, and the
    planned ground tour (empty path for a fixed base). `inertia` is each joint coordinate's
    effective inertia at the start (the mass matrix's diagonal), which scales the PID gains."""

    kind: str
    file: ModelFileSpec
    base: Literal["fixed", "planar", "free"]
    root: str
    root_z_m: float
    joints: tuple[JointSpec, ...]  # the file's hinges and slides, by the file's names
    qpos0: tuple[float, ...]  # their reference positions (the file's, at rest)
    actuators: tuple[UserActuatorSpec, ...] = ()
    motors: tuple[str, ...] = ()  # file joints twinsim adds motors to (a file without actuators)
    bodies: tuple[str, ...] = ()  # the file's bodies (its parts, in contacts)
    geoms: tuple[str, ...] = ()
    mount: str  # a body of the file, or the site `mount_parent` carries
    mount_parent: str | None = None
    mount_pos: Vec3 = (0.0, 0.0, 0.0)
    mount_quat: Quat = IDENTITY_QUAT
    targets: tuple[ScriptedJoint, ...] = ()
    sine_period_s: float
    inertia: tuple[float, ...]  # per joint coordinate, in joint_names order
    mass_kg: float
    max_speed_mps: float
    max_yaw_rate_dps: float
    max_accel_mps2: float
    rooms_visited: tuple[int, ...] = ()


class MjcfSpec(UserModelSpec):
    """A robot from an MJCF file, as a run resolved it."""

    kind: Literal["mjcf"] = "mjcf"


class UrdfSpec(UserModelSpec):
    """A robot from a URDF file, as a run resolved it."""

    kind: Literal["urdf"] = "urdf"


def base_joints(base: str) -> tuple[JointSpec, ...]:
    """twinsim's pose joints of a base (`base_x` …), in pose-joint order."""
    by_name = dict(zip(POSE_JOINTS, zip(POSE_AXES, POSE_IS_SLIDE, strict=True), strict=True))
    return tuple(
        JointSpec(
            name=BASE_PREFIX + name,
            type="slide" if by_name[name][1] else "hinge",
            axis=by_name[name][0],
            armature=BASE_ARMATURE,
        )
        for name in BASE_POSE_JOINTS[base]
    )


def mount_body(spec: UserModelSpec) -> str:
    """MuJoCo name of the body the sensors mount on (before the robot's stream prefix)."""
    if spec.mount_parent is None:
        return MODEL_PREFIX + spec.mount
    return f"{MODEL_PREFIX}mount@{spec.mount}"


def attached_model(spec: UserModelSpec, pos: Vec3, quat: Quat) -> AttachedModelSpec:
    """The file as the engine attaches it, its root at `pos`/`quat` on the world."""
    return AttachedModelSpec(
        file=spec.file,
        prefix=MODEL_PREFIX,
        root=spec.root,
        pos=pos,
        quat=quat,
        base_joints=base_joints(spec.base),
        joints=tuple(j.model_copy(update={"name": MODEL_PREFIX + j.name}) for j in spec.joints),
        actuators=tuple(MODEL_PREFIX + a.name for a in spec.actuators),
        geoms=tuple(MODEL_PREFIX + g for g in spec.geoms),
        mount_parent=None if spec.mount_parent is None else MODEL_PREFIX + spec.mount_parent,
        mount_pos=spec.mount_pos,
        mount_quat=spec.mount_quat,
    )


def user_body(spec: UserModelSpec, pos: Vec3, quat: Quat) -> BodySpec:
    """The body: no links of twinsim's, the file attached, motors on the base joints and on
    the file joints twinsim drives where the file has no actuators."""
    motors = (
        *(ActuatorSpec(name=f"motor_{j.name}", joint=j.name) for j in base_joints(spec.base)),
        *(ActuatorSpec(name=f"motor_{j}", joint=MODEL_PREFIX + j) for j in spec.motors),
    )
    return BodySpec(
        links=(),
        actuators=motors,
        mount=mount_body(spec),
        model=attached_model(spec, pos, quat),
    )
