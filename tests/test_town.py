"""The town generator: determinism of every preset, a consistent road network (lanes join end to
start, connectors in intersections, lights at the stop lines of signalised approaches, crossing
directions never green together), nothing standing on a driving lane, sidewalks beside the
lanes, a kilometre of lanes in a mid-sized city, the world built in MuJoCo with its road seen by
a depth camera at the right height, and a recorded run in a small town that validates.
"""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import shapely

from conftest import make_robot
from twinsim.model.scene import SceneSpec
from twinsim.scene.free_space import floor_region, geom_footprint
from twinsim.scene.worlds.town.buildings import SIDEWALK_Z
from twinsim.scene.worlds.town.generator import PRESETS, TownConfig, generate_town
from twinsim.scene.worlds.town.network import RING_R

SMALL = {"blocks_x": 2, "blocks_y": 2, "texture_size": 16}
PRESET_NAMES = tuple(PRESETS)


def _small(preset: str) -> TownConfig:
    """A preset shrunk to at most 2 x 2 blocks (its own defaults otherwise)."""
    blocks = PRESETS[preset]
    over = {k: min(v, blocks[k]) for k, v in SMALL.items() if k in blocks}
    return TownConfig(preset=preset, texture_size=16, **over)


@pytest.fixture(scope="module", params=PRESET_NAMES)
def town(request):
    return generate_town(_small(request.param), np.random.default_rng(3))


def _lane_poly(lane) -> shapely.Geometry:
    """The ground a lane covers: its centre line widened to the lane's width (flat ends)."""
    line = shapely.LineString([p[:2] for p in lane.centerline])
    return line.buffer(lane.width_m / 2 - 0.01, cap_style="flat")


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_same_seed_same_scene_bytes_other_seed_other(preset):
    cfg = _small(preset)
    a, b, c = (generate_town(cfg, np.random.default_rng(s)) for s in (5, 5, 6))
    ja, jb, jc = (x.to_scene(5, (make_robot(),)).to_json() for x in (a, b, c))
    assert ja == jb and ja != jc
    scene = SceneSpec.from_json(ja)
    assert scene.roads == a.roads and scene.roads.preset == preset


def test_the_road_network_is_connected_end_to_start(town):
    net = town.roads
    assert [lane.lane_id for lane in net.lanes] == list(range(len(net.lanes)))
    junctions = {j.intersection_id: j for j in net.intersections}
    into = net.predecessors()
    for lane in net.lanes:
        end = np.array(lane.centerline[-1])
        assert lane.successors, f"lane {lane.lane_id} leads nowhere"
        for nxt in lane.successors:
            start = np.array(net.lanes[nxt].centerline[0])
            assert np.linalg.norm(end - start) < 0.03, (lane.lane_id, nxt)
        assert into[lane.lane_id], f"nothing leads into lane {lane.lane_id}"
        if lane.kind == "connector":
            j = junctions[lane.intersection_id]
            poly = shapely.Polygon(j.polygon).buffer(0.05)
            mid, _ = lane.point_at(lane.length_m() / 2)
            assert poly.contains(shapely.Point(mid[:2])), lane.lane_id
        else:
            assert lane.intersection_id is None
        for side in (lane.left_neighbor, lane.right_neighbor):
            if side is not None:  # a neighbour runs alongside, one lane width away
                other = net.lanes[side]
                gap = shapely.LineString([p[:2] for p in other.centerline]).distance(
                    shapely.Point(lane.centerline[0][:2])
                )
                assert abs(gap - lane.width_m) < 0.01
    # every lane reaches every other: successors and lane changes from lane 0
    seen, todo = {0}, [0]
    while todo:
        lane = net.lanes[todo.pop()]
        for nxt in (*lane.successors, lane.left_neighbor, lane.right_neighbor):
            if nxt is not None and nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    assert len(seen) == len(net.lanes)


