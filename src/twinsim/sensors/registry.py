"""The sensor kinds by name (a `SensorSpec.type`); `twinsim.sensors.builtin` registers them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from twinsim.plugins import Registry, keyed_config

if TYPE_CHECKING:
    from twinsim.sensors.base import SensorKind

SENSORS: Registry[SensorKind] = Registry(
    "sensor kind", "sensor type", "twinsim.sensors.builtin", "twinsim.sensors"
)

#: the annotation of one `sensors:` entry: its `kind` picks the kind's config model
SENSOR_CONFIG = keyed_config(SENSORS, "kind", None)
