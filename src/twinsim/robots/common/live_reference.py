"""References that follow live commands instead of a planned path (closed loop).

A kind's path follower tracks `reference(t)` (`twinsim.model.trajectory.Reference`); a
`LiveReference` gives it one driven by the latest velocity or waypoint command, advanced once
per physics step within the robot's limits (speed, acceleration, yaw rate) and kept on a short
leash to the body, so a robot held up (by a wall, a person) does not build up an error it
would later lunge to close. `LiveJoints` does the same for joint targets. Both are plain
deterministic state machines: the same commands at the same steps give the same set-points.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from twinsim.model.trajectory import Reference
from twinsim.robots.common.limits import clip_float

LEASH_M = 0.25  # how far the reference may run ahead of the body
YAW_ACCEL_RADPS2 = 3.0
ARRIVED_M = 0.05  # a waypoint is reached this close
FACE_TRAVEL_M = 0.3  # beyond this from the goal the robot faces where it goes
TURN_FIRST_RAD = np.deg2rad(30.0)  # a unicycle turns on the spot before driving off this much
ARRIVED_YAW_RAD = np.deg2rad(2.0)  # and a waypoint's yaw this close


@dataclass(frozen=True)
class BaseLimits:
    """What a mobile base can do, from its spec: speed, acceleration, yaw rate; whether it
    moves sideways (`holonomic`) and up (`vertical`)."""

    max_speed_mps: float
    max_accel_mps2: float
    max_yaw_rate_radps: float
    holonomic: bool = True
    vertical: bool = False

    @classmethod
    def of(
        cls, spec, accel_mps2: float | None = None, holonomic: bool = True, vertical: bool = False
    ) -> BaseLimits:
        """The limits a spec states (`max_speed_mps`, `max_yaw_rate_dps` and
        `max_accel_mps2`, or `accel_mps2` for a spec without one)."""
        accel = spec.max_accel_mps2 if accel_mps2 is None else accel_mps2
        rate = float(np.deg2rad(spec.max_yaw_rate_dps))
        return cls(spec.max_speed_mps, accel, rate, holonomic, vertical)


def _wrap(angle: float) -> float:
    return math.atan2(math.sin(angle), math.cos(angle))


def _dot(a, b) -> float:
    """a · b summed in order, as NumPy's `dot` of two short float64 vectors does."""
    total = a[0] * b[0]
    for x, y in zip(a[1:], b[1:], strict=True):
        total += x * y
    return total


def _limit_norm(v: list[float], limit: float) -> list[float]:
    n = math.sqrt(_dot(v, v))  # np.linalg.norm's bits
    return [x * (limit / n) for x in v] if n > limit else v


