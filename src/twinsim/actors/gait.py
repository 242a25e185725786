"""Procedural motions (walk, idle, wave, sit), GRADE-like animations built from a few curves.

Each motion maps clip time τ (N,) to the world orientation of every part and the pelvis position
(see `twinsim.actors.playback.PoseSource`). Feet are placed explicitly and the legs solved by
two-bone inverse kinematics, so a standing foot never slides and its sole rests on the floor.
Walks are arc-length parametrised along `waypoints` whose corners are rounded by circular arcs;
the stride (two steps) is 2·speed / gait_frequency_hz, `gait_frequency_hz` being the step rate.
"""

from __future__ import annotations

import numpy as np

from twinsim.actors.human import HumanModel
from twinsim.actors.playback import PoseSource
from twinsim.geometry import ypr_to_matrices
from twinsim.model.people import HumanMotionSpec

CORNER_RADIUS_M = 0.6  # largest fillet radius at a walk's corners
STANCE = 0.6  # fraction of a stride a foot is on the floor
PLANT = 0.25  # stride fraction after heel strike at which the pelvis passes over that foot
HEEL_OFF = 0.3  # stride fraction after heel strike at which the heel starts to rise
TOE_OFF_PITCH = np.radians(32.0)  # heel-up foot pitch about the toe tip at toe-off
HEEL_STRIKE_PITCH = np.radians(20.0)  # toes-up foot pitch about the heel at heel strike
FOOT_FLAT = 0.12  # stride fraction after heel strike at which the foot is flat
REACH = 0.995  # the most a leg extends, as a fraction of thigh + shin
REF_HEIGHT_M = 1.75  # height at which the amplitudes below are given


def _smoothstep(x: np.ndarray) -> np.ndarray:
    x = np.clip(x, 0.0, 1.0)
    return x * x * (3.0 - 2.0 * x)


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def _dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.einsum("...i,...i->...", a, b)


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return np.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)


def _look_along(bone: np.ndarray, hint: np.ndarray) -> np.ndarray:
    """Frame whose -z is the unit `bone` direction and whose x is `hint` made orthogonal to it."""
    z = -bone
    x = _unit(hint - _dot(hint, z)[..., None] * z)
    return np.stack([x, _cross(z, x), z], axis=-1)


def _two_bone(hip, ankle, l1: float, l2: float, hint) -> tuple[np.ndarray, np.ndarray]:
    """Unit thigh and shin directions reaching from hip towards ankle, knee bent towards hint."""
    d = ankle - hip
    dist = np.linalg.norm(d, axis=-1, keepdims=True)
    dh = d / dist
    dist = np.clip(dist, abs(l1 - l2) + 1e-6, (l1 + l2) * (1.0 - 1e-9))
    a = (l1 * l1 - l2 * l2 + dist * dist) / (2.0 * dist)
    b = np.sqrt(np.maximum(l1 * l1 - a * a, 0.0))
    knee = a * dh + b * _unit(hint - _dot(hint, dh)[..., None] * dh)
    return knee / l1, (dist * dh - knee) / l2


