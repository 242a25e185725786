"""The writers of one open stream each, one class a layout: a table, a LiDAR, an event camera,
a robot's contacts and a stream of a kind's own files (the camera's is in `camera_writer.py`).

`SequenceWriter` checks a stream against its metadata, starts it with the class of its layout
and routes each call to it; each class checks what it is given, writes its files and counts
its samples for the metadata's `count`.
"""

from __future__ import annotations

import operator
import os
import re
from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path, PurePath
from typing import Any, ClassVar, TextIO

import numpy as np

from twinsim.errors import OutputFolderError
from twinsim.model.layout import TABLE_FILE
from twinsim.sequence.contacts import CONTACT_DTYPE, CONTACTS_FILE
from twinsim.sequence.poses import pose_to_row
from twinsim.sequence.scans import (
    EVENT_DTYPE,
    EVENTS_FILE,
    POINTS_DIR,
    SCAN_COLUMNS,
    SCANS_FILE,
    LidarScan,
    RecordAppender,
    event_records,
    points_path,
)
from twinsim.sequence.tables import format_row
from twinsim.sequence.write_queue import WriteQueue

#: One component of a path inside a stream folder: a plain name (no `.`, `..` or hidden files).
_PLAIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


class StreamWriter(ABC):
    """One open stream: its files and `count`, the samples metadata records for it."""

    label: ClassVar[str]  # how errors name the layout ("table", "camera", ...)
    opener: ClassVar[str]  # the `SequenceWriter` call that starts a stream of this layout
    count: int

    def __init__(self, name: str) -> None:
        self.name = name

    @abstractmethod
    def close(self) -> None:
        """Close the stream's open files (safe to call twice)."""

    @abstractmethod
    def checkpoint(self) -> dict:
        """What `resume` needs to continue the stream from here (JSON values): its count, last
        stamp and the sizes of its appended files; queued writes must have finished."""

    @abstractmethod
    def appended_files(self) -> dict[Path, int]:
        """The files this stream appends to, each with the bytes at its head that closing the
        stream rewrites (a checkpoint vouches for the bytes between those and its end)."""


class TableWriter(StreamWriter):
    """`<stream>/data.csv`: header t_ns + columns, one float64 row a sample, flushed at once."""

    label, opener = "table", "add_table"

    def __init__(
        self, name: str, folder: Path, columns: Sequence[str], resume: dict | None = None
    ) -> None:
        """`resume`: a `checkpoint` of this stream in an interrupted run, continued from there."""
        super().__init__(name)
        columns = list(columns)
        if "t_ns" in columns or len(set(columns)) != len(columns) or not all(columns):
            raise ValueError(f"{name}: columns must be unique, non-empty, without t_ns")
        self.n_values = len(columns)
        if resume is None:
            folder.mkdir()
            self.file = open_lines(folder / TABLE_FILE)
            self.file.write(",".join(["t_ns", *columns]) + "\n")
            self.count, self.last_t_ns = 0, None
        else:
            self.file = reopen_lines(folder / TABLE_FILE, resume["size"])
            self.count, self.last_t_ns = resume["count"], resume["last_t_ns"]

    def append(self, t_ns: int, values: np.ndarray | Sequence[float]) -> None:
        """Append one row at t_ns, strictly after the previous row."""
        t_ns = later_time(self.name, t_ns, self.last_t_ns)
        row = np.asarray(values, dtype=np.float64)
        if row.shape != (self.n_values,):
            raise ValueError(f"{self.name}: expected {self.n_values} values, got shape {row.shape}")
        self.file.write(format_row((t_ns,), row))
        self.count += 1
        self.last_t_ns = t_ns

    def checkpoint(self) -> dict:
        return {"count": self.count, "last_t_ns": self.last_t_ns, "size": file_size(self.file)}

    def appended_files(self) -> dict[Path, int]:
        return {Path(self.file.name): 0}

    def close(self) -> None:
        self.file.close()


