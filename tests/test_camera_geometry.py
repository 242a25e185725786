"""Depth back-projects onto the known geometry; two views agree; boxes bound their masks."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import ROOM_X, box_room_scene, place
from twinsim.model.sections import RenderConfig
from twinsim.sensors.annotate import annotate_frame
from twinsim.sensors.camera import backproject, intrinsics
from twinsim.sensors.kinds.camera import CameraConfig


def _cam(world):
    return next(s for s in world.scene.sensors if s.type == "camera")


def test_depth_of_facing_wall_is_its_distance(box_world):
    cam = _cam(box_world)
    place(box_world, (0.0, 0.0, 1.2), yaw=0.0)  # facing +x: the east wall at x = 3 m
    frame = annotate_frame(box_world, cam, 0, 0)
    K = intrinsics(cam.width, cam.height, cam.hfov_deg)
    # the optical centre sits 0.12 m ahead of the body: the wall is 3 − 0.12 m away along z
    centre = frame.depth[20:28, 28:36]
    assert np.allclose(centre, ROOM_X[1] - 0.12, atol=2e-3)
    pts = backproject(frame.depth, K, frame.T_world_cam)
    wall = frame.instance == 3
    assert wall.sum() > 100
    assert np.allclose(pts[wall][:, 0], ROOM_X[1], atol=5e-3)


def test_two_views_of_static_scene_agree_below_1cm(gl_backend):
    from twinsim.engine.world import World

    cam_cfg = CameraConfig(width=160, height=120, hfov_deg=80)
    world = World(box_room_scene(cam_cfg), RenderConfig(shadow_size=512), physics_hz=240)
    try:
        cam = _cam(world)
        K = intrinsics(cam.width, cam.height, cam.hfov_deg)
        place(world, (-0.5, -0.3, 1.1), yaw=0.3, pitch=0.1)
        a = annotate_frame(world, cam, 0, 0)
        place(world, (0.4, 0.5, 1.4), yaw=-0.2, roll=0.05)
        b = annotate_frame(world, cam, 1, 0)
    finally:
        world.close()
    pts = backproject(a.depth, K, a.T_world_cam).reshape(-1, 3)
    inst_a = a.instance.reshape(-1)
    T_b_world = np.linalg.inv(b.T_world_cam)
    pb = pts @ T_b_world[:3, :3].T + T_b_world[:3, 3]
    uf = pb[:, 0] / pb[:, 2] * K[0, 0] + K[0, 2]
    vf = pb[:, 1] / pb[:, 2] * K[1, 1] + K[1, 2]
    u0, v0 = np.floor(uf).astype(int), np.floor(vf).astype(int)
    ok = (pb[:, 2] > 0.1) & (u0 >= 0) & (u0 < cam.width - 1) & (v0 >= 0) & (v0 < cam.height - 1)
    u0, v0, du, dv, z_pred, inst = (
        u0[ok],
        v0[ok],
        (uf - u0)[ok],
        (vf - v0)[ok],
        pb[ok, 2],
        inst_a[ok],
    )
    # B sees the same surface where all four neighbours of the projected point show that instance
    corners = [(v0, u0), (v0, u0 + 1), (v0 + 1, u0), (v0 + 1, u0 + 1)]
    same = np.all([b.instance[r, c] == inst for r, c in corners], axis=0)
    assert same.sum() > 0.4 * a.depth.size
    # inverse depth is affine in the image over a plane: interpolate it bilinearly
    inv = [1.0 / b.depth[r, c][same].astype(np.float64) for r, c in corners]
    w = [(1 - du) * (1 - dv), du * (1 - dv), (1 - du) * dv, du * dv]
    z_b = 1.0 / sum(wi[same] * ii for wi, ii in zip(w, inv, strict=True))
    err = np.abs(z_b - z_pred[same])
    assert np.median(err) < 2e-3
    assert np.quantile(err, 0.99) < 0.01


@pytest.mark.parametrize("yaw", [0.0, 1.2, 2.5, -2.0])
def test_boxes_and_instance_ids(box_world, yaw):
    cam = _cam(box_world)
    place(box_world, (0.2, -0.3, 1.0), yaw=yaw, pitch=0.2)
    frame = annotate_frame(box_world, cam, 0, 0)
    known = {o.instance_id for o in box_world.scene.objects}
    present = set(np.unique(frame.instance).tolist()) - {0}
    assert present <= known
    assert {b["instance_id"] for b in frame.boxes} == present
    classes = {o.instance_id: o.semantic_class for o in box_world.scene.objects}
    for box in frame.boxes:
        iid = box["instance_id"]
        assert box["semantic_class"] == classes[iid]
        ys, xs = np.nonzero(frame.instance == iid)
        assert box["tight"] == [xs.min(), ys.min(), xs.max(), ys.max()]
        x0, y0, x1, y1 = box["tight"]
        lx0, ly0, lx1, ly1 = box["loose"]
        assert lx0 <= x0 <= x1 <= lx1 and ly0 <= y0 <= y1 <= ly1
        # the oriented 3D box contains every back-projected pixel of the instance
        obb = box["obb"]
        K = intrinsics(cam.width, cam.height, cam.hfov_deg)
        pts = backproject(frame.depth, K, frame.T_world_cam)[frame.instance == iid]
        local = (pts - np.array(obb["center"])) @ np.array(obb["rotation"])
        assert np.all(np.abs(local) <= np.array(obb["half_extents"]) + 5e-3)


def test_semantic_image_matches_instance_classes(box_world):
    from twinsim.scene.vocabulary import class_id

    cam = _cam(box_world)
    place(box_world, (0.0, 0.0, 1.2), yaw=0.6)
    frame = annotate_frame(box_world, cam, 0, 0)
    for obj in box_world.scene.objects:
        mask = frame.instance == obj.instance_id
        assert np.all(frame.semantic[mask] == class_id(obj.semantic_class))
    assert np.all(frame.semantic[frame.instance == 0] == 0)