def test_signalised_approaches_stop_at_a_light_by_the_stop_line(town):
    net = town.roads
    kinds = {j.intersection_id: j.kind for j in net.intersections}
    signalised = 0
    for lane in net.lanes:
        if lane.kind == "connector":
            continue
        at = {kinds[net.lanes[s].intersection_id] for s in lane.successors}
        if at != {"signalised"}:
            assert lane.stop_light_id is None
            continue
        signalised += 1
        light = net.light(lane.stop_light_id)
        assert lane.lane_id in light.lanes
        stop, heading = lane.point_at(lane.stop_line_s_m)
        head = np.array(light.pos)
        assert np.linalg.norm(head[:2] - stop[:2]) < 10.0 and 2.5 < head[2] < 6.0
        assert math.cos(light.yaw - heading) < -0.99  # it faces the approaching traffic
        # the head is a traffic_light object standing at the light's position
        obj = next(o for o in town.objects if o.name == f"signal_{light.light_id}")
        assert obj.semantic_class == "traffic_light" and np.allclose(obj.pos, light.pos)
    if PRESETS[net.preset]["signal_share"] >= 1.0:
        assert signalised > 0
    # crossing directions of a junction are never green at once
    for j in (j for j in net.intersections if j.kind == "signalised"):
        lights = [li for li in net.traffic_lights if li.intersection_id == j.intersection_id]
        period = lights[0].green_s + lights[0].yellow_s + lights[0].red_s
        for t in np.arange(0.0, 2 * period, 0.5):
            green = [li for li in lights if li.state_at(t) != "red"]
            axes = {round(abs(math.cos(li.yaw))) for li in green}
            assert len(axes) <= 1, (j.intersection_id, t)


def test_nothing_stands_on_a_driving_lane_and_sidewalks_line_the_roads(town):
    net = town.roads
    lanes = shapely.union_all([_lane_poly(lane) for lane in net.lanes])
    shapely.prepare(lanes)
    for obj in town.objects:
        if obj.semantic_class not in ("building", "vegetation", "car", "pole", "traffic_sign"):
            continue
        for geom in obj.geoms:
            poly, z0, _ = geom_footprint(obj, geom)
            if obj.semantic_class in ("pole", "traffic_sign") and z0 > 4.5:
                continue  # a street light's arm reaches over the road's edge high up
            assert not lanes.intersects(poly), obj.name
    cars = [o for o in town.objects if o.semantic_class == "car"]
    assert (len(cars) > 0) == (PRESETS[net.preset]["parked_car_density"] > 0)
    driving = [_lane_poly(lane) for lane in net.lanes if lane.kind != "connector"]
    tree = shapely.STRtree(driving)
    reach = 3.2 / 2 + 2.2 + PRESETS[net.preset]["sidewalk_m"] + 0.2
    for walk in net.sidewalks:
        ring = shapely.LinearRing(walk.centerline)
        assert not ring.buffer(walk.width_m / 2).intersects(shapely.union_all(driving))
        pts = ring.interpolate(np.linspace(0.05, 0.95, 12), normalized=True)
        assert np.all(tree.query_nearest(pts, return_distance=True)[1] < reach)
    for cw in net.crosswalks:  # a crossing joins two sidewalks across lanes
        span = shapely.LineString([cw.start, cw.end])
        assert span.intersects(lanes)
        if cw.sidewalks is not None:
            assert cw.sidewalks[0] != cw.sidewalks[1]


def test_the_floor_is_roads_sidewalks_and_crossings(town):
    floor = floor_region(town)
    net = town.roads
    lane = next(lane for lane in net.lanes if lane.kind == "driving")
    mid, _ = lane.point_at(lane.length_m() / 2)
    assert floor.plan.contains(shapely.Point(mid[:2]))
    building = next((o for o in town.objects if o.semantic_class == "building"), None)
    if building is not None:
        assert not floor.plan.contains(shapely.Point(building.pos[:2]))
    assert floor.has_rooms is False


