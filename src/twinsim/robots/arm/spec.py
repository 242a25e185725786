"""A fixed-base 7-joint manipulator (Franka Emika Panda class) with a wrist camera, as data:
its config, its resolved spec (the planned scan) and its links, joints and motors.

Kinematics are the Panda's public ones (Franka's documented modified DH parameters: d1 0.333,
d3 0.316, a4 0.0825, a5 -0.0825, d5 0.384, a7 0.088, flange 0.107 m), as are the joint ranges,
the joint speed limits (2.175 rad/s for joints 1-4, 2.61 for 5-7) and the torque limits (87 Nm
for joints 1-4, 12 Nm for 5-7). Masses and centres of mass follow Franka's published dynamic
model (as MuJoCo Menagerie's `franka_emika_panda` carries it); the principal moments are the
diagonal of that model's inertia tensors, rounded. The collision shapes (capsules and boxes),
the hand (no fingers), the 0.1 kg·m² rotor armature and the pedestal are our choices.

The root link (`arm_base`) has no joint: the engine welds it to the world at its start pose,
on a pedestal standing on the floor. Joints, in kinematic order: `joint1` … `joint7`, hinges
about each link's z axis. The mount link is the hand on the flange (`arm_hand`), x along the
approach axis, so sensors mount there and `groundtruth_body` is the wrist's pose.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from pydantic import Field, field_validator
from scipy.spatial.transform import Rotation

from twinsim.model.base import Quat, Vec3
from twinsim.model.body import ActuatorSpec, BodySpec, JointSpec, LinkGeomSpec, LinkSpec
from twinsim.model.scene import RobotSpec
from twinsim.robots.base import RobotConfig
from twinsim.scene.vocabulary import CLASS_ID

ROOT_LINK = "arm_base"
MOUNT_LINK = "arm_hand"
JOINT_NAMES: tuple[str, ...] = tuple(f"joint{i}" for i in range(1, 8))
#: Franka's joint ranges (rad)
JOINT_RANGES: tuple[tuple[float, float], ...] = (
    (-2.8973, 2.8973),
    (-1.7628, 1.7628),
    (-2.8973, 2.8973),
    (-3.0718, -0.0698),
    (-2.8973, 2.8973),
    (-0.0175, 3.7525),
    (-2.8973, 2.8973),
)
JOINT_SPEED_LIMITS = (2.175, 2.175, 2.175, 2.175, 2.61, 2.61, 2.61)  # rad/s
TORQUE_LIMITS = (87.0, 87.0, 87.0, 87.0, 12.0, 12.0, 12.0)  # N·m
#: the "ready" posture: the IK's first guess and the posture its redundancy leans to
READY_Q = (0.0, -math.pi / 4, 0.0, -3 * math.pi / 4, 0.0, math.pi / 2, math.pi / 4)
ARMATURE = 0.1  # kg·m²: rotor inertia through the gearbox (our choice)
PEDESTAL_HALF_M = 0.12  # the pedestal's square half side: the base's footprint
BASE_RADIUS_M = 0.17  # the base's round footprint for placement (the pedestal's corners)
FLANGE_M = 0.107
DEFAULT_CAMERA_POS: Vec3 = (0.06, 0.0, 0.05)  # on top of the hand, looking along x

_S = math.sqrt(0.5)
_RX_NEG = (_S, -_S, 0.0, 0.0)  # -90 deg about x
_RX_POS = (_S, _S, 0.0, 0.0)  # +90 deg about x
_LINK_GREY = (0.92, 0.92, 0.94, 1.0)
_LINK_DARK = (0.2, 0.2, 0.22, 1.0)

# Each moving link: its origin and frame on its parent, mass (kg), centre of mass and principal
# moments (kg·m²) in its frame, and its capsules (start, end, radius) in its frame, kept apart
# from every non-adjacent link's in the ready posture and those the scans reach.
_LINKS: tuple[tuple[Vec3, Quat, float, Vec3, Vec3, tuple], ...] = (
    (
        (0.0, 0.0, 0.333),
        (1.0, 0.0, 0.0, 0.0),
        4.970684,
        (0.003875, 0.002081, -0.04762),
        (0.70337, 0.70661, 0.009117),
        (((0.0, 0.0, -0.12), (0.0, 0.0, -0.02), 0.065),),
    ),
    (
        (0.0, 0.0, 0.0),
        _RX_NEG,
        0.646926,
        (-0.003141, -0.02872, 0.003495),
        (0.007962, 0.02811, 0.025995),
        (((0.0, -0.08, 0.0), (0.0, -0.19, 0.0), 0.06),),
    ),
    (
        (0.0, -0.316, 0.0),
        _RX_POS,
        3.228604,
        (0.027518, 0.039252, -0.066502),
        (0.037242, 0.036155, 0.01083),
        (((0.0, 0.0, -0.06), (0.06, 0.0, 0.0), 0.055),),
    ),
    (
        (0.0825, 0.0, 0.0),
        _RX_POS,
        3.587895,
        (-0.05317, 0.104419, 0.027454),
        (0.025853, 0.019552, 0.028323),
        (((-0.03, 0.13, 0.0), (-0.07, 0.29, 0.0), 0.05),),
    ),
    (
        (-0.0825, 0.384, 0.0),
        _RX_NEG,
        1.225946,
        (-0.011953, 0.041065, -0.038437),
        (0.035549, 0.029474, 0.008627),
        (((0.0, 0.0, -0.13), (0.0, 0.0, -0.06), 0.05),),
    ),
    (
        (0.0, 0.0, 0.0),
        _RX_POS,
        1.666555,
        (0.060149, -0.014117, -0.010517),
        (0.001964, 0.004354, 0.005433),
        (((0.04, 0.0, 0.0), (0.088, 0.0, 0.0), 0.045),),
    ),
    (
        (0.088, 0.0, 0.0),
        _RX_POS,
        0.735522,
        (0.010517, -0.004252, 0.061597),
        (0.012516, 0.010027, 0.004815),
        (((0.0, 0.0, 0.03), (0.0, 0.0, FLANGE_M - 0.02), 0.04),),
    ),
)
#: the hand on the flange: x along link 7's z (-90 deg about y), turned HAND_TWIST_DEG about that
#: axis so the camera's level pose in the scans sits mid-range of joint 7
HAND_TWIST_DEG = -110.0
_HAND_QUAT = tuple(
    float(v)
    for v in Rotation.from_euler("ZY", [HAND_TWIST_DEG, -90.0], degrees=True).as_quat(
        scalar_first=True
    )
)
_HAND_MASS_KG = 0.73
_BASE_MASS_KG = 0.629769


class ArmConfig(RobotConfig):
    """A Panda-class arm on a pedestal beside a table, scanning it with its wrist camera.

    `targets` are the semantic classes it may scan, in order of preference; the camera keeps
    `scan_radius_m` from the centre of the chosen object's top, sweeping `arc_span_deg` of
    azimuth at each of `elevations_deg` (one pass each, back and forth) over the run, no joint
    faster than `max_joint_speed_dps`; every link keeps `clearance_m` from the furniture.
    `pedestal_height_m` None puts the shoulder 0.2 m above the top (`scan.py`).
    """

    kind: Literal["arm"] = "arm"
    model: Literal["panda"] = "panda"
    targets: tuple[str, ...] = ("table", "desk", "counter")
    scan_radius_m: float = Field(0.5, ge=0.3, le=0.8)
    arc_span_deg: float = Field(120.0, gt=0.0, le=180.0)
    elevations_deg: tuple[float, ...] = Field((40.0, 65.0), min_length=1, max_length=4)
    max_joint_speed_dps: float = Field(60.0, gt=0.0, le=math.degrees(min(JOINT_SPEED_LIMITS)))
    clearance_m: float = Field(0.03, ge=0.0, le=0.2)
    pedestal_height_m: float | None = Field(None, ge=0.0, le=1.2)

    @field_validator("targets")
    @classmethod
    def _known_classes(cls, targets: tuple[str, ...]) -> tuple[str, ...]:
        """Each target is a class of the vocabulary (`twinsim.scene.vocabulary`)."""
        unknown = [t for t in targets if t not in CLASS_ID]
        if unknown or not targets:
            raise ValueError(f"targets must name semantic classes; unknown: {unknown or 'none'}")
        return targets

    @field_validator("elevations_deg")
    @classmethod
    def _above_the_top(cls, elevations: tuple[float, ...]) -> tuple[float, ...]:
        """The camera looks down on the top: every elevation in [10, 85] degrees."""
        if any(not 10.0 <= e <= 85.0 for e in elevations):
            raise ValueError(f"elevations_deg {elevations}: each must lie in [10, 85]")
        return elevations


class ArmSpec(RobotSpec):
    """The arm of a run: its base pose (`start_pos` is the base link's origin on the
    pedestal, `start_yaw` its heading), the scanned object, and the planned scan: the camera's
    poses and the joint angles reaching them at `waypoint_t_s` (the controller interpolates
    the joint path)."""

    kind: Literal["arm"] = "arm"
    model: Literal["panda"] = "panda"
    pedestal_height_m: float
    target_instance_id: int
    target_point: Vec3
    max_joint_speed_dps: float
    waypoint_t_s: tuple[float, ...]
    joint_waypoints: tuple[tuple[float, ...], ...]
    camera_waypoints: tuple[tuple[float, ...], ...]  # x, y, z, qw, qx, qy, qz of T_world_cam


def capsule(name: str, a: Vec3, b: Vec3, radius: float, rgba=_LINK_GREY) -> LinkGeomSpec:
    """A capsule from point a to point b of its link's frame."""
    a_, b_ = np.asarray(a, float), np.asarray(b, float)
    axis = b_ - a_
    length = float(np.linalg.norm(axis))
    z = axis / length
    w = 1.0 + z[2]
    if w < 1e-9:  # pointing down -z: half a turn about x
        quat: Quat = (0.0, 1.0, 0.0, 0.0)
    else:  # the shortest rotation taking z to `axis`
        q = np.array([w, -z[1], z[0], 0.0])
        quat = tuple(float(v) for v in q / np.linalg.norm(q))
    centre = tuple(float(v) for v in 0.5 * (a_ + b_))
    return LinkGeomSpec(
        name=name, type="capsule", size=(radius, 0.5 * length), pos=centre, quat=quat, rgba=rgba
    )


