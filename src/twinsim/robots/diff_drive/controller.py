"""The differential drive's motion source: a path follower giving `(v, ω)` commands along the
planned ground tour, and a velocity controller turning them into wheel torques.

The follower is Kanayama et al.'s tracking law (1990) on the chassis pose: with the pose error
(e_x, e_y, e_θ) in the body frame, v = v_r·cos e_θ + k_x·e_x and ω = ω_r + k_y·v_r·e_y +
k_θ·sin e_θ (the last term in 1/s, so turns on the spot are corrected too), clamped to the
robot's limits. It closes the loop on the chassis pose, as a robot localised in its map does,
so the robot keeps to its collision-free plan; its wheel odometry is a separate, dead-reckoned
stream. The velocity controller is a PI loop on each wheel's speed, ω_wheel = (v ∓ ω·track/2)/r,
its torque capped at the motor's limit: where the floor cannot take that torque, the wheel slips.

The logged set-point is the reference (pose and velocities) and the command the follower gave;
`effort` derives the command from the reference and the state again, so a control-mode replay
closes the same loop on its own chassis pose (replayed open-loop, the logged commands let the
robot wander 2.8 m from its path within 60 s, as differences of bumps at rug edges grew).
"""

from __future__ import annotations

import numpy as np

from twinsim.model.trajectory import Trajectory
from twinsim.robots.base import RobotLog
from twinsim.robots.common.limits import ClampedCommands
from twinsim.robots.diff_drive.spec import WHEELS, DiffDriveSpec

K_X, K_Y, K_THETA = 2.0, 10.0, 3.0  # 1/s, 1/m², 1/s
KP_WHEEL, KI_WHEEL = 0.15, 1.5  # N·m per rad/s, N·m per rad
#: the logged set-point: the reference pose and velocities, and the follower's (v, ω) command
SETPOINT_COLUMNS = ("x_ref", "y_ref", "yaw_ref", "v_ref", "w_ref", "cmd_v", "cmd_w")


def wheel_speeds(v: float, w: float, radius: float, track: float) -> np.ndarray:
    """Left and right wheel speeds (rad/s) that drive the axle's midpoint at (v, ω)."""
    return np.array([v - 0.5 * w * track, v + 0.5 * w * track]) / radius


class DiffDriveController:
    """Follows a trajectory with (v, ω) commands and drives the wheels by PI speed control."""

    def __init__(self, robot: DiffDriveSpec, trajectory: Trajectory, physics_hz: int) -> None:
        self.robot = robot
        self.trajectory = trajectory
        self.dt = 1.0 / physics_hz
        self.integral = np.zeros(2)  # wheel angle error, rad
        self.clamped = ClampedCommands()

    def reference(self, t_s: float) -> np.ndarray:
        """The reference at time t: x, y, yaw (unwrapped), forward speed and yaw rate."""
        ref = self.trajectory.reference(t_s)
        v_r = float(np.cos(ref.yaw) * ref.vel[0] + np.sin(ref.yaw) * ref.vel[1])
        return np.array([ref.pos[0], ref.pos[1], ref.yaw, v_r, ref.yaw_rate])

    def command(
        self, reference: np.ndarray, q: np.ndarray, clamped: ClampedCommands | None = None
    ) -> np.ndarray:
        """The follower's (v, ω) for a reference and the chassis pose, clamped to the limits
        (counted in `clamped` where given)."""
        x_r, y_r, yaw_r, v_r, w_r = reference
        yaw = q[3]
        c, s = np.cos(yaw), np.sin(yaw)
        dx, dy = x_r - q[0], y_r - q[1]
        e_x, e_y = c * dx + s * dy, -s * dx + c * dy
        e_yaw = np.arctan2(np.sin(yaw_r - yaw), np.cos(yaw_r - yaw))
        v = v_r * np.cos(e_yaw) + K_X * e_x
        w = w_r + K_Y * v_r * e_y + K_THETA * np.sin(e_yaw)
        max_v, max_w = self.robot.max_speed_mps, np.deg2rad(self.robot.max_yaw_rate_dps)
        clamp = (clamped or ClampedCommands()).clip
        return np.array([clamp("v_mps", v, -max_v, max_v), clamp("w_radps", w, -max_w, max_w)])

    def setpoint(self, t_s: float, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """The reference at t and the (v, ω) command the follower gives for it."""
        reference = self.reference(t_s)
        return np.concatenate([reference, self.command(reference, q, self.clamped)])

    def _wheel_refs(self, command: np.ndarray) -> np.ndarray:
        return wheel_speeds(*command, self.robot.wheel_radius_m, self.robot.track_m)

    def effort(self, setpoint: np.ndarray, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """Wheel torques for the follower's command from the set-point's reference and this
        state: PI on each wheel's speed error, within the motor's torque limit."""
        err = self._wheel_refs(self.command(setpoint[:5], q)) - qd[WHEELS]
        self.integral = self.integral + err * self.dt
        limit = self.robot.max_wheel_torque_nm
        torque = KP_WHEEL * err + KI_WHEEL * self.integral
        saturated = np.abs(torque) > limit  # anti-windup: hold the integral while saturated
        self.integral = np.where(saturated, self.integral - err * self.dt, self.integral)
        return self.clamped.clip("wheel_torque_nm", torque, -limit, limit)

    def recover_integral(self, log: RobotLog) -> None:
        """Set the integral as it was before the log's first row: the first row's torque and
        wheel speed error determine it (torque = kp·e + ki·(I + e·dt)), where not clipped."""
        err = self._wheel_refs(log.setpoint[0, 5:]) - log.qvel[0, WHEELS]
        ctrl = log.ctrl[0]
        usable = np.abs(ctrl) < self.robot.max_wheel_torque_nm
        after = np.where(usable, (ctrl - KP_WHEEL * err) / KI_WHEEL, 0.0)
        self.integral = after - np.where(usable, err * self.dt, 0.0)
