"""The ground-truth 3D dynamic scene graph of a world and its agents, as a spark-dsg graph.

Layers follow Kimera (see `twinsim.dsg.layers`): building → rooms (type, polygon, centroid) →
places (free space, traversable edges with their clearance) and structures (walls, floors,
ceilings, door frames, door openings) → objects (class, pose, oriented box) and agents (robot
and people, one node per time-stamped pose). Edges: building–room, room–place/object/structure,
room–room through doors, place–place, object and agent pose to their nearest place, and each
agent pose to the next one. Rooms are the floor plan's, or the free space's in a world without
rooms (`twinsim.dsg.rooms`).
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import shapely
import spark_dsg as dsg
from scipy.spatial import cKDTree
from scipy.spatial.transform import Rotation

from twinsim.dsg import layers
from twinsim.dsg.errors import DsgError
from twinsim.dsg.mesh import scene_mesh, to_spark_mesh
from twinsim.dsg.places import Places, free_grid, sample_places
from twinsim.dsg.rooms import RegionLink, RoomRegion, door_links, room_layer
from twinsim.dsg.town import PLACE_SPACING_M as TOWN_PLACE_SPACING_M
from twinsim.dsg.town import ROADS, town_layout
from twinsim.dsg.tracks import AgentTrack, sequence_tracks
from twinsim.geometry import geoms_box, quat_wxyz_to_matrix
from twinsim.model.scene import ObjectSpec, SceneSpec
from twinsim.scene.vocabulary import CLASS_ID
from twinsim.sequence.reader import open_sequence

FORMAT = "twinsim-dsg"
FORMAT_VERSION = 1
WALL_SNAP_M = 0.1
MIN_CLEARANCE_M = 0.25  # of places and place edges, and of the free-space rooms
PLACE_SPACING_M = 0.5  # indoors and in a hall


def _vec(v) -> np.ndarray:
    return np.asarray(v, dtype=float).reshape(3, 1)


def _quat(R: np.ndarray) -> dsg.Quaternion:
    x, y, z, w = Rotation.from_matrix(R).as_quat()
    return dsg.Quaternion(float(w), float(x), float(y), float(z))


def object_box(obj: ObjectSpec) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Oriented box of an object: world centre (3,), half extents (3,) in its frame, R_world_obj."""
    R_obj = quat_wxyz_to_matrix(obj.quat)
    centre, half = geoms_box(obj.geoms)
    return np.asarray(obj.pos) + R_obj @ centre, half, R_obj


def _box(centre, half, R) -> dsg.BoundingBox:
    dims = _vec(2 * np.asarray(half, dtype=float))
    return dsg.BoundingBox(dsg.BoundingBoxType.OBB, dims, _vec(centre), np.asarray(R, float))


def _edge(weight: float, **metadata) -> dsg.EdgeAttributes:
    info = dsg.EdgeAttributes()
    info.weight, info.weighted = float(weight), True
    if metadata:
        info.metadata.set(metadata)
    return info


def _semantic(attrs, name: str, label: int, centre, half, R) -> None:
    attrs.name = name
    attrs.semantic_label = label
    attrs.position = np.asarray(centre, dtype=float)
    attrs.bounding_box = _box(centre, half, R)


def _add_rooms(
    graph: dsg.DynamicSceneGraph,
    scene: SceneSpec,
    layout: _Layout,
) -> dict[int, shapely.Polygon]:
    polys = {}
    building = dsg.RoomNodeAttributes()
    lo, hi = np.asarray(scene.bounds_min), np.asarray(scene.bounds_max)
    _semantic(building, layout.building, 0, (lo + hi) / 2, (hi - lo) / 2, np.eye(3))
    graph.add_node(layers.BUILDINGS, layers.building_id(), building)
    for room in layout.rooms:
        poly = room.polygon
        polys[room.room_id] = poly
        x0, y0, x1, y1 = poly.bounds
        attrs = dsg.RoomNodeAttributes()
        centroid = (poly.centroid.x, poly.centroid.y, scene.wall_height / 2)
        half = ((x1 - x0) / 2, (y1 - y0) / 2, scene.wall_height / 2)
        _semantic(attrs, room.name, layers.ROOM_TYPES.index(room.type), centroid, half, np.eye(3))
        meta = {
            "room_id": room.room_id,
            "type": room.type,
            "polygon": [list(p) for p in room.outline],
            "area_m2": poly.area,
        }
        if room.holes:
            meta["holes"] = [[list(p) for p in hole] for hole in room.holes]
        attrs.metadata.set(meta)
        graph.add_node(layers.ROOMS, layers.room_id(room.room_id), attrs)
        graph.insert_edge(layers.building_id(), layers.room_id(room.room_id))
    links = layout.links if layout.links is not None else door_links(scene, polys)
    for link in links:
        edge = _edge(link.weight, **link.metadata)
        graph.insert_edge(layers.room_id(link.a), layers.room_id(link.b), edge)
    return polys


