"""GRADE's omnidirectional ground robot as data: its config, its resolved spec, and a planar
base of one joint per DOF with a camera mast.

GRADE drives a three-wheeled omnidirectional robot (iRotate's Festo Robotino) by one joint per
DOF, x, y and yaw, each under a PID joint controller taking position or velocity set-points.
Its paper gives no dimensions or limits for that robot; where it is silent the numbers are
Robotino-class values from iRotate's public Robotino model (eliabntt/irotate_active_slam,
`robotino_description`, `robotino_simulations`): footprint radius 0.22 m (`robot_radius`),
20 kg (the model's `BASE_MASS` note), three 0.04 m wheels 0.13 m from the centre, 120 deg
apart, acceleration 0.5 m/s² (`acc_lim_x`). The speed and yaw-rate limits are GRADE's UAV joint
limits (0.5 m/s, 30 deg/s, its Table 1), which the same per-joint PID design carries over.
The camera's height is our choice, 0.85 m: iRotate's model puts its pan unit 0.33 m above the
base and its D435 0.52 m along the holder on it.

Joints, in kinematic order: slides x, y (world axes), then a hinge yaw (z), so qpos reads as
the planar pose. The base link rides at a fixed `BODY_Z_M` above the floor with no pitch or
roll (it has no joint for them); its wheels are drawn 2 cm above the floor, since, as in
GRADE, the joints move the base and the wheels carry nothing.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from pydantic import Field

from twinsim.model.body import ActuatorSpec, BodySpec, JointSpec, LinkGeomSpec, LinkSpec
from twinsim.robots.common.ground_tour import GroundConfig, GroundShape, GroundSpec

JOINT_NAMES: tuple[str, ...] = ("x", "y", "yaw")
JOINT_AXES: tuple[tuple[float, float, float], ...] = ((1, 0, 0), (0, 1, 0), (0, 0, 1))
ROOT_LINK = "omni_base"
FOOTPRINT_RADIUS_M = 0.22
UNDERSIDE_M = 0.02  # the wheels' lowest point: lower obstacles (rugs) pass beneath
BODY_Z_M = 0.15  # the base link's origin above the floor (the robot's body frame)
CHASSIS_Z_M = (0.06, 0.30)  # the chassis cylinder's bottom and top above the floor
WHEEL_RADIUS_M = 0.04
WHEEL_OFFSET_M = 0.13
WHEEL_ANGLES_DEG = (60.0, 180.0, 300.0)
CAMERA_HEIGHT_M = 0.85
TOP_M = 0.88  # above the camera head's top (0.8625 m), the top of the band it keeps clear
#: where the default camera's optical centre sits on the body (front of the mast head)
CAMERA_POS = (0.08, 0.0, CAMERA_HEIGHT_M - BODY_Z_M)
SHAPE = GroundShape(
    footprint_radius_m=FOOTPRINT_RADIUS_M, underside_m=UNDERSIDE_M, top_m=TOP_M, body_z_m=BODY_Z_M
)


class OmniConfig(GroundConfig):
    """GRADE's omnidirectional ground robot: x, y, yaw joints under PID, GRADE's speed and
    yaw-rate limits, a Robotino's mass (module docstring)."""

    kind: Literal["omni"] = "omni"
    mass_kg: float = Field(20.0, gt=0.0)


class OmniSpec(GroundSpec):
    """The omnidirectional robot of a run: body, limits and the planned ground tour."""

    kind: Literal["omni"] = "omni"
    mass_kg: float
    inertia: tuple[float, float, float]


def cylinder_inertia(mass_kg: float, radius_m: float, height_m: float) -> tuple[float, ...]:
    """Principal moments of a solid upright cylinder."""
    side = mass_kg * (3 * radius_m**2 + height_m**2) / 12
    return (side, side, 0.5 * mass_kg * radius_m**2)


