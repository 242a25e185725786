"""LiDAR geometry in the box room: exact ranges, intensity, labels, and motion distortion."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import ROOM_X, ROOM_Y, WALL_HEIGHT, box_room_scene, place
from twinsim.config import TwinsimConfig, load_config
from twinsim.errors import ConfigError
from twinsim.geometry import pose_to_T
from twinsim.model.sections import RenderConfig
from twinsim.scene.vocabulary import class_id
from twinsim.sensors.kinds.camera import CameraConfig
from twinsim.sensors.kinds.imu import ImuConfig
from twinsim.sensors.kinds.lidar import LidarConfig, lidar_spec
from twinsim.sensors.lidar import LidarScanner, sector_bounds
from twinsim.sensors.rig import resolve_sensors

STEPS = 24  # one sector per physics step: 240 Hz physics, 10 Hz LiDAR
STEP_NS = 1_000_000_000 // 240
POS = (0.4, -0.3, 1.2)
# The box room's planes by instance id: (axis, coordinate, unit normal facing into the room)
PLANES = {
    1: (2, 0.0, (0, 0, 1)),
    2: (2, WALL_HEIGHT, (0, 0, -1)),
    3: (0, ROOM_X[1], (-1, 0, 0)),
    4: (0, ROOM_X[0], (1, 0, 0)),
    5: (1, ROOM_Y[1], (0, -1, 0)),
    6: (1, ROOM_Y[0], (0, 1, 0)),
}
LUMA = np.array([0.2126, 0.7152, 0.0722])
ALBEDO = {  # material colours of conftest's box room
    1: (0.5, 0.5, 0.5),
    2: (0.9, 0.9, 0.9),
    3: (0.8, 0.3, 0.3),
    4: (0.3, 0.8, 0.3),
    5: (0.3, 0.3, 0.8),
    6: (0.5, 0.5, 0.5),
}


@pytest.fixture(scope="module")
def lidar_world(gl_backend):
    from twinsim.engine.world import World

    lidar = LidarConfig(
        model="custom",
        elevations_deg=[-40, -20, -5, 0, 7, 25, 45],
        columns=360,
        rpy_deg=(3, -4, 0),
    )
    cfg = TwinsimConfig(
        cameras={"cam0": CameraConfig(width=16, height=12)},
        imus={"imu0": ImuConfig()},
        lidars={"lidar0": lidar},
    )
    scene = box_room_scene().model_copy(update={"sensors": resolve_sensors(cfg.robot.sensors)})
    world = World(scene, RenderConfig(shadow_size=0), physics_hz=240)
    sensor = next(s for s in scene.sensors if s.type == "lidar")
    scanner = LidarScanner(world.robot(), sensor, STEPS)
    yield world, sensor, scanner
    scanner.close()
    world.close()


def _sweep(lidar_world, yaw_of_step):
    """One sweep with the robot placed (at rest) at yaw_of_step(s) for each sector s."""
    world, sensor, scanner = lidar_world
    T_body_lidar = pose_to_T(sensor.pos, sensor.quat)
    poses = []
    for s in range(STEPS):
        place(world, POS, yaw=yaw_of_step(s))
        T = world.robot().T_world_body() @ T_body_lidar
        if s == 0:
            scanner.begin(0, 0, T)
        scanner.cast_sector(s, s * STEP_NS, T)
        poses.append(T)
    return scanner.finish(), np.array(poses)


def _to_world(scan, poses_per_point):
    R, t = poses_per_point[:, :3, :3], poses_per_point[:, :3, 3]
    return np.einsum("nij,nj->ni", R, scan.points.astype(np.float64)) + t


def _plane_error(scan, world_pts, mask):
    """Distance of the masked world points from the plane of the instance each one hit."""
    axis = np.array([PLANES[int(i)][0] for i in scan.instance[mask]])
    coord = np.array([PLANES[int(i)][1] for i in scan.instance[mask]])
    return np.abs(world_pts[mask][np.arange(len(axis)), axis] - coord)


def test_ranges_to_the_room_walls_match_the_geometry(lidar_world):
    scan, poses = _sweep(lidar_world, lambda s: 0.3)
    assert len(scan) == 7 * 360  # a closed room: every ray returns
    planes = np.isin(scan.instance, list(PLANES))
    assert planes.sum() > 0.8 * len(scan)  # the rest hit the cabinet and the table
    T = poses[0]
    dirs = scan.points[planes].astype(np.float64) / scan.range[planes, None]
    world_dirs = dirs @ T[:3, :3].T
    expected = [
        (PLANES[int(i)][1] - T[PLANES[int(i)][0], 3]) / d[PLANES[int(i)][0]]
        for i, d in zip(scan.instance[planes], world_dirs, strict=True)
    ]
    np.testing.assert_allclose(scan.range[planes], expected, atol=1e-3, rtol=0)
    np.testing.assert_allclose(np.linalg.norm(scan.points, axis=1), scan.range, atol=1e-5)
    world_pts = _to_world(scan, np.repeat(T[None], len(scan), axis=0))
    assert _plane_error(scan, world_pts, planes).max() < 1e-3


def test_intensity_ring_and_labels(lidar_world):
    scan, poses = _sweep(lidar_world, lambda s: 0.0)
    planes = np.isin(scan.instance, list(PLANES))
    dirs = scan.points[planes].astype(np.float64) / scan.range[planes, None]
    world_dirs = dirs @ poses[0][:3, :3].T
    normals = np.array([PLANES[int(i)][2] for i in scan.instance[planes]], float)
    albedo = np.array([np.dot(ALBEDO[int(i)], LUMA) for i in scan.instance[planes]])
    expected = albedo * np.abs(np.einsum("ij,ij->i", world_dirs, normals))
    np.testing.assert_allclose(scan.intensity[planes], expected, atol=1e-5)
    # a beam hitting a wall head-on returns more than one grazing the floor
    assert scan.intensity.max() > 0.5 and scan.intensity[planes].min() < 0.3
    assert set(np.unique(scan.ring)) == set(range(7))
    assert (np.bincount(scan.ring) == 360).all()
    walls = np.isin(scan.instance, [3, 4, 5, 6])
    assert (scan.semantic[walls] == class_id("wall")).all()
    assert (scan.semantic[scan.instance == 7] == class_id("cabinet")).all()
    assert (scan.instance == 7).any() and not scan.dynamic.any()


def test_scan_while_turning_is_distorted_and_stamped_across_the_sweep(lidar_world):
    rest, rest_poses = _sweep(lidar_world, lambda s: 0.2)
    omega = 2.0  # rad/s about z: 0.19 rad over one 0.1 s sweep
    turn, turn_poses = _sweep(lidar_world, lambda s: 0.2 + omega * s / 240)
    assert turn.t_offset_ns.min() == 0
    assert turn.t_offset_ns.max() == (STEPS - 1) * STEP_NS  # stamps span the sweep
    sectors = turn.t_offset_ns // STEP_NS
    assert len(np.unique(sectors)) == STEPS
    np.testing.assert_array_equal(rest.t_offset_ns, turn.t_offset_ns)
    # the first sector is cast from the same pose, later ones are not: the scans differ
    first = sectors == 0
    np.testing.assert_array_equal(rest.points[first], turn.points[first])
    moved = np.linalg.norm(rest.points - turn.points, axis=1)
    assert np.median(moved[sectors >= STEPS // 2]) > 0.05
    # with each point's own pose the turning scan is exact; with the start pose it is not
    planes = np.isin(turn.instance, list(PLANES))
    exact = _to_world(turn, turn_poses[sectors])
    skewed = _to_world(turn, np.repeat(turn_poses[:1], len(turn), axis=0))
    assert _plane_error(turn, exact, planes).max() < 1e-3
    late = planes & (sectors >= STEPS // 2)
    assert np.median(_plane_error(turn, skewed, late)) > 0.05
    rest_planes = np.isin(rest.instance, list(PLANES))
    rest_world = _to_world(rest, rest_poses[rest.t_offset_ns // STEP_NS])
    assert _plane_error(rest, rest_world, rest_planes).max() < 1e-3


def test_unknown_caster_is_named(lidar_world):
    world, sensor, _ = lidar_world
    with pytest.raises(ValueError, match="caster='fast'; allowed: embree, split, whole"):
        LidarScanner(world.robot(), sensor, STEPS, caster="fast")


def test_sectors_cover_every_column_once():
    for columns, sectors in ((2170, 24), (360, 24), (10, 24), (1024, 12)):
        bounds = sector_bounds(columns, sectors)
        assert bounds[0] == 0 and bounds[-1] == columns
        assert (np.diff(bounds) >= 0).all()
        fire = np.arange(columns) * sectors / columns  # firing time in steps
        owner = np.searchsorted(bounds, np.arange(columns), side="right") - 1
        assert ((owner <= fire) & (fire < owner + 1)).all()


def test_presets_resolve_to_their_beam_tables():
    hdl = lidar_spec(LidarConfig())
    assert len(hdl.elevations_deg) == 32 and hdl.columns == 2170
    assert hdl.elevations_deg[0] == -30.0 and hdl.elevations_deg[-1] == 10.0
    assert hdl.max_range_m == 120.0
    assert lidar_spec(LidarConfig(rate_hz=20)).columns == 1085
    vlp = lidar_spec(LidarConfig(model="vlp-16"))
    assert len(vlp.elevations_deg) == 16 and np.allclose(np.diff(vlp.elevations_deg), 2.0)
    ouster = lidar_spec(LidarConfig(model="os1-64", max_range_m=50.0))
    assert len(ouster.elevations_deg) == 64 and ouster.columns == 1024
    assert ouster.max_range_m == 50.0
    custom = lidar_spec(LidarConfig(model="custom", elevations_deg=[5, -5, 0], columns=90))
    assert custom.elevations_deg == (-5.0, 0.0, 5.0)  # ring 0 is the lowest beam


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("lidars.l.model=custom", "model 'custom' needs elevations_deg"),
        ("lidars.l.model=hdl-64", "lidars.l.model"),
        ("lidars.l.rate_hz=7", r"lidars.l.rate_hz=7 must divide sim.physics_hz=240"),
        ("lidars.l.elevations_deg=[95]", r"must lie in \(-90, 90\)"),
        ("lidars.l.max_range_m=0.05", "min_range_m=0.1 must be < max_range_m=0.05"),
        ("lidars.cam0.rate_hz=10", "lidars.cam0: sensor 'cam0' is a camera, not a lidar"),
        ("event_cameras.ev.rate_hz=7", r"event_cameras.ev.rate_hz=7 must divide"),
        ("event_cameras.ev.threshold_pos=0", "event_cameras.ev.threshold_pos"),
        ("lidars.l.spin=1", "unknown config field 'lidars.l.spin'; allowed here: kind, rate_hz"),
    ],
)
def test_bad_sensor_config_is_named(override, message):
    with pytest.raises(ConfigError, match=message):
        load_config("tiny", [override])


@pytest.fixture(scope="module")
def live_world(gl_backend):
    """A tiny apartment with 4 people and 3 flying objects, and a caster split for it."""
    from twinsim.engine.rays import RayCaster, split_world
    from twinsim.engine.world import World
    from twinsim.sim import build_scene

    cfg = load_config("tiny", ["people.count=4", "flying_objects.count=3"], seed=4)
    scene = build_scene(cfg)
    world = World(scene, cfg.render, cfg.sim.physics_hz)
    caster = RayCaster(world.model, world.robot().body_id, workers=2, split=split_world(world))
    yield world, caster
    caster.close()
    world.close()


def _pose(world, pos, t: float) -> None:
    from twinsim.robots.drone.spec import pose_to_qpos

    world.robot().set_state(pose_to_qpos(np.asarray(pos), 0.0), np.zeros(6))
    world.pose_actors(t)
    world.step_begin()


def _mujoco_cast(world, origin, dirs, max_range):
    """The reference: one plain `mj_multiRay` into the whole world model."""
    import mujoco

    n = len(dirs)
    groups = np.ones(mujoco.mjNGROUP, np.uint8)
    groups[3] = 0
    geom, dist, normal = np.empty(n, np.int32), np.empty(n), np.empty(3 * n)
    mujoco.mj_multiRay(
        world.model, world.data, np.asarray(origin, float), dirs.reshape(-1), groups, 1,
        world.robot().body_id, geom, dist, normal, n, float(max_range),
    )  # fmt: skip
    return geom, dist, normal.reshape(n, 3)


def _assert_same_points(got, want, max_range):
    """The points MuJoCo finds, but for rays grazing an edge (≤ 0.1 %): there float32 (Embree)
    and float64 may see different faces or boxes, at the same distance to within 1 mm."""
    geom, dist, normal = got
    want_g, want_d, want_n = want
    want_miss = (want_g < 0) | (want_d > max_range)
    want_g = np.where(want_miss, -1, want_g)
    np.testing.assert_array_equal(dist[geom < 0], -1.0)
    same = geom == want_g
    other = np.flatnonzero(~same)
    assert len(other) <= 1e-3 * len(geom), f"{len(other)} of {len(geom)} rays differ"
    assert (geom[other] >= 0).all() and (want_g[other] >= 0).all()  # no hit lost or made up
    assert (np.abs(dist[other] - want_d[other]) < 1e-3).all()
    hit = same & (geom >= 0)
    np.testing.assert_allclose(dist[hit], want_d[hit], rtol=0, atol=1e-9)
    np.testing.assert_allclose(normal[hit], want_n[hit], rtol=0, atol=1e-9)


def test_ray_caster_matches_mujoco_on_the_live_world(live_world):
    """The caster (static boxes in Embree refined in float64, curved objects and actors in
    their own MuJoCo models, meshes as boxes, rescaled flying objects, worker threads) gives
    MuJoCo's own answer on the world's model; the former all-MuJoCo split gives it to 1e-12."""
    import mujoco

    from twinsim.engine.rays import RayCaster, split_world

    world, caster = live_world
    boxes = caster.box_geoms  # static scene objects' boxes (textured ones stored as meshes)
    maps = world.maps
    static = np.flatnonzero((maps.geom_instance > 0) & ~maps.instance_dynamic[maps.geom_instance])
    assert len(boxes) > 20 and np.isin(boxes, static).all()
    kinds = {int(mujoco.mjtGeom.mjGEOM_BOX), int(mujoco.mjtGeom.mjGEOM_MESH)}
    assert set(world.model.geom_type[boxes].tolist()) <= kinds
    split = RayCaster(world.model, world.robot().body_id, 2, split_world(world), boxes=False)
    assert len(split.box_geoms) == 0
    rng = np.random.default_rng(0)
    dirs = rng.normal(size=(3000, 3))
    dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
    origin = np.array(world.scene.robot.start_pos)
    on_boxes = 0
    try:
        for t in (0.0, 1.3, 2.7):
            _pose(world, origin, t)
            want = _mujoco_cast(world, origin, dirs, 50.0)
            got = caster.cast(world.data, origin, dirs, 50.0)
            _assert_same_points(got, want, 50.0)
            exact = split.cast(world.data, origin, dirs, 50.0)
            np.testing.assert_array_equal(exact[0], np.where(want[0] < 0, -1, want[0]))
            hit = exact[0] >= 0
            np.testing.assert_allclose(exact[1][hit], want[1][hit], rtol=0, atol=1e-12)
            np.testing.assert_allclose(exact[2][hit], want[2][hit], rtol=0, atol=1e-12)
            geom, _, normal = got
            hit = geom >= 0
            assert hit.mean() > 0.95
            on_boxes += np.isin(geom, boxes).sum()
            np.testing.assert_allclose(np.linalg.norm(normal[hit], axis=1), 1.0, atol=1e-9)
            assert (np.einsum("ij,ij->i", normal[hit], dirs[hit]) < 1e-9).all()  # faces the ray
    finally:
        split.close()
    assert on_boxes > 0.5 * 3 * len(dirs)  # most rays end on the static boxes


def test_ray_caster_sees_people_as_mujoco_does_and_misses_alike(live_world):
    """Rays aimed at every actor geom (and just past them) from inside each room: hits on
    people and flying objects, on walls in front of them, and misses are MuJoCo's."""
    world, caster = live_world
    dynamic = world.maps.dynamic_geoms
    actor_geoms = np.concatenate(list(dynamic.values()))
    rng = np.random.default_rng(1)
    on_actor = behind_static = 0
    for t in (0.5, 2.0):
        for room in world.scene.rooms:
            lo, hi = np.min(room.polygon, axis=0), np.max(room.polygon, axis=0)
            origin = np.array([*(lo + hi) / 2, 1.3])
            _pose(world, origin, t)
            aim = world.data.geom_xpos[actor_geoms] - origin
            aim = np.repeat(aim, 8, axis=0) + rng.normal(scale=0.15, size=(8 * len(aim), 3))
            dirs = aim / np.linalg.norm(aim, axis=1, keepdims=True)
            got = caster.cast(world.data, origin, dirs, 30.0)
            _assert_same_points(got, _mujoco_cast(world, origin, dirs, 30.0), 30.0)
            on_actor += np.isin(got[0], actor_geoms).sum()
            behind_static += ((got[0] >= 0) & ~np.isin(got[0], actor_geoms)).sum()
            # too short to reach anything: every ray misses, in both
            short = caster.cast(world.data, origin, dirs, 0.01)
            _assert_same_points(short, _mujoco_cast(world, origin, dirs, 0.01), 0.01)
            assert (short[0] == -1).all() and (short[1] == -1.0).all()
    assert on_actor > 200 and behind_static > 200  # both sides of the nearer-hit rule ran
    # from above the roof looking up, nothing is hit at all
    top = np.array([0.0, 0.0, world.scene.wall_height + 5.0])
    up = rng.normal(size=(500, 3))
    up[:, 2] = np.abs(up[:, 2]) + 0.5
    up /= np.linalg.norm(up, axis=1, keepdims=True)
    got = caster.cast(world.data, top, up, 30.0)
    _assert_same_points(got, _mujoco_cast(world, top, up, 30.0), 30.0)
    assert (got[0] == -1).all()


