"""The `mjcf` and `urdf` robot kinds: a user's robot file compiled by MuJoCo, its sensors on a
named body or site, its base along a planned ground tour (planar or free base) and its joints
through a held pose or a slow sine each.

Layering exception: `resolve` calls `twinsim.engine.user_model` (MuJoCo) to read, compile and
describe the file, since the names it validates and the sizes it plans with are the file's.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from twinsim.geometry import yaw_quat_wxyz
from twinsim.model.base import IDENTITY_QUAT, Quat, Vec3
from twinsim.model.body import BodySpec, JointSpec
from twinsim.robots.base import Robot, StartFilter
from twinsim.robots.common.commands import CommandSpace
from twinsim.robots.common.ground_tour import GroundShape, plan_ground_tour
from twinsim.robots.common.live_reference import BaseLimits, LiveController
from twinsim.robots.user_model.controller import (
    UserModelController,
    actuator_names,
    joint_names,
    setpoint_columns,
)
from twinsim.robots.user_model.live import joints_mode, user_model_live
from twinsim.robots.user_model.spec import (
    BASE_POSE_JOINTS,
    BASE_PREFIX,
    MODEL_PREFIX,
    UNLIMITED_AMPLITUDE,
    MjcfConfig,
    MjcfSpec,
    ScriptedJoint,
    UrdfConfig,
    UrdfSpec,
    UserActuatorSpec,
    UserModelConfig,
    UserModelSpec,
    attached_model,
    mount_body,
    user_body,
)

if TYPE_CHECKING:
    from twinsim.engine.user_model import ModelDescription

MIN_FOOTPRINT_M = 0.05  # the planner's footprint of a very small robot
MIN_UNDERSIDE_M = 1e-3  # the planner's band starts above the floor


def _names(names) -> str:
    return ", ".join(names) or "none"


def _check(cfg: UserModelConfig, desc: ModelDescription, base: str, src: str) -> None:
    """What twinsim cannot drive as asked fails here, in one line naming what exists."""
    from twinsim.engine.user_model import UserModelError

    if base != "fixed" and desc.root_has_joints and not desc.root_free_joint:
        raise UserModelError(
            f"{src}: base {base!r} needs a root body ({desc.root!r}) with no joints but a free one"
        )
    joints = tuple(j.name for j in desc.joints)
    clash = [j for j in joints if j.startswith(BASE_PREFIX)]
    if base != "fixed" and clash:
        raise UserModelError(f"{src}: joint names starting with {BASE_PREFIX!r}: {clash}")
    for a in desc.actuators:
        if a.joint not in joints:
            raise UserModelError(f"{src}: actuator {a.name!r} drives the root's free joint")
    for key, names in (("joint_pose", cfg.joint_pose), ("sine_amplitude", cfg.sine_amplitude)):
        unknown = sorted(set(names) - set(joints))
        if unknown:
            raise UserModelError(
                f"robot.{key}: no joint {unknown[0]!r} in {src}; joints: {_names(joints)}"
            )


def _check_moves(
    cfg: UserModelConfig, desc: ModelDescription, base: str, mount: dict, src: str
) -> None:
    """`base: auto` that welds the root is refused where the body frame is rigidly on that
    root: the robot would plan a tour and record no motion at all. An explicit `fixed` is the
    user's choice (a still rig); a mount on a link the joints move records their motion."""
    on_root = mount.get("mount_parent", mount["mount"]) in desc.on_root
    if cfg.base == "auto" and base == "fixed" and on_root:
        from twinsim.engine.user_model import UserModelError

        raise UserModelError(
            f"robot.base: auto welds the root {desc.root!r} of {src} (it has no free joint) and "
            "the body frame is on it, so nothing would move; set robot.base to planar or free "
            "to drive its tour, to fixed to keep it still, or robot.mount to a body its joints "
            "move"
        )


def _mount(cfg: UserModelConfig, desc: ModelDescription, src: str) -> dict:
    """The mount: the named body, or the named site's body and its pose there."""
    name = cfg.mount or desc.root
    if name in desc.bodies:
        return {"mount": name}
    if name in desc.sites:
        site = desc.sites[name]
        return {
            "mount": name,
            "mount_parent": site.body,
            "mount_pos": site.pos,
            "mount_quat": site.quat,
        }
    from twinsim.engine.user_model import UserModelError

    raise UserModelError(
        f"robot.mount: no body or site {name!r} in {src}; bodies: {_names(desc.bodies)}; "
        f"sites: {_names(desc.sites)}"
    )