def _base_link(pos: Vec3, yaw: float, h: float) -> LinkSpec:
    """The base at `pos`, heading `yaw`, on a pedestal `h` tall (down to the floor), welded to
    the world."""
    geoms = [
        LinkGeomSpec(
            name="arm_base_body",
            type="cylinder",
            size=(0.075, 0.1),
            pos=(0.0, 0.0, 0.1),
            rgba=_LINK_GREY,
        )
    ]
    if h > 0.0:
        geoms.append(
            LinkGeomSpec(
                name="arm_pedestal",
                type="box",
                size=(PEDESTAL_HALF_M, PEDESTAL_HALF_M, 0.5 * h),
                pos=(0.0, 0.0, -0.5 * h),
                rgba=_LINK_DARK,
            )
        )
    return LinkSpec(
        name=ROOT_LINK,
        pos=pos,
        quat=(math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2)),
        mass_kg=_BASE_MASS_KG,
        inertia=(0.003, 0.003, 0.003),
        geoms=tuple(geoms),
    )


def _hand_link(parent: str) -> LinkSpec:
    """The hand on the flange, x along the approach axis, with the wrist camera's housing."""
    return LinkSpec(
        name=MOUNT_LINK,
        parent=parent,
        pos=(0.0, 0.0, FLANGE_M),
        quat=_HAND_QUAT,
        mass_kg=_HAND_MASS_KG,
        inertia=(0.0025, 0.0017, 0.001),
        com=(0.03, 0.0, 0.0),
        geoms=(
            LinkGeomSpec(
                name="arm_hand_box", type="box", size=(0.03, 0.09, 0.025), pos=(0.03, 0.0, 0.0)
            ),
            LinkGeomSpec(
                name="arm_camera",
                type="box",
                size=(0.013, 0.045, 0.013),
                pos=(DEFAULT_CAMERA_POS[0] - 0.015, 0.0, DEFAULT_CAMERA_POS[2]),
            ),
        ),
    )