class _Path:
    """A polyline with circular fillets at its corners, evaluated by arc length.

    Beyond either end the path continues straight along its first / last segment, so feet
    planted just before the start or after the end still have a place.
    """

    def __init__(self, waypoints, corner_radius: float = CORNER_RADIUS_M) -> None:
        pts = np.asarray(waypoints, dtype=float).reshape(-1, 2)
        pts = pts[np.r_[True, np.linalg.norm(np.diff(pts, axis=0), axis=1) > 1e-9]]
        if len(pts) < 2:
            raise ValueError("a walk needs at least two distinct waypoints")
        lens = np.linalg.norm(np.diff(pts, axis=0), axis=1)
        dirs = np.diff(pts, axis=0) / lens[:, None]
        n = len(lens)
        rows = []  # s0, is_arc, x, y (start or centre), heading or start angle, sign, radius
        s, start, d_prev = 0.0, pts[0], 0.0
        for i in range(n):
            d, turn = 0.0, 0.0
            if i < n - 1:
                turn = float(np.arctan2(_cross2(dirs[i], dirs[i + 1]), dirs[i] @ dirs[i + 1]))
                if abs(turn) > 1e-6:
                    room_in = lens[i] if i == 0 else lens[i] / 2
                    room_out = lens[i + 1] if i + 1 == n - 1 else lens[i + 1] / 2
                    t = np.tan(abs(turn) / 2)
                    d = min(corner_radius, min(room_in, room_out) / t) * t
            heading = float(np.arctan2(dirs[i][1], dirs[i][0]))
            rows.append((s, 0.0, start[0], start[1], heading, 0.0, 1.0))
            s += lens[i] - d_prev - d
            if d > 0:
                sign = np.sign(turn)
                r = d / np.tan(abs(turn) / 2)
                a_start = pts[i + 1] - dirs[i] * d
                centre = a_start + sign * r * np.array([-dirs[i][1], dirs[i][0]])
                a0 = float(np.arctan2(*(a_start - centre)[::-1]))
                rows.append((s, 1.0, centre[0], centre[1], a0, sign, r))
                s += r * abs(turn)
                start = pts[i + 1] + dirs[i + 1] * d
            else:
                start = pts[i + 1]
            d_prev = d
        self.length = s
        table = np.array(rows)
        self._s0, self._arc = table[:, 0], table[:, 1] > 0
        self._x, self._y, self._h, self._sign, self._r = table[:, 2:].T

    def __call__(self, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Points (..., 2) and heading (...) of the path at arc lengths s."""
        i = np.clip(np.searchsorted(self._s0, s, side="right") - 1, 0, len(self._s0) - 1)
        ds = s - self._s0[i]
        h, r, sign, arc = self._h[i], self._r[i], self._sign[i], self._arc[i]
        ang = h + sign * ds / r
        line_xy = np.stack([np.cos(h), np.sin(h)], axis=-1) * ds[..., None]
        arc_xy = np.stack([np.cos(ang), np.sin(ang)], axis=-1) * r[..., None]
        xy = np.stack([self._x[i], self._y[i]], axis=-1) + np.where(arc[..., None], arc_xy, line_xy)
        return xy, np.where(arc, ang + sign * np.pi / 2, h)


def _cross2(a: np.ndarray, b: np.ndarray) -> float:
    return float(a[0] * b[1] - a[1] * b[0])


def walk_path_length(waypoints) -> float:
    """Length of the rounded path a walk follows; cycle_s = length / speed walks it once."""
    return _Path(waypoints).length


def double_support_times(spec: HumanMotionSpec) -> np.ndarray:
    """Clip times τ of a walk at which it stands on both feet: its heel strikes, one every
    1 / gait_frequency_hz (a step of half a stride), and the end of a pass, where it stands
    (`_Walk`); a walker that stops there does not freeze with a foot in the air."""
    steps = np.arange(0.0, spec.cycle_s, 1.0 / spec.gait_frequency_hz)
    return np.append(steps, spec.cycle_s)


class _Rig:
    """The body dimensions the procedural motions need, read once from a `HumanModel`."""

    def __init__(self, model: HumanModel) -> None:
        L = model.segment_lengths
        self.thigh, self.shin = L["thigh"], L["shin"]
        self.reach = REACH * (self.thigh + self.shin)
        self.ankle_h = L["ankle_height"]
        self.toe_tip = np.array([L["toe_tip"], 0.0, -L["ankle_height"]])
        self.heel = np.array([-L["heel"], 0.0, -L["ankle_height"]])
        self.hip_offset = model.part_offset[
            [model.part_index("l_thigh"), model.part_index("r_thigh")]
        ]
        self.stand_z = L["pelvis_height"] - 0.006 * model.height_m  # knees slightly unlocked
        self.hip_half_width = L["hip_width"] / 2
        self.k = model.height_m / REF_HEIGHT_M
        self.seat_height = model.seat_height_m  # a seat that fits the legs, when none is given
        self.pelvis_above_seat = model.pelvis_half_height_m
        self.sides = np.array([1.0, -1.0])  # left, right
        self.soften = 0.008 * self.k

    def soft_min(self, z: np.ndarray) -> np.ndarray:
        """A smooth lower bound of the rows' minima (so the pelvis never bobs with a kink)."""
        lo = z.min(axis=1)
        return lo - self.soften * np.log(np.exp((lo[:, None] - z) / self.soften).sum(axis=1))

    def assemble(
        self,
        pelvis_xy: np.ndarray,
        z_target: np.ndarray,
        pelvis_ypr: np.ndarray,
        foot_xy: np.ndarray,
        foot_yaw: np.ndarray,
        foot_pitch: np.ndarray,
        foot_lift: np.ndarray,
        torso_ypr: np.ndarray,
        neck_ypr: np.ndarray,
        head_ypr: np.ndarray,
        arms: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Part orientations (N, P, 3, 3) and pelvis (N, 3) from the motion's curves.

        Shapes: pelvis_xy (N, 2); z_target (N,) the wanted pelvis height, lowered where a leg
        cannot reach; *_ypr (N, 3) yaw, pitch, roll (pelvis in the world, the others relative
        to their parent); foot_* (N, 2) per foot (left, right): pitch (heel up > 0 about the
        toe tip, toes up < 0 about the heel) and lift of that pivot off the floor; arms
        (N, 4, 2) flexion (forward > 0) and abduction (outward > 0) of l/r upper arm then l/r
        lower arm, relative to the torso.
        """
        R_p = ypr_to_matrices(*pelvis_ypr.T)
        R_foot = ypr_to_matrices(foot_yaw, foot_pitch, 0.0)
        fwd_foot = np.stack([np.cos(foot_yaw), np.sin(foot_yaw), 0.0 * foot_yaw], axis=-1)
        pivot = np.where((foot_pitch >= 0)[..., None], self.toe_tip, self.heel)
        flat_pivot = fwd_foot * pivot[..., :1] + pivot * np.array([0.0, 0.0, 1.0])
        ankle = np.concatenate([foot_xy, (foot_lift + self.ankle_h)[..., None]], axis=-1)
        ankle = ankle + flat_pivot - (R_foot @ pivot[..., None])[..., 0]
        hip_rel = (R_p[:, None] @ self.hip_offset[:, :, None])[..., 0]
        horiz = pelvis_xy[:, None] + hip_rel[..., :2] - ankle[..., :2]
        room = np.sqrt(np.maximum(self.reach**2 - _dot(horiz, horiz), 0.0))
        z = np.concatenate([z_target[:, None], ankle[..., 2] - hip_rel[..., 2] + room], axis=1)
        root = np.concatenate([pelvis_xy, self.soft_min(z)[:, None]], axis=1)
        hint = _unit(R_p[:, None, :, 0] + fwd_foot)
        thigh, shin = _two_bone(root[:, None] + hip_rel, ankle, self.thigh, self.shin, hint)
        R_t = R_p @ ypr_to_matrices(*torso_ypr.T)
        R_n = R_t @ ypr_to_matrices(*neck_ypr.T)
        R_h = R_n @ ypr_to_matrices(*head_ypr.T)
        flex, abd = arms[..., 0], arms[..., 1]
        side = np.array([1.0, -1.0, 1.0, -1.0])
        d_local = np.stack(
            [np.sin(flex) * np.cos(abd), side * np.sin(abd), -np.cos(flex) * np.cos(abd)], -1
        )
        R_arm = _look_along((R_t[:, None] @ d_local[..., None])[..., 0], R_t[:, None, :, 0])
        R = np.concatenate(
            [
                R_p[:, None],
                R_t[:, None],
                R_n[:, None],
                R_h[:, None],
                R_arm,  # l/r upper arm, l/r lower arm (PART_NAMES order)
                R_arm[:, 2:],  # hands continue the forearms
                _look_along(thigh, hint),
                _look_along(shin, hint),
                R_foot,
            ],
            axis=1,
        )
        return R, root


def _ypr(n: int, yaw=0.0, pitch=0.0, roll=0.0) -> np.ndarray:
    return np.stack(np.broadcast_arrays(yaw, pitch, roll, np.zeros(n))[:3], axis=-1)


class _Walk:
    """Walking along the rounded waypoint path at constant speed.

    A pass longer than the path ends standing on both feet at the last heel strike before the
    end (at most one step short of it) and waits there until playback reverses.
    """

    def __init__(self, rig: _Rig, spec: HumanMotionSpec) -> None:
        self.rig, self.path = rig, _Path(spec.waypoints)
        self.speed = spec.speed_mps
        self.stride = 2.0 * spec.speed_mps / spec.gait_frequency_hz
        self.s_end = np.floor(self.path.length / (self.stride / 2)) * self.stride / 2
        self.arm_amp = np.radians(10.0 + 8.0 * min(spec.speed_mps, 2.0))
        self.rot_amp = np.radians(4.0) * min(spec.speed_mps / 1.2, 1.5)
        self.foot_spacing = 0.7 * rig.hip_half_width

    def __call__(self, tau: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        rig, n = self.rig, len(tau)
        s = np.clip(self.speed * tau, 0.0, self.s_end)
        phi = s / self.stride
        xy, heading = self.path(s)
        left = np.stack([-np.sin(heading), np.cos(heading)], axis=-1)
        c = np.cos(2 * np.pi * phi)
        toward_stance = np.sin(2 * np.pi * (phi - 0.05))  # +1 mid left stance, -1 mid right
        pelvis_xy = xy + 0.02 * rig.k * toward_stance[:, None] * left

        phase = phi[:, None] - np.array([0.0, 0.5])  # per foot, 0 at its heel strike
        cycle = np.floor(phase)
        psi = phase - cycle
        swing = np.clip((psi - STANCE) / (1.0 - STANCE), 0.0, 1.0)
        s_foot = self.stride * (cycle + PLANT + np.array([0.0, 0.5]))
        s_foot = s_foot + self.stride * (swing - np.sin(2 * np.pi * swing) / (2 * np.pi))
        lift = 0.06 * rig.k * (1.0 - np.cos(2 * np.pi * swing)) / 2
        pitch = np.where(
            psi < STANCE,
            TOE_OFF_PITCH * _smoothstep((psi - HEEL_OFF) / (STANCE - HEEL_OFF))
            - HEEL_STRIKE_PITCH * (1.0 - _smoothstep(psi / FOOT_FLAT)),
            TOE_OFF_PITCH - (TOE_OFF_PITCH + HEEL_STRIKE_PITCH) * _smoothstep(swing),
        )
        fxy, fyaw = self.path(s_foot)
        foot_left = np.stack([-np.sin(fyaw), np.cos(fyaw)], axis=-1)
        fxy = fxy + (self.foot_spacing * rig.sides)[None, :, None] * foot_left

        lean = np.radians(3.0 + 2.0 * self.speed)
        roll = np.radians(3.0) * toward_stance
        arm = self.arm_amp * c  # each arm swings with the opposite leg
        upper = np.stack([-arm, arm], axis=-1) + np.radians(3.0)
        lower = upper + np.radians(20.0) + 0.4 * np.maximum(upper, 0.0)
        arms = np.stack([upper, lower], axis=1).reshape(n, 4)
        arms = np.stack([arms, np.full_like(arms, np.radians(6.0))], axis=-1)
        return rig.assemble(
            pelvis_xy,
            np.full(n, rig.stand_z),
            _ypr(n, heading - self.rot_amp * c, np.radians(2.0), roll),
            fxy,
            fyaw,
            pitch,
            lift,
            _ypr(n, 1.5 * self.rot_amp * c, lean, -roll),
            _ypr(n, -0.25 * self.rot_amp * c, -lean / 2),
            _ypr(n, -0.25 * self.rot_amp * c, -lean / 2 - np.radians(2.0)),
            arms,
        )


class _Stand:
    """Standing at waypoints[0] facing `heading`: idle sway and breathing, wave, or sitting down.

    For "sit" the person ends seated with the pelvis above waypoints[0] (the seat) and
    the feet a thigh length ahead; the stand → sit transition takes the first part of the cycle.
    """

    def __init__(self, rig: _Rig, spec: HumanMotionSpec, kind: str) -> None:
        self.rig, self.kind = rig, kind
        h = spec.heading
        self.fwd, self.left = np.array([np.cos(h), np.sin(h)]), np.array([-np.sin(h), np.cos(h)])
        self.heading, self.loc = h, np.asarray(spec.waypoints[0], dtype=float)
        self.ramp_s = min(1.0 if kind == "wave" else 2.5, 0.5 * spec.cycle_s)
        seat = rig.seat_height if spec.seat_height_m is None else spec.seat_height_m
        self.seat_pelvis_z = seat + rig.pelvis_above_seat
        self.feet_at = self.loc + (0.95 * rig.thigh if kind == "sit" else 0.0) * self.fwd
        self.stand_at = self.loc + (0.9 * rig.thigh if kind == "sit" else 0.0) * self.fwd

    def __call__(self, tau: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        rig, n, k = self.rig, len(tau), self.rig.k
        w = 2 * np.pi * tau
        sway = np.sin(0.23 * w)
        breath = np.sin(0.27 * w)
        pelvis_xy = self.stand_at + 0.012 * k * sway[:, None] * self.left
        z = rig.stand_z + 0.003 * k * breath
        pelvis_pitch = np.zeros(n)
        torso_pitch = np.radians(0.75) * (1.0 + breath)
        head_pitch = np.radians(3.0) * np.sin(0.13 * w)
        hang = np.radians([[3.0, 6.0], [3.0, 6.0], [12.0, 6.0], [12.0, 6.0]])
        arms = np.broadcast_to(hang, (n, 4, 2)).copy()
        arms[:, :, 0] += np.radians(2.0) * sway[:, None]
        if self.kind == "sit":
            u_xy = _smoothstep(1.4 * tau / self.ramp_s)
            u_z = _smoothstep((tau / self.ramp_s - 0.15) / 0.85)
            pelvis_xy = pelvis_xy + u_xy[:, None] * (self.loc - self.stand_at)
            z = z + u_z * (self.seat_pelvis_z - rig.stand_z)
            bend = np.sin(np.pi * u_z)
            pelvis_pitch = np.radians(12.0) * bend
            torso_pitch = torso_pitch + np.radians(25.0) * bend
            head_pitch = head_pitch - 0.8 * (pelvis_pitch + torso_pitch)
            seated = np.radians([[25.0, 10.0], [25.0, 10.0], [75.0, 5.0], [75.0, 5.0]])
            arms = arms + u_z[:, None, None] * (seated - hang)
        elif self.kind == "wave":
            u = _smoothstep(tau / self.ramp_s)
            wave = np.radians(25.0) * np.sin(1.6 * w) * u
            arms[:, 1] += u[:, None] * (np.radians([10.0, 115.0]) - hang[1])
            arms[:, 3] += u[:, None] * (np.radians([0.0, 180.0]) - hang[3])
            arms[:, 3, 1] += wave
        feet = self.feet_at + (rig.hip_half_width * rig.sides)[:, None] * self.left
        zeros = np.zeros((n, 2))
        return rig.assemble(
            pelvis_xy,
            z,
            _ypr(n, self.heading + np.radians(2.0) * np.sin(0.11 * w), pelvis_pitch, 0.02 * sway),
            np.broadcast_to(feet, (n, 2, 2)),
            np.full((n, 2), self.heading),
            zeros,
            zeros,
            _ypr(n, -np.radians(1.0) * np.sin(0.11 * w), torso_pitch, -0.02 * sway),
            _ypr(n),
            _ypr(n, np.radians(8.0) * np.sin(0.09 * w), head_pitch),
            arms,
        )


def procedural_source(model: HumanModel, spec: HumanMotionSpec) -> PoseSource:
    """The pose source of a walk, idle, wave or sit motion (a walk that cannot move stands)."""
    if not spec.waypoints:
        raise ValueError(f"a {spec.kind!r} motion needs at least one waypoint")
    rig = _Rig(model)
    if spec.kind == "walk":
        pts = np.asarray(spec.waypoints, dtype=float).reshape(-1, 2)
        if spec.speed_mps > 0 and np.ptp(pts, axis=0).max(initial=0.0) > 1e-9:
            return _Walk(rig, spec)
        return _Stand(rig, spec, "idle")
    if spec.kind in ("idle", "wave", "sit"):
        return _Stand(rig, spec, spec.kind)
    raise ValueError(f"no procedural motion for kind {spec.kind!r}")
