"""Checkpoints of a run being recorded, and `twinsim run --resume DIR` from the last of them.

Every `output.checkpoint_s` of simulated time the loop writes `resume.npz` into the folder it
is recording: the step it has reached, each stream's state (`SequenceWriter.checkpoint`: count,
last stamp, sizes of its appended files), the CRC-32 and size of every file written so far
(`SequenceWriter.contents`) and each sensor recorder's state (`SensorRecorder.checkpoint`). A
resumed run rebuilds the world from the config the checkpoint keeps (its scene and metadata
must come out as the folder has them), checks what it can before changing anything (no link
or FIFO in the folder, a state for every stream, every file the checkpoint vouches for as it
saw it, the logged rows; the writer then holds the folder's lock), cuts every stream back to
the checkpoint,
gives the recorders their state, and replays the physics and the controllers up to the
checkpoint without rendering, checking each recorded step against the logged `robot_state`
row (so a resume that would diverge is refused, never written). From there it records as the
interrupted run would have: the finished folder is byte-identical to an uninterrupted run.
"""

from __future__ import annotations

import json
import os
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from twinsim.atomic import check_plain_folder
from twinsim.errors import OutputFolderError, TwinsimError
from twinsim.scene.spec import SceneSpec
from twinsim.sequence.layout import INCOMPLETE, METADATA, RESUME, RESUME_TMP, TABLE_FILE
from twinsim.sequence.ledger import Ledger, check_ledger, ledger_problems
from twinsim.sequence.reader import read_metadata
from twinsim.sequence.tables import format_row

if TYPE_CHECKING:
    from twinsim.scene.spec import SceneSpec

#: 2: `contents`, the ledger of the files written before the checkpoint
_FORMAT = 2
_SENSOR = "sensor."


@dataclass(frozen=True)
class Checkpoint:
    """A run's state at the boundary before physics step `step`, and its config as JSON in
    the order it was given (`metadata.json` sorts keys, and the order of a mapping such as
    `people.motions` or `robots` is part of what a config generates), and the ledger of the
    files written before it."""

    step: int
    writer: dict[str, dict]
    sensors: dict[str, np.ndarray]
    config: str
    contents: Ledger


def write_checkpoint(folder: Path, checkpoint: Checkpoint) -> None:
    """Write `resume.npz` into the run's folder (temporary name, then renamed)."""
    writer = json.dumps(checkpoint.writer, sort_keys=True).encode()
    arrays = {_SENSOR + key: value for key, value in checkpoint.sensors.items()}
    arrays |= {
        "format": np.array(_FORMAT),
        "step": np.array(checkpoint.step, np.int64),
        "writer": np.frombuffer(writer, np.uint8),
        "config": np.frombuffer(checkpoint.config.encode(), np.uint8),
        "contents": np.frombuffer(json.dumps(checkpoint.contents).encode(), np.uint8),
    }
    tmp = folder / RESUME_TMP
    try:
        with tmp.open("wb") as f:
            np.savez(f, **arrays)
        os.replace(tmp, folder / RESUME)
    except OSError as exc:
        raise OutputFolderError(f"{folder / RESUME}: cannot be written ({exc.strerror})") from None


def read_checkpoint(folder: Path) -> Checkpoint:
    """The checkpoint of an interrupted run in `folder`, checked; one line on what is wrong."""
    path = folder / RESUME
    if not path.is_file():
        raise OutputFolderError(
            f"{folder}: no {RESUME}: the run was interrupted before its first checkpoint "
            "(output.checkpoint_s), or checkpoints were off; run it again"
        )
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {key: data[key] for key in data.files}
        if int(arrays["format"]) != _FORMAT:
            raise ValueError(f"format {int(arrays['format'])}, this twinsim reads {_FORMAT}")
        step = int(arrays["step"])
        writer = json.loads(arrays["writer"].tobytes().decode())
        if not isinstance(writer, dict) or not all(isinstance(v, dict) for v in writer.values()):
            raise ValueError("writer state is not a mapping of streams")
        config = arrays["config"].tobytes().decode()
        if not isinstance(json.loads(config), dict):
            raise ValueError("config is not a mapping")
        contents = json.loads(arrays["contents"].tobytes().decode())
        check_ledger(contents)
    except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile) as exc:
        raise OutputFolderError(f"{path}: cannot be read ({exc})") from None
    sensors = {k[len(_SENSOR) :]: v for k, v in arrays.items() if k.startswith(_SENSOR)}
    return Checkpoint(step, writer, sensors, config, contents)


