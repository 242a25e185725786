"""Reading a complete sequence folder: metadata, scene, tables, IMU, ground truth, camera frames."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import cv2
import numpy as np

from twinsim.compat.sequence import upgrade_metadata
from twinsim.errors import SequenceError
from twinsim.model.layout import (
    BOXES_FILE,
    FRAME_COLUMNS,
    FRAMES_FILE,
    IMU_COLUMNS,
    INCOMPLETE,
    METADATA,
    POSE_COLUMNS,
    SCENE,
    STATUS_COMPLETE,
    TABLE_FILE,
    check_stream_name,
    frame_path,
    surface_kinds,
)
from twinsim.model.scene import SceneSpec
from twinsim.registries import DEFAULT_ROBOT
from twinsim.sequence.assets import with_assets
from twinsim.sequence.contacts import CONTACTS_FILE, read_contacts
from twinsim.sequence.frames import Frame
from twinsim.sequence.images import read_npy, read_png
from twinsim.sequence.poses import rows_to_poses
from twinsim.sequence.radar import RadarStream
from twinsim.sequence.scans import (
    EVENT_DTYPE,
    EVENTS_FILE,
    POINT_DTYPE,
    SCAN_COLUMNS,
    SCANS_FILE,
    EventData,
    LidarScan,
    points_path,
    read_records,
)
from twinsim.sequence.tables import parse_table
from twinsim.textdata import TextDataError, parse_json


@dataclass(frozen=True)
class ImuData:
    """IMU samples in the IMU frame: gyro (N, 3) rad/s, accel (N, 3) m/s² specific force."""

    t_ns: np.ndarray
    gyro: np.ndarray
    accel: np.ndarray


def read_metadata(path: Path) -> dict:
    """Parse `metadata.json` of a sequence folder, with `SequenceError` naming what is wrong."""
    file = Path(path) / METADATA
    try:
        data = parse_json(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        if (Path(path) / INCOMPLETE).exists():
            raise SequenceError(
                f"{path}: interrupted before its {METADATA} was written ({INCOMPLETE} is "
                "there, the metadata is not): run it again"
            ) from None
        raise SequenceError(f"{file}: missing (is {path} a sequence folder?)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SequenceError(f"{file}: cannot be read ({exc})") from None
    except TextDataError as exc:
        raise SequenceError(f"{file}: not valid JSON ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("streams"), dict):
        raise SequenceError(f"{file}: expected a JSON object with a 'streams' mapping")
    for name, info in data["streams"].items():  # names become paths: never leave the folder
        if not isinstance(info, dict):
            raise SequenceError(f"{file}: stream {name!r}: its entry must be an object")
        try:
            check_stream_name(name)
        except ValueError as exc:
            raise SequenceError(f"{file}: {exc}") from None
        folder = Path(path) / name
        if folder.is_symlink():
            raise SequenceError(f"{folder}: a stream folder must not be a symbolic link")
    return upgrade_metadata(data)  # a format-1 sequence as the current one (`twinsim.compat`)


def open_sequence(path: str | Path, *, check: bool = True) -> SequenceReader:
    """Open a complete sequence for reading; refuses missing, partial or unreadable folders,
    and (`check`) any that fails the quick structural check (`validate_sequence(path,
    decode=False)`: every index table, timestamp and file in place), so no command reads a
    sequence `validate` would reject for its structure."""
    path = Path(path)
    if not path.is_dir():
        raise SequenceError(f"{path}: no such sequence folder")
    if (path / INCOMPLETE).exists():
        raise SequenceError(
            f"{path}: sequence is incomplete ({INCOMPLETE} marker present): the run was "
            "interrupted or is still being written"
        )
    metadata = read_metadata(path)
    status = metadata.get("status")
    if status != STATUS_COMPLETE:
        raise SequenceError(
            f"{path / METADATA}: status is {status!r}, not {STATUS_COMPLETE!r}: "
            "the sequence is partial"
        )
    if check:
        from twinsim.sequence.validate import validate_sequence  # validate reads metadata here

        problems = validate_sequence(path, decode=False).problems
        if problems:
            more = (
                f" (+{len(problems) - 1} more; see twinsim validate)" if len(problems) > 1 else ""
            )
            raise SequenceError(f"{path}: not a valid sequence: {problems[0]}{more}")
    return SequenceReader(path, metadata)


class SequenceReader:
    """A complete sequence on disk; every stream is read only when asked for."""

    def __init__(self, path: Path, metadata: dict) -> None:
        self.path = Path(path)
        self.metadata = metadata

    @property
    def robots(self) -> list[str]:
        """The names of the sequence's robots, in the order of the run (`scene.json`'s)."""
        robots = self.metadata.get("robots")
        if not isinstance(robots, list) or not robots:
            return [DEFAULT_ROBOT]
        return [str(r.get("name")) if isinstance(r, dict) else str(r) for r in robots]

    def for_robot(self, robot: str | None = None) -> SequenceReader:
        """The streams of one robot (default: the only or first one) under their own names
        (`cam0` for the stream `b.cam0` of robot b): what exports and methods read."""
        robots = self.robots
        name = robots[0] if robot is None else robot
        if name not in robots:
            raise SequenceError(f"{self.path}: no robot {name!r}; robots: {', '.join(robots)}")
        if len(robots) == 1:
            return self
        prefix = f"{name}."
        own = {
            stream.removeprefix(prefix): info
            for stream, info in self.metadata["streams"].items()
            if isinstance(info, dict) and info.get("robot") == name
        }
        return RobotReader(self.path, self.metadata | {"streams": own}, name, prefix)

    def stream_prefix(self, stream: str) -> str:
        """What the names of the streams of `stream`'s robot start with (`b.` for robot b's
        in a sequence of several; nothing otherwise): `groundtruth_cam0` of the camera
        `b.cam0` is `b.groundtruth_cam0`."""
        robot = self.stream_info(stream).get("robot")
        prefix = f"{robot}."
        return prefix if len(self.robots) > 1 and stream.startswith(prefix) else ""

    def _folder(self, stream: str) -> Path:
        """The folder of a stream (by the name this reader knows it by)."""
        return self.path / stream

    @cached_property
    def scene(self) -> SceneSpec:
        """The recorded world, parsed from scene.json, with its mesh assets' bytes."""
        file = self.path / SCENE
        try:
            scene = SceneSpec.from_json(file.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise SequenceError(f"{file}: cannot be parsed as a SceneSpec ({exc})") from None
        return with_assets(self.path, scene)

    @property
    def streams(self) -> list[str]:
        """Names of every recorded stream (tables and cameras)."""
        return list(self.metadata["streams"])

    def stream_info(self, stream: str) -> dict:
        """The metadata entry of a stream (type, rate_hz, count, sensor parameters)."""
        info = self.metadata["streams"].get(stream)
        if info is None:
            raise SequenceError(f"unknown stream {stream!r}; streams: {', '.join(self.streams)}")
        return info

    def table(self, stream: str) -> dict[str, np.ndarray]:
        """A table stream as column name -> array (t_ns int64, every other column float64)."""
        if self.stream_info(stream).get("type") == "camera":
            raise SequenceError(f"{stream} is a camera stream; use camera({stream!r})")
        name = f"{self._folder(stream).name}/{TABLE_FILE}"
        table = parse_table(self._folder(stream) / TABLE_FILE, 1, name)
        if table.columns[0] != "t_ns":
            raise SequenceError(f"{name}: first column is {table.columns[0]!r}, expected 't_ns'")
        columns = {"t_ns": table.ints[:, 0]}
        columns |= {c: table.values[:, i] for i, c in enumerate(table.columns[1:])}
        return columns

    def groundtruth(self, stream: str = "groundtruth_body") -> tuple[np.ndarray, np.ndarray]:
        """(t_ns int64 [N], T_world_body float64 [N, 4, 4]) of a pose stream."""
        columns = self._columns(stream, POSE_COLUMNS)
        rows = np.stack([columns[c] for c in POSE_COLUMNS], axis=1)
        return columns["t_ns"], rows_to_poses(rows)

    def imu(self, name: str) -> ImuData:
        """Gyroscope and accelerometer samples of an IMU stream."""
        columns = self._columns(name, IMU_COLUMNS)
        stacked = np.stack([columns[c] for c in IMU_COLUMNS], axis=1)
        return ImuData(t_ns=columns["t_ns"], gyro=stacked[:, :3], accel=stacked[:, 3:])

    def camera(self, name: str) -> CameraStream:
        """A camera stream whose frames load lazily on indexing or iteration."""
        info = self.stream_info(name)
        if info.get("type") != "camera":
            raise SequenceError(f"{name} is not a camera stream (type {info.get('type')!r})")
        return CameraStream(self._folder(name), self._folder(name).name, info)

    def lidar(self, name: str) -> LidarStream:
        """A LiDAR stream whose scans load lazily on indexing or iteration."""
        info = self.stream_info(name)
        if info.get("type") != "lidar":
            raise SequenceError(f"{name} is not a LiDAR stream (type {info.get('type')!r})")
        return LidarStream(self._folder(name), self._folder(name).name)

    def radar(self, name: str) -> RadarStream:
        """A radar stream whose scans' detections load lazily on indexing or iteration."""
        info = self.stream_info(name)
        if info.get("type") != "radar":
            raise SequenceError(f"{name} is not a radar stream (type {info.get('type')!r})")
        return RadarStream(self._folder(name), self._folder(name).name)

    def events(self, name: str) -> EventData:
        """Every event of an event camera stream, with the camera's intrinsics."""
        info = self.stream_info(name)
        if info.get("type") != "event_camera":
            raise SequenceError(f"{name} is not an event stream (type {info.get('type')!r})")
        try:
            K = np.array(info["K"], dtype=np.float64).reshape(3, 3)
            width, height = int(info["width"]), int(info["height"])
        except (KeyError, TypeError, ValueError) as exc:
            raise SequenceError(
                f"metadata.json: event camera {name} needs K (3x3), width, height ({exc})"
            ) from None
        folder = self._folder(name)
        rec = read_records(folder / EVENTS_FILE, EVENT_DTYPE, f"{folder.name}/{EVENTS_FILE}")
        return EventData(
            x=np.ascontiguousarray(rec["x"]),
            y=np.ascontiguousarray(rec["y"]),
            t_ns=np.ascontiguousarray(rec["t_ns"]),
            polarity=np.ascontiguousarray(rec["polarity"]),
            K=K,
            width=width,
            height=height,
        )

    def contacts(self, name: str = "contacts") -> np.ndarray:
        """A robot's contact records (`twinsim.sequence.contacts.CONTACT_DTYPE`, in time order;
        `part` indexes the stream's metadata `parts`)."""
        info = self.stream_info(name)
        if info.get("type") != "contacts":
            raise SequenceError(f"{name} is not a contacts stream (type {info.get('type')!r})")
        folder = self._folder(name)
        return read_contacts(folder / CONTACTS_FILE, f"{folder.name}/{CONTACTS_FILE}")

    def _columns(self, stream: str, required: tuple[str, ...]) -> dict[str, np.ndarray]:
        columns = self.table(stream)
        missing = [c for c in required if c not in columns]
        if missing:
            raise SequenceError(f"{stream}/{TABLE_FILE}: missing columns {', '.join(missing)}")
        return columns


class RobotReader(SequenceReader):
    """One robot's streams of a sequence of several, by their own names (`for_robot`)."""

    def __init__(self, path: Path, metadata: dict, robot: str, prefix: str) -> None:
        super().__init__(path, metadata)
        self.robot, self.prefix = robot, prefix

    @property
    def robots(self) -> list[str]:
        return [self.robot]

    def for_robot(self, robot: str | None = None) -> SequenceReader:
        if robot not in (None, self.robot):
            raise SequenceError(f"{self.path}: this view holds robot {self.robot!r} only")
        return self

    def _folder(self, stream: str) -> Path:
        return self.path / (self.prefix + stream)


class CameraStream:
    """Frames of one camera: timestamps and poses up front, images read on access."""

    def __init__(self, folder: Path, name: str, info: dict) -> None:
        self.name = name
        self.folder = folder
        try:
            self.K = np.array(info["K"], dtype=np.float64).reshape(3, 3)
            self.width, self.height = int(info["width"]), int(info["height"])
        except (KeyError, TypeError, ValueError) as exc:
            raise SequenceError(
                f"metadata.json: camera {name} needs K (3x3), width, height ({exc})"
            ) from None
        table = parse_table(folder / FRAMES_FILE, 2, f"{name}/{FRAMES_FILE}")
        if table.columns != FRAME_COLUMNS:
            raise SequenceError(f"{name}/{FRAMES_FILE}: header must be {','.join(FRAME_COLUMNS)}")
        self.kinds = surface_kinds(info)  # the optional per-frame files (normals, flow)
        self.t_ns: np.ndarray = table.ints[:, 1]
        self.T_world_cam: np.ndarray = rows_to_poses(table.values)
        try:
            self._boxes = (folder / BOXES_FILE).read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise SequenceError(f"{name}/{BOXES_FILE}: cannot be read ({exc})") from None
        if len(self._boxes) != len(self.t_ns):
            raise SequenceError(
                f"{name}/{BOXES_FILE}: {len(self._boxes)} lines for {len(self.t_ns)} frames"
            )

    def __len__(self) -> int:
        return len(self.t_ns)

    @property
    def boxes_lines(self) -> tuple[str, ...]:
        """Every frame's boxes.jsonl line as stored (a twin copies unchanged frames verbatim)."""
        return tuple(self._boxes)

    @property
    def frame_lines(self) -> tuple[str, ...]:
        """Every frame's frames.csv line (pose) as stored, without the header."""
        return _data_lines(self.folder / FRAMES_FILE)

    def __iter__(self) -> Iterator[Frame]:
        for index in range(len(self)):
            yield self[index]

    def __getitem__(self, index: int) -> Frame:
        """Load frame `index` (negative counts from the end)."""
        n = len(self)
        if not -n <= index < n:
            raise IndexError(f"{self.name}: frame {index} out of range for {n} frames")
        index %= n
        rgb = read_png(frame_path(self.folder, "rgb", index), self._label("rgb", index))
        if rgb.ndim != 3:
            raise SequenceError(f"{self._label('rgb', index)}: expected 3 channels")
        record = json.loads(self._boxes[index])
        return Frame(
            index=index,
            t_ns=int(self.t_ns[index]),
            rgb=cv2.cvtColor(rgb, cv2.COLOR_BGR2RGB),
            depth=read_npy(frame_path(self.folder, "depth", index), self._label("depth", index)),
            instance=read_png(
                frame_path(self.folder, "instance", index), self._label("instance", index)
            ),
            semantic=read_png(
                frame_path(self.folder, "semantic", index), self._label("semantic", index)
            ),
            K=self.K.copy(),
            T_world_cam=self.T_world_cam[index].copy(),
            boxes=record["boxes"],
            keypoints={
                p["instance_id"]: np.array(p["keypoints"], float) for p in record.get("people", [])
            },
            joints_world={
                p["instance_id"]: np.array(p["joints_world"], float)
                for p in record.get("people", [])
            },
            dynamic_fraction=float(record.get("dynamic_fraction", 0.0)),
            **self._surface(index, n),
        )

    def _surface(self, index: int, n: int) -> dict[str, np.ndarray]:
        """Frame `index`'s normals and flow (none for the last frame), where the stream has
        them."""
        found = {}
        for kind in self.kinds:
            if kind.startswith("flow") and index == n - 1:
                continue
            path, label = frame_path(self.folder, kind, index), self._label(kind, index)
            found[kind] = read_npy(path, label) if path.suffix == ".npy" else read_png(path, label)
        return found

    def _label(self, kind: str, index: int) -> str:
        return frame_path(Path(self.name), kind, index).as_posix()


class LidarStream:
    """Sweeps of one LiDAR: start times and poses up front, points read on access."""

    def __init__(self, folder: Path, name: str) -> None:
        self.name = name
        self.folder = folder
        table = parse_table(folder / SCANS_FILE, 2, f"{name}/{SCANS_FILE}")
        if table.columns != SCAN_COLUMNS:
            raise SequenceError(f"{name}/{SCANS_FILE}: header must be {','.join(SCAN_COLUMNS)}")
        self.t_ns: np.ndarray = table.ints[:, 1]
        self.T_world_lidar: np.ndarray = rows_to_poses(table.values)

    def __len__(self) -> int:
        return len(self.t_ns)

    @property
    def scan_lines(self) -> tuple[str, ...]:
        """Every sweep's scans.csv line (time and pose) as stored, without the header."""
        return _data_lines(self.folder / SCANS_FILE)

    def __iter__(self) -> Iterator[LidarScan]:
        for index in range(len(self)):
            yield self[index]

    def __getitem__(self, index: int) -> LidarScan:
        """Load scan `index` (negative counts from the end)."""
        n = len(self)
        if not -n <= index < n:
            raise IndexError(f"{self.name}: scan {index} out of range for {n} scans")
        index %= n
        label = points_path(Path(self.name), index).as_posix()
        rec = read_records(points_path(self.folder, index), POINT_DTYPE, label)
        return LidarScan.from_records(
            index, int(self.t_ns[index]), self.T_world_lidar[index].copy(), rec
        )


def _data_lines(path: Path) -> tuple[str, ...]:
    """The lines of a CSV table after its header, as stored (copies keep them verbatim)."""
    return tuple(path.read_text(encoding="utf-8").splitlines()[1:])
