"""Questions answered from a scene graph: where an agent was, which room holds a point or an agent,
which objects of a class a room holds, and which rooms a trajectory visited and when.

Everything is read from the spark-dsg graph itself (a built one or `DynamicSceneGraph.load`'s),
so a saved graph answers the same as the one just built. Poses between two recorded samples are
interpolated (position linearly, orientation by slerp); a time outside the recorded samples is
an error, never an extrapolation.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import shapely
import spark_dsg as dsg
from scipy.spatial.transform import Rotation, Slerp

from twinsim.dsg import layers
from twinsim.dsg.errors import DsgError, QueryError
from twinsim.scene.vocabulary import SEMANTIC_CLASSES


@dataclass(frozen=True)
class Room:
    room_id: int
    name: str
    type: str
    polygon: shapely.Polygon


@dataclass(frozen=True)
class ObjectInfo:
    instance_id: int
    name: str
    semantic_class: str
    room_id: int | None
    position: np.ndarray


@dataclass(frozen=True)
class Visit:
    """An interval [t_enter_ns, t_exit_ns] of recorded samples spent inside one room."""

    room: Room
    t_enter_ns: int
    t_exit_ns: int


@dataclass(frozen=True)
class _Track:
    t_ns: np.ndarray
    position: np.ndarray
    rotation: Rotation


def load_graph(path: str | Path) -> dsg.DynamicSceneGraph:
    """Load a graph file written by `twinsim dsg`, with a clear error for anything else."""
    path = Path(path)
    if not path.is_file():
        raise DsgError(f"{path}: no such scene graph file")
    try:
        return dsg.DynamicSceneGraph.load(str(path))
    except Exception as exc:  # spark-dsg raises plain runtime errors for malformed files
        raise DsgError(f"{path}: cannot be read as a spark-dsg scene graph ({exc})") from None


class SceneGraphQueries:
    """Query interface over one twinsim scene graph."""

    def __init__(self, graph: dsg.DynamicSceneGraph) -> None:
        self.graph = graph
        meta = dict(graph.metadata.get())
        if "agents" not in meta:
            raise DsgError("graph metadata has no 'agents' table: not a twinsim scene graph")
        self.rooms: dict[int, Room] = {}
        for node in graph.get_layer(layers.ROOMS).nodes:
            m = node.attributes.metadata.get()
            poly = shapely.Polygon(m["polygon"], m.get("holes"))
            self.rooms[m["room_id"]] = Room(m["room_id"], node.attributes.name, m["type"], poly)
        self._agents = {a["name"]: a["partition"] for a in meta["agents"]}
        self._tracks: dict[str, _Track] = {}

    @property
    def agents(self) -> list[str]:
        return list(self._agents)

    def _track(self, agent: str) -> _Track:
        if agent not in self._agents:
            raise QueryError(f"unknown agent {agent!r}; agents: {', '.join(self._agents)}")
        if agent not in self._tracks:
            nodes = sorted(
                (
                    n.attributes
                    for n in self.graph.get_layer(layers.AGENTS, self._agents[agent]).nodes
                ),
                key=lambda a: a.last_update_time_ns,
            )
            q = np.array(
                [
                    [a.world_R_body.x, a.world_R_body.y, a.world_R_body.z, a.world_R_body.w]
                    for a in nodes
                ]
            )
            self._tracks[agent] = _Track(
                t_ns=np.array([a.last_update_time_ns for a in nodes], dtype=np.int64),
                position=np.array([a.position for a in nodes]),
                rotation=Rotation.from_quat(q),
            )
        return self._tracks[agent]

    def trajectory(self, agent: str) -> tuple[np.ndarray, np.ndarray]:
        """Recorded samples of an agent: t_ns (N,) int64 and world positions (N, 3)."""
        track = self._track(agent)
        return track.t_ns.copy(), track.position.copy()

    def time_range(self, agent: str) -> tuple[int, int]:
        """First and last recorded t_ns of an agent."""
        track = self._track(agent)
        return int(track.t_ns[0]), int(track.t_ns[-1])

    def agent_pose(self, agent: str, t_ns: int) -> np.ndarray:
        """T_world_body (4, 4) of `agent` at t_ns, interpolated between recorded samples."""
        track = self._track(agent)
        t0, t1 = int(track.t_ns[0]), int(track.t_ns[-1])
        if not t0 <= t_ns <= t1:
            raise QueryError(
                f"t_ns={t_ns} is outside the recorded run of {agent!r} [{t0}, {t1}] ns; "
                "poses are never extrapolated"
            )
        T = np.eye(4)
        if len(track.t_ns) == 1:
            T[:3, :3], T[:3, 3] = track.rotation[0].as_matrix(), track.position[0]
            return T
        T[:3, :3] = Slerp(track.t_ns, track.rotation)([t_ns]).as_matrix()[0]
        T[:3, 3] = [np.interp(t_ns, track.t_ns, track.position[:, i]) for i in range(3)]
        return T

    def room_at(self, xy) -> Room | None:
        """The room whose polygon (floor plan or free-space region) holds world point xy (z
        ignored), or None."""
        point = shapely.Point(float(xy[0]), float(xy[1]))
        for room in self.rooms.values():
            if room.polygon.covers(point):
                return room
        return None

    def agent_room(self, agent: str, t_ns: int) -> Room | None:
        """The room `agent` was in at t_ns."""
        return self.room_at(self.agent_pose(agent, t_ns)[:2, 3])

    def room(self, key: str | int) -> Room:
        """A room by id or by name (e.g. 3 or "kitchen_0")."""
        for room in self.rooms.values():
            if str(key) in (str(room.room_id), room.name):
                return room
        names = ", ".join(f"{r.room_id}:{r.name}" for r in self.rooms.values())
        raise QueryError(f"unknown room {key!r}; rooms: {names}")

    def objects(self, semantic_class: str, room: str | int | None = None) -> list[ObjectInfo]:
        """Objects of `semantic_class` (a vocabulary class), in `room` when given."""
        if semantic_class not in SEMANTIC_CLASSES[1:]:
            raise QueryError(
                f"unknown class {semantic_class!r}; classes: {', '.join(SEMANTIC_CLASSES[1:])}"
            )
        want = None if room is None else self.room(room).room_id
        found = []
        for node in self.graph.get_layer(layers.OBJECTS).nodes:
            meta = node.attributes.metadata.get()
            if meta["class"] != semantic_class or (want is not None and meta["room_id"] != want):
                continue
            found.append(
                ObjectInfo(
                    meta["instance_id"],
                    node.attributes.name,
                    meta["class"],
                    meta["room_id"],
                    np.array(node.attributes.position),
                )
            )
        return sorted(found, key=lambda o: o.instance_id)

    def rooms_visited(self, agent: str) -> list[Visit]:
        """Consecutive stays of `agent` in rooms, with entry and exit times of its samples."""
        track = self._track(agent)
        visits: list[Visit] = []
        current: Room | None = None
        enter = last = 0
        for t_ns, p in zip(track.t_ns, track.position, strict=True):
            room = self.room_at(p)
            if room is None:  # on a wall line between two rooms: still in the previous one
                continue
            if current is None or room.room_id != current.room_id:
                if current is not None:
                    visits.append(Visit(current, enter, last))
                current, enter = room, int(t_ns)
            last = int(t_ns)
        if current is not None:
            visits.append(Visit(current, enter, last))
        return visits
