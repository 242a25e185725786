"""Actor culling leaves images unchanged: same pixels, depth and geom ids with and without it."""

from __future__ import annotations

import numpy as np
import pytest

from twinsim.config import load_config
from twinsim.model.trajectory import Trajectory
from twinsim.robots.drone.spec import pose_to_qpos
from twinsim.sim import build_scene

OVERRIDES = ["people.count=8", "flying_objects.count=4", "scene.min_rooms=4", "scene.max_rooms=4"]


@pytest.fixture(scope="module")
def crowded_world(gl_backend):
    from twinsim.engine.world import World

    cfg = load_config("tiny", OVERRIDES, seed=3, duration_s=6.0)
    scene = build_scene(cfg)
    world = World(scene, cfg.render, cfg.sim.physics_hz)
    yield world, scene
    world.close()


def _poses(scene, n: int):
    """Robot poses along the planned flight and the times they are reached."""
    traj = Trajectory.from_path_points(scene.robot.path)
    for t in np.linspace(1.0, 6.5, n):
        ref = traj.reference(t)
        yield t, pose_to_qpos(ref.pos, float(ref.yaw))


def test_culled_render_equals_full_render(crowded_world):
    from twinsim.engine.render import CameraRenderer

    world, scene = crowded_world
    cam = next(s for s in scene.sensors if s.type == "camera")
    w, h = 160, 120
    culled = CameraRenderer(world.model, cam.name, w, h, culling=world.culling)
    full = CameraRenderer(world.model, cam.name, w, h)
    hidden_counts, actor_pixels = [], 0
    actor_geoms = set(world.culling.geoms.tolist())
    try:
        for t, q in _poses(scene, 12):
            world.pose_actors(t)
            world.robot().set_state(q, np.zeros(6))
            a, b = culled.render(world.data), full.render(world.data)
            np.testing.assert_array_equal(a.rgb, b.rgb)
            np.testing.assert_array_equal(a.depth, b.depth)
            np.testing.assert_array_equal(a.geom_ids, b.geom_ids)
            hidden = world.culling.hidden(world.model, world.data, world._cam_ids[cam.name], w / h)
            hidden_counts.append(len(hidden))
            seen = np.isin(a.geom_ids, list(actor_geoms))
            actor_pixels += int(seen.sum())
            assert not np.isin(a.geom_ids, hidden).any()  # nothing culled was in view
    finally:
        culled.close()
        full.close()
    assert max(hidden_counts) > len(actor_geoms) // 2  # culling did leave most actors out
    assert actor_pixels > 0  # and people or objects were in view in some frames


def test_segmentation_lookup_matches_mujoco_scene(crowded_world):
    """The geom-id table built from geom groups equals the ids MuJoCo stores per scene geom."""
    import mujoco

    from twinsim.engine.render import CameraRenderer

    world, scene = crowded_world
    cam = next(s for s in scene.sensors if s.type == "camera")
    renderer = CameraRenderer(world.model, cam.name, 64, 48, culling=world.culling)
    try:
        for t, q in _poses(scene, 4):
            world.pose_actors(t)
            world.robot().set_state(q, np.zeros(6))
            renderer.render(world.data)
            stored = renderer._scene.geoms[: renderer._scene.ngeom]
            expected = np.full(2**16, -1, np.int32)
            for g in stored:
                if g.objtype == mujoco.mjtObj.mjOBJ_GEOM and g.segid >= 0:
                    expected[g.segid + 1] = g.objid
            np.testing.assert_array_equal(renderer._segid_lut, expected)
    finally:
        renderer.close()


def test_shadow_of_an_unseen_geom_into_view_keeps_it():
    """A sphere outside the frustum whose shadow (from a lamp above) falls in view is kept."""
    from twinsim.engine.culling import _Cone, _segments_meet

    # camera 2 m above the floor looking straight down (MuJoCo camera looks along its −z)
    frustum = _Cone.pyramid(np.array([0.0, 0.0, 2.0]), np.eye(3), tan_x=0.5, tan_y=0.5)
    lamp = np.array([3.0, 0.0, 2.5])
    unseen = np.array([[1.5, 0.0, 1.25], [3.0, 4.0, 1.25]])  # on the lamp→view line; far off
    radii = np.array([0.1, 0.1])
    assert not frustum.meets(unseen, radii).any()
    floor = lamp + (unseen - lamp) * (lamp[2] / (lamp[2] - unseen[:, 2]))[:, None]
    kept = _segments_meet(frustum, unseen, floor, radii * 2.0)
    assert kept.tolist() == [True, False]


def test_town_culling_leaves_out_most_of_the_town_and_keeps_every_pixel(gl_backend):
    """In a town (no rooms), the frustum and far plane alone leave most buildings, props and
    vehicles out of the car's camera; colour, depth and ids equal drawing everything."""
    from twinsim.engine.render import CameraRenderer
    from twinsim.engine.world import World
    from twinsim.robots.omni.spec import pose_to_qpos as planar_qpos

    overrides = ["robot.kind=car", "traffic.vehicles=6", "sensors.cam0.far_m=25"]
    cfg = load_config("town", overrides, seed=1, duration_s=2.0)
    scene = build_scene(cfg)
    world = World(scene, cfg.render, cfg.sim.physics_hz)
    cam = next(s for s in scene.sensors if s.type == "camera")
    w, h = 96, 72
    culled = CameraRenderer(world.model, cam.name, w, h, culling=world.culling)
    full = CameraRenderer(world.model, cam.name, w, h)
    path = scene.robot.path
    try:
        fractions = []
        for i in np.linspace(0, len(path) - 1, 5).astype(int):
            world.pose_actors(1.0 + path[i].t_s)
            world.robot().set_state(planar_qpos(path[i].pos, path[i].yaw), np.zeros(3))
            a, b = culled.render(world.data), full.render(world.data)
            np.testing.assert_array_equal(a.rgb, b.rgb)
            np.testing.assert_array_equal(a.depth, b.depth)
            np.testing.assert_array_equal(a.geom_ids, b.geom_ids)
            hidden = world.culling.hidden(world.model, world.data, world._cam_ids[cam.name], w / h)
            assert not np.isin(a.geom_ids, hidden).any()
            fractions.append(len(hidden) / len(world.culling.geoms))
    finally:
        culled.close()
        full.close()
        world.close()
    assert min(fractions) > 0.5, fractions
