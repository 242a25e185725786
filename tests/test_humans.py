"""Articulated humans: body, keypoints and procedural motions checked as geometry, not snapshots."""

from __future__ import annotations

import numpy as np
import pytest

from twinsim.actors.gait import walk_path_length
from twinsim.actors.human import COCO_KEYPOINTS, JOINT_NAMES, LAYERS, PART_NAMES, build_body
from twinsim.actors.motion import motion_for
from twinsim.actors.surface import sample_surface_points
from twinsim.geometry import quat_wxyz_to_matrix
from twinsim.model.people import HumanBodySpec, HumanMotionSpec, PersonSpec
from twinsim.model.scene import GeomSpec

FEET = [PART_NAMES.index("l_foot"), PART_NAMES.index("r_foot")]


def body(height_m: float = 1.75, **kw) -> HumanBodySpec:
    return HumanBodySpec(
        height_m=height_m,
        skin_material="skin",
        shirt_material="shirt",
        pants_material="pants",
        shoes_material="shoes",
        **kw,
    )


def person(kind: str = "walk", height_m: float = 1.75, body_kw=None, **motion) -> PersonSpec:
    motion.setdefault("waypoints", ((0.0, 0.0), (6.0, 0.0)))
    motion.setdefault("cycle_s", 4.0)
    return PersonSpec(
        person_id=1,
        name="p1",
        body_instance_id=1,
        clothing_instance_id=2,
        body=body(height_m, **(body_kw or {})),
        motion=HumanMotionSpec(kind=kind, **motion),
    )


def world_points(motion, t, n_per_part: int = 60) -> list[np.ndarray]:
    """Surface points of every part in the world, each (N, n, 3) over times t."""
    T = motion.part_poses(t)
    pts = sample_surface_points(motion.model, n_per_part)
    return [
        np.einsum("nij,kj->nki", T[:, i, :3, :3], p) + T[:, i, None, :3, 3]
        for i, p in enumerate(pts)
    ]


def on_geom(g: GeomSpec, p: np.ndarray, tol: float = 1e-7) -> np.ndarray:
    """Whether points p (K, 3) in the part frame lie on the surface of geom g."""
    q = (p - np.asarray(g.pos)) @ quat_wxyz_to_matrix(g.quat)
    s = np.asarray(g.size)
    if g.type in ("sphere", "ellipsoid"):
        semi = np.full(3, s[0]) if g.type == "sphere" else s
        return np.abs(np.linalg.norm(q / semi, axis=1) - 1.0) < tol
    if g.type == "box":
        r = np.abs(q) / s
        return (np.abs(r.max(axis=1) - 1.0) < tol) & (r.max(axis=1) <= 1.0 + tol)
    assert g.type == "capsule"
    axis = np.stack([0 * q[:, 0], 0 * q[:, 0], np.clip(q[:, 2], -s[1], s[1])], axis=1)
    return np.abs(np.linalg.norm(q - axis, axis=1) - s[0]) < tol


def test_body_parts_layers_and_names():
    model = build_body(body(hair_material="hair"))
    assert tuple(p.name for p in model.parts) == PART_NAMES
    assert len(JOINT_NAMES) == len(set(JOINT_NAMES))
    assert COCO_KEYPOINTS[:5] == ("nose", "left_eye", "right_eye", "left_ear", "right_ear")
    assert len(COCO_KEYPOINTS) == 17 and COCO_KEYPOINTS[-1] == "right_ankle"
    skin_parts = {"neck", "head", "l_lower_arm", "r_lower_arm", "l_hand", "r_hand"}
    for part in model.parts:
        assert len(part.geoms) == len(part.layers) >= 1
        assert set(part.layers) <= set(LAYERS)
        want = "skin" if part.name in skin_parts else "clothing"
        assert set(part.layers) == {want}, part.name
        for g in part.geoms:
            if want == "skin":
                assert g.material in ("skin", "hair")
            elif part.name.endswith("foot"):
                assert g.material == "shoes"
            elif part.name in ("torso", "l_upper_arm", "r_upper_arm"):
                assert g.material == "shirt"
            else:
                assert g.material == "pants"
    head = model.parts[PART_NAMES.index("head")]
    assert [g.material for g in head.geoms] == ["skin", "hair"]
    assert len(build_body(body()).parts[PART_NAMES.index("head")].geoms) == 1
    with pytest.raises(ValueError, match="segment_scale"):
        build_body(body(segment_scale={"tail": 1.2}))


