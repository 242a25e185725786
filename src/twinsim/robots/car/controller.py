"""The car's driver and its tyres: a path tracker with steering feed-forward and a speed loop
(the driver), and a dynamic bicycle model (the tyres and the drive) giving the forces on the
chassis joints that MuJoCo integrates.

Driver, each step, from the reference at t (its pose, speed v_ref, tangential acceleration
a_ref and curvature κ_ref): steering δ = atan(L·κ_ref) − k_ψ·e_ψ − atan(k_y·e_y / (v + v₀))
(e_ψ the error of the car's course, heading + side slip, so the slip a curve needs is not
fought)
− k_r·(r − v·κ_ref) (Stanley's cross-track law with the path's own steer fed forward and yaw
damping), within ±max steer; drive force m·(a_ref + k_v·(v_ref − v) − k_s·e_s) plus the
resistance it must overcome, within the tyres' grip. The reference itself is the human-like
part: a speed profile limited in acceleration, lateral acceleration and jerk
(`robot.plan_route_drive`), so the IMU sees smooth motion.

Tyres: each axle's lateral force is its cornering stiffness × its slip angle (the angle of
the wheel's velocity off its heading, with the speed under it regularised below `SLIP_V_MPS`
so a standing car has none), saturating smoothly (tanh) at μ × its load; the rear axle also
drives; rolling resistance and air drag slow the car. Stateless: `effort` depends only on
its arguments, so a control replay restarts it exactly.
"""

from __future__ import annotations

import math

import numpy as np

from twinsim.robots.car.spec import CarSpec
from twinsim.robots.common.limits import ClampedCommands

GRAVITY = 9.81
SLIP_V_MPS = 1.0
ROLLING = 0.015  # rolling resistance coefficient
DRAG_AREA_M2 = 0.7  # Cd·A of a saloon
AIR_DENSITY = 1.2
K_HEADING, K_CROSS, K_YAW_RATE, V_SOFT = 1.5, 2.5, 0.08, 2.0
K_SPEED, K_STATION = 2.0, 1.0
SOFT_FROM = 0.8  # the steer bends into its limit from this share of it
SETPOINT_COLUMNS = ("x_ref", "y_ref", "yaw_ref", "v_ref", "a_ref", "curvature_ref")


def _wrap(angle: float) -> float:
    return math.atan2(math.sin(angle), math.cos(angle))


def _soft_limit(x: float, limit: float) -> float:
    """`x` as it is up to `SOFT_FROM` of `limit`, then bending smoothly (C¹) into the limit,
    as a steering rack's end stop does: a clipped steer would jolt the IMU."""
    knee = SOFT_FROM * limit
    if abs(x) <= knee:
        return x
    band = limit - knee
    return math.copysign(knee + band * math.tanh((abs(x) - knee) / band), x)


class CarController:
    """Follows `reference` (anything with `reference(t)`) with the car of `spec`."""

    def __init__(self, spec: CarSpec, reference, physics_hz: int) -> None:
        self.spec, self.reference_source = spec, reference
        self.clamped = ClampedCommands()
        self.max_steer = math.radians(spec.max_steer_deg)
        self.half_base = 0.5 * spec.wheelbase_m
        load = 0.5 * spec.mass_kg * GRAVITY  # per axle: the centre of mass is mid-wheelbase
        self.grip = spec.friction * load

    def setpoint(self, t_s: float, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """The reference pose, speed, tangential acceleration and curvature at `t_s`."""
        ref = self.reference_source.reference(t_s)
        vx, vy = float(ref.vel[0]), float(ref.vel[1])
        ax, ay = float(ref.acc[0]), float(ref.acc[1])
        v = math.hypot(vx, vy)
        a_t = (vx * ax + vy * ay) / v if v > 1e-6 else math.hypot(ax, ay)
        curvature = (vx * ay - vy * ax) / v**3 if v > 0.3 else 0.0
        pos = ref.pos
        return np.array([pos[0], pos[1], float(ref.yaw), v, a_t, curvature])

    def steer(self, setpoint, q, v: float, side_slip: float, r: float) -> float:
        """The driver's steering angle for the set-point from pose `q`, speed v, the body's
        side-slip angle and yaw rate r: the car's course (heading + side slip, faded in over
        the first `V_SOFT` m/s) is steered onto the path's."""
        xr, yr, yaw_r, _, _, kappa = setpoint
        ex, ey = q[0] - xr, q[1] - yr
        e_lat = -math.sin(yaw_r) * ex + math.cos(yaw_r) * ey
        e_yaw = _wrap(q[2] + min(abs(v) / V_SOFT, 1.0) * side_slip - yaw_r)
        delta = (
            math.atan(self.spec.wheelbase_m * kappa)
            - K_HEADING * e_yaw
            - math.atan(K_CROSS * e_lat / (abs(v) + V_SOFT))
            - K_YAW_RATE * (r - v * kappa)
        )
        self.clamped.note("steer_rad", abs(delta), self.max_steer)
        return _soft_limit(delta, self.max_steer)

    def effort(self, setpoint: np.ndarray, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """Forces on x, y and the torque on yaw: the tyres' and the drive's (module)."""
        sp = setpoint.tolist()
        yaw = float(q[2])
        c, s = math.cos(yaw), math.sin(yaw)
        vx = c * float(qd[0]) + s * float(qd[1])
        vy = -s * float(qd[0]) + c * float(qd[1])
        r = float(qd[2])
        m, a = self.spec.mass_kg, self.half_base
        delta = self.steer(sp, q, vx, math.atan2(vy, max(abs(vx), SLIP_V_MPS)), r)
        # drive: the speed loop on the station error, plus the resistance it overcomes
        e_s = math.cos(sp[2]) * (q[0] - sp[0]) + math.sin(sp[2]) * (q[1] - sp[1])
        resist = ROLLING * m * GRAVITY * math.tanh(vx / 0.1) + 0.5 * AIR_DENSITY * DRAG_AREA_M2 * (
            vx * abs(vx)
        )
        drive = m * (sp[4] + K_SPEED * (sp[3] - vx) - K_STATION * e_s) + resist
        drive = float(self.clamped.clip("drive_n", drive, -self.grip, self.grip))
        # tyres: slip angles of each axle's velocity, linear stiffness, saturated
        cd, sd = math.cos(delta), math.sin(delta)
        u_f = vx * cd + (vy + a * r) * sd
        v_f = -vx * sd + (vy + a * r) * cd
        alpha_f = -math.atan2(v_f, max(abs(u_f), SLIP_V_MPS))
        alpha_r = -math.atan2(vy - a * r, max(abs(vx), SLIP_V_MPS))
        stiffness = self.spec.cornering_stiffness_n_per_rad
        f_front = self.grip * math.tanh(stiffness * alpha_f / self.grip)
        f_rear = self.grip * math.tanh(stiffness * alpha_r / self.grip)
        fx = drive - resist - f_front * sd
        fy = f_rear + f_front * cd
        mz = a * f_front * cd - a * f_rear
        return np.array([c * fx - s * fy, s * fx + c * fy, mz])
