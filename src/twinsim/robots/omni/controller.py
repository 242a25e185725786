"""The omnidirectional robot's motion source: its planned ground tour followed through PID joint
controllers on x, y and yaw (GRADE's one PID per joint), driven by `(vx, vy, ω)` commands.

Each step the trajectory gives a pose set-point and a velocity command in the body frame of
that pose, clamped to the robot's limits (`max_speed_mps` on the planar speed, `max_yaw_rate`
on ω); the PID turns pose and velocity errors into the joint forces and the yaw torque, with
the reference acceleration fed forward, capped by what three wheels can push (`TRACTION_MPS2`).
"""

from __future__ import annotations

import math

import numpy as np

from twinsim.model.trajectory import Trajectory
from twinsim.robots.base import RobotLog
from twinsim.robots.common.limits import ClampedCommands
from twinsim.robots.common.pid import JointPid
from twinsim.robots.omni.spec import JOINT_NAMES, OmniSpec

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


def body_to_world(yaw: float, v) -> list[float]:
    """A planar velocity (vx, vy, ω) in the body frame at `yaw` as joint rates (ẋ, ẏ, ψ̇)."""
    c, s = math.cos(yaw), math.sin(yaw)  # libm's, as NumPy's float64 kernels
    return [c * v[0] - s * v[1], s * v[0] + c * v[1], v[2]]


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
        self._max_rate = np.deg2rad(robot.max_yaw_rate_dps)

    def setpoint(self, t_s: float, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """Pose set-point (yaw unwrapped next to the current yaw), the clamped body-frame
        command (vx, vy, ω) and the feed-forward acceleration, from the trajectory at t
        (in floats: libm's sin, cos and atan2 are NumPy's float64 kernels)."""
        ref = self.trajectory.reference(t_s)
        q_yaw = float(q[2])
        turn = ref.yaw - q_yaw
        yaw = q_yaw + math.atan2(math.sin(turn), math.cos(turn))
        vx, vy = float(ref.vel[0]), float(ref.vel[1])
        speed = float(np.hypot(vx, vy))
        max_speed = self.robot.max_speed_mps
        self.clamped.note("speed_mps", speed, max_speed)
        if speed > max_speed:
            vx, vy = vx * (max_speed / speed), vy * (max_speed / speed)
        max_rate = self._max_rate
        rate = float(self.clamped.clip("yaw_rate_radps", ref.yaw_rate, -max_rate, max_rate))
        c, s = math.cos(yaw), math.sin(yaw)
        pos, acc = ref.pos, ref.acc
        command = (c * vx + s * vy, -s * vx + c * vy, rate)
        return np.array([pos[0], pos[1], yaw, *command, acc[0], acc[1], 0.0])

    def effort(self, setpoint: np.ndarray, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """Joint forces and torque for a set-point: PID + feed-forward, within the traction
        (on floats, joint by joint: for three joints NumPy's cost per call outweighs the sums)."""
        values = setpoint.tolist()
        q_ref, command, qdd_ff = values[:3], values[3:6], values[6:]
        qd_ref = body_to_world(q_ref[2], command)
        pid = self.pid
        acc = pid.accelerations(q, qd, q_ref, qd_ref, self.position_mode, self.dt)
        masses = self.effective_mass.tolist()
        forces = [m * (a + ff) for m, a, ff in zip(masses, acc, qdd_ff, strict=True)]
        limit = pid.effort_limit.tolist()
        return np.array(self.clamped.clip_each("effort", forces, [-x for x in limit], limit))

    def recover_integral(self, log: RobotLog) -> None:
        """Set the PID integral as it was before the log's first row.

        The integral is not logged; the first row's effort, state and set-point determine it
        (effort = m · (kp·e + ki·I + kd·ė + qdd_ff)), up to rounding, where the effort was not
        clipped (as the drone's controller does).
        """
        q_ref, command, qdd_ff = np.split(log.setpoint[0], 3)
        pid, ctrl = self.pid, log.ctrl[0]
        err = q_ref - log.qpos[0]
        qd_ref = np.array(body_to_world(q_ref[2], command))
        acc = ctrl / self.effective_mass - qdd_ff
        acc -= pid.kp * err + pid.kd * (qd_ref - log.qvel[0])
        usable = (pid.ki > 0) & (np.abs(ctrl) < pid.effort_limit)
        integral = np.where(usable, acc / np.where(usable, pid.ki, 1.0), 0.0)
        pid.integral = integral - err * self.dt