def _add_places(graph: dsg.DynamicSceneGraph, places: Places) -> None:
    for i, (xy, clear, room) in enumerate(
        zip(places.xy, places.clearance_m, places.room_id, strict=True)
    ):
        attrs = dsg.PlaceNodeAttributes()
        attrs.position = np.array([xy[0], xy[1], 0.0])
        attrs.distance = float(clear)
        attrs.name = f"place_{i}"
        meta = {"room_id": int(room)}
        if places.network:
            meta["network"] = places.network[i]
        attrs.metadata.set(meta)
        graph.add_node(layers.PLACES, layers.place_id(i), attrs)
        if room >= 0:
            graph.insert_edge(layers.room_id(int(room)), layers.place_id(i))
    for (i, j), clear in zip(places.edges, places.edge_clearance_m, strict=True):
        length = float(np.linalg.norm(places.xy[i] - places.xy[j]))
        graph.insert_edge(
            layers.place_id(int(i)), layers.place_id(int(j)), _edge(length, clearance=clear)
        )


class _Regions:
    """The rooms' polygons with a spatial index, for the room of a point and the rooms whose
    outline passes near it."""

    def __init__(self, polys: dict[int, shapely.Polygon]) -> None:
        self.ids = list(polys)
        self.polys = [polys[i] for i in self.ids]
        self._tree = shapely.STRtree(self.polys)

    def room_of(self, xy) -> int | None:
        """The first room (in the layer's order) covering the point, None if none."""
        hits = self._tree.query(shapely.Point(float(xy[0]), float(xy[1])), "covered_by")
        return self.ids[int(min(hits))] if len(hits) else None

    def outlines_near(self, xy, distance_m: float) -> list[int]:
        """Rooms whose outline lies within `distance_m` of the point."""
        at = shapely.Point(float(xy[0]), float(xy[1]))
        near = sorted(int(k) for k in self._tree.query(at, "dwithin", distance_m))
        return [self.ids[k] for k in near if self.polys[k].exterior.distance(at) <= distance_m]


def _add_objects(
    graph: dsg.DynamicSceneGraph,
    scene: SceneSpec,
    polys: dict[int, shapely.Polygon],
    places: cKDTree,
) -> None:
    """Static objects: structures (walls, floors, roads, ...) below rooms, furniture (or a
    town's buildings, trees, poles, ...) with places."""
    regions = _Regions(polys)
    for obj in scene.objects:
        if obj.dynamic:
            continue
        centre, half, R = object_box(obj)
        room = obj.room_id if obj.room_id is not None else regions.room_of(centre)
        meta = {"instance_id": obj.instance_id, "class": obj.semantic_class, "room_id": room}
        if obj.semantic_class in layers.STRUCTURE_CLASSES:
            attrs = dsg.ObjectNodeAttributes()
            _semantic(attrs, obj.name, CLASS_ID[obj.semantic_class], centre, half, R)
            attrs.metadata.set(meta)
            node = layers.structure_id(obj.instance_id)
            graph.add_node(layers.STRUCTURES, node, attrs, layers.STRUCTURE_PARTITION)
            # a wall's centre line lies on the outline of every room it bounds
            touching = set(regions.outlines_near(centre[:2], WALL_SNAP_M))
            touching |= {room} if room is not None else set()
            for rid in sorted(touching, key=regions.ids.index):
                graph.insert_edge(layers.room_id(rid), node)
            continue
        attrs = dsg.ObjectNodeAttributes()
        _semantic(attrs, obj.name, CLASS_ID[obj.semantic_class], centre, half, R)
        attrs.world_R_object = _quat(R)
        attrs.metadata.set(meta)
        node = layers.object_id(obj.instance_id)
        graph.add_node(layers.OBJECTS, node, attrs)
        if room is not None:
            graph.insert_edge(layers.room_id(room), node)
        _, near = places.query(centre[:2])
        graph.insert_edge(node, layers.place_id(int(near)))


def _add_doors(graph: dsg.DynamicSceneGraph, scene: SceneSpec) -> None:
    """Door openings as structures (class `door`), contained by both rooms they join."""
    for door in scene.doors:
        attrs = dsg.ObjectNodeAttributes()
        along = np.array([door.width / 2, 0.05, door.height / 2])
        if door.axis == "y":
            along = along[[1, 0, 2]]
        centre = np.array([*door.center, door.height / 2])
        _semantic(attrs, f"door_{door.door_id}", 0, centre, along, np.eye(3))
        attrs.metadata.set(
            {"door_id": door.door_id, "class": layers.DOOR_LABEL, "rooms": door.rooms}
        )
        graph.add_node(
            layers.STRUCTURES, layers.door_id(door.door_id), attrs, layers.STRUCTURE_PARTITION
        )
        for rid in door.rooms:
            graph.insert_edge(layers.room_id(rid), layers.door_id(door.door_id))


