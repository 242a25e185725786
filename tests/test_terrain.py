"""Hilly towns: the height field rises beyond the town and stays flat under it, and cameras, the
LiDAR, contacts, Cycles' meshes, the scene graph's mesh and the 3D boxes all see the same hills."""

from __future__ import annotations

import numpy as np
import pytest
import shapely

from conftest import make_robot
from twinsim.scene.free_space import geom_footprint
from twinsim.scene.terrain import heights, surface_z, terrain_mesh
from twinsim.scene.vocabulary import CLASS_ID
from twinsim.scene.worlds.town.generator import PRESETS, TownConfig, generate_town


def _rural(**fields) -> TownConfig:
    return TownConfig(preset="rural", blocks_x=1, blocks_y=1, texture_size=16, **fields)


@pytest.fixture(scope="module")
def rural():
    return generate_town(_rural(), np.random.default_rng(2))


def test_hills_rise_beyond_the_town_and_leave_everything_it_placed_flat(rural):
    terrain = rural.terrain
    assert terrain is not None and terrain.instance_id == next(
        o.instance_id for o in rural.objects if o.name == "ground"
    )
    h = heights(terrain)
    assert 0.6 * PRESETS["rural"]["hills_m"] <= h.max() <= PRESETS["rural"]["hills_m"]
    assert (h > 1.0).mean() > 0.2  # a good part of the land is hill
    placed = [
        geom_footprint(o, g)[0]
        for o in rural.objects
        if o.semantic_class not in ("vegetation", "terrain")
        for g in o.geoms
    ]
    # every footprint lies on flat land, inside and along its outline
    rng = np.random.default_rng(0)
    for poly in placed:
        x0, y0, x1, y1 = poly.bounds
        pts = rng.uniform((x0, y0), (x1, y1), size=(20, 2))
        pts = pts[shapely.contains_xy(poly, pts[:, 0], pts[:, 1])]
        pts = np.vstack([pts, np.asarray(poly.exterior.coords)])
        np.testing.assert_array_equal(surface_z(terrain, pts[:, 0], pts[:, 1]), terrain.base_z)
    same = generate_town(_rural(), np.random.default_rng(2)).terrain
    other = generate_town(_rural(), np.random.default_rng(3)).terrain
    assert same == terrain and other.heights_b64 != terrain.heights_b64


def test_flat_presets_and_hills_zero_have_no_terrain():
    assert all(PRESETS[p]["hills_m"] == 0 for p in ("small_town", "mid_city", "skyscraper_city"))
    town = generate_town(_rural(hills_m=0.0), np.random.default_rng(2))
    assert town.terrain is None and not any(o.name.startswith("hill_tree") for o in town.objects)
    assert '"terrain":' not in town.to_scene(2, (make_robot(),)).to_json()


def test_trees_on_the_hills_stand_on_the_slope(rural):
    trees = [o for o in rural.objects if o.name.startswith("hill_tree")]
    assert len(trees) >= 10
    x, y, z = np.array([o.pos for o in trees]).T
    ground = surface_z(rural.terrain, x, y)
    assert (ground - rural.terrain.base_z > 0.1).all()  # on the hills
    assert (z <= ground + 1e-4).all() and (z >= ground - 0.3).all()  # never floating


@pytest.fixture(scope="module")
def rural_world(rural, gl_backend):
    from twinsim.engine.world import World
    from twinsim.model.sections import RenderConfig

    lane = next(lane for lane in rural.roads.lanes if lane.kind == "driving")
    on_road, _ = lane.point_at(lane.length_m() / 2)
    scene = rural.to_scene(2, (make_robot(start=(*on_road[:2], 2.0)),))
    world = World(scene, RenderConfig(), 240)
    yield world
    world.close()


