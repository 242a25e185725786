"""The warehouse generator: a hall of racks with free aisles, and the whole pipeline in it.

Geometry is checked from the objects' own boxes (every warehouse part is an upright box or
cylinder), independently of the generator's plan: racks inside the hall, aisles free from floor
to ceiling, goods resting on decks, a flight clear of every box by the drone's clearance, people
clear of everything at every frame.
"""

from __future__ import annotations

import numpy as np
import pytest

from conftest import digest_folder, object_boxes
from test_placement import frames
from twinsim.assemble import build_scene, make_actors
from twinsim.config import load_config
from twinsim.model.scene import SceneSpec
from twinsim.model.sections import FlyingObjectsConfig, PeopleConfig
from twinsim.model.trajectory import Trajectory
from twinsim.robots.common.planner import plan_flight
from twinsim.robots.drone.spec import DroneConfig, pose_to_qpos
from twinsim.scene.free_space import floor_region
from twinsim.scene.vocabulary import CLASS_ID, SEMANTIC_CLASSES
from twinsim.scene.worlds.warehouse.generator import WarehouseConfig, generate_warehouse

SMALL = {
    "length_m": (14.0, 15.0),
    "width_m": (16.0, 17.0),  # two double rows
    "height_m": (5.0, 5.5),
    "levels": (2, 3),
    "lights": 4,
    "texture_size": 16,
}
TINY = WarehouseConfig(**SMALL)
OVERRIDES = [
    "scene.generator=warehouse",
    *(f"scene.{k}={list(v) if isinstance(v, tuple) else v}" for k, v in SMALL.items()),
]
GOODS = ("rack", "pallet", "box")
SEEDS = (0, 1, 2)


def _hall(layout):
    """Inner half extents of the hall (inside the walls' faces) and its height."""
    floor = next(o for o in layout.objects if o.semantic_class == "floor")
    walls = [g for o in layout.objects if o.semantic_class == "wall" for g in o.geoms]
    t = min(min(g.size[:2]) for g in walls)
    return floor.geoms[0].size[0] - t, floor.geoms[0].size[1] - t, layout.wall_height


def _free_intervals(
    lo: np.ndarray, hi: np.ndarray, a: float, b: float, wider_than: float = 0.5
) -> list[tuple[float, float]]:
    """Parts of [a, b] wider than `wider_than` that no interval [lo_i, hi_i] covers (the flue
    of a double row leaves narrower gaps between its mesh and its uprights)."""
    free, at = [], a
    for s, e in sorted(zip(lo, hi, strict=True)):
        if s > at:
            free.append((at, s))
        at = max(at, e)
    free += [(at, b)] if at < b else []
    return [(s, e) for s, e in free if e - s > wider_than]


@pytest.fixture(scope="module", params=SEEDS)
def layout(request):
    return generate_warehouse(TINY, np.random.default_rng(request.param))


def test_racks_stand_inside_the_hall_and_leave_the_aisles_free(layout):
    ix, iy, h = _hall(layout)
    lo, hi, _ = object_boxes(layout.objects, GOODS)
    assert np.all(np.abs(lo[:, :2]) <= [ix, iy]) and np.all(np.abs(hi[:, :2]) <= [ix, iy])
    assert lo[:, 2].min() >= -1e-9 and hi[:, 2].max() <= h - 1.0  # under the lights
    # aisles along x: free y bands from floor to rack top, as wide as the config asks
    aisles = _free_intervals(lo[:, 1], hi[:, 1], -iy, iy)
    assert len(aisles) == 3  # beside each wall and between the two rows
    assert all(e - s >= TINY.aisle_width_m[0] for s, e in aisles)
    ends = _free_intervals(lo[:, 0], hi[:, 0], -ix, ix)
    assert ends[0][0] == -ix and ends[-1][1] == ix  # end aisles along both end walls
    assert all(e - s >= TINY.aisle_width_m[0] for s, e in ends)
    lamps = object_boxes(layout.objects, ("lamp",))[0]
    assert lamps[:, 2].min() >= h - 0.5


