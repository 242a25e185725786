"""`SequenceWriter`: streams a run into a sequence folder as it is simulated.

Each stream is written by the class of its layout (`stream_writers.py`, `camera_writer.py`):
tables are appended line by line and flushed at once; images and a kind's own files are written
on a small thread pool (`WriteQueue`) so they overlap with rendering, with a bound on writes in
flight so memory stays flat over long runs. The writer checks each stream against its metadata
and keeps the life cycle: the folder carries an INCOMPLETE marker until `close()` has finished
every write, recorded each stream's count and written the final metadata. A writer made with
`resume` (a `checkpoint` of an interrupted run into the same folder) continues each stream from
where the checkpoint saw it, so the finished folder is the one an uninterrupted run writes.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path, PurePath
from types import TracebackType
from typing import Any, TypeVar

import numpy as np

from twinsim.atomic import check_names, check_plain_folder, folder_lock, lock_folder
from twinsim.errors import OutputFolderError
from twinsim.model.layout import (
    CHECKSUMS,
    INCOMPLETE,
    METADATA,
    RESUME,
    RESUME_TMP,
    SCENE,
    SEQUENCE_FORMAT,
    SEQUENCE_FORMAT_VERSION,
    STATUS_COMPLETE,
    STATUS_INCOMPLETE,
    check_stream_name,
    sequence_containing,
)
from twinsim.sequence.assets import write_assets
from twinsim.sequence.camera_writer import CameraWriter
from twinsim.sequence.checksums import write_checksums
from twinsim.sequence.frames import CameraFrame, CopiedFrame
from twinsim.sequence.ledger import ContentLedger, Ledger
from twinsim.sequence.scans import LidarScan
from twinsim.sequence.stream_writers import (
    ContactWriter,
    EventWriter,
    FilesWriter,
    LidarWriter,
    StreamWriter,
    TableWriter,
    json_default,
)
from twinsim.sequence.write_queue import WriteQueue

logger = logging.getLogger(__name__)

#: The stream types with a layout of the writer's own, and its writer; a stream of any other
#: type is a table (`add_table`) or a kind's own files (`add_files`).
_LAYOUTS: dict[str, type[StreamWriter]] = {
    "camera": CameraWriter,
    "lidar": LidarWriter,
    "event_camera": EventWriter,
    "contacts": ContactWriter,
}

_INCOMPLETE_TEXT = (
    "This sequence is incomplete: its writer has not finished (the run is still being written,\n"
    "or it was interrupted). Readers refuse it; twinsim.sequence.validate_sequence reports\n"
    "what is there.\n"
)

W = TypeVar("W", bound=StreamWriter)


class SequenceWriter:
    """Writes one sequence folder; use as a context manager so a failed run stays marked partial."""

    def __init__(
        self,
        path: Path,
        scene_json: str,
        metadata: dict,
        image_workers: int = 2,
        rgb_png_level: int = 0,
        resume: dict[str, dict] | None = None,
        assets: Mapping[str, bytes] | None = None,
    ) -> None:
        """`rgb_png_level` is the zlib level of RGB PNGs: 0 stores (~0.9 MB a 640×480 frame, no
        CPU), 1–9 compress to ~0.4 MB at ~15–25 ms of CPU a frame, which on 2 cores slows a run.
        `resume`: stream name → its `checkpoint` state, to continue an interrupted run in
        `path`, whose scene and metadata must be the ones given. `assets`: the scene's mesh
        asset files (`SceneSpec.asset_files()`), written beside `scene.json`."""
        self.path = Path(path)
        self._rgb_png_level = rgb_png_level
        self._metadata = _plain_json(metadata)
        self._metadata.setdefault("streams", {})
        self._metadata["format"] = SEQUENCE_FORMAT
        self._metadata["format_version"] = SEQUENCE_FORMAT_VERSION
        self._metadata["status"] = STATUS_INCOMPLETE
        if resume is None:
            _prepare_folder(self.path)
        self._lock: int | None = lock_folder(self.path)
        try:
            if resume is None:
                _claim(self.path)
                (self.path / SCENE).write_text(scene_json, encoding="utf-8")
                write_assets(self.path, assets or {})
                _write_json_atomic(self.path / METADATA, self._metadata)
            else:
                _check_same_run(self.path, scene_json, self._metadata)
        except BaseException:
            os.close(self._lock)
            raise
        self._resume = resume
        self._streams: dict[str, StreamWriter] = {}
        self._queue = WriteQueue(image_workers)
        self._ledger = ContentLedger()
        self._closed = False

    def add_table(self, stream: str, columns: Sequence[str]) -> None:
        """Start `<stream>/data.csv` with header t_ns + columns (float64 values)."""
        folder = self._new_stream(stream, TableWriter)
        self._streams[stream] = TableWriter(stream, folder, columns, self._resumed(stream))

    def append(self, stream: str, t_ns: int, values: np.ndarray | Sequence[float]) -> None:
        """Append one row at time t_ns (strictly after the previous row) and flush it: to a
        table, or to the index of a stream of files."""
        self._open(stream, TableWriter, FilesWriter).append(t_ns, values)

    def add_camera(self, name: str, kinds: tuple[str, ...] = ()) -> None:
        """Start a camera stream: its image folders, frames.csv and boxes.jsonl; `kinds`: the
        optional per-frame files it holds (normals, flow and flow_valid)."""
        folder = self._new_stream(name, CameraWriter)
        self._streams[name] = CameraWriter(
            name, folder, self._queue, self._rgb_png_level, self._resumed(name), kinds
        )

    def write_frame(self, name: str, frame: CameraFrame) -> None:
        """Queue a frame's images for writing and record its pose and boxes (in index order)."""
        self._open(name, CameraWriter).write(frame)

    def write_flow(self, name: str, index: int, flow: np.ndarray, valid: np.ndarray) -> None:
        """Queue the forward flow and its validity of frame `index`, the last one written."""
        self._open(name, CameraWriter).write_flow(index, flow, valid)

    def write_copied_frame(self, name: str, frame: CopiedFrame) -> None:
        """Record a frame taken from another sequence: its image files are copied (the colour
        and depth images written instead where the frame gives new ones) and its frames.csv
        and boxes.jsonl lines kept verbatim."""
        self._open(name, CameraWriter).write_copied(frame)

    def add_lidar(self, name: str) -> None:
        """Start a LiDAR stream: scans.csv (one pose row per sweep) and points/ (one file each)."""
        folder = self._new_stream(name, LidarWriter)
        self._streams[name] = LidarWriter(name, folder, self._resumed(name))

    def write_scan(self, name: str, scan: LidarScan, scan_line: str | None = None) -> None:
        """Write one sweep's points (in index order) and its start time and pose; `scan_line`:
        the scans.csv line of the same sweep in another sequence, kept verbatim (noisy copies)."""
        self._open(name, LidarWriter).write(scan, scan_line)

    def add_events(self, name: str, width: int, height: int) -> None:
        """Start an event stream: events.npy, appended to as events come, sealed at close."""
        folder = self._new_stream(name, EventWriter)
        self._streams[name] = EventWriter(name, folder, width, height, self._resumed(name))

    def append_events(
        self, name: str, x: np.ndarray, y: np.ndarray, t_ns: np.ndarray, polarity: np.ndarray
    ) -> None:
        """Append events sorted by time, none earlier than the last one written."""
        self._open(name, EventWriter).append(x, y, t_ns, polarity)

    def add_contacts(self, name: str, n_parts: int) -> None:
        """Start a robot's contacts stream: contacts.npy, appended step by step, sealed at close."""
        folder = self._new_stream(name, ContactWriter)
        self._streams[name] = ContactWriter(name, folder, n_parts, self._resumed(name))

    def append_contacts(self, name: str, records: np.ndarray) -> None:
        """Append one step's contact records (`twinsim.sequence.contacts.CONTACT_DTYPE`)."""
        self._open(name, ContactWriter).append(records)

    def add_files(self, name: str, index_columns: Sequence[str] | None = None) -> None:
        """Start a stream of a sensor kind's own files (a type without a layout here): its
        folder, filled by `write_file`; with `index_columns`, also an index `data.csv` (t_ns +
        those columns) filled by `append`. Its `count` is the index's rows, else its files."""
        folder = self._new_stream(name, FilesWriter)
        self._streams[name] = FilesWriter(
            name, folder, self._queue, index_columns, self._resumed(name)
        )

    def write_file(self, name: str, relpath: str | PurePath, data: bytes | np.ndarray) -> None:
        """Queue one file of a files stream on the I/O pool, like images (a failure is raised
        by a later write or by `close`): bytes as they are, an array as `.npy`; `relpath` is
        '/'-separated plain names inside the stream folder (folders are made), each once."""
        self._open(name, FilesWriter).write(relpath, data)

    def checkpoint(self) -> dict[str, dict]:
        """Finish the queued writes and return each stream's state (what `resume` takes): the
        folder holds every sample written so far, complete."""
        self._queue.drain()
        return {name: stream.checkpoint() for name, stream in self._streams.items()}

    def contents(self) -> Ledger:
        """The CRC-32 and size of every file written so far (call right after `checkpoint`),
        which a resume checks the folder against before it changes anything."""
        appended = {
            path.relative_to(self.path).as_posix(): head
            for stream in self._streams.values()
            for path, head in stream.appended_files().items()
        }
        return self._ledger.update(self.path, appended)

    def close(self, extra_metadata: dict | None = None) -> None:
        """Finish every write, record per-stream counts, mark complete and remove INCOMPLETE
        (and a resume checkpoint, which a complete folder has no use for)."""
        if self._closed:
            return
        try:
            self._queue.drain()
            self._close_files()
            if self._resume is not None and set(self._resume) != set(self._streams):
                missing = sorted(set(self._resume) - set(self._streams))
                raise OutputFolderError(f"{self.path}: resumed without stream(s) {missing}")
            for name in (RESUME, RESUME_TMP):
                (self.path / name).unlink(missing_ok=True)
            if extra_metadata:
                _merge(self._metadata, _plain_json(extra_metadata))
            for name, stream in self._streams.items():
                self._metadata["streams"][name]["count"] = stream.count
            write_checksums(self.path)
            self._metadata["checksums"] = CHECKSUMS
            self._metadata["status"] = STATUS_COMPLETE
            _write_json_atomic(self.path / METADATA, self._metadata)
            (self.path / INCOMPLETE).unlink()
        finally:
            self._shut_down()

    def __enter__(self) -> SequenceWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is None:
            self.close()
        elif not self._closed:
            self._shut_down()

    def _new_stream(self, stream: str, layout: type[StreamWriter]) -> Path:
        """The folder of a new stream, checked: its name, not added yet, and a metadata entry
        whose type has this layout (a camera `add_camera`; a type without one a table or files)."""
        check_stream_name(stream)
        if self._closed:
            raise ValueError(f"{stream}: the writer is closed")
        if stream in self._streams:
            raise ValueError(f"stream {stream!r} was already added")
        info = self._metadata["streams"].get(stream)
        if not isinstance(info, dict):
            raise ValueError(f"stream {stream!r} is not described in metadata['streams']")
        kind = info.get("type")
        own = _LAYOUTS.get(kind) if isinstance(kind, str) else None
        allowed = (own,) if own is not None else (TableWriter, FilesWriter)
        if layout not in allowed:
            use = " or ".join(w.opener for w in allowed)
            raise ValueError(f"stream {stream!r} has type {kind!r}: use {use}")
        return self.path / stream

    def _resumed(self, stream: str) -> dict | None:
        """The checkpoint state a resumed stream continues from (None when not resuming)."""
        if self._resume is None:
            return None
        state = self._resume.get(stream)
        if not isinstance(state, dict):
            raise OutputFolderError(f"{self.path}: the checkpoint has no stream {stream!r}")
        return state

    def _open(self, name: str, layout: type[W], *others: type[StreamWriter]) -> W:
        """The open stream `name`, written by `layout` (or one of `others`)."""
        stream = self._streams.get(name)
        if not isinstance(stream, (layout, *others)) or self._closed:
            what = f"an open {layout.label} stream ({layout.opener} first; not after close)"
            raise ValueError(f"{name}: not {what}")
        return stream

    def _close_files(self) -> None:
        for stream in self._streams.values():
            stream.close()

    def _shut_down(self) -> None:
        """Let queued writes finish (logging failures), close files and the pool, release the
        folder; idempotent."""
        self._closed = True
        for failure in self._queue.shut_down():
            logger.warning("sequence %s: %s", self.path, failure)
        self._close_files()
        if self._lock is not None:
            os.close(self._lock)
            self._lock = None