def _hill_points(terrain, count: int, rng) -> np.ndarray:
    """Random (x, y) where the hills rise more than 2 m."""
    (cx, cy), (hx, hy) = terrain.center, terrain.half_size
    xy = rng.uniform((cx - hx, cy - hy), (cx + hx, cy + hy), size=(50 * count, 2))
    high = surface_z(terrain, xy[:, 0], xy[:, 1]) - terrain.base_z > 2.0
    return xy[high][:count]


def test_a_depth_camera_sees_the_hills_where_they_are(rural_world):
    import mujoco

    world = rural_world
    terrain = world.scene.terrain
    mujoco.mj_forward(world.model, world.data)
    renderer = mujoco.Renderer(world.model, 33, 33)  # pixel 16: the centre ray
    try:
        for x, y in _hill_points(terrain, 5, np.random.default_rng(1)):
            z = float(surface_z(terrain, np.array([x]), np.array([y]))[0])
            cam = mujoco.MjvCamera()
            cam.lookat[:] = (x, y, z)
            cam.distance, cam.elevation, cam.azimuth = 15.0, -90.0, 0.0
            renderer.update_scene(world.data, camera=cam)
            renderer.enable_depth_rendering()
            depth = float(renderer.render()[16, 16])
            renderer.disable_depth_rendering()
            assert abs(depth - 15.0) < 0.02  # the mesh's surface, seen from 15 m straight above
            renderer.enable_segmentation_rendering()
            seg = renderer.render()
            renderer.disable_segmentation_rendering()
            mesh = world.model.geom(f"obj{terrain.instance_id}_terrain").id
            assert seg[16, 16, 0] == mesh  # the camera mesh, never the contact height field
    finally:
        renderer.close()


@pytest.mark.slow
def test_the_lidar_caster_hits_the_hills_exactly_and_as_mujoco_does(rural_world):
    from test_lidar import _mujoco_cast
    from twinsim.engine.rays import RayCaster, split_world

    world = rural_world
    terrain = world.scene.terrain
    caster = RayCaster(world.model, world.robot().body_id, 1, split_world(world))
    try:
        rng = np.random.default_rng(0)
        dirs = rng.normal(size=(6000, 3))
        dirs[:, 2] = -0.25 * np.abs(dirs[:, 2])
        dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
        origin = np.array(world.scene.robot.start_pos)
        world.step_begin()
        geom, dist, normal = caster.cast(world.data, origin, dirs, 250.0)
        want_g, want_d, _ = _mujoco_cast(world, origin, dirs, 250.0)
        want_g = np.where(want_d > 250.0, -1, want_g)
        mesh = world.model.geom(f"obj{terrain.instance_id}_terrain").id
        on_hill = geom == mesh
        assert on_hill.mean() > 0.2
        # on the terrain's own float64 surface (MuJoCo keeps its mesh in float32: 1e-4 m)
        pts = origin + dirs[on_hill] * dist[on_hill, None]
        np.testing.assert_allclose(pts[:, 2], surface_z(terrain, pts[:, 0], pts[:, 1]), atol=1e-9)
        agree = geom == want_g
        assert agree.mean() > 0.995  # the rest graze the hills' foot on the flat land's top
        assert (np.abs(dist[agree] - want_d[agree]) < 2e-4).all()
        assert (np.abs(dist[~agree] - want_d[~agree]) < 1e-3).all()
        up = normal[on_hill]
        assert (np.einsum("ij,ij->i", up, dirs[on_hill]) < 0).all() and (up[:, 2] > 0).all()
    finally:
        caster.close()


