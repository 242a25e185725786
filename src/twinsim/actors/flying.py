"""Flying objects (GRADE): everyday props moved by random time-keyed transforms between goals.

Each object flies between random goals inside one room (x, y inside the room rectangle, or
inside one rectangle of the floor in a world without rooms; z from 0.3 m above the floor to
0.3 m below the top of the bounds) with a random orientation and a scale in [0.7, 1.4] at
every goal; collisions are deliberately not avoided. The props are built by
`twinsim.actors.props` (geoms in the object frame, centred on its origin); scale multiplies
geom sizes and offsets.

`FlyingMotion` turns keyframes into a smooth pose(t), a pure function of t clamped at both ends:
position along cubic Bezier segments through the keyframes whose tangents are limited so every
control point stays inside the box spanned by the neighbouring keyframes (C1, and the path never
leaves the box of the keyframes, hence never the room); orientation by slerp and scale by a
linear blend, both eased with smoothstep.

For GRADE's "WO" runs, `pass_in_front_object` makes a ball that waits above the camera, out of
view, and at chosen times sweeps across the optical axis a few centimetres in front of the lens.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Callable, Sequence

import numpy as np
from scipy.spatial.transform import Rotation

from twinsim.actors.props import BUILDERS, ball
from twinsim.geometry import make_T, quat_wxyz_to_matrix, random_quat_wxyz
from twinsim.model.base import Vec3
from twinsim.model.scene import FlyingObjectSpec, Keyframe, MaterialSpec, RobotSpec
from twinsim.model.sections import FlyingObjectsConfig
from twinsim.model.sensors import SensorSpec
from twinsim.model.trajectory import Trajectory
from twinsim.scene.free_space import FloorRegion
from twinsim.scene.layout import Rect

SCALE_RANGE = (0.7, 1.4)
GOAL_Z_MARGIN_M = 0.3  # goals keep this far from the floor and from the top of the bounds
ROOM_MARGIN_M = 0.15  # goals keep this far inside the room rectangle (half a wall + a bit)
MIN_SEGMENT_S = 0.6  # shortest time between two goals
MAX_SPIN_RAD_S = math.radians(180.0)  # fastest turn between two goals
END_MARGIN_S = 2.0  # keyframes run at least this long past the requested duration

PASS_MIN_GAP_M = 0.07  # least distance from the lens to the passing ball's surface
PASS_MAX_DEPTH_M = 0.3  # the ball's centre crosses the optical axis at most this far out
PASS_DEPTH_SPREAD_M = 0.03  # ... and at most this much farther than the closest it may come
PASS_PARK_UP_M = 0.45  # the ball waits this far above the camera, and above the sweep's ends
PASS_SWEEP_S = 0.6  # time from the edge of the view to the optical axis
PASS_TRANSFER_S = 0.35  # time from the waiting spot to the start of a sweep (and back)
PASS_OUT_ANGLE_RAD = math.radians(65.0)  # sweeps start and end this far off the axis
PASS_STEP_S = 0.2  # keyframe spacing while waiting (it follows the camera)


def _r3(v: float) -> float:
    """Round to 1 mm (scales)."""
    return round(float(v), 3)


def _r4(v: float) -> float:
    """Round to 0.1 mm (keyframe times and positions)."""
    return round(float(v), 4)


def _keyframe(t: float, pos, quat, scale: float) -> Keyframe:
    q = np.asarray(quat, dtype=float)
    q = q / np.linalg.norm(q)
    return Keyframe(
        t_s=_r4(t),
        pos=tuple(_r4(p) for p in pos),
        quat=tuple(round(float(c), 6) for c in q),
        scale=_r3(scale),
    )


def goal_boxes(
    areas: Sequence[Rect], bounds_min: Vec3, bounds_max: Vec3
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per floor rectangle (a room's), the (lo, hi) corners of the box goals are drawn from."""
    out = []
    z_lo = max(bounds_min[2], 0.0) + GOAL_Z_MARGIN_M
    z_hi = bounds_max[2] - GOAL_Z_MARGIN_M
    for area in areas:
        rect = area.shrink(ROOM_MARGIN_M)
        lo = np.array([max(rect.x0, bounds_min[0]), max(rect.y0, bounds_min[1]), z_lo])
        hi = np.array([min(rect.x1, bounds_max[0]), min(rect.y1, bounds_max[1]), z_hi])
        if np.all(hi > lo):
            out.append((lo, hi))
    if not out:
        raise ValueError("no room leaves space for flying objects inside the bounds")
    return out