class LidarWriter(StreamWriter):
    """scans.csv (one pose row a sweep) and points/ (one .npy of records a sweep)."""

    label, opener = "LiDAR", "add_lidar"

    def __init__(self, name: str, folder: Path, resume: dict | None = None) -> None:
        super().__init__(name)
        self.folder = folder
        if resume is None:
            folder.mkdir()
            (folder / POINTS_DIR).mkdir()
            self.scans = open_lines(folder / SCANS_FILE)
            self.scans.write(",".join(SCAN_COLUMNS) + "\n")
            self.count, self.last_t_ns = 0, None
        else:
            self.scans = reopen_lines(folder / SCANS_FILE, resume["size"])
            self.count, self.last_t_ns = resume["count"], resume["last_t_ns"]
            remove_files_from(folder / POINTS_DIR, self.count)

    def write(self, scan: LidarScan, scan_line: str | None) -> None:
        """Write the next sweep's points and its scans.csv row (`scan_line` kept verbatim)."""
        if operator.index(scan.index) != self.count:
            raise ValueError(f"{self.name}: scan index {scan.index}, expected {self.count}")
        t_ns = later_time(self.name, scan.t_ns, self.last_t_ns)
        row = format_row((self.count, t_ns), pose_to_row(scan.T_world_lidar))
        if scan_line is not None:
            if not scan_line.startswith(f"{self.count},{t_ns},"):
                raise ValueError(
                    f"{self.name}: copied line is not scan {self.count} at t_ns {t_ns}"
                )
            row = scan_line.rstrip("\n") + "\n"
        records = scan.to_records()
        try:
            with points_path(self.folder, self.count).open("wb") as f:
                np.save(f, records, allow_pickle=False)
        except OSError as exc:
            raise OutputFolderError(
                f"{self.name}: scan {self.count} cannot be written ({exc})"
            ) from None
        self.scans.write(row)
        self.count += 1
        self.last_t_ns = t_ns

    def checkpoint(self) -> dict:
        return {"count": self.count, "last_t_ns": self.last_t_ns, "size": file_size(self.scans)}

    def appended_files(self) -> dict[Path, int]:
        return {Path(self.scans.name): 0}

    def close(self) -> None:
        self.scans.close()


class EventWriter(StreamWriter):
    """events.npy: records appended as events come, the header's count sealed at close."""

    label, opener = "event", "add_events"

    def __init__(
        self, name: str, folder: Path, width: int, height: int, resume: dict | None = None
    ) -> None:
        super().__init__(name)
        if resume is None:
            folder.mkdir()
        count = None if resume is None else resume["count"]
        self.records = RecordAppender(folder / EVENTS_FILE, EVENT_DTYPE, count)
        self.width, self.height = width, height
        self.last_t_ns: int | None = None if resume is None else resume["last_t_ns"]

    @property
    def count(self) -> int:
        """Events written."""
        return self.records.count

    def append(self, x: np.ndarray, y: np.ndarray, t_ns: np.ndarray, polarity: np.ndarray) -> None:
        """Append events sorted by time, none earlier than the last one written."""
        rec = event_records(x, y, t_ns, polarity)
        if not len(rec):
            return
        t = rec["t_ns"]
        if np.any(np.diff(t) < 0) or (self.last_t_ns is not None and t[0] < self.last_t_ns):
            raise ValueError(f"{self.name}: event times must not decrease")
        if rec["x"].max() >= self.width or rec["y"].max() >= self.height:
            raise ValueError(f"{self.name}: event pixel outside {self.width}x{self.height}")
        if not np.isin(rec["polarity"], (-1, 1)).all():
            raise ValueError(f"{self.name}: polarity must be +1 or -1")
        self.records.append(rec)
        self.last_t_ns = int(t[-1])

    def checkpoint(self) -> dict:
        self.records.flush()
        return {"count": self.count, "last_t_ns": self.last_t_ns}

    def appended_files(self) -> dict[Path, int]:
        return {self.records.path: self.records.header_size}

    def close(self) -> None:
        self.records.close()


