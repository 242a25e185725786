"""`SequenceWriter`: streams a run into a sequence folder as it is simulated.

Tables are appended line by line and flushed at once; image encoding and disk writes run on a
small thread pool (OpenCV and file I/O release the GIL) so they overlap with rendering, with a
bound on frames in flight so memory stays flat over long runs. The folder carries an INCOMPLETE
marker until `close()` has flushed everything and written the final metadata.
"""

from __future__ import annotations

import json
import logging
import operator
import os
from collections import deque
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, TextIO

import cv2
import numpy as np

from twinsim.errors import OutputFolderError
from twinsim.sequence.frames import CameraFrame, CopiedFrame
from twinsim.sequence.images import copy_image, write_npy, write_png
from twinsim.sequence.layout import (
    BOXES_FILE,
    FRAME_COLUMNS,
    FRAMES_FILE,
    IMAGE_KINDS,
    INCOMPLETE,
    METADATA,
    SCENE,
    SEQUENCE_FORMAT,
    SEQUENCE_FORMAT_VERSION,
    STATUS_COMPLETE,
    STATUS_INCOMPLETE,
    TABLE_FILE,
    check_stream_name,
    frame_path,
)
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

logger = logging.getLogger(__name__)

#: Frames whose images may be queued or being written at once; the caller waits beyond this.
MAX_FRAMES_IN_FLIGHT = 4

#: Stream types with their own files; every other type is a table (data.csv).
_SPECIAL_TYPES = ("camera", "lidar", "event_camera")

_INCOMPLETE_TEXT = (
    "This sequence is incomplete: its writer has not finished (the run is still being written,\n"
    "or it was interrupted). Readers refuse it; twinsim.sequence.validate_sequence reports\n"
    "what is there.\n"
)


@dataclass
class _Table:
    file: TextIO
    n_values: int
    count: int = 0
    last_t_ns: int | None = None


@dataclass
class _Camera:
    folder: Path
    frames: TextIO
    boxes: TextIO
    count: int = 0
    last_t_ns: int | None = None
    shape: tuple[int, int] | None = None


@dataclass
class _Lidar:
    folder: Path
    scans: TextIO
    count: int = 0
    last_t_ns: int | None = None


@dataclass
class _Events:
    records: RecordAppender
    width: int
    height: int
    last_t_ns: int | None = None