@pytest.mark.parametrize(
    ("height", "scale", "girth"),
    [(1.5, {}, 1.0), (1.75, {}, 1.0), (1.95, {"thigh": 1.1, "torso": 0.9, "head": 1.05}, 1.3)],
)
def test_standing_height_and_rigid_bones(height, scale, girth):
    spec = person("idle", height, body_kw={"segment_scale": scale, "girth_scale": girth})
    motion = motion_for(spec)
    t = np.linspace(0.0, motion.period_s, 97)
    pts = np.concatenate(world_points(motion, t), axis=1)
    top, bottom = pts[..., 2].max(axis=1), pts[..., 2].min(axis=1)
    assert np.all(np.abs(top - height) < 0.03 * height)
    assert np.all(np.abs(bottom) < 0.005)
    # Bones keep their length: every part origin stays at a fixed distance from its parent's.
    walk = motion_for(person("walk", height, body_kw={"segment_scale": scale}, speed_mps=1.3))
    T = walk.part_poses(np.linspace(0.0, walk.period_s, 301))
    parent = walk.model.parent_index
    origins = T[:, :, :3, 3]
    bone = np.linalg.norm(origins - origins[:, parent], axis=2)
    assert np.ptp(bone, axis=0).max() < 1e-9
    R = T[:, :, :3, :3]
    assert np.allclose(R @ R.transpose(0, 1, 3, 2), np.eye(3), atol=1e-9)
    assert np.allclose(np.linalg.det(R), 1.0)


def test_feet_on_the_floor_while_walking():
    spec = person("walk", waypoints=((0, 0), (3, 0), (3, 2.5), (0.5, 2.5)), speed_mps=1.2)
    spec = spec.model_copy(
        update={"motion": spec.motion.model_copy(update={"cycle_s": 8.0, "phase_s": 0.3})}
    )
    motion = motion_for(spec)
    t = np.linspace(0.0, motion.period_s, 1601)
    pts = world_points(motion, t, 80)
    feet_z = np.concatenate([pts[i][..., 2] for i in FEET], axis=1)
    lowest = feet_z.min(axis=1)
    assert lowest.min() > -0.01
    assert lowest.max() < 0.02  # a foot is always in stance
    everything = np.concatenate(pts, axis=1)[..., 2]
    assert everything.min() > -0.01


def test_walk_follows_waypoints_at_speed_and_heading():
    speed, f = 1.1, 1.7
    wps = ((0.0, 0.0), (8.0, 0.0), (8.0, 6.0))
    length = walk_path_length(wps)
    assert 13.0 < length < 14.0
    spec = person("walk", waypoints=wps, speed_mps=speed, gait_frequency_hz=f)
    spec = spec.model_copy(
        update={"motion": spec.motion.model_copy(update={"cycle_s": length / speed})}
    )
    motion = motion_for(spec)
    stride_s = 2.0 / f
    # Straight first leg: one stride apart the root has moved one stride (sway cancels).
    t0 = np.linspace(0.5, 4.0, 15)
    p0 = motion.root_pose(t0)[:, :3, 3]
    p1 = motion.root_pose(t0 + stride_s)[:, :3, 3]
    measured = np.linalg.norm(p1 - p0, axis=1) / stride_s
    assert np.all(np.abs(measured - speed) < 0.05 * speed)
    assert np.all(np.abs(p0[:, 1]) < 0.03)
    # Heading follows the path tangent (up to the pelvis's small gait rotation).
    t = np.linspace(0.3, motion.cycle_s - 0.3, 200)
    T = motion.root_pose(t)
    yaw = np.arctan2(T[:, 1, 0], T[:, 0, 0])
    x, y = T[:, 0, 3], T[:, 1, 3]
    on_first = x < 7.3
    on_second = y > 0.7
    assert np.all(np.abs(yaw[on_first]) < np.radians(7))
    assert np.all(np.abs(yaw[on_second] - np.pi / 2) < np.radians(7))
    assert np.all(np.abs(y[on_first]) < 0.03) and np.all(np.abs(x[on_second] - 8.0) < 0.03)
    # Rounded corner: the yaw turns gradually, never faster than speed / a small radius.
    tt = np.linspace(0.0, motion.cycle_s, 4001)
    T = motion.root_pose(tt)
    yaw = np.unwrap(np.arctan2(T[:, 1, 0], T[:, 0, 0]))
    assert np.abs(np.diff(yaw) / np.diff(tt)).max() < 3.5
    # The pass ends standing on both feet within one step of the last waypoint.
    assert np.linalg.norm(T[-1, :2, 3] - wps[-1]) < speed / f + 0.03
    pts = world_points(motion, np.array([motion.cycle_s]))
    feet_lowest = [pts[i][0, :, 2].min() for i in FEET]
    assert max(feet_lowest) < 0.01


@pytest.mark.parametrize("kind", ["walk", "idle", "wave", "sit"])
def test_ping_pong_is_continuous(kind):
    spec = person(kind, waypoints=((0, 0), (2.0, 1.0), (4.0, 0.0)), cycle_s=3.0, phase_s=0.7)
    motion = motion_for(spec)
    assert motion.period_s == 6.0
    turn = motion.cycle_s - 0.7  # where playback reverses
    t = np.concatenate(
        [np.linspace(0, motion.period_s, 3001), turn + np.linspace(-0.05, 0.05, 101)]
    )
    dt = 1e-3
    step = np.linalg.norm(motion.joints_world(t + dt) - motion.joints_world(t), axis=2)
    assert step.max() < 8.0 * dt  # no joint ever moves faster than 8 m/s
    tau = motion.playback_time(np.array([turn - 1e-6, turn, turn + 1e-6]))
    assert np.allclose(tau, motion.cycle_s, atol=1e-5)
    # One full period later everything repeats.
    assert np.allclose(motion.part_poses(1.234), motion.part_poses(1.234 + motion.period_s))


