"""LiDAR scans and event streams as data, and their files: structured little-endian .npy arrays.

A scan is one file `<lidar>/points/NNNNNN.npy` of `POINT_DTYPE` records; an event camera's
events are one file `<camera>/events.npy` of `EVENT_DTYPE` records, appended while the run goes
and given its final header (the record count) at close, so memory stays flat over long runs.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np

from twinsim.errors import OutputFolderError, SequenceError
from twinsim.sequence.images import npy_problem

SCANS_FILE = "scans.csv"
POINTS_DIR = "points"
EVENTS_FILE = "events.npy"
SCAN_COLUMNS = ("scan", "t_ns", "x", "y", "z", "qx", "qy", "qz", "qw")

POINT_DTYPE = np.dtype(
    [
        ("x", "<f4"),
        ("y", "<f4"),
        ("z", "<f4"),
        ("t_offset_ns", "<i8"),
        ("range", "<f4"),
        ("intensity", "<f4"),
        ("instance", "<u4"),
        ("semantic", "<u2"),
        ("ring", "<u2"),
        ("dynamic", "?"),
    ]
)
EVENT_DTYPE = np.dtype([("t_ns", "<i8"), ("x", "<u2"), ("y", "<u2"), ("polarity", "i1")])

_NPY_MAGIC = b"\x93NUMPY\x01\x00"
_NPY_HEADER_BYTES = 256  # magic + length + padded dict, a multiple of 64 as numpy writes


def points_path(lidar_dir: Path, index: int) -> Path:
    """Path of one scan's points, e.g. lidar0/points/000012.npy."""
    return lidar_dir / POINTS_DIR / f"{index:06d}.npy"


@dataclass(frozen=True)
class LidarScan:
    """One sweep: points in the LiDAR frame at each point's own capture time (motion distorted).

    `t_ns` is the start of the sweep and `T_world_lidar` the pose then; per point: `t_offset_ns`
    (capture time − t_ns), `ring` (0 = lowest beam), `intensity` in [0, 1], `range` (m),
    `instance` (0 = none), `semantic` (0 = unlabeled), `dynamic` (person or flying object).
    """

    index: int
    t_ns: int
    T_world_lidar: np.ndarray
    points: np.ndarray
    t_offset_ns: np.ndarray
    ring: np.ndarray
    intensity: np.ndarray
    range: np.ndarray
    instance: np.ndarray
    semantic: np.ndarray
    dynamic: np.ndarray

    def __len__(self) -> int:
        return len(self.range)

    def to_records(self) -> np.ndarray:
        """The scan's points as one `POINT_DTYPE` array (the file's content)."""
        rec = np.empty(len(self), POINT_DTYPE)
        rec["x"], rec["y"], rec["z"] = np.asarray(self.points, np.float32).reshape(-1, 3).T
        for name in POINT_DTYPE.names[3:]:
            rec[name] = getattr(self, name)
        return rec

    @classmethod
    def from_records(
        cls, index: int, t_ns: int, T_world_lidar: np.ndarray, rec: np.ndarray
    ) -> LidarScan:
        fields = {name: np.ascontiguousarray(rec[name]) for name in POINT_DTYPE.names[3:]}
        points = np.stack([rec["x"], rec["y"], rec["z"]], axis=1).astype(np.float32)
        return cls(index=index, t_ns=t_ns, T_world_lidar=T_world_lidar, points=points, **fields)


@dataclass(frozen=True)
class EventData:
    """Events of one event camera: pixel x (column), y (row), t_ns (sorted), polarity ±1."""

    x: np.ndarray
    y: np.ndarray
    t_ns: np.ndarray
    polarity: np.ndarray
    K: np.ndarray
    width: int
    height: int

    def __len__(self) -> int:
        return len(self.t_ns)


def event_records(x: np.ndarray, y: np.ndarray, t_ns: np.ndarray, polarity: np.ndarray):
    """Pack event columns into one `EVENT_DTYPE` array."""
    rec = np.empty(len(t_ns), EVENT_DTYPE)
    rec["t_ns"], rec["x"], rec["y"], rec["polarity"] = t_ns, x, y, polarity
    return rec


def _npy_header(dtype: np.dtype, count: int) -> bytes:
    """A version 1.0 .npy header for a 1-D array of `count` records, of one size for any count
    (256 bytes, or the next multiple of 64 a wide record type needs)."""
    descr = np.lib.format.dtype_to_descr(dtype)
    text = repr({"descr": descr, "fortran_order": False, "shape": (count,)})
    widest = len(text) - len(str(count)) + 20  # room for any int64 count
    size = _NPY_HEADER_BYTES
    while size - len(_NPY_MAGIC) - 2 - 1 < widest:
        size += 64
    room = size - len(_NPY_MAGIC) - 2
    body = text.ljust(room - 1).encode("latin1") + b"\n"
    if len(body) != room:
        raise ValueError(f"npy header of {len(text)} characters does not fit")
    return _NPY_MAGIC + struct.pack("<H", room) + body


class RecordAppender:
    """Appends records of one dtype to a .npy file; `close` writes the final record count."""

    def __init__(self, path: Path, dtype: np.dtype, resume_count: int | None = None) -> None:
        """`resume_count`: continue an interrupted run's file after its first records."""
        self.path, self.dtype = Path(path), np.dtype(dtype)
        self.count = resume_count or 0
        try:
            if resume_count is None:
                self._file: BinaryIO | None = self.path.open("wb")
                self._file.write(_npy_header(self.dtype, 0))
                return
            size = len(_npy_header(self.dtype, 0)) + self.count * self.dtype.itemsize
            if self.path.stat().st_size < size:
                raise OutputFolderError(f"{path}: shorter than its checkpoint ({size} bytes)")
            self._file = self.path.open("r+b")
            self._file.truncate(size)
            self._file.seek(size)
        except OSError as exc:
            raise OutputFolderError(f"{path}: cannot be written ({exc})") from None

    @property
    def header_size(self) -> int:
        """Bytes of the header, which `close` rewrites."""
        return len(_npy_header(self.dtype, 0))

    def append(self, records: np.ndarray) -> None:
        if records.dtype != self.dtype:
            raise ValueError(
                f"{self.path.name}: records are {records.dtype}, expected {self.dtype}"
            )
        if self._file is None:
            raise ValueError(f"{self.path.name}: already closed")
        self._file.write(np.ascontiguousarray(records).tobytes())
        self.count += len(records)

    def flush(self) -> None:
        """Hand the records appended so far to the OS (a checkpoint counts on them)."""
        if self._file is not None:
            self._file.flush()

    def close(self) -> None:
        """Rewrite the header with the record count and close (safe to call twice)."""
        if self._file is None:
            return
        self._file.seek(0)
        self._file.write(_npy_header(self.dtype, self.count))
        self._file.close()
        self._file = None


def read_records(path: Path, dtype: np.dtype, name: str) -> np.ndarray:
    """Load a 1-D structured .npy of `dtype` without pickle; `name` labels errors."""
    if not path.is_file():
        raise SequenceError(f"{name}: missing")
    try:
        array = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError, SyntaxError) as exc:
        raise SequenceError(f"{name}: cannot be read ({npy_problem(exc)})") from None
    if array.dtype != dtype or array.ndim != 1:
        raise SequenceError(f"{name}: {array.dtype}{array.shape}, expected 1-D records {dtype}")
    return array