class SequenceWriter:
    """Writes one sequence folder; use as a context manager so a failed run stays marked partial."""

    def __init__(
        self,
        path: Path,
        scene_json: str,
        metadata: dict,
        image_workers: int = 2,
        rgb_png_level: int = 0,
    ) -> None:
        """`rgb_png_level` is the zlib level of RGB PNGs: 0 stores (~0.9 MB a 640×480 frame, no
        CPU), 1–9 compress to ~0.4 MB at ~15–25 ms of CPU a frame, which on 2 cores slows a run."""
        self.path = Path(path)
        self._rgb_png_level = rgb_png_level
        self._metadata = _plain_json(metadata)
        self._metadata.setdefault("streams", {})
        self._metadata["format"] = SEQUENCE_FORMAT
        self._metadata["format_version"] = SEQUENCE_FORMAT_VERSION
        self._metadata["status"] = STATUS_INCOMPLETE
        _prepare_folder(self.path)
        (self.path / INCOMPLETE).write_text(_INCOMPLETE_TEXT, encoding="ascii")
        (self.path / SCENE).write_text(scene_json, encoding="utf-8")
        _write_json_atomic(self.path / METADATA, self._metadata)
        self._tables: dict[str, _Table] = {}
        self._cameras: dict[str, _Camera] = {}
        self._lidars: dict[str, _Lidar] = {}
        self._events: dict[str, _Events] = {}
        self._pool = ThreadPoolExecutor(max_workers=image_workers, thread_name_prefix="seq-io")
        self._in_flight: deque[list[Future[None]]] = deque()
        self._closed = False

    def _submit_image(self, kind: str, camera: _Camera, image: np.ndarray) -> Future[None]:
        path = frame_path(camera.folder, kind, camera.count)
        if kind == "depth":
            return self._pool.submit(write_npy, path, image)
        if kind == "rgb":
            return self._pool.submit(write_png, path, image, self._rgb_png_level)
        return self._pool.submit(write_png, path, image)

    def add_table(self, stream: str, columns: Sequence[str]) -> None:
        """Start `<stream>/data.csv` with header t_ns + columns (float64 values)."""
        self._check_new_stream(stream, "table")
        columns = list(columns)
        if "t_ns" in columns or len(set(columns)) != len(columns) or not all(columns):
            raise ValueError(f"{stream}: columns must be unique, non-empty, without t_ns")
        folder = self.path / stream
        folder.mkdir()
        file = _open_lines(folder / TABLE_FILE)
        file.write(",".join(["t_ns", *columns]) + "\n")
        self._tables[stream] = _Table(file=file, n_values=len(columns))

    def append(self, stream: str, t_ns: int, values: np.ndarray | Sequence[float]) -> None:
        """Append one row at time t_ns (strictly after the previous row) and flush it."""
        table = self._tables.get(stream)
        if table is None or self._closed:
            raise ValueError(
                f"{stream}: not an open table stream (add_table first; not after close)"
            )
        t_ns = _later_time(stream, t_ns, table.last_t_ns)
        row = np.asarray(values, dtype=np.float64)
        if row.shape != (table.n_values,):
            raise ValueError(f"{stream}: expected {table.n_values} values, got shape {row.shape}")
        table.file.write(format_row((t_ns,), row))
        table.count += 1
        table.last_t_ns = t_ns

    def add_camera(self, name: str) -> None:
        """Start a camera stream: its image folders, frames.csv and boxes.jsonl."""
        self._check_new_stream(name, "camera")
        folder = self.path / name
        folder.mkdir()
        for kind in IMAGE_KINDS:
            (folder / kind).mkdir()
        frames = _open_lines(folder / FRAMES_FILE)
        frames.write(",".join(FRAME_COLUMNS) + "\n")
        self._cameras[name] = _Camera(
            folder=folder, frames=frames, boxes=_open_lines(folder / BOXES_FILE)
        )

    def write_frame(self, name: str, frame: CameraFrame) -> None:
        """Queue a frame's images for writing and record its pose and boxes (in index order)."""
        camera = self._open_camera(name, frame.index)
        t_ns = _later_time(name, frame.t_ns, camera.last_t_ns)
        images = _frame_images(name, frame, camera)
        pose = pose_to_row(frame.T_world_cam)
        boxes = json.dumps(
            {
                "frame": camera.count,
                "t_ns": t_ns,
                "boxes": frame.boxes,
                "people": frame.people,
                "dynamic_fraction": frame.dynamic_fraction,
            },
            default=_json_default,
            allow_nan=False,
            separators=(",", ":"),
        )
        self._wait_for_room()
        self._in_flight.append(
            [self._submit_image(kind, camera, image) for kind, image in images.items()]
        )
        camera.frames.write(format_row((camera.count, t_ns), pose))
        camera.boxes.write(boxes + "\n")
        camera.count += 1
        camera.last_t_ns = t_ns

    def write_copied_frame(self, name: str, frame: CopiedFrame) -> None:
        """Record a frame taken from another sequence: its image files are copied (the colour
        and depth images written instead where the frame gives new ones) and its frames.csv
        and boxes.jsonl lines kept verbatim."""
        camera = self._open_camera(name, frame.index)
        t_ns = _later_time(name, frame.t_ns, camera.last_t_ns)
        # both lines begin with the frame index and time, as `write_frame` writes them
        if not (
            frame.frame_line.startswith(f"{camera.count},{t_ns},")
            and frame.boxes_line.startswith(f'{{"frame":{camera.count},"t_ns":{t_ns},')
        ):
            raise ValueError(
                f"{name}: copied lines are not frame {camera.count} at t_ns {t_ns}: "
                f"{frame.frame_line[:40]!r}, {frame.boxes_line[:40]!r}"
            )
        new = _new_images(name, frame)
        self._wait_for_room()
        futures = []
        for kind in IMAGE_KINDS:
            if kind in new:
                futures.append(self._submit_image(kind, camera, new[kind]))
            else:
                source = frame_path(frame.source, kind, frame.index)
                target = frame_path(camera.folder, kind, camera.count)
                futures.append(self._pool.submit(copy_image, source, target))
        self._in_flight.append(futures)
        camera.frames.write(frame.frame_line.rstrip("\n") + "\n")
        camera.boxes.write(frame.boxes_line.rstrip("\n") + "\n")
        camera.count += 1
        camera.last_t_ns = t_ns

    def add_lidar(self, name: str) -> None:
        """Start a LiDAR stream: scans.csv (one pose row per sweep) and points/ (one file each)."""
        self._check_new_stream(name, "lidar")
        folder = self.path / name
        folder.mkdir()
        (folder / POINTS_DIR).mkdir()
        scans = _open_lines(folder / SCANS_FILE)
        scans.write(",".join(SCAN_COLUMNS) + "\n")
        self._lidars[name] = _Lidar(folder=folder, scans=scans)

    def write_scan(self, name: str, scan: LidarScan, scan_line: str | None = None) -> None:
        """Write one sweep's points (in index order) and its start time and pose; `scan_line`:
        the scans.csv line of the same sweep in another sequence, kept verbatim (noisy copies)."""
        lidar = self._lidars.get(name)
        if lidar is None or self._closed:
            raise ValueError(f"{name}: not an open LiDAR stream (add_lidar first; not after close)")
        if operator.index(scan.index) != lidar.count:
            raise ValueError(f"{name}: scan index {scan.index}, expected {lidar.count}")
        t_ns = _later_time(name, scan.t_ns, lidar.last_t_ns)
        row = format_row((lidar.count, t_ns), pose_to_row(scan.T_world_lidar))
        if scan_line is not None:
            if not scan_line.startswith(f"{lidar.count},{t_ns},"):
                raise ValueError(f"{name}: copied line is not scan {lidar.count} at t_ns {t_ns}")
            row = scan_line.rstrip("\n") + "\n"
        records = scan.to_records()
        try:
            with points_path(lidar.folder, lidar.count).open("wb") as f:
                np.save(f, records, allow_pickle=False)
        except OSError as exc:
            raise OutputFolderError(
                f"{name}: scan {lidar.count} cannot be written ({exc})"
            ) from None
        lidar.scans.write(row)
        lidar.count += 1
        lidar.last_t_ns = t_ns

    def add_events(self, name: str, width: int, height: int) -> None:
        """Start an event stream: events.npy, appended to as events come, sealed at close."""
        self._check_new_stream(name, "event_camera")
        folder = self.path / name
        folder.mkdir()
        self._events[name] = _Events(
            RecordAppender(folder / EVENTS_FILE, EVENT_DTYPE), width, height
        )

    def append_events(
        self, name: str, x: np.ndarray, y: np.ndarray, t_ns: np.ndarray, polarity: np.ndarray
    ) -> None:
        """Append events sorted by time, none earlier than the last one written."""
        stream = self._events.get(name)
        if stream is None or self._closed:
            raise ValueError(
                f"{name}: not an open event stream (add_events first; not after close)"
            )
        rec = event_records(x, y, t_ns, polarity)
        if not len(rec):
            return
        t = rec["t_ns"]
        if np.any(np.diff(t) < 0) or (stream.last_t_ns is not None and t[0] < stream.last_t_ns):
            raise ValueError(f"{name}: event times must not decrease")
        if rec["x"].max() >= stream.width or rec["y"].max() >= stream.height:
            raise ValueError(f"{name}: event pixel outside {stream.width}x{stream.height}")
        if not np.isin(rec["polarity"], (-1, 1)).all():
            raise ValueError(f"{name}: polarity must be +1 or -1")
        stream.records.append(rec)
        stream.last_t_ns = int(t[-1])

    def close(self, extra_metadata: dict | None = None) -> None:
        """Finish every write, record per-stream counts, mark complete and remove INCOMPLETE."""
        if self._closed:
            return
        try:
            while self._in_flight:
                for future in self._in_flight.popleft():
                    future.result()
            self._close_files()
            if extra_metadata:
                _merge(self._metadata, _plain_json(extra_metadata))
            counts = {n: t.count for n, t in self._tables.items()}
            counts |= {n: c.count for n, c in self._cameras.items()}
            counts |= {n: lidar.count for n, lidar in self._lidars.items()}
            counts |= {n: e.records.count for n, e in self._events.items()}
            for stream, count in counts.items():
                self._metadata["streams"][stream]["count"] = count
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

    def _check_new_stream(self, stream: str, kind: str) -> None:
        """`kind` is "table", "camera", "lidar" or "event_camera"; the metadata type must agree."""
        check_stream_name(stream)
        if self._closed:
            raise ValueError(f"{stream}: the writer is closed")
        if any(stream in s for s in (self._tables, self._cameras, self._lidars, self._events)):
            raise ValueError(f"stream {stream!r} was already added")
        info = self._metadata["streams"].get(stream)
        if not isinstance(info, dict):
            raise ValueError(f"stream {stream!r} is not described in metadata['streams']")
        own = info.get("type") if info.get("type") in _SPECIAL_TYPES else "table"
        if own != kind:
            raise ValueError(f"stream {stream!r} has type {info.get('type')!r}: use add_{own}")

    def _open_camera(self, name: str, index: int) -> _Camera:
        """The open camera stream `name`, checking that frame `index` is the next one."""
        camera = self._cameras.get(name)
        if camera is None or self._closed:
            raise ValueError(
                f"{name}: not an open camera stream (add_camera first; not after close)"
            )
        if operator.index(index) != camera.count:
            raise ValueError(f"{name}: frame index {index}, expected {camera.count}")
        return camera

    def _wait_for_room(self) -> None:
        """Block until fewer than MAX_FRAMES_IN_FLIGHT frames are pending, re-raising I/O errors."""
        while len(self._in_flight) >= MAX_FRAMES_IN_FLIGHT:
            for future in self._in_flight.popleft():
                future.result()

    def _close_files(self) -> None:
        for table in self._tables.values():
            table.file.close()
        for camera in self._cameras.values():
            camera.frames.close()
            camera.boxes.close()
        for lidar in self._lidars.values():
            lidar.scans.close()
        for events in self._events.values():
            events.records.close()

    def _shut_down(self) -> None:
        """Let queued writes finish (logging failures), close files and the pool; idempotent."""
        self._closed = True
        pending = [f for frame in self._in_flight for f in frame]
        self._in_flight.clear()
        wait(pending)
        for future in pending:
            if future.exception() is not None:
                logger.warning("sequence %s: %s", self.path, future.exception())
        self._close_files()
        self._pool.shutdown(wait=True)


