"""The sensor-kind interface: what a kind provides so that building, recording and metadata
need no `if type == ...`.

A kind owns its config model (an entry of `sensors:` with its `kind`), resolves it into a
`SensorSpec` (`spec`), says as data what it needs on the robot in MuJoCo (`mounts`: cameras,
sites with MuJoCo sensors), what the sequence metadata says of it (`metadata`,
`extra_streams`), how it records at each physics step (`recorder`, writing through
`ctx.writer`: a table, one of the writer's camera / LiDAR / event layouts, or a stream of its
own files with `add_files` and `write_file`) and how `validate_sequence` checks its stream's
files (`validate_stream`: a `data.csv` table unless the kind overrides it, composing the checks
of `twinsim.sequence.stream_checks`). Readers of each kind's files are
still written in `sequence/reader.py` (issue 12 goes on).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import ClassVar, Protocol

import numpy as np

from twinsim.configmodel import ConfigModel
from twinsim.geometry import pose_to_T
from twinsim.model.layout import POSE_COLUMNS
from twinsim.model.mounts import Mount
from twinsim.model.sensors import SensorSpec
from twinsim.sequence.stream_checks import StreamCheck, check_table

__all__ = [
    "POSE_COLUMNS",
    "ImageWeather",
    "RecordingContext",
    "SensorConfig",
    "SensorKind",
]


class SensorConfig(ConfigModel):
    """Base of every sensor kind's config: its kind, rate and mounting on the robot body."""

    kind: str
    rate_hz: int
    pos: tuple[float, float, float]
    rpy_deg: tuple[float, float, float] = (0.0, 0.0, 0.0)


class ImageWeather(Protocol):
    """Rain, snow and smoke composited onto a colour image from its depth, intrinsics, pose and
    time (`twinsim.adversity.image.Weather`, which the writers apply to colour cameras)."""

    def apply(
        self, rgb: np.ndarray, depth: np.ndarray, K: np.ndarray, T_world_cam: np.ndarray, t_s: float
    ) -> np.ndarray: ...


@dataclass
class RecordingContext:
    """What every sensor recorder shares: the world, the writer, the clock, the twin's frame
    sources (cameras whose frames come from a recorded stream) and the image weather that
    recorders rendering colour themselves (event cameras) composite (None in clear air)."""

    world: object
    writer: object
    physics_hz: int
    pose_period: int  # physics steps between ground-truth poses
    frame_sources: dict = field(default_factory=dict)
    weather: ImageWeather | None = None


def substate(state: dict[str, np.ndarray], prefix: str) -> dict[str, np.ndarray]:
    """The entries of a checkpoint state under `prefix`, without it."""
    return {k[len(prefix) :]: v for k, v in state.items() if k.startswith(prefix)}


class SensorRecorder:
    """Records one sensor: declares its streams, then writes them step by step.

    A run writes checkpoints so `twinsim run --resume` can continue it; a recorder takes part
    when `resumable` says `checkpoint` and `restore` capture all it carries between steps
    (a recorder that says nothing keeps its run from checkpointing: never a wrong resume).
    """

    resumable: ClassVar[bool] = False

    def checkpoint(self) -> dict[str, np.ndarray] | None:
        """The state carried between steps, as arrays, at the boundary before the next step;
        None when it cannot be taken here (a LiDAR mid-sweep): the run tries the next step."""
        return {}

    def restore(self, state: dict[str, np.ndarray]) -> None:
        """Take back the state of a `checkpoint` (its recorder made in the resumed run)."""

    def observes(self, k: int) -> bool:
        """Whether the sensor looks at the world at step k (actors must be posed exactly)."""
        return False

    def before_step(self, k: int, t_ns: int, q: np.ndarray) -> None:
        """Record what describes instant k, before the physics integrates."""

    def after_step(self, k: int, t_ns: int) -> None:
        """Record what MuJoCo computed during step k (e.g. accelerations)."""

    def finish(self) -> None:
        """End the recording (write what a cut-short period holds, free resources)."""

    def statistics(self) -> dict | None:
        """The run's statistics this sensor offers for the metadata (the first offer is kept)."""
        return None


class SensorKind(ABC):
    """A sensor kind, keyed by `SensorSpec.type`."""

    type: ClassVar[str]
    config_model: ClassVar[type[SensorConfig]]
    #: the model of this kind's resolved sensor in `scene.json`: `SensorSpec`, or a subclass
    #: carrying the kind's own settings (what its recorder reads back from the scene)
    spec_model: ClassVar[type[SensorSpec]] = SensorSpec

    @abstractmethod
    def spec(self, name: str, cfg: SensorConfig) -> SensorSpec:
        """The resolved sensor on the robot body (`scene.json` keeps it) for its config."""

    @abstractmethod
    def mounts(self, sensor: SensorSpec) -> tuple[Mount, ...]:
        """What the sensor needs on the robot in MuJoCo."""

    @abstractmethod
    def metadata(self, sensor: SensorSpec) -> dict:
        """The sensor's entry in the metadata's `streams` (type, rate, frames, intrinsics)."""

    def extra_streams(self, sensor: SensorSpec, pose_rate_hz: int) -> dict[str, dict]:
        """Streams besides its own the sensor adds (e.g. a camera's ground-truth pose)."""
        return {}

    @abstractmethod
    def recorder(self, sensor: SensorSpec, ctx: RecordingContext) -> SensorRecorder:
        """A recorder that declares the sensor's streams on `ctx.writer` and fills them: tables,
        the built-in layouts, or its own files (`add_files`, `write_file`, an index by `append`)."""

    def validate_stream(self, check: StreamCheck) -> None:
        """Check the files of one of this kind's streams in a sequence, adding to `check`'s
        problems and counters; by default the stream is a table (`data.csv`, t_ns first)."""
        check_table(check)


def base_metadata(sensor: SensorSpec) -> dict:
    """The entries every sensor's metadata starts with: type, rate and its mounting."""
    return {
        "type": sensor.type,
        "rate_hz": sensor.rate_hz,
        "T_body_sensor": pose_to_T(sensor.pos, sensor.quat).tolist(),
    }
