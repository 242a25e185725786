"""What every exporter shares: the output folder, stream lookup, sensor extrinsics, time text."""

from __future__ import annotations

import colorsys
from collections.abc import Callable
from pathlib import Path

import numpy as np

from twinsim.errors import TwinsimError
from twinsim.sequence.reader import SequenceReader
from twinsim.sequence.writer import check_output_folder

#: progress(done, total) callback; the CLI turns it into a progress bar.
Progress = Callable[[int, int], None]


class ExportError(TwinsimError):
    """An export cannot be made: unknown format or option, or a stream the format needs."""


def prepare_output(out: Path) -> Path:
    """Create the export folder; refuses one that exists and is not empty (never overwrites)."""
    out = Path(out)
    check_output_folder(out)
    out.mkdir(parents=True, exist_ok=True)
    return out


def streams_of_type(seq: SequenceReader, kind: str) -> list[str]:
    """Names of the streams of one type (`camera`, `imu`, `lidar`, …), in metadata order."""
    return [n for n, info in seq.metadata["streams"].items() if info.get("type") == kind]


def pick_stream(seq: SequenceReader, kind: str, name: str | None, option: str) -> str:
    """The stream named by an option, or the first of its type; a clear error otherwise."""
    names = streams_of_type(seq, kind)
    if name is None:
        if not names:
            raise ExportError(f"{seq.path}: has no {kind} stream")
        return names[0]
    if name not in names:
        allowed = ", ".join(names) or f"none (the sequence has no {kind} stream)"
        raise ExportError(f"{option}={name!r} is not a {kind} stream; allowed: {allowed}")
    return name


def T_body_sensor(seq: SequenceReader, stream: str) -> np.ndarray:
    """The (4, 4) mounting pose of a sensor stream in the body frame (identity if unrecorded)."""
    value = seq.stream_info(stream).get("T_body_sensor")
    return np.eye(4) if value is None else np.asarray(value, dtype=np.float64).reshape(4, 4)


def invert(T: np.ndarray) -> np.ndarray:
    """Inverse of rigid transform(s) (..., 4, 4)."""
    R, t = T[..., :3, :3], T[..., :3, 3]
    out = np.zeros_like(T)
    out[..., :3, :3] = np.swapaxes(R, -1, -2)
    out[..., :3, 3] = -np.einsum("...ji,...j->...i", R, t)
    out[..., 3, 3] = 1.0
    return out


def seconds_text(t_ns: int) -> str:
    """Integer nanoseconds as exact decimal seconds text, e.g. 1033333333 -> '1.033333333'."""
    t_ns = int(t_ns)
    sign, t_ns = ("-", -t_ns) if t_ns < 0 else ("", t_ns)
    return f"{sign}{t_ns // 10**9}.{t_ns % 10**9:09d}"


def float_text(value: float) -> str:
    """A float as the shortest text that reads back to the identical bits."""
    return repr(float(value))


def no_progress(done: int, total: int) -> None:
    """The default progress callback: report nothing."""


def class_palette(n: int) -> np.ndarray:
    """A fixed RGB colour per class id (0 black), well spread in hue: every export that colours
    classes (Rerun, KITTI's labels.yaml) uses the same."""
    hues = (np.arange(n) * 0.61803398875) % 1.0
    colors = np.array([colorsys.hsv_to_rgb(h, 0.65, 0.95) for h in hues]) * 255
    colors[0] = 0
    return colors.astype(np.uint8)