def test_goods_rest_on_decks_and_never_pass_through_the_racks(layout):
    rack_lo, rack_hi, _ = object_boxes(layout.objects, ("rack",))
    for obj in layout.objects:
        if obj.semantic_class not in ("pallet", "box"):
            continue
        lo, hi, _ = object_boxes([obj])
        overlap = np.minimum(hi[:, None], rack_hi[None]) - np.maximum(lo[:, None], rack_lo[None])
        assert not np.any(np.all(overlap > 1e-6, axis=2)), obj.name  # touching is fine
        if obj.semantic_class == "pallet":  # its bottom lies on the top of a deck under it
            below = np.all(rack_lo[:, :2] <= lo.min(axis=0)[:2] + 1e-9, axis=1) & np.all(
                rack_hi[:, :2] >= hi.max(axis=0)[:2] - 1e-9, axis=1
            )
            assert np.any(np.abs(rack_hi[below, 2] - lo[:, 2].min()) < 1e-6), obj.name


def test_ids_classes_materials_and_lights(layout):
    ids = [o.instance_id for o in layout.objects]
    assert ids == list(range(1, len(ids) + 1))
    classes = {o.semantic_class for o in layout.objects}
    assert {"floor", "ceiling", "wall", "lamp", *GOODS} == classes
    assert CLASS_ID["robot"] == 31 and CLASS_ID["rack"] == 32 and CLASS_ID["pallet"] == 33
    assert SEMANTIC_CLASSES[:32][-1] == "robot"
    mats = {m.name for m in layout.materials}
    assert {g.material for o in layout.objects for g in o.geoms} <= mats
    assert {m.texture for m in layout.materials if m.texture} == {t.name for t in layout.textures}
    assert all(t.size == 16 for t in layout.textures)
    assert layout.rooms == () and layout.doors == ()
    assert 1 <= len(layout.lights) <= 4 and sum(x.castshadow for x in layout.lights) == 1
    rack_lo, rack_hi, _ = object_boxes(layout.objects, ("rack",))
    for light in layout.lights:
        xy = np.array(light.pos[:2])
        assert not np.any(np.all((rack_lo[:, :2] <= xy) & (xy <= rack_hi[:, :2]), axis=1))
        assert layout.wall_height - 0.5 < light.pos[2] < layout.wall_height


def test_same_seed_same_warehouse_other_seed_other():
    a, b = (generate_warehouse(TINY, np.random.default_rng(7)) for _ in range(2))
    assert a == b
    c = generate_warehouse(TINY, np.random.default_rng(8))
    assert a.objects != c.objects and a.wall_height != c.wall_height
    from conftest import make_robot

    scene = a.to_scene(7, (make_robot(),))
    assert SceneSpec.from_json(scene.to_json()) == scene


def _aisle_of(xy: np.ndarray, layout) -> np.ndarray:
    """For each point: the index of the long aisle it is in (0, 1, …), or -1 in an end aisle."""
    lo, hi, _ = object_boxes(layout.objects, GOODS)
    _, iy, _ = _hall(layout)
    aisles = _free_intervals(lo[:, 1], hi[:, 1], -iy, iy)
    out = np.full(len(xy), -1)
    inside = (xy[:, 0] >= lo[:, 0].min()) & (xy[:, 0] <= hi[:, 0].max())
    for k, (s, e) in enumerate(aisles):
        out[inside & (xy[:, 1] >= s) & (xy[:, 1] <= e)] = k
    return out


