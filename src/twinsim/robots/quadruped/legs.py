"""The quadruped's leg kinematics in closed form, in NumPy, from its body as data: forward
kinematics, Jacobians, inverse kinematics and gravity torques of all four legs at once.

Everything is in the trunk frame. A leg's chain: the abduction hinge about x at its hip
(`HIP_POS`), the thigh's plane `THIGH_OFFSET_M` outboard, the flexion hinge and the knee about
the abducted y axis, thigh and calf `THIGH_M`, `CALF_M` long, straight down at zero angles.
Arrays are (4, 3): one row per leg (`LEGS` order), one column per joint or per axis.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from twinsim.robots.quadruped.spec import (
    CALF_COM,
    CALF_M,
    CALF_MASS_KG,
    HIP_MASS_KG,
    HIP_POS,
    SIDE,
    THIGH_M,
    THIGH_MASS_KG,
    THIGH_OFFSET_M,
    hip_com,
    thigh_com,
)

_HIP_COM = np.array([hip_com(i) for i in range(4)])
_THIGH_COM = np.array([thigh_com(i) for i in range(4)])
_CALF_COM = np.array([CALF_COM] * 4)
#: each leg's thigh plane on the trunk at zero abduction: where its foot stands by default
SHOULDER_POS = HIP_POS + np.stack([np.zeros(4), SIDE * THIGH_OFFSET_M, np.zeros(4)], axis=1)


def _rot_x(a: np.ndarray) -> np.ndarray:
    c, s = np.cos(a), np.sin(a)
    r = np.zeros((len(a), 3, 3))
    r[:, 0, 0] = 1.0
    r[:, 1, 1], r[:, 1, 2], r[:, 2, 1], r[:, 2, 2] = c, -s, s, c
    return r


def _rot_y(a: np.ndarray) -> np.ndarray:
    c, s = np.cos(a), np.sin(a)
    r = np.zeros((len(a), 3, 3))
    r[:, 1, 1] = 1.0
    r[:, 0, 0], r[:, 0, 2], r[:, 2, 0], r[:, 2, 2] = c, s, -s, c
    return r


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cross products of (n, 3) arrays (NumPy's `cross` is slow for small arrays)."""
    out = np.empty(np.broadcast_shapes(a.shape, b.shape))
    out[..., 0] = a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1]
    out[..., 1] = a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2]
    out[..., 2] = a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    return out


@dataclass(frozen=True)
class LegFrames:
    """The joints' origins and axes of the four legs at one configuration (trunk frame)."""

    r_hip: np.ndarray  # (4, 3, 3) the hip link's rotation (after abduction)
    r_thigh: np.ndarray
    r_calf: np.ndarray
    o_thigh: np.ndarray  # (4, 3) the flexion joint's origin
    o_knee: np.ndarray
    foot: np.ndarray  # (4, 3) the foot sphere's centre
    axis_y: np.ndarray  # (4, 3) the flexion and knee axis

    def jacobian(self, point: np.ndarray, upto: int = 3) -> np.ndarray:
        """(4, 3, 3) d point / d (abduction, flexion, knee) for a point on link `upto` (1 hip,
        2 thigh, 3 calf); joints after that link give zero columns."""
        r = point - HIP_POS
        jac = np.zeros((*point.shape, 3))
        jac[..., 1, 0], jac[..., 2, 0] = -r[..., 2], r[..., 1]  # x̂ × r
        if upto > 1:
            jac[..., 1] = cross(self.axis_y, point - self.o_thigh)
        if upto > 2:
            jac[..., 2] = cross(self.axis_y, point - self.o_knee)
        return jac


def leg_frames(q: np.ndarray) -> LegFrames:
    """The legs' frames at joint angles `q` (4, 3)."""
    r_hip = _rot_x(q[:, 0])
    r_thigh = r_hip @ _rot_y(q[:, 1])
    r_calf = r_thigh @ _rot_y(q[:, 2])
    o_thigh = HIP_POS + r_hip[:, :, 1] * (SIDE * THIGH_OFFSET_M)[:, None]
    o_knee = o_thigh - r_thigh[:, :, 2] * THIGH_M
    foot = o_knee - r_calf[:, :, 2] * CALF_M
    return LegFrames(r_hip, r_thigh, r_calf, o_thigh, o_knee, foot, r_hip[:, :, 1])


def foot_positions(q: np.ndarray) -> np.ndarray:
    """(4, 3) the feet's centres in the trunk frame at joint angles `q` (4, 3)."""
    return leg_frames(q).foot


def leg_ik(foot: np.ndarray) -> np.ndarray:
    """(4, 3) joint angles that put each foot's centre at `foot` (4, 3, trunk frame), knee
    bent backwards; points out of reach are pulled onto the nearest reachable one."""
    p = foot - HIP_POS
    d = SIDE * THIGH_OFFSET_M
    yz2 = np.maximum(p[:, 1] ** 2 + p[:, 2] ** 2 - d**2, 1e-6)
    c = -np.sqrt(yz2)  # the foot's height below the hip in the abducted leg plane
    q1 = np.arctan2(p[:, 2], p[:, 1]) - np.arctan2(c, d)
    q1 = np.arctan2(np.sin(q1), np.cos(q1))
    a = p[:, 0]
    reach = np.hypot(a, c)
    reach = np.clip(reach, abs(THIGH_M - CALF_M) + 1e-3, THIGH_M + CALF_M - 1e-4)
    cos_knee = (reach**2 - THIGH_M**2 - CALF_M**2) / (2 * THIGH_M * CALF_M)
    q3 = -np.arccos(np.clip(cos_knee, -1.0, 1.0))
    q2 = np.arctan2(-a, -c) - np.arctan2(CALF_M * np.sin(q3), THIGH_M + CALF_M * np.cos(q3))
    return np.stack([q1, q2, q3], axis=1)


def gravity_torques(frames: LegFrames, gravity_trunk: np.ndarray) -> np.ndarray:
    """(4, 3) joint torques holding the legs' own weight against `gravity_trunk` (3,), the
    gravity vector in the trunk frame (m/s²)."""
    links = (
        (HIP_MASS_KG, frames.r_hip, HIP_POS, _HIP_COM, 1),
        (THIGH_MASS_KG, frames.r_thigh, frames.o_thigh, _THIGH_COM, 2),
        (CALF_MASS_KG, frames.r_calf, frames.o_knee, _CALF_COM, 3),
    )
    tau = np.zeros((4, 3))
    for mass, rot, origin, com, upto in links:
        point = origin + np.einsum("lij,lj->li", rot, com)
        jac = frames.jacobian(point, upto)
        tau -= np.einsum("lij,i->lj", jac, mass * gravity_trunk)
    return tau


def body_com(q: np.ndarray, trunk_com: np.ndarray, trunk_mass: float) -> np.ndarray:
    """The whole robot's centre of mass in the trunk frame at joint angles `q` (4, 3)."""
    frames = leg_frames(q)
    total = trunk_mass * trunk_com
    mass = trunk_mass
    for m, rot, origin, com in (
        (HIP_MASS_KG, frames.r_hip, HIP_POS, _HIP_COM),
        (THIGH_MASS_KG, frames.r_thigh, frames.o_thigh, _THIGH_COM),
        (CALF_MASS_KG, frames.r_calf, frames.o_knee, _CALF_COM),
    ):
        total = total + m * (origin + np.einsum("lij,lj->li", rot, com)).sum(axis=0)
        mass += 4 * m
    return total / mass
