"""A run's checkpoints (`resume.npz`): what the loop writes every `output.checkpoint_s` of
simulated time so an interrupted run can be finished (`twinsim.resume`).

A checkpoint keeps the step the run has reached, each stream's state
(`SequenceWriter.checkpoint`: count, last stamp, sizes of its appended files), the CRC-32 and
size of every file written so far (`SequenceWriter.contents`), each sensor recorder's state
(`SensorRecorder.checkpoint`) and the config; `LoggedStates` are the `robot_state` rows a
resumed run's physics replay is checked against.
"""

from __future__ import annotations

import json
import os
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from twinsim.errors import OutputFolderError, TwinsimError
from twinsim.model.layout import RESUME, RESUME_TMP, TABLE_FILE
from twinsim.sequence.ledger import Ledger, check_ledger
from twinsim.sequence.tables import format_row

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
