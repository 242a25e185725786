"""The shorthands a config may be written in, folded into the one canonical form.

Canonically a config names its robots in `robots:` (name → the kind's fields and its own
`sensors:` mapping, each sensor with its `kind`). Two shorthands stay accepted:

- the one-robot form: `robot:` with a top-level `sensors:` is the robot named `robot`; with
  a `robots:` mapping, they are the template every robot of the same kind starts from;
- `robot.sensors:`, the one robot's sensors inside it.

A robot given no sensors gets its kind's default sensors. Format 1's sensor sections
(`cameras:` …) are folded into `sensors:` before these, by `twinsim.compat.config`.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel

from twinsim.registries import DEFAULT_ROBOT, DEFAULT_ROBOT_KIND, ROBOTS

__all__ = ["DEFAULT_ROBOT", "fold_robots", "merge", "shorthand_paths"]
#: robot names: plain identifiers (a stream of robot `r` in a sequence of several is `r.<name>`)
ROBOT_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")


def kind_default_sensors(kind: Any) -> dict[str, Any]:
    """The default sensors (as settings) of a robot kind; none for an unknown kind."""
    return dict(ROBOTS.get(kind).default_sensors()) if kind in ROBOTS else {}


def robot_kind_of(robot: Any) -> Any:
    """The kind a robot entry names (a mapping or a validated model), else the default kind."""
    if isinstance(robot, BaseModel):
        return getattr(robot, "kind", DEFAULT_ROBOT_KIND)
    return robot.get("kind", DEFAULT_ROBOT_KIND) if isinstance(robot, dict) else DEFAULT_ROBOT_KIND


def entry_fields(entry: Any) -> dict[str, Any]:
    """A config entry's settings as a mapping (an entry may already be a validated model)."""
    if isinstance(entry, BaseModel):
        return entry.model_dump()
    return dict(entry) if isinstance(entry, dict) else {}


def merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """Recursive overlay of `over` on `base` (mappings merge, everything else replaces)."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out


def fold_robots(data: dict[str, Any]) -> dict[str, Any]:
    """Any accepted form of a config's data (format 1's sections already folded by
    `twinsim.compat.config.upgrade_config`) in the canonical one: `robots` alone, each robot
    with its kind's fields and its `sensors` (see the module docstring)."""
    robot = data.get("robot")
    if isinstance(robot, dict) and "sensors" in robot:  # the robot's sensors inside it
        if "sensors" in data:
            raise ValueError(
                "robot.sensors: name the robot's sensors here or in sensors:, not both"
            )
        rest = {k: v for k, v in robot.items() if k != "sensors"}
        data = data | {"robot": rest, "sensors": robot["sensors"]}
    if "sensors" not in data and "robots" not in data:  # the one robot's default sensors
        data = data | {"sensors": kind_default_sensors(robot_kind_of(data.get("robot")))}
    template = entry_fields(data.get("robot")) if "robot" in data else None
    template_sensors = data.get("sensors")
    out = {k: v for k, v in data.items() if k not in ("robot", "sensors")}
    robots = data.get("robots")
    if robots is None:
        entry = dict(template or {})
        entry["sensors"] = template_sensors
        return out | {"robots": {DEFAULT_ROBOT: entry}}
    if not isinstance(robots, dict) or not robots:
        raise ValueError("robots must map one or more robot names to their settings")
    folded = {}
    for name, entry in robots.items():
        if not isinstance(name, str) or not ROBOT_NAME.fullmatch(name):
            raise ValueError(
                f"robots.{name}: a robot name is a letter then letters, digits, '_' or '-'"
            )
        folded[name] = _robot_entry(entry_fields(entry), template, template_sensors)
    return out | {"robots": folded}


def _robot_entry(
    entry: dict[str, Any], template: dict[str, Any] | None, template_sensors: Any
) -> dict[str, Any]:
    """One `robots:` entry started from the one-robot template where it is of the same kind."""
    default_kind = robot_kind_of(template) if template is not None else DEFAULT_ROBOT_KIND
    kind = entry.get("kind", default_kind)
    same = template is not None and robot_kind_of(template) == kind
    base = {k: v for k, v in (template or {}).items() if k != "sensors"} if same else {}
    sensors = entry.get("sensors")
    if same and isinstance(template_sensors, dict):
        start = {n: entry_fields(s) for n, s in template_sensors.items()}
    else:
        start = kind_default_sensors(kind) if "sensors" not in entry else {}
    if isinstance(sensors, dict):
        sensors = merge(start, {n: entry_fields(s) for n, s in sensors.items()})
    elif sensors is None:
        sensors = start
    return merge(base, {k: v for k, v in entry.items() if k != "sensors"}) | {
        "kind": kind,
        "sensors": sensors,
    }


def shorthand_paths(data: dict[str, Any]) -> dict[str, str]:
    """Canonical error paths → the ones the user wrote (`robots.robot.sensors.cam0` →
    `sensors.cam0`), for configs written in the one-robot form (format 1's sections:
    `twinsim.compat.config.section_paths`)."""
    if "robots" in data:
        return {}
    paths = {f"robots.{DEFAULT_ROBOT}.sensors": "sensors"}
    paths[f"robots.{DEFAULT_ROBOT}"] = "robot"
    return paths
