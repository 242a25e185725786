"""The IMU: MuJoCo's gyro and accelerometer on a site, read after each step's integration."""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field

from twinsim.model.layout import IMU_COLUMNS
from twinsim.model.mounts import SiteMount
from twinsim.model.sensors import SensorSpec
from twinsim.sensors.base import (
    RecordingContext,
    SensorConfig,
    SensorKind,
    SensorRecorder,
    base_metadata,
)
from twinsim.sensors.rig import body_mounted
from twinsim.sequence.stream_checks import StreamCheck, check_table


class ImuConfig(SensorConfig):
    """An IMU at `pos`, turned by `rpy_deg` from the body frame."""

    kind: Literal["imu"] = "imu"
    rate_hz: int = Field(240, gt=0)
    pos: tuple[float, float, float] = (0.0, 0.0, 0.0)
    rpy_deg: tuple[float, float, float] = (0.0, 0.0, 0.0)


class ImuRecorder(SensorRecorder):
    resumable = True  # it reads MuJoCo's sensors at each sample and carries nothing

    def __init__(self, imu: SensorSpec, ctx: RecordingContext) -> None:
        self.imu, self.ctx = imu, ctx
        self.period = ctx.physics_hz // imu.rate_hz
        ctx.writer.add_table(imu.name, IMU_COLUMNS)

    def after_step(self, k: int, t_ns: int) -> None:
        if k % self.period == 0:
            gyro, accel = self.ctx.world.imu(self.imu.name)
            self.ctx.writer.append(self.imu.name, t_ns, np.concatenate([gyro, accel]))


class Imu(SensorKind):
    type = "imu"
    config_model = ImuConfig

    def spec(self, name: str, cfg: ImuConfig) -> SensorSpec:
        return SensorSpec(name=name, type="imu", **body_mounted(cfg))

    def mounts(self, sensor: SensorSpec) -> tuple[SiteMount, ...]:
        sensors = (("gyro", "gyro"), ("accelerometer", "accel"))
        return (SiteMount(sensor.name, sensor.pos, sensor.quat, sensors),)

    def metadata(self, sensor: SensorSpec) -> dict:
        return base_metadata(sensor) | {
            "frame": "IMU site frame; gyro in rad/s, accel = specific force in m/s² "
            "(reads +9.81 along +z when level and at rest)",
        }

    def recorder(self, sensor: SensorSpec, ctx: RecordingContext) -> ImuRecorder:
        return ImuRecorder(sensor, ctx)

    def validate_stream(self, check: StreamCheck) -> None:
        """A table whose columns the format fixes: gyro then accel."""
        check_table(check, IMU_COLUMNS)
