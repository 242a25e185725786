"""Rotating multi-beam LiDAR by ray casting, with the motion distortion of a real spinning sensor.

A sweep lasts one period of the LiDAR (physics_hz / rate_hz steps) and is split into one sector
per physics step: the columns whose firing times fall in a step are cast at that step, from the
sensor pose and the world (people, flying objects, other robots; never its own robot) of that
instant, and stamped with it. Points are stored in the LiDAR frame of their own capture time
(x forward, y left, z up), so a moving sensor's sweep is distorted as CARLA-Loc's (10 sectors a
turn; 24 here at 10 Hz and 240 Hz).

The head turns clockwise seen from above (as Velodyne and Ouster sensors do), starting at the
rear (−x): column j of N points at azimuth π − 2πj/N. Intensity is the hit material's diffuse
reflectance times the cosine of the incidence angle (Lambertian, no range fall-off).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from twinsim.model.sensors import LidarSpec, SensorSpec
from twinsim.sequence.scans import LidarScan


@dataclass(frozen=True)
class LidarModel:
    """A preset: beam elevations (ring 0 lowest), columns fired per second (a turn has
    columns_per_s / rate_hz of them), maximum range, and the spin rate it defaults to."""

    elevations_deg: tuple[float, ...]
    columns_per_s: int
    max_range_m: float
    rate_hz: int = 10


def _uniform(lo: float, hi: float, n: int) -> tuple[float, ...]:
    return tuple(round(float(e), 6) for e in np.linspace(lo, hi, n))


#: - `hdl-32e`: CARLA-Loc's beams and range (+10°/−30°, 120 m) at the real HDL-32E's fixed
#:   firing rate, 21 700 columns/s (~695 k points/s single return; 2170 columns at 10 Hz).
#: - `carla-hdl-32e`: CARLA-Loc's simulated HDL-32E: the same beams and range, spinning at
#:   20 Hz, with CARLA's `points_per_second` ≈ 1 330 000 over 32 channels (41 563 columns/s:
#:   2078 columns a turn, 1 329 920 points/s). Its 10 sectors a turn need sim.physics_hz=200
#:   (CARLA-Loc's 200 Hz simulation); at 240 Hz a turn has 12.
#: - `vlp-16` (datasheet): 16 beams −15°..+15° 2° apart, 100 m, 18 000 columns/s (288 k
#:   points/s, "~300 000"): 0.1°, 0.2°, 0.4° azimuth steps at 5, 10, 20 Hz.
#: - `os1-64`: the current Ouster OS1-64 (rev 6/7; gen 1 had 33.2°): 64 uniform beams over 45°
#:   (±22.5°), 120 m, 10 240 columns/s: its 1024×10 default mode (655 360 points/s) and 512×20.
LIDAR_MODELS: dict[str, LidarModel] = {
    "hdl-32e": LidarModel(_uniform(-30.0, 10.0, 32), 21_700, 120.0),
    "carla-hdl-32e": LidarModel(_uniform(-30.0, 10.0, 32), 41_563, 120.0, rate_hz=20),
    "vlp-16": LidarModel(_uniform(-15.0, 15.0, 16), 18_000, 100.0),
    "os1-64": LidarModel(_uniform(-22.5, 22.5, 64), 10_240, 120.0),
}


def beam_directions(spec: LidarSpec) -> np.ndarray:
    """Unit directions (columns, rings, 3) in the LiDAR frame, in firing order."""
    az = np.pi - 2 * np.pi * np.arange(spec.columns) / spec.columns
    el = np.deg2rad(np.asarray(spec.elevations_deg))
    cos_el = np.cos(el)
    return np.stack(
        [
            np.cos(az)[:, None] * cos_el[None, :],
            np.sin(az)[:, None] * cos_el[None, :],
            np.broadcast_to(np.sin(el), (spec.columns, len(el))),
        ],
        axis=-1,
    )


def sector_bounds(columns: int, sectors: int) -> np.ndarray:
    """(sectors + 1,) column index bounds: sector s fires columns [b[s], b[s + 1])."""
    return -((-np.arange(sectors + 1) * columns) // sectors)


@dataclass(frozen=True)
class GeomLabels:
    """What a ray learns from the geom it hits: instance, class, dynamic flag, reflectance."""

    instance: np.ndarray  # (ngeom + 1,) uint32; the last entry (index −1) is "nothing"
    semantic: np.ndarray  # (ngeom + 1,) uint16
    dynamic: np.ndarray  # (ngeom + 1,) bool
    albedo: np.ndarray  # (ngeom + 1,) float64

    @classmethod
    def of_world(cls, world) -> GeomLabels:
        from twinsim.engine.rays import geom_albedo  # mujoco loads after the GL backend is set

        maps = world.maps
        instance = np.append(maps.geom_instance, 0).astype(np.uint32)
        return cls(
            instance=instance,
            semantic=maps.instance_class[instance].astype(np.uint16),
            dynamic=maps.instance_dynamic[instance],
            albedo=np.append(geom_albedo(world.model), 0.0),
        )


def world_caster(world, caster: str = "embree", workers: int = 1):
    """The ray caster of a sensor on the robot of `world` (a `RobotView`): it sees people,
    flying objects and every other robot, never its own; `caster` and `workers` as
    `LidarScanner` takes them. Call `cast(data, origin, dirs, max_range)`, then `close()`."""
    from twinsim.engine.rays import CASTERS, RayCaster, split_world  # mujoco after GL backend

    if caster not in CASTERS:
        raise ValueError(f"caster={caster!r}; allowed: {', '.join(CASTERS)}")
    parts = split_world(world) if caster != "whole" else None
    robots = world.maps.robot_geoms  # its own robot unseen, every other one seen
    return RayCaster(
        world.model,
        world.body_id,
        workers,
        parts,
        caster == "embree",
        own=robots[world.name],
        others=[g for name, g in robots.items() if name != world.name],
    )


class LidarScanner:
    """Builds the sweeps of one LiDAR of a world, sector by sector, step by step."""

    def __init__(
        self,
        world,
        sensor: SensorSpec,
        steps_per_sweep: int,
        workers: int = 1,
        caster: str = "embree",
    ) -> None:
        """`world`: the `RobotView` of the robot carrying the LiDAR (it sees every other
        robot, never its own); `caster` (see `twinsim.engine.rays`): `embree` (static boxes
        in Embree), `split` (static world in `mj_multiRay`) or `whole` (one `mj_multiRay` into
        the world model); `workers` threads (more than one is slower at a sector's ~2 900
        rays: measured)."""
        if sensor.lidar is None:
            raise ValueError(f"sensor {sensor.name!r} is not a LiDAR")
        self.sensor, self.spec = sensor, sensor.lidar
        self.steps_per_sweep = steps_per_sweep
        self._world = world
        self._caster = world_caster(world, caster, workers)
        self._labels = GeomLabels.of_world(world)
        dirs = beam_directions(self.spec)
        self._bounds = sector_bounds(self.spec.columns, steps_per_sweep)
        self._dirs = dirs.reshape(-1, 3)
        self._rings = np.tile(np.arange(len(self.spec.elevations_deg), dtype=np.uint16), len(dirs))
        self._n_rings = len(self.spec.elevations_deg)
        self._parts: list[dict[str, np.ndarray]] = []
        self._start: tuple[int, int, np.ndarray] | None = None  # (index, t_ns, T_world_lidar)

    @property
    def in_sweep(self) -> bool:
        return self._start is not None

    def begin(self, index: int, t_ns: int, T_world_lidar: np.ndarray) -> None:
        """Start sweep `index` at t_ns, with the sensor pose at that instant."""
        self._start = (index, t_ns, T_world_lidar.copy())
        self._parts = []

    def cast_sector(self, sector: int, t_ns: int, T_world_lidar: np.ndarray) -> None:
        """Cast the columns of `sector` from the pose and world state of instant t_ns."""
        if self._start is None:
            raise ValueError(f"{self.sensor.name}: cast_sector before begin")
        a, b = self._bounds[sector] * self._n_rings, self._bounds[sector + 1] * self._n_rings
        if b <= a:
            return
        dirs = self._dirs[a:b]
        R, origin = T_world_lidar[:3, :3], T_world_lidar[:3, 3]
        world_dirs = dirs @ R.T
        geom, dist, normal = self._caster.cast(
            self._world.data, origin, world_dirs, self.spec.max_range_m
        )
        rings = self._rings[a:b]
        keep = (geom >= 0) & (dist >= self.spec.min_range_m)
        if not keep.all():  # indoors every ray usually returns: no copies then
            geom, dist, normal = geom[keep], dist[keep], normal[keep]
            dirs, world_dirs, rings = dirs[keep], world_dirs[keep], rings[keep]
        cos_inc = np.abs(np.einsum("ij,ij->i", normal, world_dirs))
        lab = self._labels
        self._parts.append(
            {
                "points": (dirs * dist[:, None]).astype(np.float32),
                "t_offset_ns": np.full(len(dist), t_ns - self._start[1], np.int64),
                "ring": rings,
                "intensity": np.clip(lab.albedo[geom] * cos_inc, 0.0, 1.0).astype(np.float32),
                "range": dist.astype(np.float32),
                "instance": lab.instance[geom],
                "semantic": lab.semantic[geom],
                "dynamic": lab.dynamic[geom],
            }
        )

    def finish(self) -> LidarScan:
        """The sweep cast so far (complete, or cut short by the end of a run)."""
        if self._start is None:
            raise ValueError(f"{self.sensor.name}: finish before begin")
        index, t_ns, T = self._start
        empty = {
            "points": np.empty((0, 3), np.float32),
            "t_offset_ns": np.empty(0, np.int64),
            "ring": np.empty(0, np.uint16),
            "intensity": np.empty(0, np.float32),
            "range": np.empty(0, np.float32),
            "instance": np.empty(0, np.uint32),
            "semantic": np.empty(0, np.uint16),
            "dynamic": np.empty(0, bool),
        }
        fields = {k: np.concatenate([v] + [p[k] for p in self._parts]) for k, v in empty.items()}
        self._start, self._parts = None, []
        return LidarScan(index=index, t_ns=t_ns, T_world_lidar=T, **fields)

    def close(self) -> None:
        self._caster.close()