def test_balls_dropped_on_the_hills_roll_on_the_camera_meshs_surface(rural_world):
    """The contact height field holds the camera mesh's heights, rows along y: balls dropped
    half a metre above the mesh land and roll down on it, their centres a radius above it."""
    import mujoco

    from twinsim.engine.build import build_spec

    world = rural_world
    terrain = world.scene.terrain
    spec = build_spec(world.scene, world.render_config, 240)
    drops = _hill_points(terrain, 4, np.random.default_rng(5))
    radius = 0.3
    for k, (x, y) in enumerate(drops):
        body = spec.worldbody.add_body()
        top = surface_z(terrain, np.array([x]), np.array([y]))[0] + radius + 0.5
        body.name, body.pos = f"ball{k}", (x, y, top)
        body.add_freejoint()
        geom = body.add_geom()
        geom.type, geom.size, geom.mass = mujoco.mjtGeom.mjGEOM_SPHERE, (radius, 0, 0), 1.0
    model = spec.compile()
    data = mujoco.MjData(model)
    start = np.array([data.body(f"ball{k}").xpos for k in range(len(drops))])
    gaps = []
    for step in range(int(3.0 / model.opt.timestep)):
        mujoco.mj_step(model, data)
        if step * model.opt.timestep >= 0.6 and step % 24 == 0:
            at = np.array([data.body(f"ball{k}").xpos for k in range(len(drops))])
            gaps.append(at[:, 2] - surface_z(terrain, at[:, 0], at[:, 1]))
    gaps = np.array(gaps)
    # on a slope of s the centre stands r·sqrt(1 + s²) above the surface point below it
    assert (gaps > radius - 0.02).all() and (gaps < radius * 1.25).all(), (gaps.min(), gaps.max())
    moved = np.hypot(*(data.xpos[-len(drops) :, :2] - start[:, :2]).T)
    assert moved.max() > 0.5  # they do roll downhill


def test_cycles_scene_graph_and_boxes_take_the_same_hills(rural_world):
    from twinsim.dsg.mesh import scene_mesh
    from twinsim.render.cycles.geometry import geom_mesh
    from twinsim.render.cycles.scene import shown_geoms

    world = rural_world
    terrain = world.scene.terrain
    hills = terrain_mesh(terrain)
    model, data = world.model, world.data
    mesh = model.geom(f"obj{terrain.instance_id}_terrain").id
    field = model.geom(f"obj{terrain.instance_id}_hfield").id
    shown = shown_geoms(world)
    assert mesh in shown and field not in shown
    got = geom_mesh(model, mesh)
    R, p = data.geom_xmat[mesh].reshape(3, 3), data.geom_xpos[mesh]
    verts = got.verts @ R.T + p
    assert len(got.faces) == len(hills.faces) and got.loop_uvs is not None
    np.testing.assert_allclose(np.sort(verts[:, 2]), np.sort(hills.verts[:, 2]), atol=2e-4)
    all_verts, _, labels = scene_mesh(world.scene)
    on_terrain = all_verts[labels == CLASS_ID["terrain"]]
    boxes = sum(len(o.geoms) for o in world.scene.objects if o.semantic_class == "terrain")
    assert len(on_terrain) == 8 * boxes + len(hills.verts)  # the flat land's boxes, the hills
    assert on_terrain[:, 2].max() == hills.verts[:, 2].max()
    iid = terrain.instance_id
    half = world.maps.local_box_half[iid]
    centre = world.maps.local_box_center[iid]
    assert centre[2] + half[2] == pytest.approx(terrain.base_z + terrain.top_m, abs=1e-6)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"instance_id": 65000}, "terrain.instance_id=65000 is no object's"),
        ({"material": "mat_lava"}, "terrain.material='mat_lava' is not among"),
        ({"rows": 7}, "heights_b64 holds"),
        ({"heights_b64": "not base64!"}, "heights_b64 is not base64"),
    ],
)
def test_a_scene_with_a_bad_terrain_is_refused_naming_the_field(rural, change, message):
    """What a sequence's reader turns into one line (`SequenceError`, exit 2)."""
    from twinsim.model.scene import SceneSpec

    scene = rural.to_scene(2, (make_robot(),))
    data = scene.model_dump(mode="json")
    data["terrain"] = {**data["terrain"], **change}
    with pytest.raises(ValueError, match=message):
        SceneSpec.model_validate(data)
    SceneSpec.model_validate(scene.model_dump(mode="json"))  # the scene itself reads back