def check_output_outside_sequences(path: Path) -> None:
    """Raise `OutputFolderError` when writing `path` would land inside a sequence folder (a
    source is never modified, and a sequence holds only what its own writer put there)."""
    check_names(path)
    inside = sequence_containing(path)
    if inside is not None:
        raise OutputFolderError(f"{path}: is inside the sequence {inside}; choose a path outside")


def check_output_folder(path: Path) -> None:
    """Raise `OutputFolderError` unless `path` is an empty writable folder or can be created,
    outside every sequence folder."""
    path = Path(path)
    check_output_outside_sequences(path)
    if path.exists() or path.is_symlink():
        if not path.is_dir():
            raise OutputFolderError(f"{path}: exists and is not a directory")
        if any(path.iterdir()):
            raise OutputFolderError(f"{path}: exists and is not empty; choose a new folder")
        if not os.access(path, os.W_OK | os.X_OK):
            raise OutputFolderError(f"{path}: is not writable")
        return
    ancestor = next(p for p in path.absolute().parents if p.exists())
    if not ancestor.is_dir():
        raise OutputFolderError(f"{path}: cannot be created, {ancestor} is not a directory")
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise OutputFolderError(f"{path}: cannot be created, {ancestor} is not writable")


@contextmanager
def resumable_output(path: Path, manifest: str) -> Iterator[None]:
    """Hold the output folder of a command that resumes (a bench, a navbench) for the block:
    a new one is checked and made, one holding `manifest` is taken as it is; either way it is
    locked against a second writer and refused when it holds a link or a FIFO."""
    check_names(path)
    if not (path / manifest).is_file():
        check_output_folder(path)
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OutputFolderError(f"{path}: cannot be created ({exc.strerror})") from None
    with folder_lock(path):
        check_plain_folder(path, "write there")
        yield


