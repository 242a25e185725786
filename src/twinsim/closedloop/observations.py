"""What a closed-loop step returns: every sensor reading recorded during it, robot by robot.

The run's `StreamRecorder` writes through an `ObservationTap`, which hands each write on to the
sequence writer (or nowhere, when the session does not record) and keeps a copy until the step
ends, so a step observes exactly what the sequence records, at the sensors' own rates and
stamps, and nothing is computed twice.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from twinsim.sequence.frames import CameraFrame
from twinsim.sequence.scans import LidarScan

if TYPE_CHECKING:
    from twinsim.config import TwinsimConfig

#: streams of the physics-rate replay log, not readings
_NOT_OBSERVED = ("robot_state",)


@dataclass
class Table:
    """Rows a table stream got during the step: stamps (N,) int64 ns, values (N, C)."""

    columns: tuple[str, ...]
    t_ns: np.ndarray
    values: np.ndarray


@dataclass
class Events:
    """Events a camera emitted during the step, sorted by time."""

    x: np.ndarray
    y: np.ndarray
    t_ns: np.ndarray
    polarity: np.ndarray


@dataclass
class RobotObservations:
    """One robot's readings in a step, by its own stream names (`cam0`, `imu0`, `odometry`),
    and its ground-truth state at the end of the step (the rows recorded at that stamp)."""

    T_world_body: np.ndarray
    velocity: np.ndarray  # the body frame's (vx, vy, vz, wx, wy, wz) in its own axes
    tables: dict[str, Table] = field(default_factory=dict)
    frames: dict[str, list[CameraFrame]] = field(default_factory=dict)
    scans: dict[str, list[LidarScan]] = field(default_factory=dict)
    events: dict[str, Events] = field(default_factory=dict)
    contacts: dict[str, np.ndarray] = field(default_factory=dict)
    arrived: bool = False  # the last waypoint or joint target is reached

    def latest_frame(self, camera: str) -> CameraFrame | None:
        """The camera's newest frame of the step (None when it did not fire)."""
        frames = self.frames.get(camera) or []
        return frames[-1] if frames else None


@dataclass
class Observations:
    """A step's result: the simulation time at its end and each robot's readings."""

    step: int  # physics steps since t = 0
    t_ns: int
    robots: dict[str, RobotObservations]
    done: bool = False  # the episode reached its time limit


class ObservationTap:
    """A sequence writer's stand-in that forwards every call to `writer` (None: discards it)
    and keeps this step's readings by stream name until `drain`."""

    def __init__(self, writer=None) -> None:
        self._writer = writer
        self._columns: dict[str, tuple[str, ...]] = {}
        self._reset()

    def _reset(self) -> None:
        self._rows: dict[str, tuple[list, list]] = defaultdict(lambda: ([], []))  # stamps, rows
        self._frames: dict[str, list] = defaultdict(list)
        self._scans: dict[str, list] = defaultdict(list)
        self._events: dict[str, list] = defaultdict(list)
        self._contacts: dict[str, list] = defaultdict(list)

    def _forward(self, method: str, *args) -> None:
        if self._writer is not None:
            getattr(self._writer, method)(*args)

    def add_table(self, stream: str, columns) -> None:
        self._columns[stream] = tuple(columns)
        self._forward("add_table", stream, columns)

    def append(self, stream: str, t_ns: int, values) -> None:
        if stream.rsplit(".", 1)[-1] not in _NOT_OBSERVED:
            stamps, rows = self._rows[stream]
            stamps.append(int(t_ns))
            rows.append(np.array(values, dtype=float))
        self._forward("append", stream, t_ns, values)

    def add_camera(self, name: str, kinds: tuple[str, ...] = ()) -> None:
        self._forward("add_camera", name, kinds)

    def write_frame(self, name: str, frame: CameraFrame) -> None:
        kept = replace(
            frame,
            rgb=frame.rgb.copy(),
            depth=frame.depth.copy(),
            instance=frame.instance.copy(),
            semantic=frame.semantic.copy(),
            T_world_cam=frame.T_world_cam.copy(),
        )
        self._frames[name].append(kept)
        self._forward("write_frame", name, frame)

    def write_flow(self, name: str, index: int, flow: np.ndarray, valid: np.ndarray) -> None:
        self._forward("write_flow", name, index, flow, valid)

    def add_lidar(self, name: str) -> None:
        self._forward("add_lidar", name)

    def write_scan(self, name: str, scan: LidarScan, scan_line: str | None = None) -> None:
        self._scans[name].append(scan)
        self._forward("write_scan", name, scan, scan_line)

    def add_events(self, name: str, width: int, height: int) -> None:
        self._forward("add_events", name, width, height)

    def append_events(self, name: str, x, y, t_ns, polarity) -> None:
        self._events[name].append((np.array(x), np.array(y), np.array(t_ns), np.array(polarity)))
        self._forward("append_events", name, x, y, t_ns, polarity)

    def add_contacts(self, name: str, n_parts: int) -> None:
        self._forward("add_contacts", name, n_parts)

    def append_contacts(self, name: str, records: np.ndarray) -> None:
        self._contacts[name].append(np.array(records))
        self._forward("append_contacts", name, records)

    def add_files(self, name: str, index_columns=None) -> None:
        self._forward("add_files", name, index_columns)

    def write_file(self, name: str, relpath, data) -> None:
        self._forward("write_file", name, relpath, data)

    def drain(self, prefix_of: dict[str, str]) -> dict[str, dict]:
        """This step's readings split by robot (`prefix_of`: robot → its stream prefix), as
        keyword arguments of `RobotObservations`; forgets them."""
        out: dict[str, dict] = {}
        for robot, prefix in prefix_of.items():

            def own(streams: dict, prefix: str = prefix) -> dict:
                return {
                    name[len(prefix) :]: items
                    for name, items in streams.items()
                    if name.startswith(prefix) and "." not in name[len(prefix) :]
                }

            tables = {  # np.array of equal rows is np.stack's array, at a third of its cost
                name: Table(
                    self._columns[prefix + name],
                    np.array(stamps, dtype=np.int64),
                    np.array(rows) if len({r.shape for r in rows}) == 1 else np.stack(rows),
                )
                for name, (stamps, rows) in own(self._rows).items()
            }
            events = {
                name: Events(*(np.concatenate(part) for part in zip(*batches, strict=True)))
                for name, batches in own(self._events).items()
            }
            contacts = {  # one record type: its dtype spares NumPy's promotion of the fields
                name: np.concatenate(parts, dtype=parts[0].dtype)
                for name, parts in own(self._contacts).items()
            }
            out[robot] = {
                "tables": tables,
                "frames": dict(own(self._frames)),
                "scans": dict(own(self._scans)),
                "events": events,
                "contacts": contacts,
            }
        self._reset()
        return out


def first_camera(config: TwinsimConfig, robot: str) -> tuple[str | None, Any]:
    """The name and config of the robot's first camera (None, None without one)."""
    for name, sensor in config.robots[robot].sensors.items():
        if sensor.kind == "camera":
            return name, sensor
    return None, None