def _shape(cfg: UserModelConfig, desc: ModelDescription, root_z: float) -> GroundShape:
    """The robot's extent for the tour: a footprint round the root's axis that holds every
    geom at the reference pose, from its clearance above the floor (lower obstacles, such as
    rugs, pass beneath; higher ones are avoided) to its top."""
    lo, hi = desc.extent_min, desc.extent_max
    corners = np.array([[x, y] for x in (lo[0], hi[0]) for y in (lo[1], hi[1])])
    return GroundShape(
        footprint_radius_m=max(float(np.hypot(*corners.T).max()), MIN_FOOTPRINT_M),
        underside_m=max(cfg.floor_clearance_m, MIN_UNDERSIDE_M),
        top_m=root_z + hi[2],
        body_z_m=root_z,
    )


def _target(cfg: UserModelConfig, joint: JointSpec, qpos0: float, i: int) -> ScriptedJoint:
    """A driven joint's script: held at its pose (the config's, else the file's reference
    within the range), swinging by its amplitude where the motion is a sine; the i-th joint a
    quarter period after the one before."""
    lo, hi = joint.range if joint.range is not None else (-math.inf, math.inf)
    hold = cfg.joint_pose.get(joint.name, min(max(qpos0, lo), hi))
    if cfg.joint_motion == "hold":
        amplitude = 0.0
    elif joint.name in cfg.sine_amplitude:
        amplitude = cfg.sine_amplitude[joint.name]
    elif joint.range is not None:
        amplitude = cfg.sine_fraction * (hi - lo)
    else:
        amplitude = UNLIMITED_AMPLITUDE[joint.type]
    return ScriptedJoint(
        name=joint.name, hold=hold, amplitude=amplitude, phase=0.5 * math.pi * i, range=joint.range
    )