def test_ray_caster_is_deterministic_across_builds(live_world):
    """Two casters built apart (each its own Embree BVH, built by Embree's threads) and the
    1-worker caster return byte-identical answers."""
    from twinsim.engine.rays import RayCaster, split_world

    world, caster = live_world
    rng = np.random.default_rng(2)
    dirs = rng.normal(size=(4000, 3))
    dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
    origin = np.array(world.scene.robot.start_pos)
    _pose(world, origin, 1.1)
    others = [RayCaster(world.model, world.robot().body_id, w, split_world(world)) for w in (2, 1)]
    try:
        answers = [c.cast(world.data, origin, dirs, 40.0) for c in (caster, *others)]
    finally:
        for other in others:
            other.close()
    for answer in answers[1:]:
        for got, want in zip(answer, answers[0], strict=True):
            assert got.tobytes() == want.tobytes()


def _random_boxes(rng, k: int):
    """k boxes with random centres in a 8 m cube, random rotations and half sizes."""
    q, r = np.linalg.qr(rng.normal(size=(k, 3, 3)))
    rotations = q * np.sign(np.diagonal(r, axis1=1, axis2=2))[:, None, :]
    rotations[np.linalg.det(rotations) < 0, :, 0] *= -1
    return rng.uniform(-4, 4, (k, 3)), rotations, rng.uniform(0.1, 0.6, (k, 3))