def _prepare_folder(path: Path) -> None:
    """Create the output folder (with parents), or accept an empty one; refuse anything else."""
    check_output_folder(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputFolderError(f"{path}: cannot be created ({exc})") from None


def _claim(path: Path) -> None:
    """Create INCOMPLETE exclusively: of two writers that both found the folder empty, the
    second fails here instead of writing into the first one's sequence."""
    try:
        fd = os.open(path / INCOMPLETE, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        raise OutputFolderError(f"{path}: another writer has just started in it") from None
    except OSError as exc:
        raise OutputFolderError(f"{path}: cannot be written ({exc.strerror})") from None
    with os.fdopen(fd, "w", encoding="ascii") as f:
        f.write(_INCOMPLETE_TEXT)


def _check_same_run(path: Path, scene_json: str, metadata: dict) -> None:
    """Refuse to resume into `path` unless it is an interrupted run of this very scene and
    metadata (as its writer wrote them at the start)."""
    if not (path / INCOMPLETE).is_file():
        raise OutputFolderError(f"{path}: is not an interrupted run (no {INCOMPLETE} marker)")
    try:
        scene = (path / SCENE).read_text(encoding="utf-8")
        written = json.loads((path / METADATA).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise OutputFolderError(f"{path}: cannot be resumed ({exc})") from None
    if scene != scene_json:
        raise OutputFolderError(f"{path}/{SCENE}: is not the scene its config generates")
    if written != metadata:
        raise OutputFolderError(f"{path}/{METADATA}: does not match its config and this twinsim")


def _dumps(data: Any) -> str:
    return json.dumps(data, default=json_default, allow_nan=False, indent=1, sort_keys=True)


def _plain_json(data: dict) -> dict:
    """A deep copy of `data` as plain JSON values (fails early on what JSON cannot hold)."""
    return json.loads(_dumps(data))


def _merge(target: dict, extra: dict) -> None:
    """Merge `extra` into `target`, recursing into nested mappings."""
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(target.get(key), dict):
            _merge(target[key], value)
        else:
            target[key] = value


def _write_json_atomic(path: Path, data: dict) -> None:
    """Write JSON to a temporary file and rename it over `path`: never half a file on disk."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(_dumps(data) + "\n", encoding="utf-8")
    os.replace(tmp, path)
