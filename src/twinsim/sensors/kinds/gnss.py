"""GNSS: the true WGS-84 position of an antenna on the robot body, a table at `rate_hz`.

The world frame is a local ENU tangent plane (x east, y north, z up) whose origin is the
configured geodetic datum, so each sample is the antenna's world position turned into latitude,
longitude and ellipsoidal height with `pymap3d.enu2geodetic`, next to the ENU position and
velocity it came from. Nothing is added here: `twinsim noise` adds white noise, a Gauss-Markov
bias and outages (`twinsim.noise.gnss`). `status` follows `sensor_msgs/NavSatStatus`: 0 a fix,
-1 no fix (then every position and velocity column is NaN, as a receiver reports an outage).
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import pymap3d
from pydantic import Field

from twinsim.errors import SequenceError
from twinsim.model.sensors import GnssSpec, SensorSpec
from twinsim.sensors.base import (
    RecordingContext,
    SensorConfig,
    SensorKind,
    SensorRecorder,
    base_metadata,
)
from twinsim.sensors.rig import body_mounted
from twinsim.sequence.stream_checks import StreamCheck, _check_times
from twinsim.sequence.tables import parse_table

#: geodetic position (deg, deg, m above the WGS-84 ellipsoid), world ENU position and velocity
#: of the antenna (m, m/s), and the NavSatStatus (0 fix, -1 no fix)
COLUMNS = ("lat_deg", "lon_deg", "alt_m", "x", "y", "z", "vx", "vy", "vz", "status")
STATUS_FIX, STATUS_NO_FIX = 0, -1


class GnssConfig(SensorConfig):
    """A GNSS antenna at `pos` on the body; the world origin sits at the geodetic datum."""

    kind: Literal["gnss"] = "gnss"
    rate_hz: int = Field(10, gt=0)
    pos: tuple[float, float, float] = (0.0, 0.0, 0.0)
    # near Karlsruhe, where KITTI drove (CARLA's maps are georeferenced at 49°N, 8°E too)
    origin_lat_deg: float = Field(49.0, ge=-90.0, le=90.0)
    origin_lon_deg: float = Field(8.0, ge=-180.0, le=180.0)
    origin_alt_m: float = Field(0.0, ge=-500.0, le=10000.0)


def enu_to_geodetic(enu: np.ndarray, datum: GnssSpec) -> np.ndarray:
    """(N, 3) world ENU positions (m) → (N, 3) latitude, longitude (deg), height (m)."""
    enu = np.asarray(enu, dtype=float).reshape(-1, 3)
    lat, lon, alt = pymap3d.enu2geodetic(
        enu[:, 0],
        enu[:, 1],
        enu[:, 2],
        datum.origin_lat_deg,
        datum.origin_lon_deg,
        datum.origin_alt_m,
    )
    return np.stack([lat, lon, alt], axis=1)


def geodetic_to_enu(lla: np.ndarray, datum: GnssSpec) -> np.ndarray:
    """(N, 3) latitude, longitude (deg), height (m) → (N, 3) world ENU positions (m)."""
    lla = np.asarray(lla, dtype=float).reshape(-1, 3)
    e, n, u = pymap3d.geodetic2enu(
        lla[:, 0],
        lla[:, 1],
        lla[:, 2],
        datum.origin_lat_deg,
        datum.origin_lon_deg,
        datum.origin_alt_m,
    )
    return np.stack([e, n, u], axis=1)


class GnssRecorder(SensorRecorder):
    """Writes the antenna's true geodetic and ENU position and its world velocity."""

    resumable = True  # each sample reads the world's state and carries nothing

    def __init__(self, sensor: SensorSpec, ctx: RecordingContext) -> None:
        self.sensor, self.ctx = sensor, ctx
        self.period = ctx.physics_hz // sensor.rate_hz
        self.antenna = np.asarray(sensor.pos, dtype=float)
        ctx.writer.add_table(sensor.name, COLUMNS)

    def before_step(self, k: int, t_ns: int, q: np.ndarray) -> None:
        if k % self.period:
            return
        world = self.ctx.world
        T = world.T_world_body()
        R = T[:3, :3]
        enu = T[:3, 3] + R @ self.antenna
        twist = world.body_twist()  # in the body frame
        v = R @ (twist.linear + np.cross(twist.angular, self.antenna))
        lla = enu_to_geodetic(enu, self.sensor.gnss)[0]
        row = np.concatenate([lla, enu, v, [STATUS_FIX]])
        self.ctx.writer.append(self.sensor.name, t_ns, row)


class Gnss(SensorKind):
    """The `gnss` kind: a table of the antenna's true geodetic position and ENU motion."""

    type = "gnss"
    config_model = GnssConfig

    def spec(self, name: str, cfg: GnssConfig) -> SensorSpec:
        datum = GnssSpec(
            origin_lat_deg=cfg.origin_lat_deg,
            origin_lon_deg=cfg.origin_lon_deg,
            origin_alt_m=cfg.origin_alt_m,
        )
        return SensorSpec(name=name, type="gnss", gnss=datum, **body_mounted(cfg))

    def mounts(self, sensor: SensorSpec) -> tuple:
        return ()

    def metadata(self, sensor: SensorSpec) -> dict:
        return base_metadata(sensor) | {
            "frame": "lat_deg, lon_deg (WGS-84, deg) and alt_m (m above the ellipsoid) of the "
            "antenna at T_body_sensor's origin; x, y, z its world position (ENU: east, north, "
            "up, m) and vx, vy, vz its world velocity (m/s); status: NavSatStatus (0 fix, "
            "-1 no fix, every other column NaN)",
            "datum": sensor.gnss.model_dump(mode="json"),
        }

    def recorder(self, sensor: SensorSpec, ctx: RecordingContext) -> GnssRecorder:
        return GnssRecorder(sensor, ctx)

    def validate_stream(self, check: StreamCheck) -> None:
        """The table's columns; finite values wherever there is a fix (NaN only in outages),
        latitude and longitude in range, status 0 or -1, times on the step clock."""
        label = f"{check.name}/data.csv"
        try:
            table = parse_table(check.path / label, 1, label)
        except SequenceError as exc:
            check.problems.append(str(exc))
            return
        if table.columns != ("t_ns", *COLUMNS):
            check.problems.append(
                f"{label}: columns {','.join(table.columns)}, expected t_ns,{','.join(COLUMNS)} "
                "for type 'gnss'"
            )
            return
        values, lines = table.values, np.arange(len(table.ints)) + 2
        status = values[:, -1]
        fix = status == STATUS_FIX
        odd = (status != STATUS_FIX) & (status != STATUS_NO_FIX)
        found = [f"{label} line {i}: status is not 0 (fix) or -1 (no fix)" for i in lines[odd]]
        finite = np.isfinite(values).all(axis=1)
        found += [f"{label} line {i}: value is not finite" for i in lines[fix & ~finite]]
        lat, lon = values[:, 0], values[:, 1]
        bad = fix & finite & ((np.abs(lat) > 90.0) | (np.abs(lon) > 180.0))
        found += [f"{label} line {i}: latitude or longitude out of range" for i in lines[bad]]
        check.report(found)
        check.count("rows", len(table.ints))
        _check_times(check, label, "sample", table.ints[:, 0])
