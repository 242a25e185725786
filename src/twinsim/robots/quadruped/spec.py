"""A 12-joint quadruped (Unitree Go1 class) as data: its config, its resolved spec, and a
trunk on four three-joint legs that walks on real foot–floor contacts.

The trunk rides on six unactuated pose joints (slides x, y, z along the world axes, then
hinges yaw, pitch, roll, as the diff drive's chassis), so only gravity and the feet's contact
forces move it and qpos reads as its pose. Each leg (FL, FR, RL, RR) has a hip abduction
(hinge about the trunk's x), a hip flexion and a knee (hinges about the leg's y), each driven
by a motor; the knee bends backwards (Go1's convention: positive flexion swings the foot
back, the knee angle is negative). The body frame is the trunk's centre at hip height, x
forward, z up; the mount link is the trunk.

Numbers from Go1's public model (Unitree's URDF, as MuJoCo Menagerie's `unitree_go1` carries
it): hip joints at (±0.1881, ±0.04675) m, the thigh 0.08 m outboard of the abduction axis,
thigh and calf 0.213 m, link masses 5.204 (trunk), 0.68 (hip), 1.009 (thigh), 0.196 kg (calf
with foot), 12.74 kg in all (Unitree's datasheet: about 12 kg), their centres of mass and
principal moments (we align the moments with the link frames), joint ranges (abduction
±0.863 rad, flexion -0.686…4.501 rad, knee -2.818…-0.888 rad) and torque limits (23.7 N·m
hips, 35.55 N·m knee, Unitree's published motor figures). Our choices: the collision shapes (a
0.38 × 0.18 × 0.11 m trunk box, narrower than Go1's 0.19 m shell so the thighs clear it, a
face block reaching 0.265 m ahead, capsule legs, 2 cm spherical feet of friction 0.9 that take
precedence over the floor's, on a stiff contact: `FOOT_SOLREF`, `FOOT_SOLIMP`), the reflected
rotor inertia (armature 0.01 kg·m² on every joint, as Menagerie's model), the 0.28 m standing
height of the trunk (Menagerie's home pose: 0.27 m), the camera 0.28 m ahead of the centre at
hip height (Go1's face stereo camera), the trot (0.36 s period, duty 0.55, 7 cm swing height,
landing at walking pace) and the walking limits (0.4 m/s, 30 deg/s, 0.5 m/s²),
far inside Go1's 3.5 m/s (datasheet), which the controller tracks robustly indoors.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field

from twinsim.model.body import ActuatorSpec, BodySpec, JointSpec, LinkGeomSpec, LinkSpec
from twinsim.robots.common.ground_tour import GroundConfig, GroundShape, GroundSpec
from twinsim.robots.common.pose_joints import POSE_JOINTS, free_pose_joints

LEGS: tuple[str, ...] = ("FL", "FR", "RL", "RR")
LEG_JOINTS: tuple[str, ...] = ("abduction", "hip", "knee")  # per leg, in kinematic order
JOINT_NAMES: tuple[str, ...] = tuple(f"{leg}_{j}" for leg in LEGS for j in LEG_JOINTS)
LEG_QPOS = slice(len(POSE_JOINTS), len(POSE_JOINTS) + len(JOINT_NAMES))  # legs in qpos, qvel
#: per leg: +1 front / -1 rear, +1 left / -1 right
FORE = np.array([1.0, 1.0, -1.0, -1.0])
SIDE = np.array([1.0, -1.0, 1.0, -1.0])
HIP_X_M, HIP_Y_M = 0.1881, 0.04675  # the abduction joints on the trunk (URDF)
THIGH_OFFSET_M = 0.08  # the thigh's plane outboard of the abduction axis (URDF)
THIGH_M, CALF_M = 0.213, 0.213  # hip flexion → knee, knee → foot centre (URDF)
FOOT_RADIUS_M = 0.02
#: each leg's abduction joint in the trunk frame, (4, 3)
HIP_POS = np.stack([FORE * HIP_X_M, SIDE * HIP_Y_M, np.zeros(4)], axis=1)

TRUNK_MASS_KG, HIP_MASS_KG, THIGH_MASS_KG, CALF_MASS_KG = 5.204, 0.68, 1.009, 0.196
TRUNK_INERTIA = (0.0168, 0.0630, 0.0717)
HIP_INERTIA = (0.000469, 0.000734, 0.000399)
THIGH_INERTIA = (0.00479, 0.00461, 0.000709)
CALF_INERTIA = (0.00150, 0.00148, 0.0000358)
TRUNK_COM = (0.0223, 0.0, 0.0)
MASS_KG = TRUNK_MASS_KG + 4 * (HIP_MASS_KG + THIGH_MASS_KG + CALF_MASS_KG)
TRUNK_HALF = (0.19, 0.09, 0.055)  # the collision box, clear of the thighs' capsules
ARMATURE = 0.01  # kg·m²: each motor's rotor inertia reflected through its gearbox
#: per leg joint: range (rad) and torque limit (N·m)
JOINT_RANGES = ((-0.863, 0.863), (-0.686, 4.501), (-2.818, -0.888))
TORQUE_LIMITS = np.array([23.7, 23.7, 35.55])
ROOT_LINK = "quad_trunk"
#: the feet's contact with the floor: a time constant twice the 240 Hz physics step (the
#: stiffest MuJoCo keeps stable), critically damped, and an impedance of 0.95-0.99 (MuJoCo's
#: 0.9-0.95 let a foot sink 2-3 mm under its share of the weight): 0.3 mm in stance
FOOT_SOLREF = (1.0 / 120.0, 1.0)
FOOT_SOLIMP = (0.95, 0.99, 0.001, 0.5, 2.0)

FOOTPRINT_RADIUS_M = 0.30  # encloses the trunk, the face and the feet at full stride
UNDERSIDE_M = 0.05  # it steps over anything lower (rugs: 1 cm)
TOP_M = 0.36  # the trunk's top at its standing height, plus its bobbing
CAMERA_POS = (0.28, 0.0, 0.0)


def hip_com(leg: int) -> tuple[float, float, float]:
    """The hip link's centre of mass in its frame (mirrored per leg, URDF)."""
    return (-0.0049 * FORE[leg], -0.0076 * SIDE[leg], 0.0)