def test_a_mid_city_at_its_defaults_has_a_kilometre_of_lanes_and_tall_bounds():
    town = generate_town(TownConfig(preset="mid_city", texture_size=16), np.random.default_rng(0))
    assert town.roads.total_lane_length_m() >= 1000.0
    lo, hi = np.array(town.bounds_min), np.array(town.bounds_max)
    tops = []
    for obj in town.objects:
        for geom in obj.geoms:
            poly, z0, z1 = geom_footprint(obj, geom)
            b = poly.bounds
            assert np.all(lo <= (b[0], b[1], z0)) and np.all((b[2], b[3], z1) <= hi), obj.name
            if obj.semantic_class == "building":
                tops.append(z1)
    assert abs(town.wall_height - max(tops)) < 0.01
    assert sum(len(o.geoms) for o in town.objects) < 20000 and len(town.lights) == 1


def test_skyscrapers_are_tall():
    town = generate_town(_small("skyscraper_city"), np.random.default_rng(1))
    heights = [
        geom_footprint(o, o.geoms[1])[2] for o in town.objects if o.semantic_class == "building"
    ]
    assert heights and min(heights) >= 40.0 and max(heights) <= 152.0


def test_the_town_builds_in_mujoco_and_a_depth_camera_sees_the_road(gl_backend):
    import mujoco

    from twinsim.engine.world import World
    from twinsim.model.sections import RenderConfig

    town = generate_town(_small("small_town"), np.random.default_rng(2))
    net = town.roads
    lane = next(lane for lane in net.lanes if lane.kind == "driving")
    on_road, _ = lane.point_at(lane.length_m() / 2)
    walk = net.sidewalks[0]
    a, b = np.array(walk.centerline[0]), np.array(walk.centerline[1])
    on_walk = (a + b) / 2
    scene = town.to_scene(2, (make_robot(start=(*on_road[:2], 30.0)),))
    world = World(scene, RenderConfig(), 240)
    try:
        model, data = world.model, world.data
        mujoco.mj_forward(model, data)
        renderer = mujoco.Renderer(model, 32, 32)
        renderer.enable_depth_rendering()
        for xy, top in ((on_road[:2], 0.0), (on_walk, SIDEWALK_Z)):
            cam = mujoco.MjvCamera()
            cam.lookat[:] = (*xy, 0.0)
            cam.distance, cam.elevation, cam.azimuth = 12.0, -90.0, 0.0
            renderer.update_scene(data, camera=cam)
            depth = renderer.render()
            assert abs(float(depth[16, 16]) - (12.0 - top)) < 0.02
        renderer.close()
    finally:
        world.close()


