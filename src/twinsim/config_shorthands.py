"""The shorthands a config may be written in, folded into the one canonical form.

Canonically a config names its robots in `robots:` (name → the kind's fields and its own
`sensors:` mapping, each sensor with its `kind`). Two shorthands stay accepted:

- the one-robot form: `robot:` with a top-level `sensors:` is the robot named `robot`; with
  a `robots:` mapping, they are the template every robot of the same kind starts from;
- format 1's sensor sections (`cameras:`, `imus:`, `lidars:`, `event_cameras:`), folded into
  the top-level `sensors:` of the one-robot form.

A robot given no sensors gets its kind's default sensors.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel

from twinsim.registries import DEFAULT_ROBOT, DEFAULT_ROBOT_KIND, ROBOTS

__all__ = ["DEFAULT_ROBOT", "SENSOR_SECTIONS", "fold_robots", "merge", "shorthand_paths"]
#: robot names: plain identifiers (a stream of robot `r` in a sequence of several is `r.<name>`)
ROBOT_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
#: the config sections of format 1, one per sensor kind, folded into `sensors`
SENSOR_SECTIONS = {
    "cameras": "camera",
    "imus": "imu",
    "lidars": "lidar",
    "event_cameras": "event_camera",
}


def kind_default_sensors(kind: Any) -> dict[str, Any]:
    """The default sensors (as settings) of a robot kind; none for an unknown kind."""
    return dict(ROBOTS.get(kind).default_sensors()) if kind in ROBOTS else {}


def _robot_kind(robot: Any) -> Any:
    if isinstance(robot, BaseModel):
        return getattr(robot, "kind", DEFAULT_ROBOT_KIND)
    return robot.get("kind", DEFAULT_ROBOT_KIND) if isinstance(robot, dict) else DEFAULT_ROBOT_KIND


def _fields(entry: Any) -> dict[str, Any]:
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


def fold_sensor_sections(data: dict[str, Any]) -> dict[str, Any]:
    """`cameras:`, `imus:`, `lidars:`, `event_cameras:` (format 1's sections) folded into the
    one-robot form's `sensors:` mapping keyed by name, each entry with its kind.

    Without a `sensors` mapping (a format-1 config), each section replaces the robot's default
    sensors of its kind, in the kind order of format 1; with one, a section's entries update
    the sensor of that name (same kind) or add one, and an empty section removes its kind.
    """
    sections = {key: data[key] for key in SENSOR_SECTIONS if key in data}
    if not sections:
        if "sensors" in data or "robots" in data:
            return data
        return data | {"sensors": kind_default_sensors(_robot_kind(data.get("robot")))}
    out = {k: v for k, v in data.items() if k not in SENSOR_SECTIONS}
    for key, entries in sections.items():
        if not isinstance(entries, dict):
            raise ValueError(f"{key} must be a mapping of sensor names to settings")
        for name, fields in entries.items():
            if not isinstance(fields, dict | BaseModel | None):  # `cameras: {width: 64}`
                raise ValueError(
                    f"{key}.{name}: the settings of sensor {name!r}, a mapping of field to value "
                    f"(e.g. {key}.cam0.width=320), got {fields!r}"
                )
    if "sensors" not in data:
        defaults = kind_default_sensors(_robot_kind(data.get("robot")))
        sensors: dict[str, Any] = {}
        for key, sensor_kind in SENSOR_SECTIONS.items():
            if key in sections:
                for name, fields in sections[key].items():
                    sensors[name] = {**_fields(fields), "kind": sensor_kind}
            else:
                sensors |= {n: f for n, f in defaults.items() if f["kind"] == sensor_kind}
        return out | {"sensors": sensors}
    sensors = dict(data["sensors"] or {})
    for key, entries in sections.items():
        if not entries:  # an empty section removes every sensor of its kind
            kind = SENSOR_SECTIONS[key]
            sensors = {n: f for n, f in sensors.items() if _fields(f).get("kind") != kind}
        for name, fields in entries.items():
            current = _fields(sensors.get(name))
            if current.get("kind", SENSOR_SECTIONS[key]) != SENSOR_SECTIONS[key]:
                raise ValueError(
                    f"{key}.{name}: sensor {name!r} is a {current['kind']}, not a "
                    f"{SENSOR_SECTIONS[key]}"
                )
            sensors[name] = {**current, **_fields(fields), "kind": SENSOR_SECTIONS[key]}
    return out | {"sensors": sensors}


def fold_robots(data: dict[str, Any]) -> dict[str, Any]:
    """Any accepted form of a config's data in the canonical one: `robots` alone, each robot
    with its kind's fields and its `sensors` (see the module docstring)."""
    robot = data.get("robot")
    if isinstance(robot, dict) and "sensors" in robot:  # the robot's sensors inside it
        if "sensors" in data or any(key in data for key in SENSOR_SECTIONS):
            raise ValueError(
                "robot.sensors: name the robot's sensors here or in sensors:, not both"
            )
        rest = {k: v for k, v in robot.items() if k != "sensors"}
        data = data | {"robot": rest, "sensors": robot["sensors"]}
    data = fold_sensor_sections(data)
    template = _fields(data.get("robot")) if "robot" in data else None
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
        folded[name] = _robot_entry(_fields(entry), template, template_sensors)
    return out | {"robots": folded}


def _robot_entry(
    entry: dict[str, Any], template: dict[str, Any] | None, template_sensors: Any
) -> dict[str, Any]:
    """One `robots:` entry started from the one-robot template where it is of the same kind."""
    kind = entry.get("kind", _robot_kind(template) if template is not None else DEFAULT_ROBOT_KIND)
    same = template is not None and _robot_kind(template) == kind
    base = {k: v for k, v in (template or {}).items() if k != "sensors"} if same else {}
    sensors = entry.get("sensors")
    if same and isinstance(template_sensors, dict):
        start = {n: _fields(s) for n, s in template_sensors.items()}
    else:
        start = kind_default_sensors(kind) if "sensors" not in entry else {}
    if isinstance(sensors, dict):
        sensors = merge(start, {n: _fields(s) for n, s in sensors.items()})
    elif sensors is None:
        sensors = start
    return merge(base, {k: v for k, v in entry.items() if k != "sensors"}) | {
        "kind": kind,
        "sensors": sensors,
    }


def shorthand_paths(data: dict[str, Any]) -> dict[str, str]:
    """Canonical error paths → the ones the user wrote (`robots.robot.sensors.cam0` →
    `sensors.cam0` or `cameras.cam0`), for configs written in the one-robot form."""
    if "robots" in data:
        return {}
    paths = {
        f"robots.{DEFAULT_ROBOT}.sensors.{n}": f"{key}.{n}"
        for key in SENSOR_SECTIONS
        if isinstance(data.get(key), dict)
        for n in data[key]
    }
    paths[f"robots.{DEFAULT_ROBOT}.sensors"] = "sensors"
    paths[f"robots.{DEFAULT_ROBOT}"] = "robot"
    return paths