def thigh_com(leg: int) -> tuple[float, float, float]:
    """The thigh's centre of mass in its frame (mirrored left/right, URDF)."""
    return (-0.0030, -0.0193 * SIDE[leg], -0.0305)


CALF_COM = (0.0043, 0.0, -0.146)


class QuadrupedConfig(GroundConfig):
    """A Go1-class quadruped: standing height, trot period and duty factor, swing height,
    foot friction, and the walking limits of its ground tour (module docstring)."""

    kind: Literal["quadruped"] = "quadruped"
    max_speed_mps: float = Field(0.4, gt=0.0, le=0.8)
    max_yaw_rate_dps: float = Field(30.0, gt=0.0, le=90.0)
    stand_height_m: float = Field(0.28, ge=0.22, le=0.34)
    gait_period_s: float = Field(0.36, ge=0.2, le=0.8)
    duty_factor: float = Field(0.55, ge=0.5, lt=0.8)
    swing_height_m: float = Field(0.07, gt=0.0, le=0.12)
    foot_friction: float = Field(0.9, gt=0.0)


class QuadrupedSpec(GroundSpec):
    """The quadruped of a run: standing height, gait, foot friction, limits and its planned
    ground tour."""

    kind: Literal["quadruped"] = "quadruped"
    mass_kg: float
    stand_height_m: float
    gait_period_s: float
    duty_factor: float
    swing_height_m: float
    foot_friction: float


def shape(stand_height_m: float) -> GroundShape:
    """The robot's extent for planning; its body frame (and path) is at the trunk's height."""
    return GroundShape(
        footprint_radius_m=FOOTPRINT_RADIUS_M,
        underside_m=UNDERSIDE_M,
        top_m=TOP_M,
        body_z_m=stand_height_m,
    )


def _capsule(name: str, length: float, radius: float, rgba) -> LinkGeomSpec:
    """A capsule down the link's -z axis from its origin, `length` long."""
    return LinkGeomSpec(
        name=name,
        type="capsule",
        size=(radius, 0.5 * length),
        pos=(0.0, 0.0, -0.5 * length),
        rgba=rgba,
    )


