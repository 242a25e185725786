"""Timing of a planned path and the runtime reference the drone's controller tracks.

`parametrize` turns smooth planar `Curve`s into timed `PathPoint`s: along each curve a speed
profile limited by the cruise speed, tangential and lateral acceleration and yaw rate (yaw =
direction of travel), smoothed in time so acceleration is continuous (jerk-limited), from rest
to rest; before each curve a turn on the spot to face along it.
`Trajectory` is always rebuilt from those points (a clamped cubic spline through t, x, y, z and
unwrapped yaw), so a path stored in `scene.json` gives bit-identical references on replay.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.interpolate import CubicSpline
from scipy.ndimage import minimum_filter1d

from twinsim.errors import PlanningError, TwinsimError
from twinsim.model.scene import PathPoint

_PROFILE_DT_S = 0.01
_SAFETY_FACTORS = (0.97, 0.93, 0.87, 0.8, 0.7)
_TURN_RAMP_S = 1.0


@dataclass(frozen=True)
class Curve:
    """A planar path sampled uniformly in arc length: xy, unwrapped heading and signed curvature."""

    s: np.ndarray
    xy: np.ndarray
    heading: np.ndarray
    curvature: np.ndarray

    @property
    def length_m(self) -> float:
        return float(self.s[-1])


@dataclass(frozen=True)
class MotionLimits:
    """Kinematic limits of the flight: speed, accelerations, yaw rate and the jerk window."""

    max_speed_mps: float
    max_yaw_rate_dps: float
    max_accel_mps2: float = 0.5
    max_lateral_accel_mps2: float = 0.5
    smoothing_window_s: float = 0.5


@dataclass(frozen=True)
class Reference:
    """Setpoint at time t (arrays gain a leading axis when sampled at many times); yaw unwrapped."""

    pos: np.ndarray
    vel: np.ndarray
    acc: np.ndarray
    yaw: float | np.ndarray
    yaw_rate: float | np.ndarray


class Trajectory:
    """Runtime reference: clamped cubic spline through stored PathPoints; end poses are held."""

    def __init__(self, points: Sequence[PathPoint]) -> None:
        if len(points) < 2:
            raise TwinsimError(f"a trajectory needs at least 2 path points, got {len(points)}")
        self._points = tuple(points)
        t = np.array([p.t_s for p in self._points])
        data = np.array([(*p.pos, p.yaw) for p in self._points])
        if np.any(np.diff(t) <= 0.0):
            raise TwinsimError("path point times must be strictly increasing")
        self._t0, self._t1 = float(t[0]), float(t[-1])
        self._spline = CubicSpline(t, data, axis=0, bc_type="clamped")

    @classmethod
    def from_path_points(cls, points: Sequence[PathPoint]) -> Trajectory:
        """Rebuild the trajectory stored in a scene (identical floats for identical points)."""
        return cls(points)

    def to_path_points(self) -> tuple[PathPoint, ...]:
        """The knots this trajectory is built from (what `RobotSpec.path` stores)."""
        return self._points

    @property
    def duration_s(self) -> float:
        return self._t1

    def sample(self, t_s: np.ndarray) -> Reference:
        """References at many times: pos/vel/acc (N, 3), yaw and yaw_rate (N,)."""
        t = np.asarray(t_s, dtype=float)
        inside = (t >= self._t0) & (t <= self._t1)
        tc = np.clip(t, self._t0, self._t1)
        p = self._spline(tc)
        v = np.where(inside[:, None], self._spline(tc, 1), 0.0)
        a = np.where(inside[:, None], self._spline(tc, 2), 0.0)
        return Reference(pos=p[:, :3], vel=v[:, :3], acc=a[:, :3], yaw=p[:, 3], yaw_rate=v[:, 3])

    def reference(self, t: float) -> Reference:
        """Setpoint at time t (s since the start of motion); the end poses are held outside."""
        r = self.sample(np.array([t], dtype=float))
        return Reference(
            pos=r.pos[0],
            vel=r.vel[0],
            acc=r.acc[0],
            yaw=float(r.yaw[0]),
            yaw_rate=float(r.yaw_rate[0]),
        )


def parametrize(
    curves: Sequence[Curve],
    limits: MotionLimits,
    *,
    z_m: float,
    start_yaw: float | None = None,
    dt_s: float = 0.05,
    stop_after_s: float | None = None,
) -> tuple[PathPoint, ...]:
    """Timed path points every dt_s through `curves`, each flown from rest to rest.

    Before each curve the drone turns on the spot to face along it (from `start_yaw` before the
    first one, if given). With `stop_after_s`, the flight is cut to end, at rest, soon after
    that time. The result is checked on the rebuilt `Trajectory`; planning limits shrink until
    it passes.
    """
    max_yaw_rate = math.radians(limits.max_yaw_rate_dps)
    for factor in _SAFETY_FACTORS:
        points = _timed_points(curves, limits, factor, z_m, start_yaw, dt_s, stop_after_s)
        ref = Trajectory(points).sample(np.arange(0.0, points[-1].t_s, dt_s / 5.0))
        speed = np.linalg.norm(ref.vel, axis=1)
        if speed.max() <= limits.max_speed_mps and np.abs(ref.yaw_rate).max() <= max_yaw_rate:
            return points
    raise PlanningError(  # a path this world's draw gave: a redraw may time another
        f"could not time a {sum(c.length_m for c in curves):.1f} m path within speed "
        f"{limits.max_speed_mps} m/s and yaw rate {limits.max_yaw_rate_dps} deg/s"
    )


def _turn_shape(turn_rad: float, yaw_rate: float) -> tuple[float, float, float]:
    """Ramp time, peak rate and cruise time of a turn on the spot: a yaw-rate trapezoid with
    raised-cosine ramps of up to _TURN_RAMP_S (shorter for small turns), peak <= yaw_rate."""
    size = abs(turn_rad)
    if size == 0.0:
        return 0.0, 0.0, 0.0
    ramp = min(_TURN_RAMP_S, math.sqrt(size * _TURN_RAMP_S / yaw_rate))
    peak = min(yaw_rate, size / ramp)
    return ramp, peak, size / peak - ramp


def _turn_angle(turn_rad: float, yaw_rate: float, t_s: np.ndarray) -> np.ndarray:
    """Angle turned on the spot after t_s seconds (continuous yaw rate and acceleration)."""
    ramp, peak, cruise = _turn_shape(turn_rad, yaw_rate)
    if peak == 0.0:
        return np.zeros_like(t_s)

    def ramp_angle(x: np.ndarray) -> np.ndarray:
        return 0.5 * peak * (x - ramp / math.pi * np.sin(math.pi * x / ramp))

    up = np.clip(t_s, 0.0, ramp)
    mid = np.clip(t_s - ramp, 0.0, cruise)
    down = np.clip(t_s - ramp - cruise, 0.0, ramp)
    angle = ramp_angle(up) + peak * mid + peak * down - ramp_angle(down)
    return math.copysign(1.0, turn_rad) * angle


def _timed_points(
    curves: Sequence[Curve],
    limits: MotionLimits,
    factor: float,
    z_m: float,
    start_yaw: float | None,
    dt_s: float,
    stop_after_s: float | None,
) -> tuple[PathPoint, ...]:
    """Sample turns on the spot and speed profiles (limits scaled by `factor`) on one clock."""
    yaw_rate = factor * math.radians(limits.max_yaw_rate_dps)
    yaw = float(curves[0].heading[0]) if start_yaw is None else start_yaw
    pieces, t0 = [], 0.0
    for curve in curves:
        if stop_after_s is not None and t0 >= stop_after_s:
            break
        turn = math.remainder(float(curve.heading[0]) - yaw, 2.0 * math.pi)
        ramp, _, cruise = _turn_shape(turn, yaw_rate)
        turn_s = 2.0 * ramp + cruise
        tau, s_t = _speed_profile(curve, limits, factor)
        heading = curve.heading - curve.heading[0] + yaw + turn
        cut = stop_after_s is not None and t0 + turn_s + tau[-1] > stop_after_s + 3.0
        if cut:  # keep what is flown until stop_after_s, plus room to brake and 0.5 m
            flown = np.interp(stop_after_s - t0 - turn_s, tau, s_t)
            keep = curve.s <= flown + limits.max_speed_mps**2 / limits.max_accel_mps2 + 0.5
            curve = Curve(curve.s[keep], curve.xy[keep], heading[keep], curve.curvature[keep])
            heading = curve.heading
            tau, s_t = _speed_profile(curve, limits, factor)
        pieces.append((t0, yaw, turn, turn_s, curve, heading, tau, s_t))
        t0 += turn_s + tau[-1]
        yaw = float(heading[-1])
        if cut:
            break
    t = np.arange(math.ceil(t0 / dt_s - 1e-9) + 1) * dt_s
    x, y, psi = np.empty_like(t), np.empty_like(t), np.empty_like(t)
    for start, yaw0, turn, turn_s, curve, heading, tau, s_t in pieces:
        rel = t - start
        here = rel >= 0.0
        x[here], y[here] = curve.xy[0]
        psi[here] = yaw0 + _turn_angle(turn, yaw_rate, rel[here])
        moving = rel >= turn_s
        s = np.interp(rel[moving] - turn_s, tau, s_t)
        x[moving], y[moving], psi[moving] = CubicSpline(
            curve.s, np.column_stack([curve.xy, heading])
        )(s).T
    return tuple(
        PathPoint(t_s=float(t[i]), pos=(float(x[i]), float(y[i]), float(z_m)), yaw=float(psi[i]))
        for i in range(len(t))
    )


def _speed_profile(
    curve: Curve, limits: MotionLimits, factor: float
) -> tuple[np.ndarray, np.ndarray]:
    """Arc length s(tau) on a fine time grid: limit curve, acceleration passes, time smoothing.

    Averaging the speed over a window keeps speed and acceleration bounds and bounds jerk, but
    can lift speed dips at tight turns; where that breaks the curvature limit the limit is lowered
    locally and the profile recomputed.
    """
    v_max = factor * limits.max_speed_mps
    a_max = factor * limits.max_accel_mps2
    ds = float(curve.s[1] - curve.s[0])
    # very short blends may be only a few samples long: bound curvature by heading slopes too
    slope = np.abs(np.diff(curve.heading)) / ds
    kappa = np.maximum(
        np.abs(curve.curvature), np.maximum(np.pad(slope, (1, 0)), np.pad(slope, (0, 1)))
    )
    with np.errstate(divide="ignore"):
        u_lim = np.minimum(
            v_max**2,
            np.minimum(
                factor * limits.max_lateral_accel_mps2 / kappa,
                (factor * math.radians(limits.max_yaw_rate_dps) / kappa) ** 2,
            ),
        )
    window = max(1, round(limits.smoothing_window_s / _PROFILE_DT_S))
    spread = max(1, round(limits.smoothing_window_s * v_max / ds))
    scale = np.ones_like(u_lim)
    for _ in range(20):
        tau, s_t = _smoothed_motion(u_lim * scale, a_max, ds, curve.length_m, window)
        v_t = np.gradient(s_t, _PROFILE_DT_S)
        allowed = np.interp(s_t, curve.s, u_lim)
        ratio = v_t**2 / np.maximum(allowed, 1e-12)
        bad = ratio > 1.01  # 0.5 % in speed: discretisation, covered by the safety factor
        if not bad.any():
            return tau, s_t
        need = np.ones_like(scale)
        idx = np.clip(np.round(s_t[bad] / ds).astype(int), 0, len(scale) - 1)
        np.minimum.at(need, idx, 0.98 / ratio[bad])
        scale *= minimum_filter1d(need, 2 * spread + 1)  # lower the limit around each violation
    return _smoothed_motion(u_lim, a_max, ds, curve.length_m, 1)


def _smoothed_motion(
    u_lim: np.ndarray, a_max: float, ds: float, length: float, window: int
) -> tuple[np.ndarray, np.ndarray]:
    """Rest-to-rest motion under the squared-speed limit u_lim(s), averaged over `window` steps."""
    u = u_lim.copy()
    u[0] = u[-1] = 0.0
    ramp = 2.0 * a_max * ds * np.arange(len(u))
    u = np.minimum(u, np.minimum.accumulate(u - ramp) + ramp)
    u = np.minimum(u, (np.minimum.accumulate((u - ramp[::-1])[::-1]) + ramp)[::-1])
    v = np.sqrt(np.maximum(u, 0.0))
    t_nodes = np.concatenate([[0.0], np.cumsum(2.0 * ds / np.maximum(v[:-1] + v[1:], 1e-12))])
    tau = np.arange(math.ceil(t_nodes[-1] / _PROFILE_DT_S) + 1) * _PROFILE_DT_S
    v_t = np.interp(tau, t_nodes, v)
    v_t = np.convolve(v_t, np.full(window, 1.0 / window))
    s_t = np.concatenate([[0.0], np.cumsum(0.5 * (v_t[1:] + v_t[:-1]) * _PROFILE_DT_S)])
    s_t *= length / s_t[-1]
    return np.arange(len(s_t)) * _PROFILE_DT_S, s_t


class HeldPose:
    """The reference of a robot with no planned path (driven live): its start pose, at rest."""

    def __init__(self, pos, yaw: float) -> None:
        self._ref = Reference(np.array(pos, dtype=float), np.zeros(3), np.zeros(3), float(yaw), 0.0)

    def reference(self, t_s: float) -> Reference:
        r = self._ref
        return Reference(r.pos.copy(), r.vel.copy(), r.acc.copy(), r.yaw, r.yaw_rate)


def planned_reference(spec) -> Trajectory | HeldPose:
    """What a robot spec's follower tracks in a scripted run: its planned path, or its start
    pose held where it has none (a closed-loop episode's scene keeps no path)."""
    if len(spec.path) >= 2:
        return Trajectory.from_path_points(spec.path)
    return HeldPose(spec.start_pos, spec.start_yaw)
