"""The sensor kinds by name (a `SensorSpec.type`); `twinsim.sensors.builtin` registers them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from twinsim.plugins import Registry

if TYPE_CHECKING:
    from twinsim.sensors.base import SensorKind

SENSORS: Registry[SensorKind] = Registry("sensor kind", "sensor type", "twinsim.sensors.builtin")
