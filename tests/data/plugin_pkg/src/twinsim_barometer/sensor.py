"""The `barometer` sensor kind: a table of pressure (Pa) at the sensor, from its height."""

from __future__ import annotations

from typing import ClassVar, Literal

import numpy as np

from twinsim.model.sensors import SensorSpec
from twinsim.sensors.base import SensorConfig, SensorKind, SensorRecorder, base_metadata
from twinsim.sensors.rig import body_mounted

SEA_LEVEL_PA = 101325.0
SCALE_HEIGHT_M = 8434.5  # isothermal atmosphere at 15 °C


def pressure_pa(height_m: np.ndarray) -> np.ndarray:
    """Static pressure at `height_m` above the floor (the floor at sea level)."""
    return SEA_LEVEL_PA * np.exp(-np.asarray(height_m) / SCALE_HEIGHT_M)


class BarometerConfig(SensorConfig):
    kind: Literal["barometer"] = "barometer"
    rate_hz: int = 20
    pos: tuple[float, float, float] = (0.0, 0.0, 0.02)


class BarometerRecorder(SensorRecorder):
    def __init__(self, sensor: SensorSpec, ctx) -> None:
        self.sensor, self.ctx = sensor, ctx
        self.period = ctx.physics_hz // sensor.rate_hz
        ctx.writer.add_table(sensor.name, ("pressure_pa",))

    def before_step(self, k, t_ns, q) -> None:
        if k % self.period == 0:
            T = self.ctx.world.T_world_body()
            height = T[2, 3] + T[2, :3] @ np.asarray(self.sensor.pos)
            self.ctx.writer.append(self.sensor.name, t_ns, pressure_pa(np.array([height])))


class Barometer(SensorKind):
    type: ClassVar[str] = "barometer"
    config_model = BarometerConfig

    def spec(self, name, cfg) -> SensorSpec:
        return SensorSpec(name=name, type="barometer", **body_mounted(cfg))

    def mounts(self, sensor):
        return ()

    def metadata(self, sensor) -> dict:
        return base_metadata(sensor) | {"units": "Pa"}

    def recorder(self, sensor, ctx) -> BarometerRecorder:
        return BarometerRecorder(sensor, ctx)


BAROMETER = Barometer()
