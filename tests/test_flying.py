"""Flying objects: goals inside rooms, smooth motion through the keyframes, the lens pass (WO)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from conftest import make_robot
from twinsim.actors.flying import (
    PASS_SWEEP_S,
    PASS_TRANSFER_S,
    SCALE_RANGE,
    FlyingMotion,
    generate_flying_objects,
    pass_in_front_object,
    pass_times,
    planned_camera_pose,
)
from twinsim.config import TwinsimConfig, load_config
from twinsim.model.scene import FlyingObjectSpec, Keyframe, PathPoint
from twinsim.model.sections import FlyingObjectsConfig
from twinsim.scene.free_space import FloorRegion, floor_region
from twinsim.scene.furniture.kit import geoms_bounds
from twinsim.scene.layout import room_rect
from twinsim.scene.worlds.apartment.generator import generate_apartment
from twinsim.sensors.rig import resolve_sensors

DURATION = 20.0
DT = 0.01
CFG = FlyingObjectsConfig(count=10)


@pytest.fixture(scope="module")
def apartment():
    return generate_apartment(load_config("default").scene, np.random.default_rng(3))


def _generate(layout, seed: int, cfg: FlyingObjectsConfig = CFG):
    return generate_flying_objects(
        cfg,
        layout.bounds_min,
        layout.bounds_max,
        floor_region(layout),
        DURATION,
        np.random.default_rng(seed),
        first_instance_id=300,
    )


def _trace(motion: FlyingMotion, t: np.ndarray):
    poses = [motion.pose(float(x)) for x in t]
    pos = np.array([p for p, _, _ in poses])
    rot = np.array([r for _, r, _ in poses])
    scale = np.array([s for _, _, s in poses])
    return pos, rot, scale


@pytest.fixture(scope="module")
def generated(apartment):
    specs, mats = _generate(apartment, seed=7)
    t = np.arange(-0.5, DURATION + 3.0, DT)
    traces = [_trace(FlyingMotion(s), t) for s in specs]
    return specs, mats, t, traces


def test_objects_materials_and_sizes(generated):
    specs, mats, _, _ = generated
    assert [s.instance_id for s in specs] == list(range(300, 310))
    names = [m.name for m in mats]
    assert len(set(names)) == len(names)
    assert {g.material for s in specs for g in s.geoms} == set(names)
    for s in specs:
        assert s.semantic_class in CFG.classes
        lo, hi = geoms_bounds(s.geoms)
        np.testing.assert_allclose((lo + hi) / 2, 0.0, atol=1e-3)  # centred on the origin
        assert 0.05 <= (hi - lo).max() <= 0.45


def test_positions_stay_inside_one_room_at_all_times(apartment, generated):
    specs, _, _, traces = generated
    top = apartment.bounds_max[2] - 0.3
    for spec, (pos, _, _) in zip(specs, traces, strict=True):
        keys = np.array([k.pos for k in spec.keyframes])
        rects = [room_rect(r).shrink(0.05) for r in apartment.rooms]
        inside = [
            np.all((pos[:, 0] >= r.x0) & (pos[:, 0] <= r.x1))
            and np.all((pos[:, 1] >= r.y0) & (pos[:, 1] <= r.y1))
            for r in rects
        ]
        assert sum(inside) == 1, spec.name
        assert np.all(pos >= np.asarray(apartment.bounds_min)), spec.name
        assert np.all(pos <= np.asarray(apartment.bounds_max)), spec.name
        assert pos[:, 2].min() >= 0.3 - 1e-6 and pos[:, 2].max() <= top + 1e-6
        assert keys[:, 2].min() >= 0.3 - 1e-6


def test_motion_is_continuous_and_covers_the_run(generated):
    specs, _, t, traces = generated
    v_max = CFG.speed_mps[1]
    for spec, (pos, rot, scale) in zip(specs, traces, strict=True):
        assert spec.keyframes[0].t_s == 0.0 and spec.keyframes[-1].t_s >= DURATION + 1.0
        step = np.linalg.norm(np.diff(pos, axis=0), axis=1)
        assert step.max() <= 3 * v_max * DT, spec.name
        rel = Rotation.from_matrix(np.swapaxes(rot[:-1], 1, 2) @ rot[1:]).magnitude()
        assert rel.max() <= 1.5 * math.pi * DT * 1.01, spec.name  # smoothstep peaks at 1.5x
        assert np.abs(np.diff(scale)).max() <= 0.05
        assert SCALE_RANGE[0] - 1e-9 <= scale.min() and scale.max() <= SCALE_RANGE[1] + 1e-9
        np.testing.assert_allclose(rot @ np.swapaxes(rot, 1, 2) - np.eye(3), 0.0, atol=1e-9)
        assert len(np.unique(pos.round(3), axis=0)) > len(t) // 4  # it really moves


def test_keyframes_are_passed_through_and_ends_clamp(generated):
    specs = generated[0]
    for spec in specs:
        motion = FlyingMotion(spec)
        for k in spec.keyframes:
            pos, rot, scale = motion.pose(k.t_s)
            np.testing.assert_allclose(pos, k.pos, atol=1e-9)
            expect = Rotation.from_quat(k.quat, scalar_first=True).as_matrix()
            np.testing.assert_allclose(rot, expect, atol=1e-6)
            assert scale == pytest.approx(k.scale)
        first, last = spec.keyframes[0], spec.keyframes[-1]
        np.testing.assert_allclose(motion.pose(first.t_s - 5.0)[0], first.pos)
        np.testing.assert_allclose(motion.pose(last.t_s + 5.0)[0], last.pos)
        assert motion.pose(last.t_s + 5.0)[2] == pytest.approx(last.scale)


def test_pose_is_a_pure_function_of_time(generated):
    motion = FlyingMotion(generated[0][0])
    a = motion.pose(7.3)
    motion.pose(1.0)
    b = motion.pose(7.3)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])


def test_same_seed_same_objects(apartment):
    a = _generate(apartment, seed=11)
    assert a == _generate(apartment, seed=11)
    assert a != _generate(apartment, seed=12)
    single = FlyingObjectsConfig(count=3, classes=["bottle"])
    assert {s.semantic_class for s in _generate(apartment, 1, single)[0]} == {"bottle"}


def test_single_keyframe_and_bad_times():
    geoms = generate_flying_objects(
        FlyingObjectsConfig(count=1),
        (-2, -2, 0),
        (2, 2, 2.5),
        FloorRegion.of(
            generate_apartment(load_config("tiny").scene, np.random.default_rng(0)).rooms[:1]
        ),
        1.0,
        np.random.default_rng(0),
        1,
    )[0][0].geoms
    key = Keyframe(t_s=0.0, pos=(1.0, 2.0, 1.0), quat=(1.0, 0.0, 0.0, 0.0), scale=0.9)
    still = FlyingMotion(
        FlyingObjectSpec(
            instance_id=1, name="a", semantic_class="ball", geoms=geoms, keyframes=(key,)
        )
    )
    pos, rot, scale = still.pose(3.0)
    np.testing.assert_allclose(pos, key.pos)
    np.testing.assert_allclose(rot, np.eye(3))
    assert scale == 0.9
    with pytest.raises(ValueError, match="increase"):
        FlyingMotion(
            FlyingObjectSpec(
                instance_id=1, name="b", semantic_class="ball", geoms=geoms, keyframes=(key, key)
            )
        )


# ----------------------------------------------------------------------------- lens pass (WO)

BOUNDS_MIN = (-4.0, -3.0, -0.05)
BOUNDS_MAX = (2.0, 3.0, 2.75)
HALF_FOV = (math.radians(45.0), math.radians(37.0))
# optical frame (x right, y down, z forward) of a camera looking along the body's +x
R_BODY_CAM = np.array([[0.0, 0.0, 1.0], [-1.0, 0.0, 0.0], [0.0, -1.0, 0.0]])
DRONE_CENTRE_CAM = np.array([0.0, 0.0, -0.12])  # body centre in the camera frame
DRONE_HALF_CAM = np.array([0.18, 0.05, 0.18])  # body half size along camera x, y, z


def camera_pose(t: float) -> np.ndarray:
    """A camera flying along +x at 0.23 m/s, turning and pitching; it ends 0.44 m from a bound."""
    yaw = 0.35 * math.sin(0.4 * t)
    pitch = math.radians(15.0) * math.sin(0.7 * t)
    T = np.eye(4)
    T[:3, :3] = Rotation.from_euler("ZY", [yaw, pitch]).as_matrix() @ R_BODY_CAM
    T[:3, 3] = (-3.5 + 0.23 * t, 0.2 * math.sin(0.3 * t), 1.3)
    return T


def _in_camera(T: np.ndarray, p: np.ndarray) -> np.ndarray:
    return T[:3, :3].T @ (p - T[:3, 3])


def _sphere_out_of_view(c: np.ndarray, r: float) -> bool:
    """Whether a sphere (camera frame) lies wholly outside the camera's side planes."""
    for axis, half in ((0, HALF_FOV[0]), (1, HALF_FOV[1])):
        for sign in (-1.0, 1.0):
            n = np.zeros(3)
            n[axis], n[2] = sign * math.cos(half), -math.sin(half)
            if c @ n > r:
                return True
    return False


