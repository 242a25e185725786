"""Radar scans as data, their files, their reader and their check.

A radar stream is a stream of the kind's own files: `<radar>/data.csv` indexes the scans (one
row per scan: `t_ns`, the radar's world pose then, the number of detections) and scan i's
detections are `<radar>/detections/NNNNNN.npy`, 1-D little-endian `DETECTION_DTYPE` records.
A detection is given in polar form in the radar frame (x forward, y left, z up): range (m),
azimuth and elevation (rad), and the radial (Doppler) velocity (m/s, negative approaching).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from twinsim.errors import SequenceError
from twinsim.model.layout import TABLE_FILE
from twinsim.sequence.poses import rows_to_poses
from twinsim.sequence.scans import read_records
from twinsim.sequence.stream_checks import (
    StreamCheck,
    _check_quaternions,
    check_table,
    check_unlisted,
    label_problems,
)
from twinsim.sequence.tables import parse_table

DETECTIONS_DIR = "detections"
#: data.csv's columns after t_ns: the radar's world pose at the scan, its number of detections
INDEX_COLUMNS = ("x", "y", "z", "qx", "qy", "qz", "qw", "detections")
DETECTION_DTYPE = np.dtype(
    [
        ("range", "<f4"),
        ("azimuth", "<f4"),
        ("elevation", "<f4"),
        ("velocity", "<f4"),
        ("instance", "<u4"),
        ("semantic", "<u2"),
        ("dynamic", "?"),
    ]
)


def detections_relpath(index: int) -> str:
    """Path of scan `index`'s detections inside the stream folder, e.g. detections/000012.npy."""
    return f"{DETECTIONS_DIR}/{index:06d}.npy"


@dataclass(frozen=True)
class RadarScan:
    """One radar scan at t_ns from the pose `T_world_radar`: per detection its polar position
    in the radar frame, radial velocity (m/s, negative approaching) and the labels of the hit
    (`instance` 0 = none, `semantic`, `dynamic`: person, flying object or vehicle)."""

    index: int
    t_ns: int
    T_world_radar: np.ndarray
    range: np.ndarray
    azimuth: np.ndarray
    elevation: np.ndarray
    velocity: np.ndarray
    instance: np.ndarray
    semantic: np.ndarray
    dynamic: np.ndarray

    def __len__(self) -> int:
        return len(self.range)

    @property
    def directions(self) -> np.ndarray:
        """(N, 3) unit ray directions in the radar frame."""
        az, el = np.asarray(self.azimuth, float), np.asarray(self.elevation, float)
        return np.stack([np.cos(el) * np.cos(az), np.cos(el) * np.sin(az), np.sin(el)], axis=1)

    @property
    def points(self) -> np.ndarray:
        """(N, 3) detections in the radar frame (m)."""
        return self.directions * np.asarray(self.range, float)[:, None]

    def to_records(self) -> np.ndarray:
        """The detections as one `DETECTION_DTYPE` array (the file's content)."""
        rec = np.empty(len(self), DETECTION_DTYPE)
        for name in DETECTION_DTYPE.names:
            rec[name] = getattr(self, name)
        return rec

    @classmethod
    def from_records(
        cls, index: int, t_ns: int, T_world_radar: np.ndarray, rec: np.ndarray
    ) -> RadarScan:
        fields = {name: rec[name] for name in DETECTION_DTYPE.names}
        return cls(index=index, t_ns=t_ns, T_world_radar=T_world_radar, **fields)


