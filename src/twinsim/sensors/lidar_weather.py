"""Fog, rain and snow on LiDAR scans: attenuation, lost returns, range noise, near clutter.

A scan is cast in clear air (MuJoCo has no participating media); a twin with weather degrades
each sweep after it is cast, point by point along each point's own beam, as published models
of real sensors describe it:

- extinction β (1/m) of the air: fog from its visibility V, β = 3.912 / V (Koschmieder; the
  visibility is the camera fog's distance, `Look.fog_end_m`, so LiDAR and images agree; Hahner
  et al. 2021, "Fog simulation on real LiDAR point clouds"); rain of R mm/h, β = 0.01 R^0.6
  per km (Goodin et al. 2019, after Lewandowski et al.), R = `RAIN_MM_H` × the twin's rain;
  snow from the visibility it leaves, `SNOW_VISIBILITY_M` / snow (stronger, same shape).
- a return's intensity (reflectance × cos incidence) is attenuated two-way, I · exp(−2βR), and
  lost when it falls below `DETECTION_MIN` (the detector's threshold); survivors keep the
  attenuated intensity and get range noise along the beam that grows with the optical depth,
  σ = `RANGE_SIGMA_M` · βR.
- rain drops and snowflakes block a beam outright with a probability per beam (`RAIN_DROP`,
  `SNOW_DROP` at density 1: Kilic et al. 2021's dropouts), and every weather returns clutter
  from near the sensor: a beam's first return comes from a soft target (fog backscatter,
  a drop or a flake) at a range uniform in `NEAR_BAND_M` in front of its hard target, with a
  probability per beam that grows with the fog's β (`BACKSCATTER_PER_BETA`) and with rain and
  snow (`RAIN_NEAR`, `SNOW_NEAR`). A clutter point keeps its beam (ring, capture time) and is
  labelled as nothing: instance 0, semantic 0 (`unlabeled`), not dynamic.

Draws come from a generator of (twin seed, stream name, scan index): a twin rerun gives the
same bytes, and without weather `degrade` is never called, so scans are those of a clear twin.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, replace

import numpy as np

from twinsim.sequence.scans import LidarScan

KOSCHMIEDER = 3.912  # −ln(0.02): visibility where contrast falls to 2 %
RAIN_MM_H = 50.0  # rain = 1: a heavy downpour
SNOW_VISIBILITY_M = 500.0  # snow = 1: heavy snowfall
DETECTION_MIN = 0.005  # weakest detectable intensity (a 10 %-reflective target's 5 %)
RANGE_SIGMA_M = 0.03  # range σ per unit of optical depth βR
NEAR_BAND_M = (0.5, 5.0)  # where soft-target clutter returns from
BACKSCATTER_PER_BETA = 0.25  # fog clutter probability per beam per 1/m of β
RAIN_DROP, RAIN_NEAR = 0.05, 0.02  # per beam at rain = 1
SNOW_DROP, SNOW_NEAR = 0.12, 0.06  # per beam at snow = 1
MAX_CLUTTER = 0.5  # cap of the clutter probability per beam


@dataclass(frozen=True)
class LidarWeather:
    """The weather one twin's LiDARs see: fog visibility (m, None: none), rain and snow in
    [0, 1], and the twin's seed."""

    fog_visibility_m: float | None = None
    rain: float = 0.0
    snow: float = 0.0
    seed: int = 0

    @property
    def active(self) -> bool:
        """Whether any weather changes a scan."""
        return self.fog_visibility_m is not None or self.rain > 0.0 or self.snow > 0.0

    @property
    def beta_fog(self) -> float:
        return 0.0 if self.fog_visibility_m is None else KOSCHMIEDER / self.fog_visibility_m

    @property
    def beta(self) -> float:
        """Extinction of the air (1/m): fog, rain and snow together."""
        rain = 0.01 * (RAIN_MM_H * self.rain) ** 0.6 / 1000.0
        snow = KOSCHMIEDER * self.snow / SNOW_VISIBILITY_M
        return self.beta_fog + rain + snow

    @property
    def drop_probability(self) -> float:
        """Probability per beam that rain or snow blocks it (no return at all)."""
        return 1.0 - (1.0 - RAIN_DROP * self.rain) * (1.0 - SNOW_DROP * self.snow)

    @property
    def clutter_probability(self) -> float:
        """Probability per beam of a soft-target return in the near band."""
        clear = (
            (1.0 - min(MAX_CLUTTER, BACKSCATTER_PER_BETA * self.beta_fog))
            * (1.0 - RAIN_NEAR * self.rain)
            * (1.0 - SNOW_NEAR * self.snow)
        )
        return min(MAX_CLUTTER, 1.0 - clear)

    def summary(self) -> dict:
        """The model's values for a twin's metadata."""
        return {
            "fog_visibility_m": self.fog_visibility_m,
            "rain_mm_h": RAIN_MM_H * self.rain,
            "snow": self.snow,
            "beta_per_m": self.beta,
            "drop_probability": self.drop_probability,
            "clutter_probability": self.clutter_probability,
            "clutter_band_m": list(NEAR_BAND_M),
            "detection_min": DETECTION_MIN,
        }

    def rng(self, stream: str, index: int) -> np.random.Generator:
        """The generator of one scan of one stream."""
        return np.random.default_rng([self.seed, zlib.crc32(stream.encode("utf-8")), index])

    def degrade(self, scan: LidarScan, stream: str, min_range_m: float = 0.0) -> LidarScan:
        """The scan as seen through the weather (a new scan; same index, time and pose)."""
        rng = self.rng(stream, scan.index)
        n = len(scan)
        r = scan.range.astype(np.float64)
        beta = self.beta
        u_drop, u_near = rng.random(n), rng.random(n)
        near_r = rng.uniform(max(NEAR_BAND_M[0], min_range_m), NEAR_BAND_M[1], n)
        near_i = rng.uniform(0.01, 0.1, n)
        noise = rng.standard_normal(n)
        intensity = scan.intensity * np.exp(-2.0 * beta * r)
        hard = (intensity >= DETECTION_MIN) & (u_drop >= self.drop_probability)
        clutter = (u_near < self.clutter_probability) & (near_r < r)
        keep = hard | clutter
        new_r = np.where(clutter, near_r, r + noise * RANGE_SIGMA_M * beta * r)
        new_r = np.maximum(new_r, max(min_range_m, 1e-3))
        direction = scan.points / np.maximum(r, 1e-9)[:, None]
        points = (direction * new_r[:, None]).astype(np.float32)
        near_intensity = near_i * np.exp(-2.0 * beta * near_r)
        return replace(
            scan,
            points=points[keep],
            t_offset_ns=scan.t_offset_ns[keep],
            ring=scan.ring[keep],
            intensity=np.where(clutter, near_intensity, intensity).astype(np.float32)[keep],
            range=new_r.astype(np.float32)[keep],
            instance=np.where(clutter, 0, scan.instance).astype(scan.instance.dtype)[keep],
            semantic=np.where(clutter, 0, scan.semantic).astype(scan.semantic.dtype)[keep],
            dynamic=(scan.dynamic & ~clutter)[keep],
        )


class LidarWeatherWriter:
    """A writer that passes every LiDAR sweep through the weather before writing it."""

    def __init__(self, writer, weather: LidarWeather, min_range_m: dict[str, float]) -> None:
        self._writer, self._weather, self._min_range = writer, weather, min_range_m

    def __getattr__(self, name: str):
        return getattr(self._writer, name)

    def write_scan(self, name: str, scan: LidarScan, scan_line: str | None = None) -> None:
        degraded = self._weather.degrade(scan, name, self._min_range.get(name, 0.0))
        self._writer.write_scan(name, degraded, scan_line)

    def flush(self) -> None:
        """Flush the writer below when it holds frames (a plain writer holds none)."""
        flush = getattr(self._writer, "flush", None)
        if flush is not None:
            flush()