def _slab_cast(origin, dirs, centers, rotations, halves):
    """The float64 reference: per ray the nearest box entered (slab test), its distance and
    outward normal; −1, inf on a miss."""
    o = np.einsum("kji,kj->ki", rotations, origin - centers)  # origin in each box frame
    v = np.einsum("kji,nj->nki", rotations, dirs)
    with np.errstate(divide="ignore", invalid="ignore"):
        t1, t2 = (-halves - o) / v, (halves - o) / v
    near, far = np.minimum(t1, t2), np.maximum(t1, t2)
    t_in, t_out = near.max(axis=2), far.min(axis=2)
    t_in = np.where((t_in <= t_out) & (t_in > 0), t_in, np.inf)
    box = t_in.argmin(axis=1)
    rays = np.arange(len(dirs))
    t = t_in[rays, box]
    axis = near[rays, box].argmax(axis=1)
    normal = -np.sign(v[rays, box, axis])[:, None] * rotations[box, :, axis]
    return np.where(np.isfinite(t), box, -1), t, normal


def test_box_bvh_refines_embree_hits_to_float64():
    """Random rotated boxes: every sure hit is the float64 slab test's nearest box, distance
    and normal (to 1e-11 m); no hit is lost; only a tiny fraction of rays is unsure."""
    from twinsim.engine.box_bvh import BoxBVH

    rng = np.random.default_rng(3)
    centers, rotations, halves = _random_boxes(rng, 60)
    origin = np.array([0.3, -0.2, 0.1])
    outside = (np.abs(np.einsum("kji,kj->ki", rotations, origin - centers)) > halves).any(axis=1)
    centers, rotations, halves = centers[outside], rotations[outside], halves[outside]
    bvh = BoxBVH(centers, rotations, halves)
    dirs = rng.normal(size=(20000, 3))
    dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
    want_box, want_t, want_n = _slab_cast(origin, dirs, centers, rotations, halves)
    for max_range in (100.0, 3.0):
        rays, box, t, normal, unsure = bvh.cast(origin, dirs, max_range)
        assert len(unsure) <= 1e-3 * len(dirs) and not np.isin(rays, unsure).any()
        np.testing.assert_array_equal(box, want_box[rays])
        np.testing.assert_allclose(t, want_t[rays], rtol=0, atol=1e-11)
        np.testing.assert_allclose(normal, want_n[rays], rtol=0, atol=1e-12)
        expected = np.setdiff1d(np.flatnonzero(want_t <= max_range), unsure)
        np.testing.assert_array_equal(rays, expected)  # every reference hit is there
        assert 0.3 * len(dirs) < len(rays) < 0.95 * len(dirs)


