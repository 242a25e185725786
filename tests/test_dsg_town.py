"""The scene graph of a town: regions from its road network (blocks, junctions, road stretches),
places along its lanes and sidewalks, buildings in their blocks, vehicles and walkers as agents.

Checked against the road network in scene.json and the traffic's own motion, not against the
graph builder's intermediate results.
"""

from __future__ import annotations

import numpy as np
import pytest
import shapely
import spark_dsg
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from typer.testing import CliRunner

from twinsim.actors.flying import FlyingMotion
from twinsim.cli import app
from twinsim.dsg import SceneGraphQueries, layers, load_graph
from twinsim.sequence import open_sequence

#: a variant of a capability the everyday tier checks elsewhere (`make test` runs it)
pytestmark = pytest.mark.slow

TOWN = ["robot.kind=car", "traffic.vehicles=6", "traffic.walkers=4"]


@pytest.fixture(scope="module")
def town_graph(gl_backend, tmp_path_factory):
    """A 2 s drive through the test town with traffic, and its graph written by `twinsim dsg`."""
    from twinsim.config import load_config
    from twinsim.sim import run

    root = tmp_path_factory.mktemp("town_graph")
    seq = run(load_config("town", TOWN, seed=2, duration_s=2.0), root / "seq")
    out = root / "graph.json"
    result = CliRunner().invoke(
        app, ["dsg", str(seq), "--out", str(out), "--plot", str(root / "graph.png")]
    )
    assert result.exit_code == 0, result.output
    assert (root / "graph.png").stat().st_size > 10_000
    return open_sequence(seq), load_graph(out), seq


def _places(graph):
    layer = graph.get_layer(layers.PLACES)
    nodes = sorted(layer.nodes, key=lambda n: n.id.category_id)
    index = {n.id.value: k for k, n in enumerate(nodes)}
    xy = np.array([n.attributes.position[:2] for n in nodes])
    network = [n.attributes.metadata.get()["network"] for n in nodes]
    edges = np.array([(index[e.source], index[e.target]) for e in layer.edges])
    return xy, network, edges


def test_regions_are_the_blocks_junctions_and_road_stretches(town_graph):
    seq, graph, _ = town_graph
    roads = seq.scene.roads
    assert graph.metadata.get()["rooms_from"] == "roads"
    rooms = SceneGraphQueries(graph).rooms
    types = [r.type for r in rooms.values()]
    assert types.count("block") == len(roads.blocks)
    assert types.count("junction") == len(roads.intersections)
    blocks = [r for r in rooms.values() if r.type == "block"]
    for block, spec in zip(blocks, roads.blocks, strict=True):
        assert block.polygon.equals(shapely.Polygon(spec.polygon))
    # road stretches cover the driving lanes' centre lines outside the junctions
    stretches = shapely.union_all([r.polygon for r in rooms.values() if r.type == "road"])
    junctions = shapely.union_all([shapely.Polygon(j.polygon) for j in roads.intersections])
    for lane in roads.lanes:
        if lane.kind == "connector":
            continue
        line = shapely.LineString(np.asarray(lane.centerline)[:, :2]).difference(junctions)
        assert stretches.buffer(1e-6).covers(line), lane.lane_id
    # every road stretch is linked to a junction at an end
    room_layer = graph.get_layer(layers.ROOMS)
    linked = {(e.source, e.target) for e in room_layer.edges}
    kind = {layers.room_id(rid).value: r.type for rid, r in rooms.items()}
    for rid, room in rooms.items():
        if room.type == "road":
            me = layers.room_id(rid).value
            partners = {b for a, b in linked if a == me} | {a for a, b in linked if b == me}
            assert any(kind[p] == "junction" for p in partners), room.name


def test_places_follow_the_lanes_and_sidewalks_and_connect(town_graph):
    seq, graph, _ = town_graph
    roads = seq.scene.roads
    xy, network, edges = _places(graph)
    lanes = shapely.union_all(
        [shapely.LineString(np.asarray(lane.centerline)[:, :2]) for lane in roads.lanes]
    )
    walks = shapely.union_all(
        [
            shapely.LineString([*w.centerline, w.centerline[0]] if w.closed else w.centerline)
            for w in roads.sidewalks
        ]
    )
    points = shapely.points(xy)
    on_lane = np.array([n == "lane" for n in network])
    on_walk = np.array([n == "sidewalk" for n in network])
    assert shapely.distance(points[on_lane], lanes).max() < 0.31  # lane ends merge within 0.3 m
    assert shapely.distance(points[on_walk], walks).max() < 1e-6
    steps = np.linalg.norm(xy[edges[:, 0]] - xy[edges[:, 1]], axis=1)
    assert steps.max() < 5.0 + 0.5  # consecutive places, or a crosswalk's end to its sidewalk
    n = len(xy)
    graph_matrix = coo_matrix((np.ones(len(edges)), (edges[:, 0], edges[:, 1])), shape=(n, n))
    _, label = connected_components(graph_matrix, directed=False)
    assert len(set(label[on_lane])) == 1  # every lane reaches every other one
    assert set(label[on_lane]).isdisjoint(label[~on_lane])  # walkers' network is apart


def test_vehicles_and_walkers_are_agents_where_their_motion_puts_them(town_graph):
    seq, graph, _ = town_graph
    scene = seq.scene
    q = SceneGraphQueries(graph)
    agents = {a["name"]: a["kind"] for a in graph.metadata.get()["agents"]}
    vehicles = [f for f in scene.flying_objects if f.semantic_class in ("car", "van", "truck")]
    assert vehicles and all(agents[v.name] == "vehicle" for v in vehicles)
    assert all(agents[p.name] == "person" for p in scene.people) and scene.people
    on_road = 0
    total = 0
    for v in vehicles:
        t_ns, position = q.trajectory(v.name)
        motion = FlyingMotion(v)
        want = np.array([motion.pose(t / 1e9)[0] for t in t_ns])
        np.testing.assert_allclose(position, want, atol=1e-9)
        for t in t_ns[::5]:
            room = q.agent_room(v.name, int(t))
            total += 1
            on_road += room is not None and room.type in ("road", "junction")
    assert on_road / total > 0.95


def test_buildings_are_objects_of_the_block_they_stand_in(town_graph):
    _, graph, _ = town_graph
    rooms = SceneGraphQueries(graph).rooms
    objects = graph.get_layer(layers.OBJECTS)
    buildings = [n for n in objects.nodes if n.attributes.metadata.get()["class"] == "building"]
    assert buildings
    for node in buildings:
        meta = node.attributes.metadata.get()
        room = rooms[meta["room_id"]]
        assert room.type == "block"
        assert room.polygon.covers(shapely.Point(node.attributes.position[:2]))
    structures = graph.get_layer(layers.STRUCTURES, layers.STRUCTURE_PARTITION)
    classes = {n.attributes.metadata.get()["class"] for n in structures.nodes}
    assert {"road", "sidewalk"} <= classes


def test_graph_loads_in_spark_dsg_and_planning_a_town_is_refused(town_graph, tmp_path):
    _, graph, seq = town_graph
    graph.save(str(tmp_path / "g.json"), False)
    loaded = spark_dsg.DynamicSceneGraph.load(str(tmp_path / "g.json"))
    assert loaded.get_layer(layers.ROOMS).num_nodes() == graph.get_layer(layers.ROOMS).num_nodes()
    result = CliRunner().invoke(app, ["dsg-plan", str(seq), "--start=0,0", "--goal=1,1"])
    assert result.exit_code == 2
    assert "a town" in result.output and "Traceback" not in result.output