def test_the_sky_fills_only_what_no_geom_covers_and_dims_at_night(gl_backend):
    """Outdoors the empty pixels show the sky, bluer upwards; colour on geoms, depth and ids
    are those of a render without sky; a night sun's ambient darkens it; fog replaces it."""
    from twinsim.config import load_config
    from twinsim.engine.look import Look
    from twinsim.engine.render import CameraRenderer
    from twinsim.engine.world import World
    from twinsim.robots.omni.spec import pose_to_qpos
    from twinsim.scene.sky import sky_level
    from twinsim.sim import build_scene

    cfg = load_config("town", ["robot.kind=car"], seed=1, duration_s=1.0)
    scene = build_scene(cfg)
    assert sky_level(scene) == pytest.approx(1.0, abs=0.15)
    point = scene.robot.path[0]
    world = World(scene, cfg.render, cfg.sim.physics_hz)
    cam = next(s.name for s in scene.sensors if s.type == "camera")
    try:
        world.robot().set_state(pose_to_qpos(point.pos, point.yaw), np.zeros(3))
        plain = CameraRenderer(world.model, cam, 96, 72)
        day = CameraRenderer(world.model, cam, 96, 72, sky_level=1.0)
        night = CameraRenderer(world.model, cam, 96, 72, sky_level=0.1)
        a, b, c = (r.render(world.data) for r in (plain, day, night))
        empty = a.geom_ids < 0
        assert 0.05 < empty.mean() < 0.95  # the camera sees sky and town
        np.testing.assert_array_equal(a.depth, b.depth)
        np.testing.assert_array_equal(a.geom_ids, b.geom_ids)
        np.testing.assert_array_equal(a.rgb[~empty], b.rgb[~empty])
        assert (a.rgb[empty] == 0).all() and (b.rgb[empty].max(axis=1) > 40).all()
        rows = np.flatnonzero(empty.all(axis=1))
        top, low = b.rgb[rows[0]].mean(axis=0), b.rgb[rows[-1]].mean(axis=0)
        assert top[2] - top[0] > low[2] - low[0]  # bluer towards the zenith
        assert b.rgb[empty].mean() > 5 * c.rgb[empty].mean()
        for r in (plain, day, night):
            r.close()
    finally:
        world.close()
    foggy = World(scene, cfg.render, cfg.sim.physics_hz, Look(fog_start_m=5.0, fog_end_m=40.0))
    try:
        foggy.robot().set_state(pose_to_qpos(point.pos, point.yaw), np.zeros(3))
        frame = foggy.render(cam, 96, 72)
        fog = np.round(255 * np.asarray(Look().fog_rgb)).astype(np.uint8)
        assert (frame.rgb[frame.geom_ids < 0] == fog).all()
    finally:
        foggy.close()


def test_street_lamps_light_the_night_and_their_glass_glows(gl_backend):
    """Under a night twin's dark sky the lamps are on: the pool lights sit at lamps near the
    camera and brighten its image (depth and ids unchanged); lamp glass and the vehicles'
    head and tail lamps glow."""
    import mujoco

    from twinsim.adversity.light import look_for, relight
    from twinsim.config import load_config
    from twinsim.engine.lamps import POOL, REACH_M
    from twinsim.engine.render import CameraRenderer
    from twinsim.engine.world import World
    from twinsim.model.roads import VEHICLE_LAMP_MATERIALS
    from twinsim.replay.variations import LightPreset, LightVariation
    from twinsim.robots.omni.spec import pose_to_qpos
    from twinsim.scene.sky import lamps_on
    from twinsim.sim import build_scene

    cfg = load_config("town", ["robot.kind=car", "traffic.vehicles=4"], seed=1, duration_s=1.0)
    day = build_scene(cfg)
    dark = LightVariation(preset=LightPreset.night)
    night = relight(day, dark)
    assert not lamps_on(day) and lamps_on(night) and len(night.roads.street_lamps) > POOL
    world = World(night, cfg.render, cfg.sim.physics_hz, look_for(dark, None, 0))
    cam = next(s.name for s in night.sensors if s.type == "camera")
    try:
        point = night.robot.path[0]
        world.robot().set_state(pose_to_qpos(point.pos, point.yaw), np.zeros(3))
        unlit = CameraRenderer(world.model, cam, 96, 72, sky_level=0.06)
        lit = CameraRenderer(world.model, cam, 96, 72, sky_level=0.06, lamps=world.lamps)
        a = unlit.render(world.data)  # the pool still parked below the ground
        b = lit.render(world.data)
        placed = world.data.light_xpos[world.lamps.ids]
        lamps = np.asarray(night.roads.street_lamps)
        eye = world.data.cam_xpos[world.model.camera(cam).id]
        for p in placed[placed[:, 2] > 0]:
            assert np.min(np.linalg.norm(lamps - p, axis=1)) < 1e-9  # at a lamp
            assert np.linalg.norm(p[:2] - eye[:2]) <= REACH_M
        assert (placed[:, 2] > 0).sum() >= 2
        np.testing.assert_array_equal(a.depth, b.depth)
        np.testing.assert_array_equal(a.geom_ids, b.geom_ids)
        assert b.rgb.astype(int).sum() > 1.1 * a.rgb.astype(int).sum()
        for name in ("mat_lamp_glass", *VEHICLE_LAMP_MATERIALS):  # street and vehicle lamps
            mat = mujoco.mj_name2id(world.model, mujoco.mjtObj.mjOBJ_MATERIAL, name)
            assert world.model.mat_emission[mat] == 1.0
            assert (world.model.geom_matid == mat).sum() >= 4
        for r in (unlit, lit):
            r.close()
    finally:
        world.close()