def check_output_folder(path: Path) -> None:
    """Raise `OutputFolderError` unless `path` is an empty writable folder or can be created."""
    path = Path(path)
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


def _prepare_folder(path: Path) -> None:
    """Create the output folder (with parents), or accept an empty one; refuse anything else."""
    check_output_folder(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputFolderError(f"{path}: cannot be created ({exc})") from None


def _open_lines(path: Path) -> TextIO:
    """A line-buffered text file: every complete row reaches the OS as soon as it is written."""
    return path.open("w", encoding="utf-8", newline="\n", buffering=1)


def _later_time(stream: str, t_ns: int, last: int | None) -> int:
    """t_ns as a Python int, checked to be strictly after the stream's previous timestamp."""
    if isinstance(t_ns, bool | float):
        raise TypeError(f"{stream}: t_ns must be an integer number of nanoseconds, got {t_ns!r}")
    t_ns = operator.index(t_ns)
    if last is not None and t_ns <= last:
        raise ValueError(f"{stream}: t_ns {t_ns} is not after the previous {last}")
    return t_ns


def _frame_images(name: str, frame: CameraFrame, camera: _Camera) -> dict[str, np.ndarray]:
    """Check shapes and dtypes; copy the arrays (BGR for OpenCV) so callers may reuse them."""
    rgb, depth = np.asarray(frame.rgb), np.asarray(frame.depth)
    instance, semantic = np.asarray(frame.instance), np.asarray(frame.semantic)
    shape = depth.shape
    if len(shape) != 2:
        raise ValueError(f"{name}: frame {frame.index} depth must be (H, W), got shape {shape}")
    if camera.shape is not None and shape != camera.shape:
        raise ValueError(f"{name}: frame {frame.index} is {shape}, earlier frames {camera.shape}")
    expected = {
        "rgb": (rgb, (*shape, 3), (np.uint8,)),
        "depth": (depth, shape, (np.float32,)),
        "instance": (instance, shape, (np.uint16,)),
        "semantic": (semantic, shape, (np.uint16, np.uint8)),
    }
    for kind, (array, want_shape, dtypes) in expected.items():
        if array.shape != want_shape or array.dtype not in dtypes:
            allowed = " or ".join(np.dtype(d).name for d in dtypes)
            raise ValueError(
                f"{name}: frame {frame.index} {kind} is {array.dtype}{array.shape}, "
                f"expected {allowed}{want_shape} (H, W from depth)"
            )
    camera.shape = shape
    return {
        "rgb": cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR),
        "depth": depth.copy(),
        "instance": instance.copy(),
        "semantic": semantic.copy(),
    }


def _new_images(name: str, frame: CopiedFrame) -> dict[str, np.ndarray]:
    """The colour (BGR for OpenCV) and depth images a copied frame replaces, checked."""
    new = {}
    if frame.rgb is not None:
        rgb = np.asarray(frame.rgb)
        if rgb.dtype != np.uint8 or rgb.ndim != 3 or rgb.shape[2] != 3:
            raise ValueError(f"{name}: frame {frame.index} rgb is {rgb.dtype}{rgb.shape}")
        new["rgb"] = cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR)
    if frame.depth is not None:
        depth = np.asarray(frame.depth)
        if depth.dtype != np.float32 or depth.ndim != 2:
            raise ValueError(f"{name}: frame {frame.index} depth is {depth.dtype}{depth.shape}")
        new["depth"] = depth.copy()
    return new


def _json_default(value: Any) -> Any:
    """Serialise numpy scalars and arrays found in metadata or boxes as plain JSON values."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"{type(value).__name__} is not JSON serialisable: {value!r}")


def _dumps(data: Any) -> str:
    return json.dumps(data, default=_json_default, allow_nan=False, indent=1, sort_keys=True)


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