def _wheel(i: int, angle_deg: float) -> LinkGeomSpec:
    """An omni wheel `angle_deg` round the base, its axle radial (drawn, carrying nothing)."""
    a = math.radians(angle_deg)
    across = (-math.sin(a), math.cos(a), 0.0)  # turning z by 90 deg about this makes it radial
    s = math.sin(math.pi / 4)
    return LinkGeomSpec(
        name=f"omni_wheel{i}",
        type="cylinder",
        size=(WHEEL_RADIUS_M, 0.02),
        pos=(
            WHEEL_OFFSET_M * math.cos(a),
            WHEEL_OFFSET_M * math.sin(a),
            UNDERSIDE_M + WHEEL_RADIUS_M - BODY_Z_M,
        ),
        quat=(math.cos(math.pi / 4), s * across[0], s * across[1], 0.0),
        rgba=(0.85, 0.7, 0.1, 1.0),
    )


def omni_geoms() -> tuple[LinkGeomSpec, ...]:
    """Chassis cylinder, three wheels, the mast and the camera head (relative to the body)."""
    bottom, top = CHASSIS_Z_M
    mast_bottom, mast_top = top, CAMERA_HEIGHT_M - 0.025
    return (
        LinkGeomSpec(
            name="omni_chassis",
            type="cylinder",
            size=(FOOTPRINT_RADIUS_M, 0.5 * (top - bottom)),
            pos=(0.0, 0.0, 0.5 * (bottom + top) - BODY_Z_M),
            rgba=(0.75, 0.75, 0.78, 1.0),
        ),
        *(_wheel(i, a) for i, a in enumerate(WHEEL_ANGLES_DEG)),
        LinkGeomSpec(
            name="omni_mast",
            type="cylinder",
            size=(0.02, 0.5 * (mast_top - mast_bottom)),
            pos=(0.0, 0.0, 0.5 * (mast_bottom + mast_top) - BODY_Z_M),
        ),
        LinkGeomSpec(
            name="omni_head",
            type="box",
            size=(0.0125, 0.045, 0.0125),  # a D435's 25 x 90 x 25 mm
            pos=(CAMERA_POS[0] - 0.0125, 0.0, CAMERA_POS[2]),
        ),
        LinkGeomSpec(
            name="omni_head_arm",
            type="box",
            size=(0.5 * CAMERA_POS[0] - 0.0125, 0.01, 0.01),
            pos=(0.5 * CAMERA_POS[0] - 0.0125, 0.0, CAMERA_POS[2]),
        ),
    )


def omni_body(spec: OmniSpec) -> BodySpec:
    """One link on the x, y, yaw joints at the base height, a motor on each joint."""
    return planar_body(ROOT_LINK, spec.mass_kg, spec.inertia, BODY_Z_M, omni_geoms(), 1e-4, "motor")


def planar_body(
    root: str,
    mass_kg: float,
    inertia,
    z_m: float,
    geoms,
    armature: float,
    actuator: str,
    com: tuple[float, float, float] | None = None,
) -> BodySpec:
    """One link `root` on the planar x, y, yaw joints at height `z_m` with an actuator
    `<actuator>_<joint>` on each joint (the omni base's and the car's body); its centre of
    mass at `com` (None: its geoms' centroid)."""
    joints = tuple(
        JointSpec(
            name=name, type="hinge" if name == "yaw" else "slide", axis=axis, armature=armature
        )
        for name, axis in zip(JOINT_NAMES, JOINT_AXES, strict=True)
    )
    link = LinkSpec(
        name=root,
        pos=(0.0, 0.0, z_m),
        mass_kg=mass_kg,
        inertia=inertia,
        com=com,
        joints=joints,
        geoms=tuple(geoms),
    )
    actuators = tuple(ActuatorSpec(name=f"{actuator}_{j}", joint=j) for j in JOINT_NAMES)
    return BodySpec(links=(link,), actuators=actuators, mount=root)


def pose_to_qpos(xy, yaw: float) -> np.ndarray:
    """Joint positions for a planar pose (the joints are the pose's coordinates)."""
    return np.array([xy[0], xy[1], yaw], dtype=float)