@pytest.fixture(scope="module")
def lens_pass():
    rng = np.random.default_rng(5)
    times = pass_times(0.0, DURATION, rng, every_s=4.0)
    spec, mats = pass_in_front_object(
        camera_pose, times, DURATION, BOUNDS_MIN, BOUNDS_MAX, rng, instance_id=77
    )
    return times, spec, mats


def test_lens_pass_crosses_the_optical_axis_close_to_the_lens(lens_pass):
    times, spec, mats = lens_pass
    assert len(times) == 4 and spec.instance_id == 77 and mats[0].name == spec.geoms[0].material
    motion = FlyingMotion(spec)
    radius = spec.geoms[0].size[0]
    for tc in times:
        T = camera_pose(tc)
        c = _in_camera(T, motion.pose(tc)[0])
        assert np.linalg.norm(c) <= 0.3 + 1e-9
        assert np.hypot(c[0], c[1]) <= 0.005  # on the optical axis
        assert c[2] - radius >= 0.05
        # it sweeps across: well off the axis shortly before and after
        for dt in (-PASS_SWEEP_S, PASS_SWEEP_S):
            side = _in_camera(camera_pose(tc + dt), motion.pose(tc + dt)[0])
            assert np.hypot(side[0], side[1]) > 0.2


def test_lens_pass_stays_in_bounds_off_the_drone_and_out_of_view_between_passes(lens_pass):
    times, spec, _ = lens_pass
    motion = FlyingMotion(spec)
    radius = spec.geoms[0].size[0]
    t = np.arange(0.0, DURATION + 2.0, DT)
    away = np.min(np.abs(t[:, None] - np.array(times)[None]), axis=1)
    for x, far in zip(t, away > PASS_SWEEP_S + PASS_TRANSFER_S, strict=True):
        p = motion.pose(float(x))[0]
        assert np.all(p >= np.asarray(BOUNDS_MIN)) and np.all(p <= np.asarray(BOUNDS_MAX))
        c = _in_camera(camera_pose(float(x)), p)
        # never touches the drone (the default 0.36 m frame, lens 0.12 m ahead of its centre)
        gap = np.maximum(np.abs(c - DRONE_CENTRE_CAM) - DRONE_HALF_CAM, 0.0)
        assert np.linalg.norm(gap) >= radius, x
        if far:
            assert _sphere_out_of_view(c, radius), x


