"""A differential-drive wheeled robot (TurtleBot class) as data: its config, its resolved
spec, and a chassis that moves on real wheel–floor contacts.

The chassis rides on six unactuated pose joints (slides x, y, z along the world axes, then
hinges yaw, pitch, roll, as the drone's body), so only gravity and contact forces move it and
qpos reads as its pose. Two wheel links turn on hinges about the body's y axis, each driven by
a motor; one low-friction ball caster at the back carries the rest of its weight, its centre
of mass lying between the axle and the caster, so it stands on three points on any floor,
rugs included (a rigid four-point base would lift a wheel off the floor there). The body frame
is the axle's midpoint, x forward, z up.

Numbers: the wheels and track are Kobuki's (TurtleBot 2's base, public specification: wheel
radius 0.035 m, wheel separation 0.230 m, 0.354 m round footprint, 12 mm climbable step), the
single rear ball caster TurtleBot 3's layout; the mass (6 kg with a sensor stack), the centre
of mass, wheel mass, motor armature (rotor inertia through the gearbox), torque limit and the
camera's 0.35 m height are our choices for that class. Speed, yaw-rate and acceleration limits
are the ground robots' (`GroundConfig`: GRADE's 0.5 m/s and 30 deg/s, 0.5 m/s²), within
Kobuki's 0.7 m/s and 180 deg/s.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from pydantic import Field

from twinsim.model.body import ActuatorSpec, BodySpec, JointSpec, LinkGeomSpec, LinkSpec
from twinsim.robots.common.ground_tour import GroundConfig, GroundShape, GroundSpec
from twinsim.robots.common.pose_joints import POSE_JOINTS, free_pose_joints
from twinsim.robots.omni.spec import cylinder_inertia

WHEEL_JOINTS: tuple[str, str] = ("wheel_left", "wheel_right")  # after the pose joints in qpos
WHEELS = slice(len(POSE_JOINTS), len(POSE_JOINTS) + 2)  # the wheels' entries of qpos, qvel
ROOT_LINK = "dd_chassis"
FOOTPRINT_RADIUS_M = 0.177
UNDERSIDE_M = 0.012  # the highest step it climbs (Kobuki: 12 mm): rugs are driven over
CHASSIS_Z_M = (0.015, 0.11)  # the chassis cylinder's bottom and top above the floor
CASTER_RADIUS_M = 0.025
CASTER_X_M = -0.13  # behind the axle
COM = (-0.04, 0.0, 0.03)  # the chassis' centre of mass: 31 % of the weight on the caster
CAMERA_HEIGHT_M = 0.35
TOP_M = 0.38
WHEEL_WIDTH_M = 0.02
WHEEL_MASS_KG = 0.15
#: the tyre's contact time constant and damping ratio, half MuJoCo's default (0.02 s): MuJoCo's
#: soft friction lets a wheel creep about 1.5 % at cruise with the default, well under 1 % here
TYRE_SOLREF = (0.01, 1.0)
#: the caster's contact impedance rises from 0 at first touch to 0.95 at 1 mm: with MuJoCo's
#: default (0.9 at once) its force jumped as it switched on, and at 240 Hz the chassis rocked
#: on the lightly loaded caster as its contact came and went (pitch rate 0.05 rad/s RMS at
#: ~48 Hz while driving, far above a real IMU's noise); the tyres never leave the floor
CASTER_SOLIMP = (0.0, 0.95, 0.001, 0.5, 2.0)
MOTOR_ARMATURE = 0.002  # kg·m²: a small motor's rotor inertia through its gearbox


class DiffDriveConfig(GroundConfig):
    """A Kobuki-class differential drive: wheel radius and track, motor torque limit, wheel
    grip and caster slip (friction coefficients), chassis mass (module docstring)."""

    kind: Literal["diff_drive"] = "diff_drive"
    mass_kg: float = Field(6.0, gt=0.0)
    wheel_radius_m: float = Field(0.035, gt=0.01, le=0.2)
    track_m: float = Field(0.230, gt=0.05, le=0.6)
    max_wheel_torque_nm: float = Field(1.0, gt=0.0)
    wheel_friction: float = Field(1.0, gt=0.0)
    caster_friction: float = Field(0.02, ge=0.0)


class DiffDriveSpec(GroundSpec):
    """The differential drive of a run: body, wheels, limits and its planned ground tour."""

    kind: Literal["diff_drive"] = "diff_drive"
    mass_kg: float
    inertia: tuple[float, float, float]
    wheel_radius_m: float
    track_m: float
    max_wheel_torque_nm: float
    wheel_friction: float
    caster_friction: float

    @property
    def wheel_joints(self) -> tuple[str, str]:
        """The left and right wheel joints (what wheel odometry reads)."""
        return WHEEL_JOINTS


def shape(wheel_radius_m: float) -> GroundShape:
    """The robot's extent for planning; its body frame is at the axle's height."""
    return GroundShape(
        footprint_radius_m=FOOTPRINT_RADIUS_M,
        underside_m=UNDERSIDE_M,
        top_m=TOP_M,
        body_z_m=wheel_radius_m,
    )


def camera_pos(wheel_radius_m: float) -> tuple[float, float, float]:
    """Where the default camera's optical centre sits on the body (front of the mast head)."""
    return (0.06, 0.0, CAMERA_HEIGHT_M - wheel_radius_m)