class RadarStream:
    """Scans of one radar: times, poses and counts up front, detections read on access."""

    def __init__(self, folder: Path, name: str) -> None:
        self.name, self.folder = name, folder
        label = f"{name}/{TABLE_FILE}"
        table = parse_table(folder / TABLE_FILE, 1, label)
        if table.columns != ("t_ns", *INDEX_COLUMNS):
            raise SequenceError(f"{label}: header must be t_ns,{','.join(INDEX_COLUMNS)}")
        self.t_ns: np.ndarray = table.ints[:, 0]
        #: the index's pose columns as read: a copy of the stream writes them back bit-exactly
        self.pose_rows: np.ndarray = table.values[:, :7]
        self.T_world_radar: np.ndarray = rows_to_poses(self.pose_rows)
        self.counts: np.ndarray = table.values[:, 7].astype(np.int64)

    def __len__(self) -> int:
        return len(self.t_ns)

    def __iter__(self) -> Iterator[RadarScan]:
        for index in range(len(self)):
            yield self[index]

    def __getitem__(self, index: int) -> RadarScan:
        """Load scan `index` (negative counts from the end)."""
        n = len(self)
        if not -n <= index < n:
            raise IndexError(f"{self.name}: scan {index} out of range for {n} scans")
        index %= n
        rel = detections_relpath(index)
        rec = read_records(self.folder / rel, DETECTION_DTYPE, f"{self.name}/{rel}")
        return RadarScan.from_records(
            index, int(self.t_ns[index]), self.T_world_radar[index].copy(), rec
        )


def check_radar(check: StreamCheck) -> None:
    """data.csv (times on the stream's schedule, unit quaternions) and every scan's file:
    its record type, as many detections as the index says, finite values, ranges in
    (0, range_m], angles inside the field of view, known instance and semantic ids."""
    table = check_table(check, INDEX_COLUMNS)
    if table is None or table.columns[1:] != INDEX_COLUMNS:
        return
    label = f"{check.name}/{TABLE_FILE}"
    _check_quaternions(check, label, table.values[:, 3:7])
    info, n = check.info, len(table.ints)
    limits = [info.get(k) for k in ("range_m", "horizontal_fov_deg", "vertical_fov_deg")]
    if not all(isinstance(v, (int, float)) and v > 0 for v in limits):
        check.problems.append(
            f"{check.name}: metadata.json gives no positive range_m, horizontal_fov_deg and "
            "vertical_fov_deg"
        )
        limits = None
    found = []
    for index in range(n):
        if check.decode:
            found.extend(_scan_problems(check, index, int(table.values[index, 7]), limits))
        elif not (check.folder / detections_relpath(index)).is_file():
            found.append(f"{check.name}/{detections_relpath(index)}: missing")
    check.report(found)
    listed = {Path(detections_relpath(i)).name for i in range(n)}
    check_unlisted(check, check.folder / DETECTIONS_DIR, listed, label)
    check.count("scans", n)
    check.count("files", n)


def _scan_problems(
    check: StreamCheck, index: int, count: int, limits: list[float] | None
) -> list[str]:
    """Decode one scan's detections and check every field against the format."""
    ctx, label = check.context, f"{check.name}/{detections_relpath(index)}"
    try:
        rec = read_records(check.folder / detections_relpath(index), DETECTION_DTYPE, label)
    except SequenceError as exc:
        return [str(exc)]
    found = []
    if len(rec) != count:
        found.append(f"{label}: {len(rec)} detections, data.csv says {count}")
    values = [rec[k].astype(np.float64) for k in ("range", "azimuth", "elevation", "velocity")]
    if not all(np.isfinite(v).all() for v in values):
        return [*found, f"{label}: values are not finite"]
    if limits is not None:
        rng, az, el = values[:3]
        range_m, h, v = limits[0], np.deg2rad(limits[1]) / 2, np.deg2rad(limits[2]) / 2
        if np.any(rng <= 0.0) or np.any(rng > range_m * (1 + 1e-6)):
            found.append(f"{label}: range outside (0, {range_m}] m")
        if np.any(np.abs(az) > h + 1e-6) or np.any(np.abs(el) > v + 1e-6):
            found.append(f"{label}: azimuth or elevation outside the field of view")
    return found + label_problems(rec, label, ctx)