def test_the_drone_tours_the_aisles_clear_of_every_rack(layout):
    cfg = DroneConfig()
    plan = plan_flight(
        rooms=(),
        doors=(),
        objects=layout.objects,
        wall_height=layout.wall_height,
        robot_cfg=cfg,
        duration_s=40.0,
        rng=np.random.default_rng(3),
    )
    assert plan.rooms_visited == [] and plan.door_ids == [] and plan.duration_s >= 40.0
    traj = Trajectory.from_path_points(plan.path)
    pos = traj.sample(np.arange(0.0, traj.duration_s, 0.02)).pos
    assert np.allclose(pos[:, 2], cfg.flight_height_m)
    # every box reaching into the flight band: the drone keeps its clearance from it
    lo, hi, owner = object_boxes(layout.objects)
    z = cfg.flight_height_m
    keep = [o.semantic_class not in ("floor", "ceiling") for o in owner]
    band = np.array(keep) & (hi[:, 2] > z - 0.3) & (lo[:, 2] < z + 0.3)
    gap = np.maximum(lo[None, band, :2] - pos[:, None, :2], pos[:, None, :2] - hi[None, band, :2])
    dist = np.linalg.norm(np.maximum(gap, 0.0), axis=2).min(axis=1)
    assert dist.min() >= cfg.clearance_m - 1e-6
    # a tour spread over the floor, not a hover in one place
    assert len(set(_aisle_of(pos[:, :2], layout).tolist())) >= 2
    assert np.ptp(pos[:, 0]) > 3.0 or np.ptp(pos[:, 1]) > 3.0


def _inside_static(pts: np.ndarray, layout) -> np.ndarray:
    """Whether points are in a part of the hall's contents, off the floor, or in the ceiling."""
    ix, iy, h = _hall(layout)
    lo, hi, owner = object_boxes(layout.objects)
    solid = [o.semantic_class not in ("floor", "ceiling") for o in owner]
    hit = (pts[:, 2] < -0.02) | (pts[:, 2] > h) | np.any(np.abs(pts[:, :2]) > [ix, iy], axis=1)
    lo, hi = lo[solid], hi[solid]
    near = np.all((lo <= pts.max(axis=0)) & (hi >= pts.min(axis=0)), axis=1)
    for a, b in zip(lo[near], hi[near], strict=True):  # boxes the points' extent reaches
        hit |= np.all((pts >= a) & (pts <= b), axis=1)
    return hit


def test_people_and_flying_objects_find_room_in_the_aisles(layout):
    rng = np.random.default_rng(4)
    first = len(layout.objects) + 1
    people_cfg = PeopleConfig(count=4, max_trace_intersections=0)
    actors = make_actors(
        layout, people_cfg, FlyingObjectsConfig(count=3), 6.0, rng, rng, first_id=first
    )
    assert actors.placed >= 2 and len(actors.people) == actors.placed
    assert [p.name for p in actors.people] == [f"person_{k}" for k in range(actors.placed)]
    for person in actors.people:
        pts = frames(person)  # every 1/120 s of 6 s, every body part's surface
        assert not _inside_static(pts.reshape(-1, 3), layout).any(), person.name
        assert person.motion.kind in ("walk", "idle", "wave")  # no seats in a warehouse
    ids = [i for p in actors.people for i in (p.body_instance_id, p.clothing_instance_id)]
    ids += [f.instance_id for f in actors.flying_objects]
    assert ids == list(range(first, first + len(ids)))
    ix, iy, h = _hall(layout)
    for obj in actors.flying_objects:
        keys = np.array([k.pos for k in obj.keyframes])
        assert np.all(np.abs(keys[:, :2]) <= [ix + 0.15, iy + 0.15])
        assert keys[:, 2].min() >= 0.3 - 1e-9 and keys[:, 2].max() <= h + 0.05 - 0.3 + 1e-9
    assert floor_region(layout).has_rooms is False


# ------------------------------------------------------------------------------ end to end


@pytest.fixture(scope="module")
def warehouse_sequence(gl_backend, tmp_path_factory):
    from twinsim.sim import run

    overrides = [
        *OVERRIDES,
        "people.count=2",
        "flying_objects.count=2",
        "sensors.lidar0.kind=lidar",
        "sensors.lidar0.model=vlp-16",
        "sensors.lidar0.columns=90",
    ]
    cfg = load_config("tiny", overrides, seed=5, duration_s=1.0)
    return run(cfg, tmp_path_factory.mktemp("warehouse") / "seq")