class UserModel(Robot):
    """A robot from a user's file; `kind`, `config_model` and `spec_model` name the format."""

    def resolve(
        self,
        cfg: UserModelConfig,
        world,
        duration_s: float,
        rng: np.random.Generator,
        start_allowed: StartFilter | None = None,
    ) -> UserModelSpec:
        from twinsim.engine.user_model import describe_model, read_model_file

        file = read_model_file(cfg.path, self.kind)
        desc = describe_model(file)
        base = cfg.base if cfg.base != "auto" else ("free" if desc.root_free_joint else "fixed")
        _check(cfg, desc, base, file.source)
        mount = _mount(cfg, desc, file.source)
        _check_moves(cfg, desc, base, mount, file.source)
        motors = () if desc.actuators else tuple(j.name for j in desc.joints)
        driven = set(motors) | {a.joint for a in desc.actuators}
        scripted = [
            (j, q) for j, q in zip(desc.joints, desc.qpos0, strict=True) if j.name in driven
        ]
        root_z = cfg.floor_clearance_m - desc.extent_min[2]
        plan = plan_ground_tour(
            cfg, _shape(cfg, desc, root_z), world, duration_s, rng, start_allowed
        )
        moves = base != "fixed"
        spec = self.spec_model(
            file=file,
            base=base,
            root=desc.root,
            root_z_m=root_z,
            joints=desc.joints,
            qpos0=tuple(
                cfg.joint_pose.get(j.name, q) for j, q in zip(desc.joints, desc.qpos0, strict=True)
            ),
            actuators=tuple(UserActuatorSpec(**vars(a)) for a in desc.actuators),
            motors=motors,
            bodies=desc.bodies,
            geoms=desc.geoms,
            targets=tuple(_target(cfg, j, q, i) for i, (j, q) in enumerate(scripted)),
            sine_period_s=cfg.sine_period_s,
            inertia=(),
            mass_kg=desc.mass_kg,
            start_pos=(plan.start_pos[0], plan.start_pos[1], root_z),
            start_yaw=plan.start_yaw,
            path=plan.path if moves else (),
            rooms_visited=tuple(plan.rooms_visited) if moves else (),
            max_speed_mps=cfg.max_speed_mps,
            max_yaw_rate_dps=cfg.max_yaw_rate_dps,
            max_accel_mps2=cfg.max_accel_mps2,
            **mount,
        )
        return self._with_inertia(spec)

    def _with_inertia(self, spec: UserModelSpec) -> UserModelSpec:
        """The spec with each joint coordinate's effective inertia at the start pose."""
        from twinsim.engine.user_model import joint_inertia

        model = attached_model(spec, *self._root_pose(spec))
        names = (*(j.name for j in model.base_joints), *(j.name for j in model.joints))
        q0, _ = self.initial_state(spec)
        inertia = joint_inertia(model, mount_body(spec), dict(zip(names, q0, strict=True)))
        return spec.model_copy(update={"inertia": tuple(inertia[n] for n in names)})

    @staticmethod
    def _root_pose(spec: UserModelSpec) -> tuple[Vec3, Quat]:
        """Where the root body sits on the world with its base joints at zero."""
        if spec.base == "fixed":
            return spec.start_pos, yaw_quat_wxyz(spec.start_yaw)
        if spec.base == "planar":
            return (0.0, 0.0, spec.root_z_m), IDENTITY_QUAT
        return (0.0, 0.0, 0.0), IDENTITY_QUAT

    def default_sensors(self) -> dict[str, dict]:
        """A camera at the mount's origin looking along its x axis, an IMU there."""
        return {"cam0": {"kind": "camera", "pos": [0.0, 0.0, 0.0]}, "imu0": {"kind": "imu"}}

    def body(self, spec: UserModelSpec) -> BodySpec:
        return user_body(spec, *self._root_pose(spec))

    def joint_names(self, spec: UserModelSpec) -> tuple[str, ...]:
        return joint_names(spec)

    def actuator_names(self, spec: UserModelSpec) -> tuple[str, ...]:
        return actuator_names(spec)

    def part_names(self, spec: UserModelSpec) -> tuple[str, ...]:
        """The file's bodies (MuJoCo names: `model/<body>`), which its contacts name."""
        return tuple(MODEL_PREFIX + b for b in spec.bodies)

    def initial_state(self, spec: UserModelSpec) -> tuple[np.ndarray, np.ndarray]:
        """At rest at the tour's start, the joints at their scripts' t = 0 (moving with them)."""
        pose = {
            "x": spec.start_pos[0],
            "y": spec.start_pos[1],
            "z": spec.root_z_m,
            "yaw": spec.start_yaw,
        }
        base = [pose.get(j, 0.0) for j in BASE_POSE_JOINTS[spec.base]]
        q = dict(zip((j.name for j in spec.joints), spec.qpos0, strict=True))
        qd = dict.fromkeys(q, 0.0)
        for t in spec.targets:
            q[t.name] = float(np.clip(t.hold + t.amplitude * math.sin(t.phase), *_bounds(t)))
            qd[t.name] = t.amplitude * 2 * math.pi / spec.sine_period_s * math.cos(t.phase)
            if q[t.name] != t.hold + t.amplitude * math.sin(t.phase):
                qd[t.name] = 0.0
        zeros = [0.0] * len(base)
        return np.array([*base, *q.values()]), np.array([*zeros, *qd.values()])

    def setpoint_columns(self, spec: UserModelSpec) -> tuple[str, ...]:
        return setpoint_columns(spec)

    def controller(self, spec: UserModelSpec, physics_hz: int) -> UserModelController:
        return UserModelController(spec, physics_hz)

    def follower(self, spec: UserModelSpec, reference, physics_hz: int) -> UserModelController:
        return UserModelController(spec, physics_hz, reference)

    def command_space(self, spec: UserModelSpec) -> CommandSpace:
        """The base's velocity and waypoint modes (a planar or free base) and `joints` for the
        file's scripted joints."""
        modes = dict(super().command_space(spec).modes)
        joints = joints_mode(spec)
        if joints is not None:
            modes["joints"] = joints
        return CommandSpace(modes)

    def live_controller(self, spec: UserModelSpec, physics_hz: int) -> LiveController:
        """Base and joints on live commands (`twinsim.robots.user_model.live`)."""
        space = self.command_space(spec)
        return user_model_live(space, spec, self.base_limits(spec), self.follower, physics_hz)

    def base_limits(self, spec: UserModelSpec) -> BaseLimits | None:
        """A planar or free base moves on live commands (on the floor); a fixed one does not
        (its joints still take `joints` commands)."""
        if not BASE_POSE_JOINTS[spec.base]:
            return None
        return BaseLimits.of(spec)


def _bounds(target: ScriptedJoint) -> tuple[float, float]:
    return target.range if target.range is not None else (-math.inf, math.inf)


class Mjcf(UserModel):
    """A robot from a user's MJCF file (`kind: mjcf`, `path: robot.xml`)."""

    kind = "mjcf"
    config_model = MjcfConfig
    spec_model = MjcfSpec


class Urdf(UserModel):
    """A robot from a user's URDF file (`kind: urdf`, `path: robot.urdf`), compiled by MuJoCo."""

    kind = "urdf"
    config_model = UrdfConfig
    spec_model = UrdfSpec