def test_an_unknown_preset_is_a_one_line_error(tmp_path):
    out = subprocess.run(
        [
            str(Path(sys.executable).with_name("twinsim")),
            "run",
            "--config",
            "town",
            "--set",
            "scene.preset=nope",
            "--out",
            str(tmp_path / "x"),
        ],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "scene.preset" in lines[0] and "small_town" in lines[0]
    assert "skyscraper_city" in lines[0]


@pytest.mark.slow
def test_a_recorded_run_in_a_small_town_validates(gl_backend, tmp_path):
    from twinsim.config import load_config
    from twinsim.scene.vocabulary import CLASS_ID
    from twinsim.sequence import open_sequence, validate_sequence
    from twinsim.sim import run

    cfg = load_config("town", [], seed=1, duration_s=0.5)
    folder = run(cfg, tmp_path / "seq")
    report = validate_sequence(folder)
    assert report.ok, report.problems
    seq = open_sequence(folder)
    assert seq.scene.roads is not None and seq.scene.roads.preset == "small_town"
    semantic = np.concatenate([f.semantic.ravel() for f in seq.camera("cam0")])
    assert {CLASS_ID["road"], CLASS_ID["sidewalk"], CLASS_ID["building"]} & set(semantic.tolist())


def _reach(net, lane_id: int, within: int) -> set[int]:
    """Driving and ramp lanes reached from a lane through the connectors of one junction."""
    out, seen, todo = set(), set(), list(net.lanes[lane_id].successors)
    while todo:
        lane = net.lanes[todo.pop()]
        if lane.lane_id in seen:
            continue  # a roundabout's ring is a cycle
        seen.add(lane.lane_id)
        if lane.kind != "connector":
            out.add(lane.lane_id)
        elif lane.intersection_id == within:
            todo += list(lane.successors)
    return out


def test_the_highway_has_an_off_ramp_to_the_grid_and_an_on_ramp_back():
    town = generate_town(_small("highway"), np.random.default_rng(4))
    net = town.roads
    ramps = [lane for lane in net.lanes if lane.kind == "ramp"]
    assert len(ramps) == 2
    kinds = {j.intersection_id: j.kind for j in net.intersections}
    into = net.predecessors()
    fast = {lane.lane_id for lane in net.lanes if lane.speed_limit_mps > 20.0}
    assert sum(net.lanes[i].length_m() for i in fast) > 1000.0
    exits = 0
    for ramp in ramps:
        before = {kinds[net.lanes[c].intersection_id] for c in into[ramp.lane_id]}
        after = {kinds[net.lanes[c].intersection_id] for c in ramp.successors}
        fed_by = {p for c in into[ramp.lane_id] for p in into[c]}
        if before == {"ramp"}:  # off-ramp: from the highway's outer lane into the grid
            exits += 1
            assert fed_by <= fast and after <= {"signalised", "priority"}
            assert all(net.lanes[p].right_neighbor is None for p in fed_by)
        else:  # on-ramp: from the grid onto the highway
            assert after == {"ramp"}
            onto = {s for c in ramp.successors for s in net.lanes[c].successors}
            assert onto <= fast
    assert exits == 1
    # the road surface runs under the curved ramp: its middle is on a road geom
    ramp = ramps[0]
    mid, _ = ramp.point_at(ramp.length_m() / 2)
    roads = [
        geom_footprint(o, g)[0] for o in town.objects if o.semantic_class == "road" for g in o.geoms
    ]
    assert shapely.union_all(roads).contains(shapely.Point(mid[:2]))


def test_the_rural_road_winds():
    town = generate_town(_small("rural"), np.random.default_rng(5))
    net = town.roads
    assert not net.traffic_lights
    lane = max(net.lanes, key=lambda ln: ln.length_m())
    assert lane.length_m() > 500.0
    pts = np.array(lane.centerline)[:, :2]
    heading = np.unwrap(np.arctan2(*np.diff(pts, axis=0).T[::-1]))
    assert np.ptp(heading) > math.radians(20.0)


def test_a_small_town_has_a_roundabout_that_leads_to_every_arm():
    town = generate_town(_small("small_town"), np.random.default_rng(6))
    net = town.roads
    (ring,) = [j for j in net.intersections if j.kind == "roundabout"]
    into = net.predecessors()
    centre = np.array(ring.center)
    approaches = [
        lane
        for lane in net.lanes
        if lane.kind == "driving"
        and any(net.lanes[s].intersection_id == ring.intersection_id for s in lane.successors)
    ]
    assert len(approaches) == 4
    for lane in approaches:
        assert len(_reach(net, lane.lane_id, ring.intersection_id)) == 4  # every arm, U-turn too
    arcs = [
        lane
        for lane in net.lanes
        if lane.intersection_id == ring.intersection_id
        and all(net.lanes[p].kind == "connector" for p in into[lane.lane_id])
        and any(net.lanes[n].kind == "connector" for n in lane.successors)
    ]
    assert len(arcs) == 8  # between the 4 entries and 4 exits
    for arc in arcs:  # the ring runs anticlockwise at a constant radius
        pts = np.array(arc.centerline)[:, :2] - centre
        assert np.allclose(np.linalg.norm(pts, axis=1), RING_R, atol=0.01)
        assert pts[0][0] * pts[-1][1] - pts[0][1] * pts[-1][0] > 0
    island = next(o for o in town.objects if o.name.startswith("island_"))
    lanes = shapely.union_all([_lane_poly(lane) for lane in net.lanes])
    assert not lanes.intersects(geom_footprint(island, island.geoms[0])[0])


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_every_preset_compiles_in_mujoco(preset):
    from twinsim.engine.build import compile_model
    from twinsim.model.sections import RenderConfig

    town = generate_town(_small(preset), np.random.default_rng(7))
    model = compile_model(
        town.to_scene(7, (make_robot(start=(0.0, 0.0, 60.0)),)), RenderConfig(), 240
    )
    robot_geoms = model.ngeom - sum(len(o.geoms) for o in town.objects)
    assert 0 < robot_geoms < 20 and model.nlight == 1


@pytest.mark.parametrize("kind", ("asphalt", "grass", "facade"))
def test_the_outdoor_texture_kinds_are_deterministic_and_tile(kind):
    from twinsim.model.scene import TextureSpec
    from twinsim.scene.textures import make_texture

    # built without validation: `scene.spec.TextureKind` may not list the outdoor kinds yet
    fields = dict(name="t", kind=kind, seed=3, size=64, params={})
    spec = TextureSpec.model_construct(**fields, color_a=(0.8, 0.7, 0.6), color_b=(0.1, 0.15, 0.2))
    img = make_texture(spec)
    assert img.shape == (64, 64, 3) and np.array_equal(img, make_texture(spec))
    assert not np.array_equal(img, make_texture(spec.model_copy(update={"seed": 4})))
    assert img.std() > 3.0  # detail for feature detectors
    if kind == "facade":  # windows (glass, color_b) are darker than the wall (color_a)
        lum = img.mean(axis=2)
        assert np.percentile(lum, 10) < 0.5 * np.percentile(lum, 90)


@pytest.mark.blender
def test_cycles_lights_every_street_lamp_and_headlamp_at_night(gl_backend, tmp_path):
    """A night town in Cycles has one spot light at each street lamp (MuJoCo's moving pool
    stays dark there) and one beam in front of each vehicle headlamp along its heading; the
    lamps light the car's view and a beam lights the road ahead of its vehicle."""
    from twinsim.adversity.light import look_for, relight
    from twinsim.config import load_config
    from twinsim.engine.world import World
    from twinsim.render.cycles.scene import CyclesScene
    from twinsim.render.cycles.settings import CyclesSettings
    from twinsim.replay.variations import LightPreset, LightVariation
    from twinsim.robots.omni.spec import pose_to_qpos
    from twinsim.sensors.camera import intrinsics
    from twinsim.sim import build_scene

    cfg = load_config("town", ["robot.kind=car", "traffic.vehicles=4"], seed=1, duration_s=1.0)
    dark = LightVariation(preset=LightPreset.night)
    night = relight(build_scene(cfg), dark)
    world = World(night, cfg.render, cfg.sim.physics_hz, look_for(dark, None, 0))
    cam = next(s.name for s in night.sensors if s.type == "camera")
    K, size, clip = intrinsics(48, 32, 90.0), (48, 32), (0.05, 200.0)
    try:
        point = night.robot.path[0]
        world.robot().set_state(pose_to_qpos(point.pos, point.yaw), np.zeros(3))
        world.pose_actors(1.0)
        world.step_begin()
        cycles = CyclesScene(world, CyclesSettings(samples=8, denoise=True), tmp_path / "work")
        objects = cycles._bpy.data.objects
        lamps = [o for o in objects if o.name.startswith("street_lamp")]
        where = np.array([tuple(o.matrix_world.translation) for o in lamps])
        expected = np.asarray(night.roads.street_lamps)
        assert len(lamps) == len(expected)
        np.testing.assert_allclose(np.sort(where, axis=0), np.sort(expected, axis=0), atol=1e-5)
        args = (world.T_world_cam(cam), night.robot.name, K, size, clip)
        lit = cycles.render(*args).rgb.astype(int).sum()
        pool = [cycles._lights._objects[i] for i in world.lamps.ids]
        assert all(o.data.energy == 0.0 for o in pool)
        for o in lamps:
            o.data.energy = 0.0
        unlit = cycles.render(*args).rgb.astype(int).sum()
        assert lit > 1.2 * unlit
        # the beams: in front of each headlamp geom, along its vehicle's heading, dipped
        beams = [o for o in objects if o.name.startswith("headlamp")]
        heads = cycles._lights._headlamps
        assert len(beams) == len(heads) >= 8  # two a vehicle
        now = cycles.instant()
        for obj, j in zip(beams, heads.tolist(), strict=True):
            M = np.array(obj.matrix_world)
            forward = now.geom_matrix[j][:3, 0]
            assert np.linalg.norm(M[:3, 3] - now.geom_matrix[j][:3, 3]) < 0.1
            assert -M[:3, 2] @ forward > 0.99 and M[2, 2] > 0.0  # along it, a little down
        M = np.array(beams[0].matrix_world)
        ahead = M[:3, 3] + 8.0 * now.geom_matrix[heads[0]][:3, 0]
        down = np.array([0.0, 0.0, -1.0])
        x = np.cross(now.geom_matrix[heads[0]][:3, 0], down)
        T = np.eye(4)
        T[:3, 0], T[:3, 2] = x / np.linalg.norm(x), down
        T[:3, 1], T[:3, 3] = np.cross(down, T[:3, 0]), ahead + np.array([0.0, 0.0, 6.0])
        over_road = (T, night.robot.name, K, size, clip)
        shone = cycles.render(*over_road).rgb.astype(int).sum()
        for o in beams:
            o.data.energy = 0.0
        dipped = cycles.render(*over_road).rgb.astype(int).sum()
    finally:
        world.close()
    assert shone > 1.2 * dipped