def test_a_run_in_the_warehouse_records_a_valid_sequence(warehouse_sequence):
    from twinsim.sequence import open_sequence, validate_sequence

    report = validate_sequence(warehouse_sequence)
    assert report.ok, report.problems
    seq = open_sequence(warehouse_sequence)
    assert seq.metadata["config"]["scene"]["generator"] == "warehouse"
    assert seq.scene.rooms == () and seq.metadata["rooms"] == []
    assert len(seq.scene.people) >= 1 and len(seq.scene.flying_objects) == 2
    ids = [row["instance_id"] for row in seq.metadata["instances"]]
    assert len(ids) == len(set(ids)) and min(ids) >= 1
    semantic = np.concatenate([f.semantic.ravel() for f in seq.camera("cam0")])
    assert CLASS_ID["rack"] in semantic or CLASS_ID["box"] in semantic
    lo, hi = np.array(seq.scene.bounds_min), np.array(seq.scene.bounds_max)
    scan = seq.lidar("lidar0")[0]
    world = scan.points @ scan.T_world_lidar[:3, :3].T + scan.T_world_lidar[:3, 3]
    assert len(scan) > 100
    assert np.all((world >= lo - 0.1) & (world <= hi + 0.1))


def test_the_warehouse_replays_byte_identically_and_takes_more_people(warehouse_sequence, tmp_path):
    from twinsim.replay import replay
    from twinsim.replay.variations import Variations
    from twinsim.sequence import open_sequence, validate_sequence

    twin = replay(warehouse_sequence, tmp_path / "twin", rerender=True)
    a, b = digest_folder(warehouse_sequence), digest_folder(twin)
    assert {p for p in a if a[p] != b.get(p)} == {"metadata.json"}
    busier = replay(
        warehouse_sequence, tmp_path / "busier", Variations(add_people=2, add_flying_objects=1)
    )
    assert validate_sequence(busier).ok
    src, dst = open_sequence(warehouse_sequence).scene, open_sequence(busier).scene
    assert len(dst.people) > len(src.people)
    assert len(dst.flying_objects) == len(src.flying_objects) + 1


def test_the_warehouse_exports_and_has_a_scene_graph_from_its_free_space(
    warehouse_sequence, tmp_path
):
    import json

    from twinsim.dsg import build_scene_graph
    from twinsim.export import export_sequence
    from twinsim.sequence import open_sequence

    tum = export_sequence(warehouse_sequence, "tum", tmp_path / "tum")
    assert (tum / "groundtruth.txt").read_text().count("\n") > 10
    coco = export_sequence(warehouse_sequence, "coco", tmp_path / "coco")
    names = {
        c["name"]
        for f in (coco / "annotations").glob("*.json")
        for c in json.loads(f.read_text())["categories"]
    }
    assert {"rack", "pallet"} <= names
    graph = build_scene_graph(open_sequence(warehouse_sequence).scene, [])
    assert graph.metadata.get()["rooms_from"] == "free_space"


def test_a_world_without_rooms_culls_by_the_frustum_alone(gl_backend):
    """Without rooms there are no portals: what is behind the camera is left out, and the
    image is the one drawing everything gives."""
    from twinsim.engine.render import CameraRenderer
    from twinsim.engine.world import World

    cfg = load_config("tiny", [*OVERRIDES, "people.count=3"], seed=2, duration_s=1.0)
    scene = build_scene(cfg)
    world = World(scene, cfg.render, cfg.sim.physics_hz)
    cam = next(s for s in scene.sensors if s.type == "camera")
    culled = CameraRenderer(world.model, cam.name, 64, 48, culling=world.culling)
    full = CameraRenderer(world.model, cam.name, 64, 48)
    try:
        ref = Trajectory.from_path_points(scene.robot.path).reference(1.0)
        world.pose_actors(1.0)
        world.robot().set_state(pose_to_qpos(ref.pos, float(ref.yaw)), np.zeros(6))
        hidden = world.culling.hidden(world.model, world.data, world._cam_ids[cam.name], 4 / 3)
        assert 0 < len(hidden) < len(world.culling.geoms)
        a, b = culled.render(world.data), full.render(world.data)
        np.testing.assert_array_equal(a.rgb, b.rgb)
        np.testing.assert_array_equal(a.geom_ids, b.geom_ids)
    finally:
        culled.close()
        full.close()
        world.close()
