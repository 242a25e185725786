"""Layer keys and node symbols of twinsim's scene graphs (Kimera's layers, spark-dsg's ids).

Layer 2 holds objects (partition 0) and agents (one partition per agent, 1 = the robot);
layer 3 holds places (partition 0) and structures: walls, floors, ceilings, door frames and
door openings, or a town's roads, sidewalks, markings, crosswalks, kerbs and terrain
(partition 1); layer 4 rooms (a town's blocks, junctions and road stretches); layer 5 the
building (the town).
"""

from __future__ import annotations

import spark_dsg as dsg

OBJECTS = 2
AGENTS = 2
PLACES = 3
STRUCTURES = 3
STRUCTURE_PARTITION = 1
ROOMS = 4
BUILDINGS = 5
ROBOT_PARTITION = 1

#: indoor structures, then a town's surfaces
STRUCTURE_CLASSES = (
    "wall",
    "floor",
    "ceiling",
    "door_frame",
    "road",
    "sidewalk",
    "road_marking",
    "crosswalk",
    "kerb",
    "terrain",
)
#: floor-plan room types, `open_area` (a connected region of a roomless world's free space),
#: then a town's regions (`twinsim.dsg.town`)
ROOM_TYPES = (
    "living_room",
    "kitchen",
    "bedroom",
    "bathroom",
    "corridor",
    "office",
    "open_area",
    "block",
    "junction",
    "road",
)
DOOR_LABEL = "door"


def new_graph() -> dsg.DynamicSceneGraph:
    """An empty graph with twinsim's named layers."""
    key = dsg.LayerKey
    names = {
        "OBJECTS": key(OBJECTS),
        "AGENTS": key(AGENTS, ROBOT_PARTITION),
        "PLACES": key(PLACES),
        "STRUCTURES": key(STRUCTURES, STRUCTURE_PARTITION),
        "ROOMS": key(ROOMS),
        "BUILDINGS": key(BUILDINGS),
    }
    return dsg.DynamicSceneGraph([key(i) for i in (OBJECTS, PLACES, ROOMS, BUILDINGS)], names)


def building_id() -> dsg.NodeSymbol:
    return dsg.NodeSymbol("B", 0)


def room_id(room: int) -> dsg.NodeSymbol:
    return dsg.NodeSymbol("R", room)


def place_id(index: int) -> dsg.NodeSymbol:
    return dsg.NodeSymbol("p", index)


def object_id(instance: int) -> dsg.NodeSymbol:
    return dsg.NodeSymbol("O", instance)


def structure_id(instance: int) -> dsg.NodeSymbol:
    return dsg.NodeSymbol("S", instance)


def door_id(door: int) -> dsg.NodeSymbol:
    return dsg.NodeSymbol("D", door)


def agent_pose_id(partition: int, index: int) -> dsg.NodeSymbol:
    """Pose `index` of the agent in `partition` (partition in the high bits keeps ids unique)."""
    return dsg.NodeSymbol("a", (partition << 32) | index)