def chassis_inertia(mass_kg: float) -> tuple[float, ...]:
    """The chassis (less its wheels) as a solid cylinder of the footprint."""
    bottom, top = CHASSIS_Z_M
    return cylinder_inertia(mass_kg - 2 * WHEEL_MASS_KG, FOOTPRINT_RADIUS_M, top - bottom)


_Y_AXIS_QUAT = (math.cos(math.pi / 4), -math.sin(math.pi / 4), 0.0, 0.0)  # cylinder z → y


def _chassis_geoms(spec: DiffDriveSpec) -> tuple[LinkGeomSpec, ...]:
    """Chassis cylinder, the caster (its low friction and gentle contact onset taking
    precedence over the floor's), mast and camera head, relative to the axle's midpoint."""
    r = spec.wheel_radius_m
    bottom, top = CHASSIS_Z_M
    cam = camera_pos(r)
    caster = LinkGeomSpec(
        name="dd_caster",
        type="sphere",
        size=(CASTER_RADIUS_M,),
        pos=(CASTER_X_M, 0.0, CASTER_RADIUS_M - r),
        friction=(spec.caster_friction, 0.005, 0.0001),
        solimp=CASTER_SOLIMP,
        priority=1,
    )
    mast_top = CAMERA_HEIGHT_M - 0.02
    return (
        LinkGeomSpec(
            name="dd_chassis",
            type="cylinder",
            size=(FOOTPRINT_RADIUS_M, 0.5 * (top - bottom)),
            pos=(0.0, 0.0, 0.5 * (bottom + top) - r),
            rgba=(0.2, 0.2, 0.22, 1.0),
        ),
        caster,
        LinkGeomSpec(
            name="dd_mast",
            type="cylinder",
            size=(0.015, 0.5 * (mast_top - top)),
            pos=(-0.02, 0.0, 0.5 * (mast_top + top) - r),
            rgba=(0.7, 0.7, 0.72, 1.0),
        ),
        LinkGeomSpec(
            name="dd_head",
            type="box",
            size=(0.04, 0.09, 0.02),
            pos=(cam[0] - 0.04, 0.0, cam[2]),
        ),
    )


def _wheel_link(spec: DiffDriveSpec, joint: str, side: float) -> LinkSpec:
    """A wheel on the axle, turning about the body's y axis, gripping the floor."""
    r = spec.wheel_radius_m
    m, w = WHEEL_MASS_KG, WHEEL_WIDTH_M
    across = m * (3 * r * r + w * w) / 12
    return LinkSpec(
        name=f"dd_{joint}",
        parent=ROOT_LINK,
        pos=(0.0, side * 0.5 * spec.track_m, 0.0),
        mass_kg=m,
        inertia=(across, 0.5 * m * r * r, across),
        joints=(JointSpec(name=joint, type="hinge", axis=(0, 1, 0), armature=MOTOR_ARMATURE),),
        geoms=(
            LinkGeomSpec(
                name=f"dd_{joint}_tyre",
                type="cylinder",
                size=(r, 0.5 * w),
                quat=_Y_AXIS_QUAT,
                rgba=(0.05, 0.05, 0.05, 1.0),
                friction=(spec.wheel_friction, 0.005, 0.0001),
                solref=TYRE_SOLREF,
                priority=1,
            ),
        ),
    )


def diff_drive_body(spec: DiffDriveSpec) -> BodySpec:
    """The chassis on six unactuated pose joints, two wheel links, a motor on each wheel."""
    joints = free_pose_joints()
    chassis = LinkSpec(
        name=ROOT_LINK,
        mass_kg=spec.mass_kg - 2 * WHEEL_MASS_KG,
        inertia=spec.inertia,
        com=COM,
        joints=joints,
        geoms=_chassis_geoms(spec),
    )
    wheels = (_wheel_link(spec, WHEEL_JOINTS[0], 1.0), _wheel_link(spec, WHEEL_JOINTS[1], -1.0))
    actuators = tuple(ActuatorSpec(name=f"motor_{j}", joint=j) for j in WHEEL_JOINTS)
    return BodySpec(links=(chassis, *wheels), actuators=actuators, mount=ROOT_LINK)


def initial_qpos(spec: DiffDriveSpec) -> np.ndarray:
    """The chassis at its start pose with the wheels on the floor, wheel angles 0."""
    x, y, z = spec.start_pos
    return np.array([x, y, z, spec.start_yaw, 0.0, 0.0, 0.0, 0.0], dtype=float)
