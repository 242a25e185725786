"""The spinning LiDAR: one sector cast per physics step, a scan written per sweep."""

from __future__ import annotations

import numpy as np

from twinsim.geometry import pose_to_T
from twinsim.scene.spec import SensorSpec
from twinsim.sensors.base import RecordingContext, SensorKind, SensorRecorder, base_metadata
from twinsim.sensors.lidar import LidarScanner


class LidarRecorder(SensorRecorder):
    """Casts the sector of each step of the current sweep; sweeps start on the LiDAR's grid."""

    def __init__(self, lidar: SensorSpec, ctx: RecordingContext) -> None:
        self.ctx = ctx
        self.scanner = LidarScanner(ctx.world, lidar, ctx.physics_hz // lidar.rate_hz)
        self.T_body_lidar = pose_to_T(lidar.pos, lidar.quat)
        self.name, self.scans = lidar.name, 0
        ctx.writer.add_lidar(lidar.name)

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
