"""The omnidirectional robot's motion source: its planned ground tour followed through PID joint
controllers on x, y and yaw (GRADE's one PID per joint), driven by `(vx, vy, ω)` commands.

Each step the trajectory gives a pose set-point and a velocity command in the body frame of
that pose, clamped to the robot's limits (`max_speed_mps` on the planar speed, `max_yaw_rate`
on ω); the PID turns pose and velocity errors into the joint forces and the yaw torque, with
the reference acceleration fed forward, capped by what three wheels can push (`TRACTION_MPS2`).
"""

from __future__ import annotations

import numpy as np

from twinsim.robots.base import RobotLog
from twinsim.robots.limits import ClampedCommands
from twinsim.robots.omni import JOINT_NAMES, OmniSpec
from twinsim.robots.pid import JointPid
from twinsim.robots.trajectory import Trajectory

TRACTION_MPS2 = 3.0  # about 0.3 g: the largest acceleration the wheels give the base
YAW_ACCEL_RADPS2 = 10.0
#: the logged set-point: pose reference, body-frame velocity command, feed-forward acceleration
SETPOINT_COLUMNS = (
    *(f"q_ref_{j}" for j in JOINT_NAMES),
    "cmd_vx",
    "cmd_vy",
    "cmd_wz",
    *(f"qdd_ff_{j}" for j in JOINT_NAMES),
)


def body_to_world(yaw: float, v: np.ndarray) -> np.ndarray:
    """A planar velocity (vx, vy, ω) in the body frame at `yaw` as joint rates (ẋ, ẏ, ψ̇)."""
    c, s = np.cos(yaw), np.sin(yaw)
    return np.array([c * v[0] - s * v[1], s * v[0] + c * v[1], v[2]])


class OmniController:
    """Turns a trajectory reference at time t into forces on x, y and a torque on yaw."""

    def __init__(self, robot: OmniSpec, trajectory: Trajectory, physics_hz: int) -> None:
        self.robot = robot
        self.trajectory = trajectory
        self.dt = 1.0 / physics_hz
        m = robot.mass_kg
        self.effective_mass = np.array([m, m, robot.inertia[2]])
        omega = np.array([6.0, 6.0, 8.0])
        self.pid = JointPid(
            kp=omega**2,
            ki=np.array([2.0, 2.0, 2.0]),
            kd=2.0 * omega,
            effort_limit=self.effective_mass
            * np.array([TRACTION_MPS2, TRACTION_MPS2, YAW_ACCEL_RADPS2]),
        )
        self.position_mode = np.ones(3, dtype=bool)
        self.clamped = ClampedCommands()

    def setpoint(self, t_s: float, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """Pose set-point (yaw unwrapped next to the current yaw), the clamped body-frame
        command (vx, vy, ω) and the feed-forward acceleration, from the trajectory at t."""
        ref = self.trajectory.reference(t_s)
        yaw = q[2] + np.arctan2(np.sin(ref.yaw - q[2]), np.cos(ref.yaw - q[2]))
        vel = ref.vel[:2]
        speed = float(np.hypot(*vel))
        self.clamped.note("speed_mps", speed, self.robot.max_speed_mps)
        if speed > self.robot.max_speed_mps:
            vel = vel * (self.robot.max_speed_mps / speed)
        max_rate = np.deg2rad(self.robot.max_yaw_rate_dps)
        rate = float(self.clamped.clip("yaw_rate_radps", ref.yaw_rate, -max_rate, max_rate))
        c, s = np.cos(yaw), np.sin(yaw)
        command = np.array([c * vel[0] + s * vel[1], -s * vel[0] + c * vel[1], rate])
        return np.concatenate([[ref.pos[0], ref.pos[1], yaw], command, [*ref.acc[:2], 0.0]])

    def effort(self, setpoint: np.ndarray, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """Joint forces and torque for a set-point: PID + feed-forward, within the traction."""
        q_ref, command, qdd_ff = np.split(setpoint, 3)
        qd_ref = body_to_world(q_ref[2], command)
        acc = self.pid.update(q, qd, q_ref, qd_ref, self.position_mode, self.dt) + qdd_ff
        limit = self.pid.effort_limit
        return self.clamped.clip("effort", self.effective_mass * acc, -limit, limit)

    def recover_integral(self, log: RobotLog) -> None:
        """Set the PID integral as it was before the log's first row.

        The integral is not logged; the first row's effort, state and set-point determine it
        (effort = m · (kp·e + ki·I + kd·ė + qdd_ff)), up to rounding, where the effort was not
        clipped (as the drone's controller does).
        """
        q_ref, command, qdd_ff = np.split(log.setpoint[0], 3)
        pid, ctrl = self.pid, log.ctrl[0]
        err = q_ref - log.qpos[0]
        qd_ref = body_to_world(q_ref[2], command)
        acc = ctrl / self.effective_mass - qdd_ff
        acc -= pid.kp * err + pid.kd * (qd_ref - log.qvel[0])
        usable = (pid.ki > 0) & (np.abs(ctrl) < pid.effort_limit)
        integral = np.where(usable, acc / np.where(usable, pid.ki, 1.0), 0.0)
        pid.integral = integral - err * self.dt
