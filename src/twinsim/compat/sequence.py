"""Format-1 sequences read as the current format, in memory (removed in twinsim 0.3.0,
`twinsim.compat.REMOVAL_VERSION`): the metadata's one robot named `robot` owning every stream,
event cameras of type `event_camera` (format 1 said `events`), and the scene's one `robot` as
the `robots` list."""

from __future__ import annotations

from typing import Any

from twinsim.registries import DEFAULT_ROBOT, DEFAULT_ROBOT_KIND

#: the stream type format 1 gave event cameras, and the kind it is now
FORMAT_1_TYPES = {"events": "event_camera"}


def upgrade_metadata(data: dict) -> dict:
    """Metadata of format 1 in the current form (any other returned as it is): its one robot
    named `robot` owns every stream, and event cameras are of type `event_camera`.
    `format_version` keeps saying what the files are."""
    if data.get("format_version") != 1:
        return data
    config = data.get("config")
    robot = config.get("robot") if isinstance(config, dict) else None
    kind = robot.get("kind", DEFAULT_ROBOT_KIND) if isinstance(robot, dict) else DEFAULT_ROBOT_KIND
    streams = {}
    for name, info in data["streams"].items():
        if isinstance(info, dict):
            info = info | {"robot": DEFAULT_ROBOT}
            if info.get("type") in FORMAT_1_TYPES:
                info["type"] = FORMAT_1_TYPES[info["type"]]
        streams[name] = info
    return data | {"robots": [{"name": DEFAULT_ROBOT, "kind": kind}], "streams": streams}


def upgrade_scene(data: Any) -> Any:
    """A format-1 `scene.json` mapping (one `robot`) as format 2: that robot in `robots` (its
    name defaults to `robot`); any other returned as it is."""
    if not isinstance(data, dict) or data.get("format_version") != 1:
        return data
    if "robot" in data:
        data = {k: v for k, v in data.items() if k != "robot"} | {"robots": [data["robot"]]}
    return data | {"format_version": 2}