_DARK = (0.12, 0.12, 0.13, 1.0)
_GREY = (0.55, 0.56, 0.58, 1.0)
_Y_AXIS_QUAT = (0.7071067811865476, -0.7071067811865476, 0.0, 0.0)  # cylinder z → y


def _leg_links(spec: QuadrupedSpec, leg: int) -> tuple[LinkSpec, ...]:
    """Hip (abduction about x), thigh (flexion about y) and calf (knee about y, the foot)."""
    name = LEGS[leg]
    ranges = JOINT_RANGES

    def joint(j: int) -> JointSpec:
        axis = (1, 0, 0) if j == 0 else (0, 1, 0)
        return JointSpec(
            name=f"{name}_{LEG_JOINTS[j]}",
            type="hinge",
            axis=axis,
            range=ranges[j],
            armature=ARMATURE,
        )

    hip = LinkSpec(
        name=f"quad_{name}_hip",
        parent=ROOT_LINK,
        pos=tuple(HIP_POS[leg]),
        mass_kg=HIP_MASS_KG,
        inertia=HIP_INERTIA,
        com=hip_com(leg),
        joints=(joint(0),),
        geoms=(
            LinkGeomSpec(
                name=f"quad_{name}_hip_motor",
                type="cylinder",
                size=(0.045, 0.025),
                pos=(0.0, SIDE[leg] * 0.05, 0.0),
                quat=_Y_AXIS_QUAT,
                rgba=_DARK,
            ),
        ),
    )
    thigh = LinkSpec(
        name=f"quad_{name}_thigh",
        parent=hip.name,
        pos=(0.0, SIDE[leg] * THIGH_OFFSET_M, 0.0),
        mass_kg=THIGH_MASS_KG,
        inertia=THIGH_INERTIA,
        com=thigh_com(leg),
        joints=(joint(1),),
        geoms=(_capsule(f"quad_{name}_thigh", THIGH_M, 0.016, _GREY),),
    )
    foot = LinkGeomSpec(
        name=f"quad_{name}_foot",
        type="sphere",
        size=(FOOT_RADIUS_M,),
        pos=(0.0, 0.0, -CALF_M),
        rgba=(0.05, 0.05, 0.05, 1.0),
        friction=(spec.foot_friction, 0.005, 0.0001),
        solref=FOOT_SOLREF,
        solimp=FOOT_SOLIMP,
        priority=1,
    )
    calf = LinkSpec(
        name=f"quad_{name}_calf",
        parent=thigh.name,
        pos=(0.0, 0.0, -THIGH_M),
        mass_kg=CALF_MASS_KG,
        inertia=CALF_INERTIA,
        com=CALF_COM,
        joints=(joint(2),),
        geoms=(_capsule(f"quad_{name}_calf", CALF_M - 0.03, 0.011, _DARK), foot),
    )
    return hip, thigh, calf


def _trunk_geoms() -> tuple[LinkGeomSpec, ...]:
    """The trunk box and the face block ahead of it, where the camera looks out."""
    return (
        LinkGeomSpec(name="quad_trunk", type="box", size=TRUNK_HALF, rgba=_GREY),
        LinkGeomSpec(
            name="quad_face",
            type="box",
            size=(0.0375, 0.05, 0.04),
            pos=(TRUNK_HALF[0] + 0.0375, 0.0, 0.0),
            rgba=_DARK,
        ),
    )


def quadruped_body(spec: QuadrupedSpec) -> BodySpec:
    """The trunk on six unactuated pose joints, four three-joint legs, a motor per leg joint."""
    pose = free_pose_joints()
    trunk = LinkSpec(
        name=ROOT_LINK,
        mass_kg=TRUNK_MASS_KG,
        inertia=TRUNK_INERTIA,
        com=TRUNK_COM,
        joints=pose,
        geoms=_trunk_geoms(),
    )
    legs = tuple(link for leg in range(len(LEGS)) for link in _leg_links(spec, leg))
    actuators = tuple(ActuatorSpec(name=f"motor_{j}", joint=j) for j in JOINT_NAMES)
    return BodySpec(links=(trunk, *legs), actuators=actuators, mount=ROOT_LINK)