def arm_body(spec: ArmSpec) -> BodySpec:
    """The arm of a run (`arm_body_at` its base pose)."""
    return arm_body_at(spec.start_pos, spec.start_yaw, spec.pedestal_height_m)


def arm_body_at(pos: Vec3, yaw: float, pedestal_height_m: float) -> BodySpec:
    """The base welded at `pos` (heading `yaw`) on its pedestal, seven jointed links, the
    hand; a motor per joint."""
    links = [_base_link(pos, yaw, pedestal_height_m)]
    for i, (pos, quat, mass, com, inertia, capsules) in enumerate(_LINKS):
        name = f"arm_link{i + 1}"
        joint = JointSpec(
            name=JOINT_NAMES[i],
            type="hinge",
            axis=(0.0, 0.0, 1.0),
            range=JOINT_RANGES[i],
            armature=ARMATURE,
        )
        geoms = tuple(
            capsule(f"{name}_c{k}", a, b, r, _LINK_DARK if i % 2 else _LINK_GREY)
            for k, (a, b, r) in enumerate(capsules)
        )
        links.append(
            LinkSpec(
                name=name,
                parent=links[-1].name,
                pos=pos,
                quat=quat,
                mass_kg=mass,
                inertia=inertia,
                com=com,
                joints=(joint,),
                geoms=geoms,
            )
        )
    links.append(_hand_link(links[-1].name))
    actuators = tuple(ActuatorSpec(name=f"motor_{j}", joint=j) for j in JOINT_NAMES)
    return BodySpec(links=tuple(links), actuators=actuators, mount=MOUNT_LINK)
