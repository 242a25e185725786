"""Format-1 configs read as the current format (removed in twinsim 0.3.0,
`twinsim.compat.REMOVAL_VERSION`): the sensor sections `cameras:`, `imus:`, `lidars:`,
`event_cameras:` (one per sensor kind, entries without `kind`) folded into the one-robot form's
`sensors:` mapping, each entry with its kind; `sensors.<name>` replaces them."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from twinsim.config_shorthands import entry_fields, kind_default_sensors, robot_kind_of
from twinsim.registries import DEFAULT_ROBOT

__all__ = ["SENSOR_SECTIONS", "section_paths", "upgrade_config"]
#: the config sections of format 1, one per sensor kind, folded into `sensors`
SENSOR_SECTIONS = {
    "cameras": "camera",
    "imus": "imu",
    "lidars": "lidar",
    "event_cameras": "event_camera",
}


def upgrade_config(data: dict[str, Any]) -> dict[str, Any]:
    """A config mapping with format 1's sections folded into the one-robot form's `sensors:`
    mapping keyed by name, each entry with its kind (one without them returned as it is).

    Without a `sensors` mapping (a format-1 config), each section replaces the robot's default
    sensors of its kind, in the kind order of format 1; with one, a section's entries update
    the sensor of that name (same kind) or add one, and an empty section removes its kind.
    """
    sections = {key: data[key] for key in SENSOR_SECTIONS if key in data}
    if not sections:
        return data
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
        defaults = kind_default_sensors(robot_kind_of(data.get("robot")))
        sensors: dict[str, Any] = {}
        for key, sensor_kind in SENSOR_SECTIONS.items():
            if key in sections:
                for name, fields in sections[key].items():
                    sensors[name] = {**entry_fields(fields), "kind": sensor_kind}
            else:
                sensors |= {n: f for n, f in defaults.items() if f["kind"] == sensor_kind}
        return out | {"sensors": sensors}
    sensors = dict(data["sensors"] or {})
    for key, entries in sections.items():
        if not entries:  # an empty section removes every sensor of its kind
            kind = SENSOR_SECTIONS[key]
            sensors = {n: f for n, f in sensors.items() if entry_fields(f).get("kind") != kind}
        for name, fields in entries.items():
            current = entry_fields(sensors.get(name))
            if current.get("kind", SENSOR_SECTIONS[key]) != SENSOR_SECTIONS[key]:
                raise ValueError(
                    f"{key}.{name}: sensor {name!r} is a {current['kind']}, not a "
                    f"{SENSOR_SECTIONS[key]}"
                )
            sensors[name] = {**current, **entry_fields(fields), "kind": SENSOR_SECTIONS[key]}
    return out | {"sensors": sensors}


def section_paths(data: dict[str, Any]) -> dict[str, str]:
    """Canonical error paths → the format-1 ones the user wrote (`robots.robot.sensors.cam0`
    → `cameras.cam0`), for configs written in the one-robot form."""
    if "robots" in data:
        return {}
    return {
        f"robots.{DEFAULT_ROBOT}.sensors.{n}": f"{key}.{n}"
        for key in SENSOR_SECTIONS
        if isinstance(data.get(key), dict)
        for n in data[key]
    }
