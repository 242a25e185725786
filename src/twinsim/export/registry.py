"""The export formats by name, and `export_sequence`, which checks options and dispatches."""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass
from pathlib import Path

from twinsim.errors import SequenceError
from twinsim.export.common import ExportError, Progress, no_progress
from twinsim.sequence.reader import open_sequence


@dataclass(frozen=True)
class ExportFormat:
    """A format: its exporter function (`module:function`, imported lazily) and one-line summary."""

    name: str
    target: str
    summary: str

    def exporter(self):
        """The exporter function `(seq, out, *, <options>, progress) -> Path`."""
        module, function = self.target.split(":")
        return getattr(importlib.import_module(f"twinsim.export.{module}"), function)

    def options(self) -> dict[str, object]:
        """The format's options and their defaults (keyword arguments besides `progress`)."""
        parameters = inspect.signature(self.exporter()).parameters.values()
        return {
            p.name: p.default
            for p in parameters
            if p.kind is inspect.Parameter.KEYWORD_ONLY and p.name != "progress"
        }


FORMATS: dict[str, ExportFormat] = {
    f.name: f
    for f in (
        ExportFormat("tum", "tum:export_tum", "TUM RGB-D: rgb/, depth/ (x5000), groundtruth"),
        ExportFormat("euroc", "euroc:export_euroc", "EuRoC MAV: mav0/ cameras, imu0, ground truth"),
        ExportFormat("kitti", "kitti:export_kitti", "KITTI odometry + SemanticKITTI labels"),
        ExportFormat("rosbag2", "rosbag2:export_rosbag2", "ROS 2 bag (MCAP): images, IMU, tf"),
        ExportFormat("coco", "coco:export_coco", "COCO instances (RLE masks) and keypoints"),
        ExportFormat("yolo", "yolo:export_yolo", "YOLO detection or segmentation labels"),
        ExportFormat("rerun", "rrd:export_rerun", "Rerun .rrd recording of every stream"),
    )
}


def export_sequence(
    seq_path: str | Path,
    fmt: str,
    out_dir: str | Path,
    progress: Progress = no_progress,
    robot: str | None = None,
    **options: object,
) -> Path:
    """Export the streams of one robot (`robot`; default the only or first one) of the
    sequence at `seq_path` as `fmt` into the new folder `out_dir`; returns it.

    Options are the format's keyword arguments (`FORMATS[fmt].options()`); unknown ones are
    refused by name. The source sequence is only read.
    """
    if fmt not in FORMATS:
        raise ExportError(f"format {fmt!r} is unknown; allowed: {', '.join(FORMATS)}")
    entry = FORMATS[fmt]
    allowed = entry.options()
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        names = ", ".join(allowed) or "none"
        raise ExportError(f"{fmt}: unknown option {unknown[0]!r}; allowed: {names}")
    try:
        seq = open_sequence(seq_path).for_robot(robot)
    except SequenceError as exc:
        raise ExportError(f"--robot: {exc}") from None
    out = Path(out_dir).resolve()
    if out == seq.path.resolve() or seq.path.resolve() in out.parents:
        raise ExportError(f"{out_dir}: is inside the source sequence {seq_path}; choose another")
    return entry.exporter()(seq, Path(out_dir), progress=progress, **options)