class LiveReference:
    """A pose reference moved by `(vx, vy, vz, wz)` velocity or `(x, y, z, yaw)` waypoint
    commands; starts at rest at the start pose.

    It advances at every physics step, so it computes on Python floats, by the operations
    NumPy's float64 kernels do (libm's sin, cos and atan2; `dot` summed in order): the same
    bits at a fraction of the cost per call.
    """

    def __init__(self, start_pos, start_yaw: float, limits: BaseLimits) -> None:
        self.limits = limits
        self._pos = np.array(start_pos, dtype=float).tolist()
        self.yaw = float(start_yaw)
        self._vel = [0.0, 0.0, 0.0]
        self._acc = [0.0, 0.0, 0.0]
        self.yaw_rate = 0.0
        self._velocity = [0.0, 0.0, 0.0, 0.0]  # heading-frame vx, vy, vz, wz
        self._goal: dict[str, float] | None = None

    @property
    def pos(self) -> np.ndarray:
        """The reference's world position (a copy)."""
        return np.array(self._pos)

    @property
    def vel(self) -> np.ndarray:
        """Its world velocity (a copy)."""
        return np.array(self._vel)

    @property
    def acc(self) -> np.ndarray:
        """Its world acceleration in the last step (a copy)."""
        return np.array(self._acc)

    def command(self, mode: str, fields: dict[str, float]) -> None:
        """Take a `velocity` or `waypoint` command (checked by the kind's `CommandSpace`)."""
        if mode == "velocity":
            self._goal = None
            self._velocity = [float(fields.get(k, 0.0)) for k in ("vx", "vy", "vz", "wz")]
        else:
            self._goal = dict(fields)
            self._velocity = [0.0, 0.0, 0.0, 0.0]

    @property
    def arrived(self) -> bool:
        """Whether the last waypoint is reached (position, and yaw where it asked one)."""
        if self._goal is None:
            return False
        return self._goal_error() is None

    def advance(self, dt: float, body_pos: np.ndarray) -> None:
        """One physics step: the wanted velocity and yaw rate under the limits, then the pose;
        pulled back within `LEASH_M` of `body_pos` (the body's world position)."""
        lim = self.limits
        want, want_rate = self._wanted()
        if not lim.vertical:
            want[2] = 0.0
        want = _limit_norm(want, lim.max_speed_mps)
        want_rate = clip_float(want_rate, -lim.max_yaw_rate_radps, lim.max_yaw_rate_radps)
        step = YAW_ACCEL_RADPS2 * dt
        self.yaw_rate += clip_float(want_rate - self.yaw_rate, -step, step)
        self.yaw += self.yaw_rate * dt
        (vx, vy, vz), max_dv = self._vel, lim.max_accel_mps2 * dt
        if lim.holonomic:
            dx, dy, dz = _limit_norm([want[0] - vx, want[1] - vy, want[2] - vz], max_dv)
            new = [vx + dx, vy + dy, vz + dz]
        else:  # a unicycle's velocity is along its heading: a forward speed, turned with it
            hx, hy = math.cos(self.yaw), math.sin(self.yaw)
            speed = hx * vx + hy * vy + 0.0 * vz  # heading · velocity, heading z 0
            speed += clip_float(
                hx * want[0] + hy * want[1] + 0.0 * want[2] - speed, -max_dv, max_dv
            )
            new = [hx * speed, hy * speed, 0.0 * speed]
        self._acc = [(new[0] - vx) / dt, (new[1] - vy) / dt, (new[2] - vz) / dt]
        self._vel = new
        px, py, pz = self._pos
        self._pos = pos = [px + new[0] * dt, py + new[1] * dt, pz + new[2] * dt]
        axes = 3 if lim.vertical else 2
        body = np.asarray(body_pos, dtype=float)[:axes].tolist()
        ahead = [p - b for p, b in zip(pos[:axes], body, strict=True)]
        gap = math.sqrt(_dot(ahead, ahead))
        if gap > LEASH_M:
            pos[:axes] = [b + a * (LEASH_M / gap) for b, a in zip(body, ahead, strict=True)]

    def reference(self, t_s: float) -> Reference:
        """The current reference (the time is the step's; the state is advanced by `advance`)."""
        return Reference(self.pos, self.vel, self.acc, self.yaw, self.yaw_rate)

    def _wanted(self) -> tuple[list[float], float]:
        """World velocity and yaw rate the command asks for now."""
        c, s = math.cos(self.yaw), math.sin(self.yaw)
        if self._goal is None:
            vx, vy, vz, wz = self._velocity
            if not self.limits.holonomic:
                vy = 0.0
            return [c * vx - s * vy, s * vx + c * vy, vz], wz
        error = self._goal_error()
        if error is None:
            return [0.0, 0.0, 0.0], 0.0
        delta, yaw_error = error
        dist = math.sqrt(_dot(delta, delta))
        braking = math.sqrt(2.0 * self.limits.max_accel_mps2 * max(dist - ARRIVED_M, 0.0))
        speed = min(self.limits.max_speed_mps, braking)
        direction = [d / dist for d in delta] if dist > 1e-9 else [0.0, 0.0, 0.0]
        gain = 2.0  # rad/s per rad of heading error
        if not self.limits.holonomic:
            if dist > ARRIVED_M and abs(yaw_error) > TURN_FIRST_RAD:
                speed = 0.0  # turn towards the goal first
            forward = max(0.0, c * direction[0] + s * direction[1])
            along = [c * speed * forward, s * speed * forward, direction[2] * speed]
            return along, gain * yaw_error
        return [d * speed for d in direction], gain * yaw_error

    def _goal_error(self) -> tuple[list[float], float] | None:
        """(position error, heading error to turn through) towards the goal, or None once
        reached. Far from the goal the heading to turn to is the travel direction."""
        goal, pos = self._goal, self._pos
        target = [float(goal["x"]), float(goal["y"]), float(goal.get("z", pos[2]))]
        delta = [t - p for t, p in zip(target, pos, strict=True)]
        if not self.limits.vertical:
            delta[2] = 0.0
        dist = float(np.hypot(delta[0], delta[1]))
        if dist > FACE_TRAVEL_M or (dist > ARRIVED_M and not self.limits.holonomic):
            return delta, _wrap(math.atan2(delta[1], delta[0]) - self.yaw)
        yaw_error = _wrap(goal["yaw"] - self.yaw) if "yaw" in goal else 0.0
        if math.sqrt(_dot(delta, delta)) <= ARRIVED_M and abs(yaw_error) < ARRIVED_YAW_RAD:
            return None
        return delta, yaw_error


