"""The motion source of a user's robot file: its base along the planned ground tour, its
joints through their scripted targets, each coordinate on the actuator the file gives it.

Driven coordinates are the base joints (PID with the tour's acceleration fed forward and the
weight on `base_z`, as the omni's and the drone's pose joints) and the file joints with an
actuator (or, in a file without actuators, every file joint, on motors twinsim adds). A motor
gets a PID torque scaled by the coordinate's effective inertia; a position actuator gets the
target itself (its own gains act), a velocity actuator the target rate plus a pull to the
target. Targets beyond a joint's range (`q_ref_<joint>`) and controls beyond an actuator's
`ctrlrange` or a base motor's traction (`ctrl_<actuator>`) are clamped, explicitly, through
`clamped` (`twinsim.robots.common.limits`), which counts them for the metadata.
"""

from __future__ import annotations

import numpy as np

from twinsim.model.trajectory import planned_reference
from twinsim.robots.base import RobotLog
from twinsim.robots.common.limits import ClampedCommands
from twinsim.robots.common.live_reference import LiveJoints
from twinsim.robots.common.pid import JointPid
from twinsim.robots.user_model.spec import BASE_POSE_JOINTS, BASE_PREFIX, UserModelSpec

GRAVITY_MPS2 = 9.81
TRACTION_MPS2 = 3.0  # the base motors' force limit per kg (the omni's)
TURN_ACCEL_RADPS2 = 10.0  # and their torque limit per kg·m²
#: the base's PID: x, y, yaw as the omni's (kp ω², kd 2ω, ki 2); z, pitch and roll, held
#: against gravity and an off-centre mass, and the file joints a triple pole at -ω
#: (kp 3ω², kd 3ω, ki ω³)
BASE_OMEGA = {"x": 6.0, "y": 6.0, "z": 6.0, "yaw": 8.0, "pitch": 8.0, "roll": 8.0}
TRACKED = ("x", "y", "yaw")
TRACKED_KI = 2.0
JOINT_OMEGA = 10.0
VELOCITY_PULL_PER_S = 5.0  # a velocity actuator's pull towards the target position
LIVE_JOINT_SPEED = 1.0  # rad/s (hinges) or m/s (slides): a live joint target's top speed


def joint_names(spec: UserModelSpec) -> tuple[str, ...]:
    """The robot's joint coordinates in qpos order: base joints, then the file's."""
    return (*(BASE_PREFIX + j for j in BASE_POSE_JOINTS[spec.base]), *(j.name for j in spec.joints))


def driven(spec: UserModelSpec) -> tuple[str, ...]:
    """The coordinates the controller sets targets for, in set-point order."""
    return (
        *(BASE_PREFIX + j for j in BASE_POSE_JOINTS[spec.base]),
        *(t.name for t in spec.targets),
    )


def setpoint_columns(spec: UserModelSpec) -> tuple[str, ...]:
    """Target position, rate and acceleration of every driven coordinate."""
    coords = driven(spec)
    return tuple(f"{kind}_{c}" for kind in ("q_ref", "qd_ref", "qdd_ref") for c in coords)


def actuator_names(spec: UserModelSpec) -> tuple[str, ...]:
    """Controls in order: twinsim's motors (named by their coordinates), the file's actuators."""
    base = (BASE_PREFIX + j for j in BASE_POSE_JOINTS[spec.base])
    return (*base, *spec.motors, *(a.name for a in spec.actuators))