class ContactWriter(StreamWriter):
    """contacts.npy: a robot's contact records appended step by step, the count sealed at close."""

    label, opener = "contacts", "add_contacts"

    def __init__(self, name: str, folder: Path, n_parts: int, resume: dict | None = None) -> None:
        super().__init__(name)
        if resume is None:
            folder.mkdir()
        count = None if resume is None else resume["count"]
        self.records = RecordAppender(folder / CONTACTS_FILE, CONTACT_DTYPE, count)
        self.n_parts = n_parts
        self.last_t_ns: int | None = None if resume is None else resume["last_t_ns"]

    @property
    def count(self) -> int:
        """Contact records written."""
        return self.records.count

    def append(self, records: np.ndarray) -> None:
        """Append one step's records (all at one t_ns, after the previous step's)."""
        if records.dtype != CONTACT_DTYPE:
            raise ValueError(f"{self.name}: records are {records.dtype}, expected {CONTACT_DTYPE}")
        if not len(records):
            return
        t = records["t_ns"]
        if np.any(t != t[0]) or (self.last_t_ns is not None and t[0] <= self.last_t_ns):
            raise ValueError(f"{self.name}: one step's records share a t_ns after the last one")
        if int(records["part"].max()) >= self.n_parts:
            raise ValueError(f"{self.name}: part index outside the robot's {self.n_parts} parts")
        self.records.append(records)
        self.last_t_ns = int(t[0])

    def checkpoint(self) -> dict:
        self.records.flush()
        return {"count": self.count, "last_t_ns": self.last_t_ns}

    def appended_files(self) -> dict[Path, int]:
        return {self.records.path: self.records.header_size}

    def close(self) -> None:
        self.records.close()


class FilesWriter(StreamWriter):
    """A stream of a kind's own files, written on the I/O queue, with an optional index table.

    `count` is the index's rows where the stream has an index (its samples, as a camera's
    frames), else the files written.
    """

    label, opener = "files", "add_files"

    def __init__(
        self,
        name: str,
        folder: Path,
        queue: WriteQueue,
        index_columns: Sequence[str] | None,
        resume: dict | None = None,
    ) -> None:
        super().__init__(name)
        index_state = None if resume is None else resume["index"]
        # the index table makes the folder, after checking its columns
        self.index = (
            None if index_columns is None else TableWriter(name, folder, index_columns, index_state)
        )
        if self.index is None and resume is None:
            folder.mkdir()
        self.folder, self._queue = folder, queue
        self._written: set[str] = set() if resume is None else set(resume["files"])
        if resume is not None:
            _remove_unlisted(folder, self._written | ({TABLE_FILE} if self.index else set()))

    @property
    def count(self) -> int:
        """The index's rows, else the files written."""
        return self.index.count if self.index is not None else len(self._written)

    def append(self, t_ns: int, values: np.ndarray | Sequence[float]) -> None:
        """Append one row to the stream's index (data.csv), strictly after the previous one."""
        if self.index is None:
            raise ValueError(f"{self.name}: this files stream has no index (add_files columns)")
        self.index.append(t_ns, values)

    def write(self, relpath: str | PurePath, data: bytes | np.ndarray) -> None:
        """Queue one file: bytes as they are, an array as .npy; each relpath is written once."""
        rel = self._checked_relpath(relpath)
        if isinstance(data, np.ndarray):
            if not rel.endswith(".npy"):
                raise ValueError(f"{self.name}/{rel}: an array is written as .npy")
            if data.dtype.hasobject:
                raise ValueError(f"{self.name}/{rel}: {data.dtype} arrays need pickle")
            # a copy (the caller may reuse the array) in the memory order np.save keeps
            order = "F" if np.isfortran(data) else "C"
            content: bytes | np.ndarray = np.array(data, order=order, copy=True)
        elif isinstance(data, bytes | bytearray | memoryview):
            content = bytes(data)
        else:
            raise TypeError(f"{self.name}/{rel}: data must be bytes or a numpy array")
        self._written.add(rel)
        self._queue.submit([(_write_file, self.folder / rel, content)])

    def checkpoint(self) -> dict:
        index = None if self.index is None else self.index.checkpoint()
        return {"index": index, "files": sorted(self._written)}

    def appended_files(self) -> dict[Path, int]:
        return {} if self.index is None else self.index.appended_files()

    def close(self) -> None:
        if self.index is not None:
            self.index.close()

    def _checked_relpath(self, relpath: str | PurePath) -> str:
        """`relpath` as '/'-separated plain names inside the stream folder, not yet written."""
        rel = relpath if isinstance(relpath, str) else PurePath(relpath).as_posix()
        if not all(_PLAIN_NAME.fullmatch(part) for part in rel.split("/")):
            raise ValueError(
                f"{self.name}: file {rel!r} must be a relative path of plain names "
                "(letters, digits, _-., none starting with a dot) inside the stream folder"
            )
        if self.index is not None and rel == TABLE_FILE:
            raise ValueError(f"{self.name}: {TABLE_FILE} is the stream's index")
        if rel in self._written:
            raise ValueError(f"{self.name}: file {rel!r} was already written")
        return rel


