"""The quadruped's motion source: a path follower giving body-frame `(vx, vy, ω)` commands
along the planned ground tour, a trot, and leg torques from a virtual model of the trunk.

`setpoint` (once per physics step of a run) closes the follower on the trunk's pose: the
reference velocity plus a proportional pull onto the reference position, and the reference yaw
rate plus one onto its heading, clamped to the robot's limits. The reference runs on a path
clock that keeps the run's time while the robot keeps up and waits while it is held up, so it
never cuts across to a reference far ahead. The set-point also integrates the planar velocity
error (bounded): without it the trunk walks at ~85 % of its command (soft contacts and the
legs' own dynamics eat part of the stance force). It then plans the swinging feet: each lifts
off where it stood (latched at lift-off), moves across and comes down on a Raibert foothold
below its hip at touchdown; that point becomes joint targets by the legs' inverse kinematics,
in the trunk's frame of this instant. Contacts are the gait's schedule, never the physics'.

`effort` needs only the set-point and the state (no state of its own), so a control-mode
replay of the logged set-points repeats the run: stance feet share the ground force a virtual
spring-damper on trunk height, roll and pitch, and dampers on planar velocity (plus the logged
integral) and yaw rate ask of them (a regularised least-squares split over the stance feet,
kept inside a friction cone), mapped to joint torques by the feet's Jacobians (J^T); swing legs
follow their joint targets by PD; every leg carries its own weight (gravity compensation);
torques are clipped to the motors' limits.

Set-point columns: the command (`cmd_vx`, `cmd_vy` m/s, `cmd_wz` rad/s, body frame), the path
time it tracks (`path_t`, s), the gait's phase, the velocity error's integral (heading frame,
m), the planned contact of each foot (0/1), and each joint's target angle and rate (a stance
leg's are its measured ones: it is force-controlled).
"""

from __future__ import annotations

import numpy as np

from twinsim.model.trajectory import Trajectory
from twinsim.robots.common.limits import ClampedCommands
from twinsim.robots.quadruped.gait import TrotGait, raibert_foothold, swing_foot
from twinsim.robots.quadruped.legs import (
    SHOULDER_POS,
    body_com,
    cross,
    gravity_torques,
    leg_frames,
    leg_ik,
)
from twinsim.robots.quadruped.spec import (
    FOOT_RADIUS_M,
    JOINT_NAMES,
    LEG_QPOS,
    LEGS,
    MASS_KG,
    TORQUE_LIMITS,
    TRUNK_COM,
    TRUNK_MASS_KG,
    QuadrupedSpec,
)

G = 9.81
K_POS, K_YAW = 1.5, 2.0  # follower: 1/s on the position error, 1/s on the heading error
#: the path's clock runs on while the lag (position error plus this per rad of heading error)
#: is below KEEP_UP_M and stops beyond WAIT_M
KEEP_UP_M, WAIT_M, YAW_LAG_M_PER_RAD = 0.15, 0.4, 0.3
KV_XY, KW_Z = 6.0, 12.0  # 1/s (times the mass) on planar velocity; N·m per rad/s on yaw rate
KI_XY, MAX_INTEGRAL_M = 15.0, 0.06  # 1/s² (times the mass) on its integral, and its bound
KZ, DZ = 1500.0, 150.0  # N/m, N·s/m on trunk height
K_TILT, D_TILT = np.array([120.0, 150.0]), np.array([6.0, 8.0])  # roll, pitch: N·m/rad, N·m·s/rad
FRICTION = 0.6  # the friction cone the stance forces keep inside (below the feet's 0.9)
MIN_FZ = 2.0  # N: each stance foot presses at least this
RAIBERT_GAIN = 0.15  # s: foothold shift per m/s of velocity error
MAX_STEP_M = 0.12  # the foothold's furthest reach from the hip's touchdown point
TOUCHDOWN_DEPTH_M = 0.002  # a swing ends this far below the floor, so it lands
KP_SWING, KD_SWING = np.array([80.0, 80.0, 80.0]), np.array([2.0, 2.0, 2.0])
#: the split's weights: the trunk's rotation counts more than its translation
_WRENCH_WEIGHT = np.array([1.0, 1.0, 1.0, 20.0, 20.0, 20.0])
_REGULARISE = 1e-3