class UserModelController:
    """Set-points from the tour and the joint script at time t; controls from set-points."""

    def __init__(self, spec: UserModelSpec, physics_hz: int, reference=None) -> None:
        """`reference`: what the base tracks (`reference(t)`); by default its planned tour."""
        self.spec, self.dt = spec, 1.0 / physics_hz
        names = joint_names(spec)
        index = {n: i for i, n in enumerate(names)}
        self.coords = driven(spec)
        self._idx = np.array([index[c] for c in self.coords], dtype=int)
        base = BASE_POSE_JOINTS[spec.base]
        self._nbase = len(base)
        self._trajectory = (reference or planned_reference(spec)) if base else None
        self._yaw = base.index("yaw") if base else -1
        t = spec.targets
        self._hold = np.array([j.hold for j in t])
        self._amp = np.array([j.amplitude for j in t])
        self._phase = np.array([j.phase for j in t])
        self._lo = np.array([-np.inf if j.range is None else j.range[0] for j in t])
        self._hi = np.array([np.inf if j.range is None else j.range[1] for j in t])
        self._omega = 2 * np.pi / spec.sine_period_s
        inertia = np.array([spec.inertia[index[c]] for c in self.coords])
        self.inertia = inertia
        self.gravity = np.array([spec.mass_kg * GRAVITY_MPS2 if j == "z" else 0.0 for j in base])
        self.gravity = np.concatenate([self.gravity, np.zeros(len(t))])
        w = np.array([*(BASE_OMEGA[j] for j in base), *(JOINT_OMEGA for _ in t)])
        tracked = np.array([j in TRACKED for j in base] + [False] * len(t), dtype=bool)
        self.pid = JointPid(
            kp=np.where(tracked, w**2, 3 * w**2),
            ki=np.where(tracked, TRACKED_KI, w**3),
            kd=np.where(tracked, 2 * w, 3 * w),
            effort_limit=np.full(len(self.coords), np.inf),
        )
        self._controls(spec, base, inertia)
        self._target_names = tuple(f"q_ref_{j.name}" for j in t)
        self._control_names = tuple(f"ctrl_{a}" for a in actuator_names(spec))
        self.clamped = ClampedCommands()
        # live `joints` commands (closed loop): targets moved at LIVE_JOINT_SPEED, and which
        # joints left their script for them
        self.live = LiveJoints(tuple(j.name for j in t), self._hold, LIVE_JOINT_SPEED)
        self._live = np.zeros(len(t), dtype=bool)
        self._script = (self._hold.copy(), np.zeros(len(t)))

    def command_joints(self, fields: dict[str, float]) -> None:
        """Take a live `joints` command: each joint named leaves its script where the script
        has it now and moves to its target (kept in its range); the others keep their script."""
        q, qd = self._script
        for name, value in fields.items():
            i = self.live.names.index(name)
            if not self._live[i]:
                self.live.q[i], self.live.qd[i] = q[i], qd[i]
                self._live[i] = True
            self.live.target[i] = min(max(value, self._lo[i]), self._hi[i])

    def _controls(self, spec: UserModelSpec, base: tuple[str, ...], inertia: np.ndarray) -> None:
        """Per control: its coordinate, its type, its gain (joint force per unit of ctrl) and
        its limits."""
        coord = {c: i for i, c in enumerate(self.coords)}
        rows = []
        for k, j in enumerate(base):
            per_unit = TRACTION_MPS2 if j in ("x", "y") else TURN_ACCEL_RADPS2
            limit = inertia[k] * (per_unit + (GRAVITY_MPS2 if j == "z" else 0.0))
            rows.append((k, "motor", 1.0, 1.0, (-limit, limit)))
        for j in spec.motors:
            rows.append((coord[j], "motor", 1.0, 1.0, (-np.inf, np.inf)))
        for a in spec.actuators:
            limits = a.ctrlrange or (-np.inf, np.inf)
            rows.append((coord[a.joint], a.type, a.gear * a.gain, a.gear, limits))
        self._coord = np.array([r[0] for r in rows], dtype=int)
        self._motor = np.array([r[1] == "motor" for r in rows], dtype=bool)
        self._position = np.array([r[1] == "position" for r in rows], dtype=bool)
        self._gain = np.array([r[2] for r in rows])
        self._gear = np.array([r[3] for r in rows])
        self._ctrl_lo = np.array([r[4][0] for r in rows])
        self._ctrl_hi = np.array([r[4][1] for r in rows])

    def setpoint(self, t_s: float, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """Targets (position, rate, acceleration) of the driven coordinates at t: the base's
        from the tour (yaw unwrapped next to the current yaw), the joints' from the script,
        clamped to their ranges."""
        base_q, base_qd, base_qdd = np.zeros((3, self._nbase))
        if self._trajectory is not None:
            ref = self._trajectory.reference(t_s)
            names = BASE_POSE_JOINTS[self.spec.base]
            for k, j in enumerate(names):
                if j in ("x", "y"):
                    axis = "xy".index(j)
                    base_q[k], base_qd[k], base_qdd[k] = (
                        ref.pos[axis],
                        ref.vel[axis],
                        ref.acc[axis],
                    )
                elif j == "z":
                    base_q[k] = self.spec.root_z_m
            yaw = q[self._yaw]
            base_q[self._yaw] = yaw + np.arctan2(np.sin(ref.yaw - yaw), np.cos(ref.yaw - yaw))
            base_qd[self._yaw] = ref.yaw_rate
        phase = self._omega * t_s + self._phase
        jq = self._hold + self._amp * np.sin(phase)
        jqd = self._amp * self._omega * np.cos(phase)
        jqdd = -self._amp * self._omega**2 * np.sin(phase)
        if self._live.any():
            live = self._live
            jq = np.where(live, self.live.q, jq)
            jqd, jqdd = np.where(live, self.live.qd, jqd), np.where(live, self.live.qdd, jqdd)
        self._script = (jq, jqd)
        clipped = np.array(
            [
                self.clamped.clip(*args)
                for args in zip(self._target_names, jq, self._lo, self._hi, strict=True)
            ]
        ).reshape(jq.shape)
        over = clipped != jq
        jqd, jqdd = np.where(over, 0.0, jqd), np.where(over, 0.0, jqdd)
        return np.concatenate([base_q, clipped, base_qd, jqd, base_qdd, jqdd])

    def effort(self, setpoint: np.ndarray, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """Controls for a set-point: motors a PID torque (+ feed-forward, the weight on
        base_z), position actuators the target, velocity actuators the rate; clamped."""
        q_ref, qd_ref, qdd_ref = np.split(setpoint, 3)
        qc, qdc = q[self._idx], qd[self._idx]
        acc = self.pid.update(qc, qdc, q_ref, qd_ref, np.ones(len(qc), bool), self.dt)
        force = self.inertia * (acc + qdd_ref) + self.gravity
        c = self._coord
        pull = qd_ref[c] + VELOCITY_PULL_PER_S * (q_ref[c] - qc[c])
        ctrl = np.where(
            self._motor,
            force[c] / self._gain,
            np.where(self._position, self._gear * q_ref[c], self._gear * pull),
        )
        limits = zip(self._control_names, ctrl, self._ctrl_lo, self._ctrl_hi, strict=True)
        return np.array([self.clamped.clip(*args) for args in limits]).reshape(ctrl.shape)

    def recover_integral(self, log: RobotLog) -> None:
        """The PID integral as before the log's first row, from that row's motor controls
        (effort = I · (kp·e + ki·∫e + kd·ė + qdd_ref) + weight), where they were not clamped
        (as the omni's controller does)."""
        q_ref, qd_ref, qdd_ref = np.split(log.setpoint[0], 3)
        pid, ctrl = self.pid, log.ctrl[0]
        err = q_ref - log.qpos[0][self._idx]
        integral = np.zeros(len(self.coords))
        free = self._motor & (ctrl > self._ctrl_lo) & (ctrl < self._ctrl_hi)
        c = self._coord[free]
        force = ctrl[free] * self._gain[free]
        acc = (force - self.gravity[c]) / self.inertia[c] - qdd_ref[c]
        acc -= pid.kp[c] * err[c] + pid.kd[c] * (qd_ref[c] - log.qvel[0][self._idx][c])
        integral[c] = acc / pid.ki[c]
        pid.integral = integral - err * self.dt