def test_short_runs_have_no_pass_and_the_ball_just_waits():
    assert pass_times(0.0, 3.0, np.random.default_rng(0)) == ()
    rng = np.random.default_rng(1)
    spec, _ = pass_in_front_object(camera_pose, (), 3.0, BOUNDS_MIN, BOUNDS_MAX, rng, 5)
    motion = FlyingMotion(spec)
    assert spec.keyframes[-1].t_s >= 3.0
    for x in np.arange(0.0, 3.0, 0.05):
        c = _in_camera(camera_pose(float(x)), motion.pose(float(x))[0])
        assert _sphere_out_of_view(c, spec.geoms[0].size[0])


def test_planned_camera_pose_follows_the_path():
    path = (
        PathPoint(t_s=0.0, pos=(0.0, 0.0, 1.3), yaw=0.0),
        PathPoint(t_s=4.0, pos=(2.0, 1.0, 1.3), yaw=1.0),
    )
    robot = make_robot().model_copy(update={"path": path})
    cam = next(s for s in resolve_sensors(TwinsimConfig().robot.sensors) if s.type == "camera")
    pose = planned_camera_pose(robot, cam)
    T = pose(4.0)
    body_x = np.array([math.cos(1.0), math.sin(1.0), 0.0])
    np.testing.assert_allclose(T[:3, 2], body_x, atol=1e-9)  # optical axis along body x
    np.testing.assert_allclose(T[:3, 1], [0.0, 0.0, -1.0], atol=1e-9)  # image y down
    np.testing.assert_allclose(T[:3, 3], np.array([2.0, 1.0, 1.3]) + 0.12 * body_x, atol=1e-9)