SETPOINT_COLUMNS: tuple[str, ...] = (
    "cmd_vx",
    "cmd_vy",
    "cmd_wz",
    "path_t",
    "gait_phase",
    "vel_integral_x",
    "vel_integral_y",
    *(f"contact_{leg}" for leg in LEGS),
    *(f"q_ref_{j}" for j in JOINT_NAMES),
    *(f"qd_ref_{j}" for j in JOINT_NAMES),
)
_CMD, _INTEGRAL, _CONTACT = slice(0, 3), slice(5, 7), slice(7, 11)
_Q_REF, _QD_REF = slice(11, 23), slice(23, 35)


def trunk_rotation(q: np.ndarray) -> np.ndarray:
    """The trunk's rotation Rz(yaw)·Ry(pitch)·Rx(roll) from its pose joints."""
    yaw, pitch, roll = q[3], q[4], q[5]
    cy, sy, cp, sp, cr, sr = (f(a) for a in (yaw, pitch, roll) for f in (np.cos, np.sin))
    return np.array(
        [
            [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
            [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
            [-sp, cp * sr, cp * cr],
        ]
    )


def trunk_angular_velocity(q: np.ndarray, qd: np.ndarray) -> np.ndarray:
    """The trunk's angular velocity in the world frame from its Euler angle rates."""
    yaw, pitch = q[3], q[4]
    cy, sy, cp, sp = np.cos(yaw), np.sin(yaw), np.cos(pitch), np.sin(pitch)
    return (
        np.array([0.0, 0.0, 1.0]) * qd[3]
        + np.array([-sy, cy, 0.0]) * qd[4]
        + np.array([cy * cp, sy * cp, -sp]) * qd[5]
    )


def _rot_z(yaw: float) -> np.ndarray:
    c, s = np.cos(yaw), np.sin(yaw)
    return np.array([[c, -s], [s, c]])


def _cross_z(w: float, r: np.ndarray) -> np.ndarray:
    """ω ẑ × r for planar vectors r (n, 2)."""
    return w * np.stack([-r[:, 1], r[:, 0]], axis=1)


def _skew(r: np.ndarray) -> np.ndarray:
    return np.array([[0.0, -r[2], r[1]], [r[2], 0.0, -r[0]], [-r[1], r[0], 0.0]])


def split_wrench(feet: np.ndarray, wrench: np.ndarray) -> np.ndarray:
    """(n, 3) ground forces on the feet at `feet` (n, 3, relative to the centre of mass) whose
    sum and moment best give `wrench` (force, torque; world frame), near an even share of the
    weight, each pushing down within the friction cone."""
    n = len(feet)
    a = np.zeros((6, 3 * n))
    for i, r in enumerate(feet):
        a[:3, 3 * i : 3 * i + 3] = np.eye(3)
        a[3:, 3 * i : 3 * i + 3] = _skew(r)
    even = np.tile([0.0, 0.0, wrench[2] / n], n)
    w = _WRENCH_WEIGHT
    lhs = a.T @ (w[:, None] * a) + _REGULARISE * np.eye(3 * n)
    forces = (even + np.linalg.solve(lhs, a.T @ (w * (wrench - a @ even)))).reshape(n, 3)
    forces[:, 2] = np.maximum(forces[:, 2], MIN_FZ)
    planar = np.hypot(forces[:, 0], forces[:, 1])
    scale = np.minimum(1.0, FRICTION * forces[:, 2] / np.maximum(planar, 1e-9))
    forces[:, :2] *= scale[:, None]
    return forces


class QuadrupedController:
    """Follows a trajectory with body-frame velocity commands on a trot: virtual-model stance
    forces through J^T, swing feet by joint PD, gravity compensation."""

    def __init__(self, robot: QuadrupedSpec, trajectory: Trajectory, physics_hz: int) -> None:
        self.robot = robot
        self.trajectory = trajectory
        self.dt = 1.0 / physics_hz
        self.gait = TrotGait(robot.gait_period_s, robot.duty_factor)
        stand = leg_ik(SHOULDER_POS - np.array([0.0, 0.0, robot.stand_height_m - FOOT_RADIUS_M]))
        self.com = body_com(stand, np.array(TRUNK_COM), TRUNK_MASS_KG)
        self._lift_off = np.zeros((4, 3))  # where each swinging foot left the floor (world)
        self._swinging = np.zeros(4, dtype=bool)
        self._integral = np.zeros(2)  # the planar velocity error's integral, heading frame (m)
        self._path_t: float | None = None  # the path time the follower tracks
        self.clamped = ClampedCommands()  # what it cut to the robot's limits (metadata)

    def command(self, t_s: float, q: np.ndarray) -> np.ndarray:
        """The follower's body-frame (vx, vy, ω) for the trunk pose, within the limits, and
        the path time it tracks: the path's clock runs with the run's while the trunk keeps
        up, slows as it falls behind and waits beyond `WAIT_M` (held up by a person, say), so
        the robot catches up along its path instead of cutting across to a reference ahead."""
        if self._path_t is None:
            self._path_t = t_s
        ref = self.trajectory.reference(self._path_t)
        yaw = q[3]
        e_pos = ref.pos[:2] - q[:2]
        e_yaw = np.arctan2(np.sin(ref.yaw - yaw), np.cos(ref.yaw - yaw))
        lag = float(np.hypot(*e_pos)) + YAW_LAG_M_PER_RAD * abs(e_yaw)
        rate = float(np.clip((WAIT_M - lag) / (WAIT_M - KEEP_UP_M), 0.0, 1.0))
        v_world = rate * ref.vel[:2] + K_POS * e_pos
        w = rate * ref.yaw_rate + K_YAW * e_yaw
        v = _rot_z(-yaw) @ v_world
        speed, max_v = float(np.hypot(*v)), self.robot.max_speed_mps
        self.clamped.note("speed_mps", speed, max_v)
        if speed > max_v:
            v = v * (max_v / speed)
        max_w = np.deg2rad(self.robot.max_yaw_rate_dps)
        w = self.clamped.clip("wz_radps", w, -max_w, max_w)
        command = np.array([v[0], v[1], w, self._path_t])
        self._path_t = min(self._path_t + rate * self.dt, t_s + self.dt)
        return command

    def setpoint(self, t_s: float, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """The command, the gait's phase and planned contacts, and the legs' joint targets
        (a stance leg's are its measured angles and rates: it is force-controlled)."""
        command = self.command(t_s, q)
        cmd = command[:3]
        v_heading = _rot_z(-q[3]) @ qd[:2]
        self._integral = np.clip(
            self._integral + (cmd[:2] - v_heading) * self.dt, -MAX_INTEGRAL_M, MAX_INTEGRAL_M
        )
        stance = self.gait.stance(t_s)
        progress = self.gait.swing_progress(t_s)
        q_legs, qd_legs = q[LEG_QPOS].reshape(4, 3), qd[LEG_QPOS].reshape(4, 3)
        q_ref, qd_ref = q_legs.copy(), qd_legs.copy()
        rot, pos = trunk_rotation(q), q[:3]
        frames = leg_frames(q_legs)
        lifting = ~stance & ~self._swinging
        self._lift_off[lifting] = pos + frames.foot[lifting] @ rot.T
        self._swinging = ~stance
        if self._swinging.any():
            legs = np.flatnonzero(self._swinging)
            target = self._foothold(t_s, q, qd, cmd, legs, progress[legs])
            foot_w, vel_w = swing_foot(
                self._lift_off[legs],
                target,
                progress[legs],
                self.robot.swing_height_m,
                self.gait.swing_s,
            )
            omega = trunk_angular_velocity(q, qd)
            foot_b = (foot_w - pos) @ rot
            vel_b = (vel_w - qd[:3] - cross(omega, foot_w - pos)) @ rot
            ik = np.zeros((4, 3))
            ik[legs] = foot_b
            q_ik = leg_ik(ik)[legs]
            q_full = q_legs.copy()
            q_full[legs] = q_ik
            at_ref = leg_frames(q_full)
            jac = at_ref.jacobian(at_ref.foot)[legs]
            jtj = np.einsum("lki,lkj->lij", jac, jac) + 1e-4 * np.eye(3)
            qd_ik = np.linalg.solve(jtj, np.einsum("lki,lk->li", jac, vel_b)[..., None])[..., 0]
            q_ref[legs], qd_ref[legs] = q_ik, qd_ik
        return np.concatenate(
            [
                command,
                [self.gait.phase(t_s)],
                self._integral,
                stance.astype(float),
                q_ref.ravel(),
                qd_ref.ravel(),
            ]
        )

    def _foothold(
        self,
        t_s: float,
        q: np.ndarray,
        qd: np.ndarray,
        cmd: np.ndarray,
        legs: np.ndarray,
        progress: np.ndarray,
    ) -> np.ndarray:
        """(n, 3) where the swinging `legs` land (world frame): below the hip at touchdown,
        Raibert's shift for the velocity, within reach, on the floor."""
        yaw_rot = _rot_z(q[3])
        hips = SHOULDER_POS[legs, :2] @ yaw_rot.T  # from the trunk's centre, world axes
        v_cmd = yaw_rot @ cmd[:2]
        w = trunk_angular_velocity(q, qd)[2]
        hip_vel = qd[:2] + _cross_z(w, hips)
        hip_vel_cmd = v_cmd + _cross_z(cmd[2], hips)
        left_s = (1.0 - progress)[:, None] * self.gait.swing_s
        hip_td = q[:2] + hips + hip_vel * left_s
        xy = raibert_foothold(hip_td, hip_vel, hip_vel_cmd, self.gait.stance_s, RAIBERT_GAIN)
        step = xy - hip_td
        reach = np.hypot(step[:, 0], step[:, 1])[:, None]
        xy = hip_td + step * np.minimum(1.0, MAX_STEP_M / np.maximum(reach, 1e-9))
        z = np.full((len(legs), 1), FOOT_RADIUS_M - TOUCHDOWN_DEPTH_M)
        return np.concatenate([xy, z], axis=1)

    def _body_wrench(self, setpoint: np.ndarray, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """The force and torque (world frame, about the centre of mass) the stance feet should
        apply to hold the trunk's height and attitude and track the command."""
        yaw = q[3]
        yaw_rot = _rot_z(yaw)
        v_cmd = yaw_rot @ setpoint[_CMD][:2]
        integral = yaw_rot @ setpoint[_INTEGRAL]
        force = np.array(
            [
                *(MASS_KG * (KV_XY * (v_cmd - qd[:2]) + KI_XY * integral)),
                MASS_KG * G + KZ * (self.robot.stand_height_m - q[2]) - DZ * qd[2],
            ]
        )
        omega = trunk_angular_velocity(q, qd)
        omega_yaw = np.array([*(yaw_rot.T @ omega[:2]), omega[2]])  # in the heading's frame
        tilt = np.array([q[5], q[4]])
        torque_xy = -K_TILT * tilt - D_TILT * omega_yaw[:2]
        torque = np.array([*(yaw_rot @ torque_xy), KW_Z * (setpoint[_CMD][2] - omega[2])])
        return np.concatenate([force, torque])

    def effort(self, setpoint: np.ndarray, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """Joint torques for the set-point in this state: stance forces through J^T, swing PD
        to the joint targets, gravity compensation, clipped to the motors' limits."""
        q_legs, qd_legs = q[LEG_QPOS].reshape(4, 3), qd[LEG_QPOS].reshape(4, 3)
        rot = trunk_rotation(q)
        frames = leg_frames(q_legs)
        tau = gravity_torques(frames, rot.T @ np.array([0.0, 0.0, -G]))
        stance = setpoint[_CONTACT] > 0.5
        if stance.any():
            feet = (frames.foot[stance] - self.com) @ rot.T
            forces = split_wrench(feet, self._body_wrench(setpoint, q, qd))
            jac = frames.jacobian(frames.foot)[stance]
            tau[stance] -= np.einsum("lij,li->lj", jac, forces @ rot)
        swing = ~stance
        q_ref = setpoint[_Q_REF].reshape(4, 3)
        qd_ref = setpoint[_QD_REF].reshape(4, 3)
        tau[swing] += KP_SWING * (q_ref[swing] - q_legs[swing])
        tau[swing] += KD_SWING * (qd_ref[swing] - qd_legs[swing])
        hips, knees = TORQUE_LIMITS[0], TORQUE_LIMITS[2]
        tau[:, :2] = self.clamped.clip("hip_torque_nm", tau[:, :2], -hips, hips)
        tau[:, 2] = self.clamped.clip("knee_torque_nm", tau[:, 2], -knees, knees)
        return tau.ravel()