class LiveJoints:
    """Joint targets moved towards the commanded ones at the joints' speed limits, with the
    rates and accelerations a computed-torque controller feeds forward."""

    def __init__(self, names: tuple[str, ...], start: np.ndarray, max_speed: np.ndarray) -> None:
        self.names = names
        self.q = np.array(start, dtype=float)
        self.qd = np.zeros_like(self.q)
        self.qdd = np.zeros_like(self.q)
        self.target = self.q.copy()
        self.max_speed = np.broadcast_to(np.asarray(max_speed, float), self.q.shape).copy()
        self._index = {n: i for i, n in enumerate(names)}

    def command(self, mode: str, fields: dict[str, float]) -> None:
        """Take a `joints` command: new targets for the joints it names, others held."""
        for name, value in fields.items():
            self.target[self._index[name]] = value

    @property
    def arrived(self) -> bool:
        return bool(np.all(np.abs(self.target - self.q) < 1e-3))

    def advance(self, dt: float, body_pos: np.ndarray | None = None) -> None:
        """One physics step towards the targets: speed-limited, braking to arrive at rest."""
        accel = 4.0 * self.max_speed  # reach full speed in a quarter second
        error = self.target - self.q
        braking = np.sqrt(2.0 * accel * np.abs(error))
        want = np.sign(error) * np.minimum(self.max_speed, braking)
        new_qd = self.qd + np.clip(want - self.qd, -accel * dt, accel * dt)
        self.qdd = (new_qd - self.qd) / dt
        self.qd = new_qd
        step = self.qd * dt
        overshoot = np.abs(step) >= np.abs(error)
        self.q = np.where(overshoot, self.target, self.q + step)
        self.qd = np.where(overshoot, 0.0, self.qd)

    def sample(self, t_s: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(q, qd, qdd) now, as the planned joint path gives them."""
        return self.q.copy(), self.qd.copy(), self.qdd.copy()


class LiveController:
    """A kind's controller tracking a live reference: `command` steers the reference,
    `advance` moves it one physics step (before `setpoint`), the rest is the kind's own."""

    def __init__(self, controller, reference: LiveReference | LiveJoints) -> None:
        self.controller, self.reference = controller, reference
        self.clamped = getattr(controller, "clamped", None)

    def command(self, mode: str, fields: dict[str, float]) -> None:
        self.reference.command(mode, fields)

    @property
    def arrived(self) -> bool:
        return self.reference.arrived

    def advance(self, dt: float, body_pos: np.ndarray) -> None:
        self.reference.advance(dt, body_pos)

    def setpoint(self, t_s: float, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        return self.controller.setpoint(t_s, q, qd)

    def effort(self, setpoint: np.ndarray, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        return self.controller.effort(setpoint, q, qd)
