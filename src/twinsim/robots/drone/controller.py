"""Flight controller: follows a planned trajectory through the drone's PID joint controllers.

Roll and pitch follow the tilt a real multirotor needs for the commanded horizontal
acceleration (clamped to the angle limit, rate-limited), or stay at 0 when `horizontal`.
"""

from __future__ import annotations

import numpy as np

from twinsim.model.trajectory import Trajectory
from twinsim.robots.base import RobotLog
from twinsim.robots.common.limits import ClampedCommands
from twinsim.robots.common.pid import JointPid
from twinsim.robots.drone.spec import JOINT_NAMES, DroneSpec

GRAVITY = 9.81
#: the logged set-point: joint position and velocity references and feed-forward acceleration
SETPOINT_COLUMNS = tuple(
    f"{kind}_{j}" for kind in ("q_ref", "qd_ref", "qdd_ff") for j in JOINT_NAMES
)


class FlightController:
    """Turns a trajectory reference at time t into joint efforts for the six motors."""

    def __init__(self, robot: DroneSpec, trajectory: Trajectory, physics_hz: int) -> None:
        self.robot = robot
        self.trajectory = trajectory
        self.dt = 1.0 / physics_hz
        m = robot.mass_kg
        ixx, iyy, izz = robot.inertia
        self.effective_mass = np.array([m, m, m, izz, iyy, ixx])
        omega = np.array([6.0, 6.0, 8.0, 8.0, 12.0, 12.0])
        self.pid = JointPid(
            kp=omega**2,
            ki=np.array([2.0, 2.0, 4.0, 2.0, 0.0, 0.0]),
            kd=2.0 * omega,
            effort_limit=self.effective_mass * np.array([6.0, 6.0, 3 * GRAVITY, 20.0, 40.0, 40.0]),
        )
        self.position_mode = np.ones(6, dtype=bool)
        self._tilt = np.zeros(2)  # pitch, roll actually commanded (rate-limited)
        self.clamped = ClampedCommands()

    def setpoint(self, t_s: float, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """Joint set-points (q_ref, qd_ref, qdd_ff) from the trajectory at time t, yaw unwrapped
        next to the current yaw."""
        yaw_now = q[3]
        ref = self.trajectory.reference(t_s)
        yaw = yaw_now + np.arctan2(np.sin(ref.yaw - yaw_now), np.cos(ref.yaw - yaw_now))
        speed = np.linalg.norm(ref.vel)
        self.clamped.note("speed_mps", speed, self.robot.max_speed_mps)
        vel = ref.vel * min(1.0, self.robot.max_speed_mps / speed) if speed > 0 else ref.vel
        max_yaw_rate = np.deg2rad(self.robot.max_yaw_rate_dps)
        yaw_rate = float(
            self.clamped.clip("yaw_rate_radps", ref.yaw_rate, -max_yaw_rate, max_yaw_rate)
        )
        tilt_target = np.zeros(2)
        if not self.robot.horizontal:
            c, s = np.cos(yaw), np.sin(yaw)
            a_forward = c * ref.acc[0] + s * ref.acc[1]
            a_left = -s * ref.acc[0] + c * ref.acc[1]
            limit = np.deg2rad(self.robot.max_roll_pitch_deg)
            tilt_target = self.clamped.clip(
                "tilt_rad",
                [np.arctan2(a_forward, GRAVITY), -np.arctan2(a_left, GRAVITY)],
                -limit,
                limit,
            )
        max_step = np.deg2rad(self.robot.max_roll_pitch_rate_dps) * self.dt
        tilt_rate = np.clip(tilt_target - self._tilt, -max_step, max_step) / self.dt
        self._tilt = self._tilt + tilt_rate * self.dt
        q_ref = np.array([*ref.pos, yaw, *self._tilt])
        qd_ref = np.array([*vel, yaw_rate, *tilt_rate])
        qdd_ff = np.array([*ref.acc, 0.0, 0.0, 0.0])
        return np.concatenate([q_ref, qd_ref, qdd_ff])

    def recover_integral(self, log: RobotLog) -> None:
        """Set the PID integral as it was before the log's first row.

        The integral is not logged; the first row's effort, state and set-points determine it
        (effort = m · (kp·e + ki·I + kd·ė + qdd_ff + g)), up to rounding, where ki > 0 and the
        effort was not clipped.
        """
        q_ref, qd_ref, qdd_ff = np.split(log.setpoint[0], 3)
        pid, ctrl = self.pid, log.ctrl[0]
        err = q_ref - log.qpos[0]
        acc = ctrl / self.effective_mass - qdd_ff
        acc[2] -= GRAVITY
        acc -= pid.kp * err + pid.kd * (qd_ref - log.qvel[0])
        usable = (pid.ki > 0) & (np.abs(ctrl) < pid.effort_limit)
        integral = np.where(usable, acc / np.where(usable, pid.ki, 1.0), 0.0)
        pid.integral = integral - err * self.dt

    def effort(self, setpoint: np.ndarray, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """Motor forces/torques for a setpoint: PID + reference acceleration + weight support."""
        q_ref, qd_ref, qdd_ff = np.split(setpoint, 3)
        acc = self.pid.update(q, qd, q_ref, qd_ref, self.position_mode, self.dt) + qdd_ff
        acc[2] += GRAVITY
        effort = self.effective_mass * acc
        return self.clamped.clip("effort", effort, -self.pid.effort_limit, self.pid.effort_limit)