def test_box_bvh_marks_edges_shared_planes_and_inside_as_unsure():
    """float32 may pick either face at a box edge, either box where two boxes' faces share a
    plane, and a back face from inside: those rays are unsure; the others exact."""
    from twinsim.engine.box_bvh import BoxBVH

    centers = np.array([[0.0, 0.0, -0.5], [1.5, 0.0, -0.25]])  # both tops at z = 0
    halves = np.array([[1.0, 1.0, 0.5], [1.0, 1.0, 0.25]])  # overlapping for 0.5 < x < 1
    bvh = BoxBVH(centers, np.repeat(np.eye(3)[None], 2, axis=0), halves)
    origin = np.array([0.2, 0.3, 2.0])
    targets = np.array(
        [
            [-0.5, 0.2, 0.0],  # on box 0 alone
            [2.0, -0.4, 0.0],  # on box 1 alone
            [0.75, 0.1, 0.0],  # where both tops overlap
            [-1.0, 0.5, 0.0],  # on box 0's edge
            [0.3, -1.0, 0.0],  # on both boxes' common edge line y = −1
        ]
    )
    aim = targets - origin
    dirs = aim / np.linalg.norm(aim, axis=1, keepdims=True)
    rays, box, t, normal, unsure = bvh.cast(origin, dirs, 10.0)
    np.testing.assert_array_equal(rays, [0, 1])
    np.testing.assert_array_equal(box, [0, 1])
    np.testing.assert_allclose(t, np.linalg.norm(aim[:2], axis=1), rtol=0, atol=1e-14)
    np.testing.assert_array_equal(normal, [[0, 0, 1], [0, 0, 1]])
    np.testing.assert_array_equal(np.sort(unsure), [2, 3, 4])
    inside = bvh.cast(np.array([0.0, 0.0, -0.5]), dirs, 10.0)
    assert len(inside[0]) == 0 and len(inside[4]) == len(dirs)


_BVH_DIGEST = """
import hashlib
import numpy as np
from twinsim.engine.box_bvh import BoxBVH
rng = np.random.default_rng(5)
q, _ = np.linalg.qr(rng.normal(size=(300, 3, 3)))
bvh = BoxBVH(rng.uniform(-6, 6, (300, 3)), q, rng.uniform(0.05, 0.8, (300, 3)))
dirs = rng.normal(size=(30000, 3))
dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
out = bvh.cast(np.array([0.1, 0.2, 0.3]), dirs, 50.0)
print(hashlib.sha256(b"".join(a.tobytes() for a in out)).hexdigest())
"""


def test_box_bvh_is_deterministic_across_processes():
    """Embree builds its BVH with several threads: the answers are the same bytes when built
    again here and in another process."""
    import contextlib
    import io
    import subprocess
    import sys

    digests = []
    for _ in range(2):
        with contextlib.redirect_stdout(io.StringIO()) as out:
            exec(_BVH_DIGEST, {})
        digests.append(out.getvalue().strip())
    other = subprocess.run(
        [sys.executable, "-c", _BVH_DIGEST], capture_output=True, text=True, check=True
    )
    digests.append(other.stdout.strip())
    assert len(digests[0]) == 64 and len(set(digests)) == 1
