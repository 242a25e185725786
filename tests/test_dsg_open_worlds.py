"""Scene graphs of worlds without rooms: the room layer from the free space (a warehouse hall,
two halls a wall divides), with objects, places, agents and paths checked against the boxes.

Every part of these worlds is an upright box (or a lamp's cylinder, above the agents' band),
so clearances are computed here from the objects' own boxes, independently of the free-space
grid the graph is built on.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import shapely
import spark_dsg
from typer.testing import CliRunner

from conftest import object_boxes
from twinsim.cli import app
from twinsim.dsg import (
    AgentTrack,
    HierarchicalPlanner,
    NoPathError,
    SceneGraphQueries,
    build_scene_graph,
    free_grid,
    layers,
    load_graph,
    plan_flat,
)
from twinsim.model.scene import GeomSpec, ObjectSpec, RoomSpec
from twinsim.sequence import open_sequence

WAREHOUSE = (
    "scene.generator=warehouse",
    "scene.length_m=[14.0,15.0]",
    "scene.width_m=[16.0,17.0]",  # two double rows, three long aisles
    "scene.height_m=[5.0,5.5]",
    "scene.levels=[2,3]",
    "scene.lights=4",
    "scene.texture_size=16",
    "people.count=2",
)

#: a variant of a capability the everyday tier checks elsewhere (`make test` runs it)
pytestmark = pytest.mark.slow
CLEAR = 0.25
BAND = (0.2, 1.8)  # the height band agents occupy (twinsim.dsg.places)


@pytest.fixture(scope="module")
def warehouse(gl_backend, tmp_path_factory):
    """A 1 s run in a small warehouse, and its graph written by `twinsim dsg`."""
    from twinsim.config import load_config
    from twinsim.sim import run

    root = tmp_path_factory.mktemp("open_world")
    seq = run(load_config("tiny", WAREHOUSE, seed=5, duration_s=1.0), root / "seq")
    out = root / "graph.json"
    result = CliRunner().invoke(
        app, ["dsg", str(seq), "--out", str(out), "--plot", str(root / "graph.png")]
    )
    assert result.exit_code == 0, result.output
    assert "rooms from the free space" in " ".join(result.output.split())  # however wrapped
    assert (root / "graph.png").stat().st_size > 0
    return seq, spark_dsg.DynamicSceneGraph.load(str(out))


def _clearance(scene, xy: np.ndarray) -> np.ndarray:
    """Exact distance of points xy (n, 2) to the nearest static box reaching into the band."""
    lo, hi, owner = object_boxes(scene.objects)
    solid = np.array(
        [o.semantic_class not in ("floor", "ceiling") and not o.dynamic for o in owner]
    )
    band = solid & (hi[:, 2] > BAND[0]) & (lo[:, 2] < BAND[1])
    lo, hi = lo[band, :2], hi[band, :2]
    gap = np.maximum(lo[None] - xy[:, None], xy[:, None] - hi[None])
    return np.linalg.norm(np.maximum(gap, 0.0), axis=2).min(axis=1)


def _floor_rect(scene) -> shapely.Polygon:
    floor = next(o for o in scene.objects if o.semantic_class == "floor")
    lo, hi, _ = object_boxes([floor])
    return shapely.box(*lo[0, :2], *hi[0, :2])


def _places(graph) -> dict[int, tuple[np.ndarray, float, int]]:
    """Place id -> (xy, clearance attribute, room id)."""
    return {
        n.id.value: (
            np.array(n.attributes.position[:2]),
            n.attributes.distance,
            n.attributes.metadata.get()["room_id"],
        )
        for n in graph.get_layer(layers.PLACES).nodes
    }


def test_the_hall_is_one_free_space_room_holding_every_object(warehouse):
    seq, graph = warehouse
    scene = open_sequence(seq).scene
    assert scene.rooms == () and graph.metadata.get()["rooms_from"] == "free_space"
    rooms = list(graph.get_layer(layers.ROOMS).nodes)
    assert len(rooms) == 1 and graph.get_layer(layers.ROOMS).num_edges() == 0
    room = rooms[0]
    meta = room.attributes.metadata.get()
    assert meta["type"] == "open_area" and room.attributes.name == "open_area_0"
    assert room.attributes.semantic_label == layers.ROOM_TYPES.index("open_area")
    poly = shapely.Polygon(meta["polygon"], meta.get("holes"))
    # the hall as a floor plan would draw it: the floor slab, on the walls' centre lines
    assert poly.symmetric_difference(_floor_rect(scene)).area < 1e-9
    assert meta["area_m2"] == pytest.approx(poly.area)
    objects = list(graph.get_layer(layers.OBJECTS).nodes)
    static = [o for o in scene.objects if not o.dynamic]
    assert len(objects) == sum(o.semantic_class not in layers.STRUCTURE_CLASSES for o in static)
    by_id = {o.instance_id: o for o in scene.objects}
    for node in objects:
        m = node.attributes.metadata.get()
        assert m["room_id"] == meta["room_id"] and graph.has_edge(room.id, node.id)
        lo, hi, _ = object_boxes(
            [by_id[m["instance_id"]]]
        )  # the whole footprint, not only its centre
        assert poly.covers(shapely.MultiPoint(np.concatenate([lo[:, :2], hi[:, :2]])))
    # racks, pallets and boxes are all there; every wall bounds the hall
    assert {"rack", "pallet", "box"} <= {n.attributes.metadata.get()["class"] for n in objects}
    structures = list(graph.get_layer("STRUCTURES").nodes)
    assert len(structures) == sum(o.semantic_class in layers.STRUCTURE_CLASSES for o in static)
    for node in structures:
        assert graph.has_edge(room.id, node.id), node.attributes.name


def test_places_lie_in_free_space_with_their_clearance(warehouse):
    seq, graph = warehouse
    scene = open_sequence(seq).scene
    places = _places(graph)
    xy = np.array([p[0] for p in places.values()])
    attr = np.array([p[1] for p in places.values()])
    exact = _clearance(scene, xy)
    assert len(places) > 100 and exact.min() >= CLEAR
    # the grid's clearance is a lower bound of the exact one, within a cell's diagonal
    assert np.all(attr <= exact + 1e-9) and np.all(attr >= exact - 0.08)
    assert {p[2] for p in places.values()} == {0}
    # aisles are one room because they are one free region: the place graph is connected
    edges = [(e.source, e.target) for e in graph.get_layer(layers.PLACES).edges]
    seen, todo = set(), [next(iter(places))]
    while todo:
        p = todo.pop()
        if p not in seen:
            seen.add(p)
            todo += [b if a == p else a for a, b in edges if p in (a, b)]
    assert seen == set(places)


def test_agent_poses_lie_in_the_room_holding_the_robot(warehouse):
    seq, graph = warehouse
    reader = open_sequence(seq)
    t_gt, T_gt = reader.groundtruth("groundtruth_body")
    q = SceneGraphQueries(graph)
    hall = _floor_rect(reader.scene)
    places = _places(graph)
    robot = next(a for a in graph.metadata.get()["agents"] if a["name"] == "robot")
    nodes = list(graph.get_layer(layers.AGENTS, robot["partition"]).nodes)
    assert len(nodes) == len(t_gt[::6])  # 60 Hz ground truth kept at 10 Hz
    for node in nodes:
        t = node.attributes.last_update_time_ns
        true_xy = T_gt[int(np.flatnonzero(t_gt == t)[0]), :2, 3]
        np.testing.assert_allclose(node.attributes.position[:2], true_xy)
        assert hall.covers(shapely.Point(true_xy))
        room = q.agent_room("robot", t)
        assert room is not None and room.polygon.covers(shapely.Point(true_xy))
        near = places[node.get_parent()]  # the pose's nearest place, in the same room
        assert near[2] == room.room_id and np.linalg.norm(near[0] - true_xy) < 0.75
    visits = q.rooms_visited("robot")
    assert [(v.room.name, v.t_enter_ns, v.t_exit_ns) for v in visits] == [
        ("open_area_0", int(t_gt[0]), int(t_gt[::6][-1]))
    ]
    assert q.room_at((100.0, 0.0)) is None


def test_a_path_across_the_rack_rows_runs_through_free_places(warehouse):
    seq, graph = warehouse
    scene = open_sequence(seq).scene
    grid = free_grid(scene)
    planner = HierarchicalPlanner(graph, grid, CLEAR)
    xy = planner.place_xy
    mid = np.abs(xy[:, 0]) < 1.5
    a, b = xy[mid][np.argmin(xy[mid, 1])], xy[mid][np.argmax(xy[mid, 1])]
    s = np.linspace(0.0, 1.0, 2000)[:, None]
    assert _clearance(scene, a + s * (b - a)).min() == 0.0, "the straight line hits a rack row"
    hier = planner.plan(a, b)
    np.testing.assert_allclose(hier.path_xy[[0, -1]], [a, b])
    assert hier.rooms == (0,)
    for p in hier.path_xy[1:-1]:  # every corner is a place
        assert np.min(np.linalg.norm(xy - p, axis=1)) < 1e-9
    dense = np.concatenate([p + s * (q - p) for p, q in itertools.pairwise(hier.path_xy)])
    assert _clearance(scene, dense).min() >= CLEAR - 1e-9
    flat = plan_flat(grid, a, b, CLEAR)
    assert np.linalg.norm(b - a) + 1.0 < hier.length_m <= 1.15 * flat.length_m
    result = CliRunner().invoke(
        app, ["dsg-plan", str(seq), f"--start={a[0]},{a[1]}", f"--goal={b[0]},{b[1]}"]
    )
    assert result.exit_code == 0, result.output
    assert "through rooms [0]" in " ".join(result.output.split())


def test_the_same_hall_with_a_floor_plan_takes_its_rooms_from_it(warehouse):
    seq, graph = warehouse
    scene = open_sequence(seq).scene
    outline = tuple(shapely.get_coordinates(_floor_rect(scene))[:-1].tolist())
    planned = scene.model_copy(
        update={"rooms": (RoomSpec(room_id=4, type="office", name="office_4", polygon=outline),)}
    )
    twin = build_scene_graph(planned, [])
    assert twin.metadata.get()["rooms_from"] == "floor_plan"
    (room,) = twin.get_layer(layers.ROOMS).nodes
    assert room.attributes.name == "office_4" and "holes" not in room.attributes.metadata.get()
    # the same places and objects either way
    assert _places(twin).keys() == _places(graph).keys()
    assert twin.get_layer(layers.OBJECTS).num_nodes() == graph.get_layer(layers.OBJECTS).num_nodes()


def test_reconstruction_is_scored_against_the_free_space_room(warehouse):
    from twinsim.dsg.evaluate import evaluate
    from twinsim.dsg.reconstruct import ReconstructionOptions, reconstruct

    reader = open_sequence(warehouse[0])
    est = reconstruct(reader, "cam0", ReconstructionOptions(voxel_m=0.1, frame_stride=3))
    report = evaluate(reader, est, "cam0", 3)
    assert report.rooms_observed == 1 and report.room_recall == 1.0
    hall = _floor_rect(reader.scene)
    assert all(hall.covers(shapely.Point(c)) for c in est.room_centroids)


def _box_object(iid: int, name: str, cls: str, centre, half) -> ObjectSpec:
    geom = GeomSpec(type="box", size=tuple(map(float, half)), material="m")
    return ObjectSpec(
        instance_id=iid, name=name, semantic_class=cls, pos=tuple(map(float, centre)), geoms=(geom,)
    )


@pytest.fixture(scope="module")
def two_halls(warehouse):
    """A 12 x 4 m floor that a wall without a door splits at x = 0, a cabinet in the west
    hall, a table and a closet too small to be a room (0.8 x 0.8 m inside) in the east one."""
    seq, _ = warehouse
    objects = [
        ("floor", "floor", (0, 0, -0.025), (6, 2, 0.025)),
        ("wall_south", "wall", (0, -2, 1.5), (6.1, 0.1, 1.5)),
        ("wall_north", "wall", (0, 2, 1.5), (6.1, 0.1, 1.5)),
        ("wall_west", "wall", (-6, 0, 1.5), (0.1, 1.9, 1.5)),
        ("wall_east", "wall", (6, 0, 1.5), (0.1, 1.9, 1.5)),
        ("wall_divider", "wall", (0, 0, 1.5), (0.1, 1.9, 1.5)),
        ("cabinet", "cabinet", (-3, 1.2, 0.5), (0.3, 0.4, 0.5)),
        ("table", "table", (3.5, -1, 0.375), (0.6, 0.4, 0.375)),
        *(
            (f"closet_{k}", "shelf", c, h)
            for k, (c, h) in enumerate(
                [
                    ((4.5, 0.45, 1), (0.5, 0.05, 1)),
                    ((4.5, 1.35, 1), (0.5, 0.05, 1)),
                    ((4.05, 0.9, 1), (0.05, 0.4, 1)),
                    ((4.95, 0.9, 1), (0.05, 0.4, 1)),
                ]
            )
        ),
    ]
    scene = open_sequence(seq).scene.model_copy(
        update={
            "objects": tuple(_box_object(i + 1, *o) for i, o in enumerate(objects)),
            "people": (),
            "flying_objects": (),
            "bounds_min": (-6.1, -2.1, -0.05),
            "bounds_max": (6.1, 2.1, 3.0),
            "wall_height": 3.0,
        }
    )
    t_ns = np.arange(20, dtype=np.int64) * 100_000_000
    T = np.tile(np.eye(4), (20, 1, 1))
    T[:10, :2, 3], T[10:, :2, 3] = (-4.0, -1.0), (2.0, 1.0)
    return scene, build_scene_graph(scene, [AgentTrack("visitor", "person", t_ns, T)])


def test_a_wall_without_a_door_makes_two_rooms(two_halls):
    scene, graph = two_halls
    q = SceneGraphQueries(graph)
    assert graph.metadata.get()["rooms_from"] == "free_space"
    assert sorted(r.name for r in q.rooms.values()) == ["open_area_0", "open_area_1"]
    west = q.room_at((-3.0, 0.0))
    east = q.room_at((3.0, 0.0))
    assert west is not None and east is not None and west.room_id != east.room_id
    # the two rooms share the floor between them, split on the dividing wall
    floor = _floor_rect(scene)
    assert (west.polygon | east.polygon).symmetric_difference(floor).area < 1e-9
    assert (west.polygon & east.polygon).area < 1e-9
    assert abs(west.polygon.bounds[2]) <= 0.05 and abs(east.polygon.bounds[0]) <= 0.05
    assert graph.get_layer(layers.ROOMS).num_edges() == 0
    objects = {
        n.attributes.name: n.attributes.metadata.get()["room_id"]
        for n in graph.get_layer(layers.OBJECTS).nodes
    }
    assert objects["cabinet"] == west.room_id and objects["table"] == east.room_id
    assert {objects[f"closet_{k}"] for k in range(4)} == {east.room_id}
    divider = next(
        n for n in graph.get_layer("STRUCTURES").nodes if n.attributes.name == "wall_divider"
    )
    assert graph.has_edge(layers.room_id(west.room_id), divider.id)
    assert graph.has_edge(layers.room_id(east.room_id), divider.id)
    for xy, _, room in _places(graph).values():  # the closet's place too
        assert room == (west if xy[0] < 0 else east).room_id
        assert q.rooms[room].polygon.covers(shapely.Point(xy))
    visits = [(v.room.room_id, v.t_enter_ns, v.t_exit_ns) for v in q.rooms_visited("visitor")]
    assert visits == [(west.room_id, 0, 900_000_000), (east.room_id, 1_000_000_000, 1_900_000_000)]
    planner = HierarchicalPlanner(graph, free_grid(scene), CLEAR)
    assert planner.plan((-4.0, -1.0), (-1.0, -1.0)).rooms == (west.room_id,)
    with pytest.raises(NoPathError, match=r"in room open_area_\d .* no door or passage joins"):
        planner.plan((-4.0, -1.0), (2.0, 1.0))
    with pytest.raises(NoPathError, match="in no room of the scene graph"):
        planner._room(np.array([10.0, 0.0]))


def test_saved_free_space_rooms_answer_like_built_ones(two_halls, tmp_path):
    _, graph = two_halls
    graph.save(str(tmp_path / "g.json"), False)
    built, loaded = SceneGraphQueries(graph), SceneGraphQueries(load_graph(tmp_path / "g.json"))
    assert built.rooms.keys() == loaded.rooms.keys()
    for rid, room in built.rooms.items():
        assert room.polygon.equals(loaded.rooms[rid].polygon)
    assert loaded.agent_room("visitor", 1_500_000_000).name == built.room_at((2.0, 1.0)).name