def _add_agents(
    graph: dsg.DynamicSceneGraph, tracks: list[AgentTrack], places: cKDTree
) -> list[dict]:
    table = []
    for k, track in enumerate(tracks):
        partition = layers.ROBOT_PARTITION + k
        table.append({"name": track.name, "kind": track.kind, "partition": partition})
        _, near = places.query(track.T_world_body[:, :2, 3])
        for i, (t_ns, T) in enumerate(zip(track.t_ns, track.T_world_body, strict=True)):
            attrs = dsg.AgentNodeAttributes()
            attrs.position = T[:3, 3].copy()
            attrs.world_R_body = _quat(T[:3, :3])
            attrs.timestamp = datetime.timedelta(microseconds=int(t_ns) // 1000)
            attrs.last_update_time_ns = int(t_ns)
            node = layers.agent_pose_id(partition, i)
            attrs.external_key = node.value  # spark-dsg leaves it uninitialised otherwise
            graph.add_node(layers.AGENTS, node, attrs, partition)
            graph.insert_edge(node, layers.place_id(int(near[i])))
            if i:
                graph.insert_edge(layers.agent_pose_id(partition, i - 1), node)
    return table


@dataclass(frozen=True)
class _Layout:
    """A world's room layer, where it comes from, its links (None: from the doors), its places
    and the top node's name."""

    source: str
    rooms: tuple[RoomRegion, ...]
    links: tuple[RegionLink, ...] | None
    places: Places
    building: str


def _layout(scene: SceneSpec, spacing_m: float, min_clearance_m: float) -> _Layout:
    """A town's regions and road network, else the floor plan's or free space's rooms and the
    places of the clearance grid."""
    if scene.roads is not None:
        town = town_layout(scene.roads, spacing_m)
        return _Layout(ROADS, town.rooms, town.links, town.places, "town")
    rooms = room_layer(scene, free_grid(scene), min_clearance_m)
    doors = np.array([d.center for d in scene.doors], dtype=float).reshape(-1, 2)
    places = sample_places(rooms.grid, doors, spacing_m, min_clearance_m)
    return _Layout(rooms.source, rooms.rooms, None, places, "building")


def build_scene_graph(
    scene: SceneSpec,
    tracks: list[AgentTrack],
    *,
    place_spacing_m: float | None = None,
    min_clearance_m: float = MIN_CLEARANCE_M,
    mesh: bool = False,
) -> dsg.DynamicSceneGraph:
    """The layered graph of a world (rooms, places, structures, objects) and agents' tracks;
    with `mesh`, also the static geometry as a class-labelled triangle mesh. Rooms are the
    floor plan's, a town's blocks, junctions and road stretches, or in a world without rooms
    the connected regions of its free space. Places are `place_spacing_m` apart (default 0.5 m,
    in a town 5 m along its lanes and sidewalks)."""
    if place_spacing_m is None:
        place_spacing_m = TOWN_PLACE_SPACING_M if scene.roads is not None else PLACE_SPACING_M
    if not 0.1 <= place_spacing_m <= 10.0:
        raise DsgError(f"place_spacing_m={place_spacing_m} must lie in [0.1, 10] m")
    if not 0.0 <= min_clearance_m <= 5.0:
        raise DsgError(f"min_clearance_m={min_clearance_m} must lie in [0, 5] m")
    graph = layers.new_graph()
    if mesh:
        graph.mesh = to_spark_mesh(*scene_mesh(scene))
    layout = _layout(scene, place_spacing_m, min_clearance_m)
    polys = _add_rooms(graph, scene, layout)
    places = layout.places
    if not len(places.xy):
        raise DsgError(f"no free space with clearance >= {min_clearance_m} m for places")
    _add_places(graph, places)
    tree = cKDTree(places.xy)
    _add_objects(graph, scene, polys, tree)
    _add_doors(graph, scene)
    agents = _add_agents(graph, tracks, tree)
    times = [int(t.t_ns[0]) for t in tracks] + [int(t.t_ns[-1]) for t in tracks]
    graph.metadata.set(
        {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "frames": "world: z up, metres; agent poses are T_world_body (people: pelvis)",
            "scene_seed": scene.seed,
            "rooms_from": layout.source,
            "agents": agents,
            "t_start_ns": min(times) if times else None,
            "t_end_ns": max(times) if times else None,
            "place_spacing_m": place_spacing_m,
            "min_clearance_m": min_clearance_m,
        }
    )
    return graph


def sequence_graph(
    seq: str | Path, *, agent_rate_hz: int = 10, **options: float | bool
) -> dsg.DynamicSceneGraph:
    """The ground-truth scene graph of a recorded sequence (its world from its scene.json)."""
    reader = open_sequence(seq)  # refuses a sequence without its scene.json
    graph = build_scene_graph(reader.scene, sequence_tracks(reader, agent_rate_hz), **options)
    meta = dict(graph.metadata.get())
    graph.metadata.set(meta | {"sequence": str(reader.path)})
    return graph