def resume(folder: str | Path, progress=None) -> Path:
    """Finish the interrupted run in `folder` from its last checkpoint (`twinsim run --resume`)."""
    from twinsim.config import validate_config
    from twinsim.engine.backend import configure_backend
    from twinsim.sim import build_scene, record, step_range

    folder = Path(folder)
    if not folder.is_dir():
        raise OutputFolderError(f"{folder}: no such folder to resume")
    if not (folder / INCOMPLETE).is_file():
        raise OutputFolderError(f"{folder}: is not an interrupted run (no {INCOMPLETE} marker)")
    checkpoint = read_checkpoint(folder)
    cfg = validate_config(json.loads(checkpoint.config))
    configure_backend(cfg.render.backend)
    scene = build_scene(cfg)
    _check_before_cutting(folder, checkpoint, scene, step_range(cfg).start)
    return record(scene, cfg, folder, progress, resume=checkpoint)


def _check_before_cutting(
    folder: Path, checkpoint: Checkpoint, scene: SceneSpec, start: int
) -> None:
    """What can be checked before a stream is cut back to the checkpoint, so a refused resume
    leaves the folder as it was: no link or FIFO in it, a state for every stream the metadata
    lists, and the `robot_state` rows the physics replay is checked against."""
    check_plain_folder(folder, "resume")
    listed = set(read_metadata(folder)["streams"])
    if listed != set(checkpoint.writer):
        odd = sorted(listed ^ set(checkpoint.writer))
        raise OutputFolderError(
            f"{folder}: the checkpoint and {METADATA} list different streams ({', '.join(odd)})"
        )
    changed = ledger_problems(folder, checkpoint.contents)
    if changed:
        more = f" (and {len(changed) - 1} more)" if len(changed) > 1 else ""
        raise OutputFolderError(
            f"{folder}/{changed[0]}{more}: cannot resume a folder edited after its checkpoint; "
            "run it again"
        )
    streams = {r.name: scene.stream_prefix(r.name) + "robot_state" for r in scene.robots}
    LoggedStates(folder, streams, start, checkpoint.step)


class LoggedStates:
    """The `robot_state` rows an interrupted run logged, to check a replay of its physics."""

    def __init__(self, folder: Path, streams: dict[str, str], start: int, step: int) -> None:
        """`streams`: robot name → its `robot_state` stream; rows of steps [start, step)."""
        self.start = start
        self.rows: dict[str, list[str]] = {}
        for robot, stream in streams.items():
            try:
                with (folder / stream / TABLE_FILE).open(encoding="utf-8", newline="\n") as f:
                    lines = f.readlines()[1 : 1 + step - start]
            except (OSError, UnicodeDecodeError) as exc:
                raise OutputFolderError(f"{folder / stream}: cannot be read ({exc})") from None
            if len(lines) != step - start:
                raise OutputFolderError(
                    f"{folder / stream / TABLE_FILE}: {len(lines)} rows, the checkpoint at step "
                    f"{step} needs {step - start}"
                )
            self.rows[robot] = lines

    def check(self, k: int, robot: str, t_ns: int, row: np.ndarray) -> None:
        """Refuse to go on when the replayed state of step k is not the logged one."""
        if format_row((t_ns,), row) != self.rows[robot][k - self.start]:
            raise TwinsimError(
                f"cannot resume: robot {robot!r} at step {k} differs from the interrupted run "
                "(another twinsim, MuJoCo or machine?); run it again"
            )
