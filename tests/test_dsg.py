"""Ground-truth scene graphs: spark-dsg round trip, counts against the scene, queries, errors."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
import shapely
import spark_dsg
from typer.testing import CliRunner

from conftest import make_robot
from twinsim.actors.motion import motion_for
from twinsim.cli import app
from twinsim.dsg import (
    AgentTrack,
    QueryError,
    SceneGraphQueries,
    build_scene_graph,
    layers,
    load_graph,
    sequence_graph,
)
from twinsim.errors import SequenceError
from twinsim.scene.vocabulary import CLASS_ID
from twinsim.scene.worlds.apartment.config import ApartmentConfig
from twinsim.scene.worlds.apartment.generator import generate_apartment
from twinsim.sequence import open_sequence


@pytest.fixture(scope="module")
def seq_graph_file(dynamic_sequence, tmp_path_factory):
    out = tmp_path_factory.mktemp("dsg") / "graph.json"
    result = CliRunner().invoke(app, ["dsg", str(dynamic_sequence), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out


def test_cli_graph_loads_in_spark_dsg_with_the_scene_counts(dynamic_sequence, seq_graph_file):
    graph = spark_dsg.DynamicSceneGraph.load(str(seq_graph_file))
    reader = open_sequence(dynamic_sequence)
    scene = reader.scene
    assert graph.get_layer("ROOMS").num_nodes() == len(scene.rooms)
    furniture = [o for o in scene.objects if o.semantic_class not in layers.STRUCTURE_CLASSES]
    assert graph.get_layer("OBJECTS").num_nodes() == len(furniture)
    structures = len(scene.objects) - len(furniture) + len(scene.doors)
    assert graph.get_layer("STRUCTURES").num_nodes() == structures
    agents = graph.metadata.get()["agents"]
    assert [a["name"] for a in agents] == ["robot", *(p.name for p in scene.people)]
    assert len(scene.people) >= 1
    t_ns, T = reader.groundtruth("groundtruth_body")
    stride = reader.stream_info("groundtruth_body")["rate_hz"] // 10
    for a in agents:
        layer = graph.get_layer(layers.AGENTS, a["partition"])
        assert layer.num_nodes() == len(t_ns[::stride])
    robot = sorted(
        graph.get_layer(layers.AGENTS, agents[0]["partition"]).nodes,
        key=lambda n: n.attributes.last_update_time_ns,
    )
    assert robot[3].attributes.last_update_time_ns == t_ns[3 * stride]
    np.testing.assert_allclose(robot[3].attributes.position, T[3 * stride, :3, 3])
    # every object hangs below the room its scene entry names
    for node in graph.get_layer("OBJECTS").nodes:
        room = node.attributes.metadata.get()["room_id"]
        assert graph.has_edge(layers.room_id(room), node.id)
    # a second run refuses to overwrite the graph; into a new file it writes the same bytes
    again = CliRunner().invoke(app, ["dsg", str(dynamic_sequence), "--out", str(seq_graph_file)])
    assert again.exit_code == 2 and "exists" in again.output
    twin = seq_graph_file.with_name("twin.json")
    assert (
        CliRunner().invoke(app, ["dsg", str(dynamic_sequence), "--out", str(twin)]).exit_code == 0
    )
    assert twin.read_bytes() == seq_graph_file.read_bytes()
    # a name spark-dsg would write elsewhere (no suffix: `<name>.sparkdsg`) or cannot write
    for bad in ("graph", "graph.txt"):
        out = seq_graph_file.with_name(bad)
        refused = CliRunner().invoke(app, ["dsg", str(dynamic_sequence), "--out", str(out)])
        assert refused.exit_code == 2 and ".json, .sparkdsg, .bson" in refused.output
        assert "Traceback" not in refused.output
    assert sorted(p.name for p in seq_graph_file.parent.iterdir()) == ["graph.json", "twin.json"]


def test_saved_graph_answers_like_the_scene(dynamic_sequence, seq_graph_file):
    q = SceneGraphQueries(load_graph(seq_graph_file))
    reader = open_sequence(dynamic_sequence)
    t_ns, T = reader.groundtruth("groundtruth_body")
    mid = int(t_ns[len(t_ns) // 2])
    np.testing.assert_allclose(
        q.agent_pose("robot", mid)[:3, 3], T[len(t_ns) // 2, :3, 3], atol=0.02
    )
    # people are where their motion (a pure function of time) puts them, in the room around it
    for person in reader.scene.people:
        T_true = motion_for(person).root_pose(mid / 1e9)
        np.testing.assert_allclose(q.agent_pose(person.name, mid), T_true, atol=1e-9)
        room = q.agent_room(person.name, mid)
        assert room is not None and room.polygon.covers(shapely.Point(T_true[:2, 3]))
    with pytest.raises(QueryError, match=r"outside the recorded run of 'robot'"):
        q.agent_pose("robot", int(t_ns[-1]) + 10**9)
    with pytest.raises(QueryError, match=r"unknown agent 'ghost'; agents: robot"):
        q.agent_pose("ghost", mid)
    result = CliRunner().invoke(
        app, ["dsg-query", str(seq_graph_file), "--where", "robot", "--t-ns", str(10**15)]
    )
    assert result.exit_code == 2 and "never extrapolated" in result.output


def test_sequence_without_floor_plan_is_refused(dynamic_sequence, tmp_path):
    copy = tmp_path / "old"
    shutil.copytree(dynamic_sequence, copy)
    (copy / "scene.json").unlink()
    with pytest.raises(SequenceError, match=r"not a valid sequence: scene.json: cannot be parsed"):
        sequence_graph(copy)


@pytest.fixture(scope="module")
def apartment():
    layout = generate_apartment(
        ApartmentConfig(min_rooms=5, max_rooms=5, texture_size=16), np.random.default_rng(3)
    )
    return layout.to_scene(3, (make_robot(),))


def test_queries_on_a_visitor_who_walks_into_the_kitchen(apartment, tmp_path):
    rooms = {r.type: r for r in apartment.rooms}
    kitchen, living = rooms["kitchen"], rooms["living_room"]
    centre = {r.room_id: np.mean(r.polygon, axis=0) for r in apartment.rooms}
    t_ns = np.arange(40, dtype=np.int64) * 100_000_000
    T = np.tile(np.eye(4), (40, 1, 1))
    T[:20, :2, 3] = centre[living.room_id]
    T[20:, :2, 3] = centre[kitchen.room_id]
    T[:, 2, 3] = 1.0
    graph = build_scene_graph(apartment, [AgentTrack("visitor", "person", t_ns, T)])
    graph.save(str(tmp_path / "g.json"), False)
    for q in (SceneGraphQueries(graph), SceneGraphQueries(load_graph(tmp_path / "g.json"))):
        assert q.agent_room("visitor", 2_500_000_000).name == kitchen.name
        assert q.agent_room("visitor", 500_000_000).name == living.name
        half = q.agent_pose("visitor", 1_950_000_000)[:2, 3]
        np.testing.assert_allclose(half, (centre[living.room_id] + centre[kitchen.room_id]) / 2)
        visits = [(v.room.name, v.t_enter_ns, v.t_exit_ns) for v in q.rooms_visited("visitor")]
        assert visits == [
            (living.name, 0, 1_900_000_000),
            (kitchen.name, 2_000_000_000, 3_900_000_000),
        ]
        assert q.room_at(centre[kitchen.room_id]).room_id == kitchen.room_id
        for cls in ("stove", "refrigerator", "lamp"):
            want = sorted(
                o.instance_id
                for o in apartment.objects
                if o.semantic_class == cls and o.room_id == kitchen.room_id
            )
            assert [o.instance_id for o in q.objects(cls, kitchen.name)] == want
        assert q.objects("stove", kitchen.name), "a kitchen has a stove"
        with pytest.raises(QueryError, match=r"unknown class 'unicorn'; classes: wall"):
            q.objects("unicorn")
        with pytest.raises(QueryError, match=r"unknown room 'attic'"):
            q.objects("bed", "attic")


def test_mesh_layer_is_closed_labelled_static_geometry(apartment, tmp_path):
    graph = build_scene_graph(apartment, [], mesh=True)
    graph.save(str(tmp_path / "m.json"), True)
    mesh = spark_dsg.DynamicSceneGraph.load(str(tmp_path / "m.json")).mesh
    v = mesh.get_vertices()[:3].T
    faces = np.asarray(mesh.get_faces()).T
    labels = np.array(mesh.get_labels())
    np.testing.assert_allclose(v.min(axis=0), apartment.bounds_min, atol=1e-6)
    np.testing.assert_allclose(v.max(axis=0), apartment.bounds_max, atol=1e-6)
    # closed surfaces: every undirected edge is shared by exactly two triangles
    edges = np.sort(np.concatenate([faces[:, [0, 1]], faces[:, [1, 2]], faces[:, [2, 0]]]), axis=1)
    _, counts = np.unique(edges, axis=0, return_counts=True)
    assert set(counts.tolist()) == {2}
    floor = v[labels == CLASS_ID["floor"]]
    assert len(floor) == 8 * len(apartment.rooms)
    np.testing.assert_allclose(np.unique(np.round(floor[:, 2], 6)), [-0.05, 0.0], atol=1e-6)
    assert set(labels.tolist()) == {
        CLASS_ID[o.semantic_class] for o in apartment.objects if not o.dynamic
    }
