"""Automotive radar, as CARLA's: detections of rays cast into the world, with Doppler velocity.

Every scan (one per period, all rays at that step's instant) casts `points_per_second /
rate_hz` rays in directions drawn uniformly over the field of view, as CARLA's radar does, but
from a generator seeded by (`seed`, step): the same directions in a run, its resume and its
twins. Rays go through the LiDAR's caster (`world_caster`: people, flying objects, vehicles and
other robots, never its own robot) and carry the hit's instance, class and dynamic flag. A
detection's velocity is the radial velocity of the hit point relative to the radar, (v_point −
v_radar) · ray: 0 for the static world seen by a radar standing still, negative approaching.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field

from twinsim.geometry import pose_to_T
from twinsim.model.sensors import SensorSpec
from twinsim.sensors.base import (
    RecordingContext,
    SensorConfig,
    SensorKind,
    SensorRecorder,
    base_metadata,
)
from twinsim.sensors.lidar import GeomLabels, world_caster
from twinsim.sensors.rig import body_mounted
from twinsim.sequence.poses import pose_to_row
from twinsim.sequence.radar import INDEX_COLUMNS, RadarScan, check_radar, detections_relpath
from twinsim.sequence.stream_checks import StreamCheck


class RadarConfig(SensorConfig):
    """A forward radar on the body (x forward, y left, z up). Defaults are CARLA's radar
    (`points_per_second` 1500, `range` 100 m, 20 Hz) with an automotive long-range field of
    view (30° × 10°; CARLA's own default is 30° × 30°)."""

    kind: Literal["radar"] = "radar"
    rate_hz: int = Field(20, gt=0)
    horizontal_fov_deg: float = Field(30.0, gt=0.0, le=180.0)
    vertical_fov_deg: float = Field(10.0, gt=0.0, lt=180.0)
    range_m: float = Field(100.0, gt=0.0)
    points_per_second: int = Field(1500, gt=0, le=10_000_000)
    seed: int = Field(0, ge=0)
    pos: tuple[float, float, float] = (0.0, 0.0, 0.12)
    rpy_deg: tuple[float, float, float] = (0.0, 0.0, 0.0)


class RadarSpec(SensorSpec):
    """A radar's resolved settings: field of view, range, rays per scan, direction seed."""

    horizontal_fov_deg: float = Field(gt=0.0, le=180.0)
    vertical_fov_deg: float = Field(gt=0.0, lt=180.0)
    range_m: float = Field(gt=0.0)
    rays_per_scan: int = Field(gt=0)
    seed: int = Field(ge=0)


def ray_angles(spec: RadarSpec, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(azimuth, elevation) in rad of the rays of the scan at physics step k: uniform over the
    field of view, drawn from (seed, k) alone."""
    rng = np.random.default_rng([spec.seed, k])
    h, v = np.deg2rad(spec.horizontal_fov_deg) / 2, np.deg2rad(spec.vertical_fov_deg) / 2
    return rng.uniform(-h, h, spec.rays_per_scan), rng.uniform(-v, v, spec.rays_per_scan)


class RadarRecorder(SensorRecorder):
    """Casts a scan at every step of the radar's grid and writes it as one detections file."""

    resumable = True

    def __init__(self, sensor: RadarSpec, ctx: RecordingContext) -> None:
        self.sensor, self.ctx = sensor, ctx
        self.period = ctx.physics_hz // sensor.rate_hz
        self.T_body_radar = pose_to_T(sensor.pos, sensor.quat)
        self._caster = world_caster(ctx.world)
        self._labels = GeomLabels.of_world(ctx.world)
        self.scans = 0
        ctx.writer.add_files(sensor.name, index_columns=INDEX_COLUMNS)

    def checkpoint(self) -> dict[str, np.ndarray]:
        return {"scans": np.array(self.scans)}

    def restore(self, state: dict[str, np.ndarray]) -> None:
        self.scans = int(state["scans"])

    def observes(self, k: int) -> bool:
        return k % self.period == 0

    def before_step(self, k: int, t_ns: int, q: np.ndarray) -> None:
        if k % self.period:
            return
        scan = self.scan(k, t_ns)
        name = self.sensor.name
        self.ctx.writer.write_file(name, detections_relpath(self.scans), scan.to_records())
        self.ctx.writer.append(name, t_ns, [*pose_to_row(scan.T_world_radar), len(scan)])
        self.scans += 1

    def scan(self, k: int, t_ns: int) -> RadarScan:
        """Cast the scan of step k from the radar's pose and the world at that instant."""
        world, spec = self.ctx.world, self.sensor
        T_body = world.T_world_body()
        T = T_body @ self.T_body_radar
        az, el = ray_angles(spec, k)
        dirs = np.stack([np.cos(el) * np.cos(az), np.cos(el) * np.sin(az), np.sin(el)], axis=1)
        world_dirs = dirs @ T[:3, :3].T
        geom, dist, _ = self._caster.cast(world.data, T[:3, 3], world_dirs, spec.range_m)
        keep = (geom >= 0) & (dist > 0.0)
        geom, dist, world_dirs, az, el = (
            geom[keep],
            dist[keep],
            world_dirs[keep],
            az[keep],
            el[keep],
        )
        hits = T[:3, 3] + world_dirs * dist[:, None]
        twist = world.body_twist()  # the body frame's, in its own axes
        arm = np.asarray(spec.pos, dtype=float)
        v_radar = T_body[:3, :3] @ (twist.linear + np.cross(twist.angular, arm))
        v_hits = world.point_velocities(geom, hits, k / self.ctx.physics_hz)
        radial = np.einsum("ij,ij->i", v_hits - v_radar, world_dirs)
        lab = self._labels
        return RadarScan(
            index=self.scans,
            t_ns=t_ns,
            T_world_radar=T,
            range=dist.astype(np.float32),
            azimuth=az.astype(np.float32),
            elevation=el.astype(np.float32),
            velocity=radial.astype(np.float32),
            instance=lab.instance[geom],
            semantic=lab.semantic[geom],
            dynamic=lab.dynamic[geom],
        )

    def finish(self) -> None:
        self._caster.close()


class Radar(SensorKind):
    """The `radar` kind: per scan, detections with range, angles, Doppler velocity and labels."""

    type = "radar"
    config_model = RadarConfig
    spec_model = RadarSpec

    def spec(self, name: str, cfg: RadarConfig) -> RadarSpec:
        return RadarSpec(
            name=name,
            type="radar",
            horizontal_fov_deg=cfg.horizontal_fov_deg,
            vertical_fov_deg=cfg.vertical_fov_deg,
            range_m=cfg.range_m,
            rays_per_scan=max(1, round(cfg.points_per_second / cfg.rate_hz)),
            seed=cfg.seed,
            **body_mounted(cfg),
        )

    def mounts(self, sensor: SensorSpec) -> tuple:
        return ()  # rays are cast from the world's geometry, nothing is added to the model

    def metadata(self, sensor: RadarSpec) -> dict:
        return base_metadata(sensor) | {
            "frame": "radar frame: x forward, y left, z up; per detection range (m), azimuth "
            "atan2(y, x) and elevation asin(z / range) (rad), velocity: radial velocity of "
            "the hit point relative to the radar (m/s, negative approaching)",
            "horizontal_fov_deg": sensor.horizontal_fov_deg,
            "vertical_fov_deg": sensor.vertical_fov_deg,
            "range_m": sensor.range_m,
            "rays_per_scan": sensor.rays_per_scan,
            "seed": sensor.seed,
            "sampling": "uniform azimuth and elevation over the field of view, drawn from "
            "numpy default_rng([seed, physics step])",
        }

    def recorder(self, sensor: RadarSpec, ctx: RecordingContext) -> RadarRecorder:
        return RadarRecorder(sensor, ctx)

    def validate_stream(self, check: StreamCheck) -> None:
        """data.csv and every scan's detections file."""
        check_radar(check)
