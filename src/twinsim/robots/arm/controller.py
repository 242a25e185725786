"""The arm's joint controller: it interpolates the planned joint path and applies computed
torques, PD on the joint errors through the arm's mass matrix plus gravity compensation and
the path's feed-forward acceleration, clamped to the motors' torque limits.

The dynamics come from the body as data (`ArmDynamics`: each link's pose on its parent, hinge
axis, mass, centre of mass and principal moments, and the joints' armature) in NumPy, so the
controller needs no simulator; Coriolis and centrifugal terms are left to the feedback (the
scan is slow).
"""

from __future__ import annotations

import numpy as np
from scipy.interpolate import CubicSpline

from twinsim.geometry import quat_wxyz_to_matrix
from twinsim.model.body import BodySpec
from twinsim.robots.arm.spec import JOINT_NAMES, TORQUE_LIMITS, ArmSpec, arm_body
from twinsim.robots.common.limits import ClampedCommands

GRAVITY = 9.81
OMEGA = 20.0  # rad/s: the closed loop's natural frequency on every joint (critically damped)
#: the logged set-point: joint position, velocity and acceleration references
SETPOINT_COLUMNS = tuple(
    f"{kind}_{j}" for kind in ("q_ref", "qd_ref", "qdd_ref") for j in JOINT_NAMES
)


class JointPath:
    """The planned joint path: a clamped cubic spline through the timed waypoints (at rest at
    both ends, smooth in velocity and acceleration between), held at its ends outside them."""

    def __init__(self, t_s: np.ndarray, q: np.ndarray) -> None:
        self.t_s = np.asarray(t_s, float)
        self._spline = CubicSpline(self.t_s, np.asarray(q, float), bc_type="clamped")
        self._velocity = self._spline.derivative(1)
        self._acceleration = self._spline.derivative(2)

    @classmethod
    def of(cls, spec: ArmSpec) -> JointPath:
        """The path the spec planned."""
        return cls(np.array(spec.waypoint_t_s), np.array(spec.joint_waypoints))

    def sample(self, t_s) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Joint angles, velocities and accelerations at times t (rows where t is an array)."""
        t = np.asarray(t_s, float)
        inside = (t >= self.t_s[0]) & (t <= self.t_s[-1])
        tc = np.clip(t, self.t_s[0], self.t_s[-1])
        moving = inside[..., None] if t.ndim else inside
        return (
            self._spline(tc),
            np.where(moving, self._velocity(tc), 0.0),
            np.where(moving, self._acceleration(tc), 0.0),
        )


class ArmDynamics:
    """A serial arm's joint-space mass matrix and gravity torques from its body as data:
    links in kinematic order, the root welded, one hinge on each moving link."""

    def __init__(self, body: BodySpec) -> None:
        root = body.links[0]
        self._T_root = _pose(root.pos, root.quat)
        self._links = []
        index = {root.name: -1}
        for k, link in enumerate(body.links[1:]):
            if len(link.joints) > 1 or (link.joints and link.joints[0].type != "hinge"):
                raise ValueError(f"{link.name}: ArmDynamics takes one hinge per link at most")
            joint = link.joints[0] if link.joints else None
            self._links.append(
                (
                    index[link.parent],
                    _pose(link.pos, link.quat),
                    None if joint is None else np.asarray(joint.axis, float),
                    link.mass_kg,
                    np.asarray(link.centre_of_mass, float),
                    np.diag(link.inertia),
                )
            )
            index[link.name] = k
        self.armature = np.array([j.armature for j in body.joints])
        self.n = len(self.armature)

    def terms(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(M(q) (n, n) with the armature, gravity torques g(q) (n,) that hold the arm)."""
        n = self.n
        frames, axes, points, ancestors = [], [], [], []
        M, g = np.diag(self.armature).astype(float), np.zeros(n)
        j = 0
        for parent, T_local, axis, mass, com, inertia in self._links:
            T = (self._T_root if parent < 0 else frames[parent]) @ T_local
            chain = [] if parent < 0 else list(ancestors[parent])
            if axis is not None:
                T = T @ _hinge(axis, q[j])
                axes.append(T[:3, :3] @ axis)
                points.append(T[:3, 3])
                chain.append(j)
                j += 1
            frames.append(T)
            ancestors.append(chain)
            c = T[:3, :3] @ com + T[:3, 3]
            Jv, Jw = np.zeros((3, n)), np.zeros((3, n))
            for i in chain:
                Jv[:, i] = np.cross(axes[i], c - points[i])
                Jw[:, i] = axes[i]
            R = T[:3, :3]
            M += mass * Jv.T @ Jv + Jw.T @ (R @ inertia @ R.T) @ Jw
            g += mass * GRAVITY * Jv[2]
        return M, g


class ArmController:
    """Follows a joint path (planned, or live targets): set-points from it at t, torques from
    them."""

    def __init__(self, spec: ArmSpec, path=None) -> None:
        """`path`: what gives (q, qd, qdd) at t (`sample`); the planned `JointPath` by
        default, a `LiveJoints` in a closed-loop run."""
        self.path = path if path is not None else JointPath.of(spec)
        self.dynamics = ArmDynamics(arm_body(spec))
        self.kp, self.kd = OMEGA**2, 2.0 * OMEGA
        self.torque_limit = np.array(TORQUE_LIMITS)
        self.clamped = ClampedCommands()

    def setpoint(self, t_s: float, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """The path's joint angles, velocities and accelerations at t."""
        return np.concatenate(self.path.sample(t_s))

    def effort(self, setpoint: np.ndarray, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """Computed torques: M(q)·(qdd_ref + kp·e + kd·ė) + g(q), within the torque limits."""
        q_ref, qd_ref, qdd_ref = np.split(setpoint, 3)
        M, g = self.dynamics.terms(q)
        acc = qdd_ref + self.kp * (q_ref - q) + self.kd * (qd_ref - qd)
        limit = self.torque_limit
        return self.clamped.clip("torque_nm", M @ acc + g, -limit, limit)


def _pose(pos, quat) -> np.ndarray:
    T = np.eye(4)
    T[:3, :3] = quat_wxyz_to_matrix(quat)
    T[:3, 3] = pos
    return T


def _hinge(axis: np.ndarray, angle: float) -> np.ndarray:
    """The rotation by `angle` about the unit `axis` (Rodrigues), as a 4×4 transform."""
    K = np.array([[0.0, -axis[2], axis[1]], [axis[2], 0.0, -axis[0]], [-axis[1], axis[0], 0.0]])
    T = np.eye(4)
    T[:3, :3] = np.eye(3) + np.sin(angle) * K + (1.0 - np.cos(angle)) * K @ K
    return T