def _write_file(path: Path, content: bytes | np.ndarray) -> None:
    """Write one file of a files stream (making its folders), as OutputFolderError on failure."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, np.ndarray):
            with path.open("wb") as f:
                np.save(f, content, allow_pickle=False)
        else:
            path.write_bytes(content)
    except OSError as exc:
        raise OutputFolderError(f"{path}: cannot be written ({exc})") from None


def open_lines(path: Path) -> TextIO:
    """A line-buffered text file: every complete row reaches the OS as soon as it is written."""
    return path.open("w", encoding="utf-8", newline="\n", buffering=1)


def reopen_lines(path: Path, size: int) -> TextIO:
    """`open_lines` of an interrupted run's file, cut back to `size` bytes (what a checkpoint
    saw) and appended to from there."""
    try:
        if path.stat().st_size < size:
            raise OutputFolderError(f"{path}: shorter than its checkpoint ({size} bytes)")
        os.truncate(path, size)
        return path.open("a", encoding="utf-8", newline="\n", buffering=1)
    except OSError as exc:
        raise OutputFolderError(f"{path}: cannot be resumed ({exc.strerror})") from None


def file_size(file: TextIO) -> int:
    """Bytes of an open file that have reached the OS."""
    file.flush()
    return os.fstat(file.fileno()).st_size


def remove_files_from(folder: Path, first: int) -> None:
    """Delete the numbered files (`000042.npy`, …) of `folder` from index `first` on, and any
    other file the interrupted writer left there: a resumed run writes them again."""
    for path in folder.iterdir():
        stem = path.name.split(".", 1)[0]
        if not stem.isdigit() or int(stem) >= first:
            path.unlink()


def _remove_unlisted(folder: Path, keep: set[str]) -> None:
    """Delete the files below `folder` that a checkpoint did not list as written."""
    for path in sorted(folder.rglob("*")):
        if path.is_file() and path.relative_to(folder).as_posix() not in keep:
            path.unlink()


def later_time(stream: str, t_ns: int, last: int | None) -> int:
    """t_ns as a Python int, checked to be strictly after the stream's previous timestamp."""
    if isinstance(t_ns, bool | float):
        raise TypeError(f"{stream}: t_ns must be an integer number of nanoseconds, got {t_ns!r}")
    t_ns = operator.index(t_ns)
    if last is not None and t_ns <= last:
        raise ValueError(f"{stream}: t_ns {t_ns} is not after the previous {last}")
    return t_ns


def json_default(value: Any) -> Any:
    """Serialise numpy scalars and arrays found in metadata or boxes as plain JSON values."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"{type(value).__name__} is not JSON serialisable: {value!r}")