def random_keyframes(
    lo: np.ndarray,
    hi: np.ndarray,
    speed_mps: tuple[float, float],
    duration_s: float,
    rng: np.random.Generator,
) -> tuple[Keyframe, ...]:
    """Goals uniform in the box [lo, hi], random orientation and scale, timed by a random speed.

    The time to the next goal is its distance over a speed drawn from `speed_mps`, but at least
    MIN_SEGMENT_S and long enough to turn at <= MAX_SPIN_RAD_S; the last keyframe lies beyond
    duration_s + END_MARGIN_S.
    """
    t = 0.0
    pos = rng.uniform(lo, hi)
    quat = random_quat_wxyz(rng)
    frames = [_keyframe(t, pos, quat, rng.uniform(*SCALE_RANGE))]
    while t < duration_s + END_MARGIN_S:
        nxt = rng.uniform(lo, hi)
        q = random_quat_wxyz(rng)
        dot = float(np.dot(q, quat))
        if dot < 0:
            q, dot = -q, -dot
        turn = 2.0 * math.acos(min(1.0, dot))
        speed = rng.uniform(*speed_mps)
        t += max(float(np.linalg.norm(nxt - pos)) / speed, turn / MAX_SPIN_RAD_S, MIN_SEGMENT_S)
        pos, quat = nxt, q
        frames.append(_keyframe(t, pos, quat, rng.uniform(*SCALE_RANGE)))
    return tuple(frames)


def generate_flying_objects(
    cfg: FlyingObjectsConfig,
    bounds_min: Vec3,
    bounds_max: Vec3,
    floor: FloorRegion,
    duration_s: float,
    rng: np.random.Generator,
    first_instance_id: int,
    name_prefix: str = "flying",
) -> tuple[tuple[FlyingObjectSpec, ...], tuple[MaterialSpec, ...]]:
    """`cfg.count` objects of random classes, each flying between goals in one room (one
    rectangle of the floor).

    A room is drawn with probability proportional to its area; instance ids are consecutive
    from `first_instance_id`; the returned materials are new, uniquely named scene materials.
    """
    boxes = goal_boxes(floor.rects, bounds_min, bounds_max)
    areas = np.array([np.prod(hi[:2] - lo[:2]) for lo, hi in boxes])
    specs, materials = [], []
    for k in range(cfg.count):
        cls = cfg.classes[int(rng.integers(len(cfg.classes)))]
        name = f"{name_prefix}_{k}_{cls}"
        geoms, mats = BUILDERS[cls](rng, name)
        lo, hi = boxes[int(rng.choice(len(boxes), p=areas / areas.sum()))]
        specs.append(
            FlyingObjectSpec(
                instance_id=first_instance_id + k,
                name=name,
                semantic_class=cls,
                geoms=geoms,
                keyframes=random_keyframes(lo, hi, cfg.speed_mps, duration_s, rng),
            )
        )
        materials.extend(mats)
    return tuple(specs), tuple(materials)


# ------------------------------------------------------------------------------------ motion


