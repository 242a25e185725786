"""The spinning LiDAR: one sector cast per physics step, a scan written per sweep."""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field, model_validator

from twinsim.geometry import pose_to_T
from twinsim.model.sensors import LidarSpec, SensorSpec
from twinsim.sensors.base import (
    RecordingContext,
    SensorConfig,
    SensorKind,
    SensorRecorder,
    base_metadata,
)
from twinsim.sensors.lidar import LIDAR_MODELS, LidarScanner
from twinsim.sensors.rig import body_mounted
from twinsim.sequence.stream_checks import StreamCheck, check_lidar


class LidarConfig(SensorConfig):
    """Spinning LiDAR on the body (x forward, y left, z up); a `model` preset or a beam table.

    Presets: `hdl-32e`, `carla-hdl-32e`, `vlp-16`, `os1-64` (see `LIDAR_MODELS` in
    `twinsim.sensors.lidar`); unset fields come from the preset (`rate_hz` too: 20 Hz for
    `carla-hdl-32e`, else 10 Hz), and `custom` needs `elevations_deg` and `columns`.
    """

    kind: Literal["lidar"] = "lidar"
    model: Literal["hdl-32e", "carla-hdl-32e", "vlp-16", "os1-64", "custom"] = "hdl-32e"
    rate_hz: int = Field(10, gt=0)
    elevations_deg: list[float] | None = None
    columns: int | None = Field(None, gt=0, le=100_000)
    min_range_m: float = Field(0.1, ge=0.0)
    max_range_m: float | None = Field(None, gt=0.0)
    pos: tuple[float, float, float] = (0.0, 0.0, 0.12)
    rpy_deg: tuple[float, float, float] = (0.0, 0.0, 0.0)

    @model_validator(mode="before")
    @classmethod
    def _preset_rate(cls, data: object) -> object:
        """An unset `rate_hz` is the preset's own spin rate."""
        if isinstance(data, dict) and "rate_hz" not in data:
            preset = LIDAR_MODELS.get(data.get("model", cls.model_fields["model"].default))
            if preset is not None:
                return {**data, "rate_hz": preset.rate_hz}
        return data

    @model_validator(mode="after")
    def _valid(self) -> LidarConfig:
        if self.model == "custom" and (self.elevations_deg is None or self.columns is None):
            raise ValueError("model 'custom' needs elevations_deg (one per beam) and columns")
        if self.elevations_deg is not None:
            if not 1 <= len(self.elevations_deg) <= 256:
                raise ValueError(f"elevations_deg has {len(self.elevations_deg)} beams, 1-256")
            if any(not -90.0 < e < 90.0 for e in self.elevations_deg):
                raise ValueError(f"elevations_deg={self.elevations_deg} must lie in (-90, 90)")
        max_range = _max_range(self)
        if max_range <= self.min_range_m:
            raise ValueError(
                f"min_range_m={self.min_range_m} must be < max_range_m={max_range}"
                + ("" if self.max_range_m else f" ({self.model}'s)")
            )
        return self


def _max_range(cfg: LidarConfig) -> float:
    """The configured maximum range, else the model's (120 m for a custom LiDAR)."""
    preset = LIDAR_MODELS.get(cfg.model)
    return cfg.max_range_m or (preset.max_range_m if preset else 120.0)


def lidar_spec(cfg: LidarConfig) -> LidarSpec:
    """Resolve a LiDAR config against its preset: every beam, column and range made explicit."""
    preset = LIDAR_MODELS.get(cfg.model)
    elevations = cfg.elevations_deg or (preset.elevations_deg if preset else ())
    columns = cfg.columns or max(1, round(preset.columns_per_s / cfg.rate_hz))
    max_range = _max_range(cfg)
    return LidarSpec(
        model=cfg.model,
        elevations_deg=tuple(sorted(float(e) for e in elevations)),
        columns=columns,
        min_range_m=cfg.min_range_m,
        max_range_m=max_range,
    )


class LidarRecorder(SensorRecorder):
    """Casts the sector of each step of the current sweep; sweeps start on the LiDAR's grid."""

    def __init__(self, lidar: SensorSpec, ctx: RecordingContext) -> None:
        self.ctx = ctx
        self.scanner = LidarScanner(ctx.world, lidar, ctx.physics_hz // lidar.rate_hz)
        self.T_body_lidar = pose_to_T(lidar.pos, lidar.quat)
        self.name, self.scans = lidar.name, 0
        ctx.writer.add_lidar(lidar.name)

    resumable = True

    def checkpoint(self) -> dict[str, np.ndarray] | None:
        """Only between sweeps: a sweep in progress holds the sectors cast so far."""
        return None if self.scanner.in_sweep else {"scans": np.array(self.scans)}

    def restore(self, state: dict[str, np.ndarray]) -> None:
        self.scans = int(state["scans"])

    def observes(self, k: int) -> bool:
        return True  # a sector is cast at every step

    def before_step(self, k: int, t_ns: int, q: np.ndarray) -> None:
        scanner, p = self.scanner, self.scanner.steps_per_sweep
        T_world_lidar = self.ctx.world.T_world_body() @ self.T_body_lidar
        if k % p == 0:
            if scanner.in_sweep:
                self._write_scan()
            scanner.begin(self.scans, t_ns, T_world_lidar)
        if scanner.in_sweep:
            scanner.cast_sector(k % p, t_ns, T_world_lidar)
            if k % p == p - 1:
                self._write_scan()

    def _write_scan(self) -> None:
        self.ctx.writer.write_scan(self.name, self.scanner.finish())
        self.scans += 1

    def finish(self) -> None:
        """Write a sweep cut short by the end of the run, and free the caster."""
        if self.scanner.in_sweep:
            self._write_scan()
        self.scanner.close()


class Lidar(SensorKind):
    type = "lidar"
    config_model = LidarConfig

    def spec(self, name: str, cfg: LidarConfig) -> SensorSpec:
        return SensorSpec(name=name, type="lidar", lidar=lidar_spec(cfg), **body_mounted(cfg))

    def mounts(self, sensor: SensorSpec) -> tuple:
        return ()  # rays are cast from the world's geometry, nothing is added to the model

    def metadata(self, sensor: SensorSpec) -> dict:
        lidar = sensor.lidar
        return base_metadata(sensor) | {
            "frame": "LiDAR frame: x forward, y left, z up; points at each point's own capture "
            "time",
            "model": lidar.model,
            "rings": len(lidar.elevations_deg),
            "elevations_deg": list(lidar.elevations_deg),
            "columns": lidar.columns,
            "min_range_m": lidar.min_range_m,
            "max_range_m": lidar.max_range_m,
            "rotation": "clockwise seen from above, column j at azimuth pi - 2 pi j / columns",
            "intensity": "diffuse reflectance of the material x cos(incidence angle), in [0, 1]",
        }

    def recorder(self, sensor: SensorSpec, ctx: RecordingContext) -> LidarRecorder:
        return LidarRecorder(sensor, ctx)

    def validate_stream(self, check: StreamCheck) -> None:
        """scans.csv and every sweep's points file."""
        check_lidar(check)