def test_keypoints_follow_the_persons_left():
    for heading in (0.0, 1.0, 2.5, -2.0):
        motion = motion_for(person("idle", waypoints=((1.0, 2.0),), heading=heading))
        kp = dict(zip(COCO_KEYPOINTS, motion.keypoints_world(0.4), strict=True))
        assert len(kp) == 17
        fwd = np.array([np.cos(heading), np.sin(heading), 0.0])
        left = np.array([-np.sin(heading), np.cos(heading), 0.0])
        for name in ("eye", "ear", "shoulder", "elbow", "wrist", "hip", "knee", "ankle"):
            assert (kp[f"left_{name}"] - kp[f"right_{name}"]) @ left > 0.02, name
        ears = (kp["left_ear"] + kp["right_ear"]) / 2
        assert (kp["nose"] - ears) @ fwd > 0.05
        assert kp["nose"][2] > kp["left_shoulder"][2] > kp["left_hip"][2] > kp["left_ankle"][2]
        J = motion.joints_world(0.4)
        assert np.allclose(kp["left_knee"], J[JOINT_NAMES.index("l_knee")])


def test_surface_points_lie_on_their_geoms():
    model = build_body(body(1.8, hair_material="hair", girth_scale=1.2))
    pts = sample_surface_points(model, 200)
    assert len(pts) == len(PART_NAMES)
    for part, p in zip(model.parts, pts, strict=True):
        assert p.shape == (200, 3)
        on_any = np.zeros(len(p), dtype=bool)
        for g in part.geoms:
            on_any |= on_geom(g, p)
        assert on_any.all(), part.name
    again = sample_surface_points(model, 200)
    assert all(np.array_equal(a, b) for a, b in zip(pts, again, strict=True))


def test_same_spec_same_motion_and_scalar_matches_vector():
    spec = person("walk", waypoints=((0, 0), (3, 1), (5, -1)), speed_mps=0.9, phase_s=1.1)
    a, b = motion_for(spec), motion_for(spec)
    t = np.linspace(0.0, 9.0, 50)
    assert np.array_equal(a.part_poses(t), b.part_poses(t))
    assert np.array_equal(a.keypoints_world(t), b.keypoints_world(t))
    assert np.array_equal(a.part_poses(t), a.part_poses(t))
    T = a.part_poses(t)
    assert np.allclose(a.part_poses(float(t[7])), T[7])
    assert np.allclose(a.root_pose(float(t[7])), T[7, 0])
    assert np.allclose(a.joints_world(t)[:, 0], T[:, 0, :3, 3])
    pos, quat = a.part_pos_quat(float(t[7]))
    assert np.allclose(pos, T[7, :, :3, 3])
    assert np.allclose([quat_wxyz_to_matrix(q) for q in quat], T[7, :, :3, :3])


def test_sit_lowers_the_pelvis_to_seat_height():
    spec = person("sit", waypoints=((2.0, -1.0),), heading=0.5, cycle_s=6.0)
    motion = motion_for(spec)
    model = motion.model
    assert abs(model.seat_height_m - 0.45) < 0.02
    start, seated = motion.root_pose(0.0), motion.root_pose(motion.cycle_s)
    assert start[2, 3] > 0.9
    assert abs(seated[2, 3] - (model.seat_height_m + model.pelvis_half_height_m)) < 0.02
    assert np.linalg.norm(seated[:2, 3] - (2.0, -1.0)) < 0.02
    pelvis = world_points(motion, np.array([motion.cycle_s]))[0]
    assert abs(pelvis[0, :, 2].min() - model.seat_height_m) < 0.02
    feet = np.concatenate([world_points(motion, np.array([motion.cycle_s]))[i] for i in FEET], 1)
    assert abs(feet[..., 2].min()) < 0.005


def test_wave_raises_one_wrist_above_the_shoulder():
    motion = motion_for(person("wave", waypoints=((0.0, 0.0),), cycle_s=5.0))
    J = motion.joints_world(np.linspace(1.5, 5.0, 30))
    idx = {n: JOINT_NAMES.index(n) for n in ("r_wrist", "r_shoulder", "l_wrist", "l_shoulder")}
    assert np.all(J[:, idx["r_wrist"], 2] > J[:, idx["r_shoulder"], 2] + 0.2)
    assert np.all(J[:, idx["l_wrist"], 2] < J[:, idx["l_shoulder"], 2])
    assert np.ptp(J[:, idx["r_wrist"], 1]) > 0.1  # the hand waves side to side


def test_walk_without_a_path_stands_still():
    motion = motion_for(person("walk", waypoints=((1.0, 1.0),), speed_mps=1.0))
    T = motion.part_poses(np.linspace(0, 8, 9))
    assert np.ptp(T[:, 0, :2, 3], axis=0).max() < 0.05
    feet = np.concatenate([world_points(motion, np.linspace(0, 8, 9))[i] for i in FEET], 1)
    assert abs(feet[..., 2].min()) < 0.005