def _limited_tangents(p: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Catmull-Rom tangents, cut per axis so Bezier control points stay between neighbours."""
    m = np.zeros_like(p)
    if len(p) < 3:
        return m
    prev, mid, nxt = p[:-2], p[1:-1], p[2:]
    dt_in = (t[1:-1] - t[:-2])[:, None]
    dt_out = (t[2:] - t[1:-1])[:, None]
    lo = np.minimum(np.minimum(prev, mid), nxt)
    hi = np.maximum(np.maximum(prev, mid), nxt)
    up = np.minimum(3 * (hi - mid) / dt_out, 3 * (mid - lo) / dt_in)
    down = np.minimum(3 * (mid - lo) / dt_out, 3 * (hi - mid) / dt_in)
    m[1:-1] = np.clip((nxt - prev) / (dt_in + dt_out), -down, up)
    return m


def _skew(v: np.ndarray) -> np.ndarray:
    out = np.zeros((*v.shape[:-1], 3, 3))
    out[..., 0, 1], out[..., 0, 2] = -v[..., 2], v[..., 1]
    out[..., 1, 0], out[..., 1, 2] = v[..., 2], -v[..., 0]
    out[..., 2, 0], out[..., 2, 1] = -v[..., 1], v[..., 0]
    return out


class FlyingMotion:
    """The pose of a flying object at any time: a pure function of t, clamped outside the keys."""

    def __init__(self, spec: FlyingObjectSpec) -> None:
        kf = spec.keyframes
        if not kf:
            raise ValueError(f"flying object {spec.name!r} has no keyframes")
        t = np.array([k.t_s for k in kf], dtype=float)
        if np.any(np.diff(t) <= 0):
            raise ValueError(f"keyframe times of {spec.name!r} must increase strictly")
        p = np.array([k.pos for k in kf], dtype=float)
        q = np.array([k.quat for k in kf], dtype=float)
        q /= np.linalg.norm(q, axis=1, keepdims=True)
        s = np.array([k.scale for k in kf], dtype=float)
        rot = Rotation.from_quat(q, scalar_first=True).as_matrix()
        self._times = [float(x) for x in t]
        self._start = (p[0], rot[0], float(s[0]))
        if len(kf) == 1:
            self._n = 0
            return
        self._n = len(kf) - 1
        dt = np.diff(t)
        m = _limited_tangents(p, t)
        c1 = p[:-1] + m[:-1] * dt[:, None] / 3
        c2 = p[1:] - m[1:] * dt[:, None] / 3
        # power basis per segment: p(u) = a0 + u (a1 + u (a2 + u a3))
        self._a = np.stack(
            [p[:-1], 3 * (c1 - p[:-1]), 3 * (p[:-1] - 2 * c1 + c2), p[1:] - p[:-1] + 3 * (c1 - c2)],
            axis=1,
        )
        rel = Rotation.from_matrix(np.swapaxes(rot[:-1], 1, 2) @ rot[1:]).as_rotvec()
        angle = np.linalg.norm(rel, axis=1)
        axis = rel / np.where(angle > 0, angle, 1.0)[:, None]
        k = _skew(axis)
        self._rot0 = rot[:-1]
        self._rk = rot[:-1] @ k
        self._rk2 = rot[:-1] @ k @ k
        self._angle = angle.tolist()
        self._dt = dt.tolist()
        self._s = s.tolist()

    @property
    def t_range(self) -> tuple[float, float]:
        """First and last keyframe times."""
        return self._times[0], self._times[-1]

    def pose(self, t_s: float) -> tuple[np.ndarray, np.ndarray, float]:
        """(position (3,), rotation (3, 3), scale) at time t_s."""
        if self._n == 0:
            p, r, s = self._start
            return p.copy(), r.copy(), s
        i = min(max(bisect_right(self._times, t_s) - 1, 0), self._n - 1)
        u = min(max((t_s - self._times[i]) / self._dt[i], 0.0), 1.0)
        a = self._a[i]
        pos = a[0] + u * (a[1] + u * (a[2] + u * a[3]))
        e = u * u * (3.0 - 2.0 * u)
        th = e * self._angle[i]
        rot = self._rot0[i] + math.sin(th) * self._rk[i] + (1.0 - math.cos(th)) * self._rk2[i]
        scale = self._s[i] + (self._s[i + 1] - self._s[i]) * e
        return pos, rot, scale


# ------------------------------------------------------------------------ pass in front (WO)


def pass_times(
    start_s: float, end_s: float, rng: np.random.Generator, every_s: float = 8.0
) -> tuple[float, ...]:
    """Times for the lens passes: one per `every_s` window of [start_s, end_s], jittered.

    Each pass stays inside its window with room for its whole sweep, and the first and last
    keep 1 s more from the ends, so `pass_in_front_keyframes` makes every one of them.
    """
    room = PASS_SWEEP_S + PASS_TRANSFER_S + PASS_STEP_S / 2  # a pass's half width, and a gap
    span = end_s - start_s - 2.0
    if span < 2 * room:
        return ()
    n = max(1, int(span // max(every_s, 2 * room)))
    width = span / n
    return tuple(_r4(start_s + 1.0 + width * k + rng.uniform(room, width - room)) for k in range(n))


def pass_in_front_keyframes(
    T_world_cam: Callable[[float], np.ndarray],
    times: Sequence[float],
    duration_s: float,
    bounds_min: Vec3,
    bounds_max: Vec3,
    radius_m: float,
    rng: np.random.Generator,
) -> tuple[Keyframe, ...]:
    """Keyframes of a ball of `radius_m` that sweeps across the optical axis at each time.

    `T_world_cam(t)` is the camera's optical frame (OpenCV: z forward) in the world. At a pass
    time the centre is on the optical axis at a depth between radius + PASS_MIN_GAP_M and
    PASS_DEPTH_SPREAD_M more (at most PASS_MAX_DEPTH_M); the sweep starts and ends
    PASS_OUT_ANGLE_RAD off the axis, within 30° of the image's horizontal. Between passes the
    ball waits PASS_PARK_UP_M above the camera (camera frame), out of view, and it comes down to
    the sweep and goes back up at the sides, so it never crosses the camera or the drone. Every
    keyframe stays inside the bounds (shrunk by the radius).
    """
    lo = np.asarray(bounds_min, dtype=float) + radius_m
    hi = np.asarray(bounds_max, dtype=float) - radius_m
    spin_axis = rng.standard_normal(3)
    spin_axis /= np.linalg.norm(spin_axis)
    spin_rate = rng.uniform(0.5, 2.0)
    q0 = Rotation.from_quat(random_quat_wxyz(rng), scalar_first=True)

    def frame(t: float, local: np.ndarray) -> Keyframe:
        """The keyframe at t of the ball at `local` in the camera frame of that instant."""
        T = T_world_cam(t)
        q = (q0 * Rotation.from_rotvec(spin_axis * spin_rate * t)).as_quat(scalar_first=True)
        return _keyframe(t, np.clip(T[:3, :3] @ local + T[:3, 3], lo, hi), q, 1.0)

    up = np.array([0.0, -PASS_PARK_UP_M, 0.0])  # camera y points down
    end = duration_s + END_MARGIN_S
    frames: list[Keyframe] = []
    t = 0.0  # the next time the ball may wait above the camera
    for tc in sorted(times):
        t0, t1 = tc - PASS_SWEEP_S - PASS_TRANSFER_S, tc + PASS_SWEEP_S + PASS_TRANSFER_S
        if t0 < t or t1 > end:
            continue
        frames += [frame(x, up) for x in np.arange(t, t0 - PASS_STEP_S / 2, PASS_STEP_S)]
        low = radius_m + PASS_MIN_GAP_M
        depth = rng.uniform(low, max(low, min(PASS_MAX_DEPTH_M, low + PASS_DEPTH_SPREAD_M)))
        # across the image, within 30° of horizontal, from either side
        phi = rng.uniform(-math.pi / 6, math.pi / 6) + math.pi * int(rng.integers(2))
        reach = depth * math.tan(PASS_OUT_ANGLE_RAD) + radius_m
        sweep = [
            np.array([reach * j / 3 * math.cos(phi), reach * j / 3 * math.sin(phi), depth])
            for j in range(-3, 4)
        ]
        # from above the camera over to above the start, down, across, up, and back
        frames.append(frame(t0, up))
        frames.append(frame(t0 + PASS_TRANSFER_S / 2, sweep[0] + up))
        frames += [
            frame(tc + j * PASS_SWEEP_S / 3, p) for j, p in zip(range(-3, 4), sweep, strict=True)
        ]
        frames.append(frame(t1 - PASS_TRANSFER_S / 2, sweep[-1] + up))
        frames.append(frame(t1, up))
        t = t1 + PASS_STEP_S
    frames += [frame(x, up) for x in np.arange(t, end + PASS_STEP_S, PASS_STEP_S)]
    return tuple(frames)


def planned_camera_pose(robot: RobotSpec, camera: SensorSpec) -> Callable[[float], np.ndarray]:
    """T_world_cam(t) of a camera on the robot following its planned path, body kept level.

    The flown body tilts a little (roll/pitch <= its limit) and lags its reference, so a lens
    pass planned with this lands within a few centimetres of the real optical axis.
    """
    traj = Trajectory.from_path_points(robot.path)
    T_body_cam = make_T(quat_wxyz_to_matrix(camera.quat), camera.pos)

    def pose(t: float) -> np.ndarray:
        ref = traj.reference(t)
        return make_T(Rotation.from_euler("z", ref.yaw).as_matrix(), ref.pos) @ T_body_cam

    return pose


def pass_in_front_object(
    T_world_cam: Callable[[float], np.ndarray],
    times: Sequence[float],
    duration_s: float,
    bounds_min: Vec3,
    bounds_max: Vec3,
    rng: np.random.Generator,
    instance_id: int,
    name: str = "flying_pass_in_front",
) -> tuple[FlyingObjectSpec, tuple[MaterialSpec, ...]]:
    """GRADE's "WO" occluder: a 26–32 cm ball passing right in front of the lens at `times`.

    Close to the lens it covers most of a 90° view (over half of the image at the pass time).
    """
    radius = float(rng.uniform(0.13, 0.16))
    geoms, mats = ball(rng, name, radius=radius)
    keys = pass_in_front_keyframes(
        T_world_cam, times, duration_s, bounds_min, bounds_max, radius, rng
    )
    spec = FlyingObjectSpec(
        instance_id=instance_id, name=name, semantic_class="ball", geoms=geoms, keyframes=keys
    )
    return spec, mats
