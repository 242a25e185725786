"""`summarize_sequence`: what `twinsim info` shows about a sequence folder, as plain data."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from twinsim.atomic import check_plain_folder
from twinsim.configmodel import format_validation_error
from twinsim.errors import SequenceError
from twinsim.model.layout import INCOMPLETE, METADATA, STATUS_COMPLETE
from twinsim.sequence.reader import read_metadata

#: Metadata entries summarised below rather than copied as they are.
_SUMMARISED = ("streams", "instances", "classes")


class _Shown(BaseModel):
    """The shape of each metadata entry `info` shows (any may be absent: older sequences),
    so a file with the wrong shape is one line naming the entry, not a traceback."""

    model_config = ConfigDict(extra="ignore", strict=True)

    class Counts(BaseModel):
        model_config = ConfigDict(strict=True)
        placed: int
        requested: int

    class Named(BaseModel):
        model_config = ConfigDict(extra="allow", strict=True)
        name: str = ""
        kind: str = ""
        type: str = ""

    class Traffic(BaseModel):
        model_config = ConfigDict(extra="allow", strict=True)
        walkers: _Shown.Counts | None = None
        vehicles: _Shown.Counts | None = None

    status: str | None = None
    seed: int | None = None
    physics_hz: int | None = None
    bootstrap_steps: int | None = None
    recorded_steps: list[int] | None = None
    twinsim_version: str | None = None
    mujoco_version: str | None = None
    rooms: list[Named] | None = None
    robots: list[Named] | None = None
    people: Counts | None = None
    redraw: dict | None = None
    traffic: Traffic | None = None
    flying_objects: int | None = None
    statistics: dict | None = None
    instances: list[dict] | None = None


def summarize_sequence(path: str | Path) -> dict:
    """Duration, streams (type, rate, count, resolution or beams), instances per class, seed.

    Works on partial sequences too (`complete` says which), so an interrupted run can be inspected;
    a folder holding a link or a FIFO is refused, as every reader refuses it.
    """
    path = Path(path)
    if not path.is_dir():
        raise SequenceError(f"{path}: no such sequence folder")
    check_plain_folder(path, "summarise it")
    metadata = read_metadata(path)
    try:
        _Shown.model_validate(metadata)
    except ValidationError as exc:
        raise SequenceError(
            f"{path / METADATA}: {format_validation_error(exc, what='metadata entry')}"
        ) from None
    summary: dict = {
        "path": str(path),
        "complete": metadata.get("status") == STATUS_COMPLETE and not (path / INCOMPLETE).exists(),
    }
    summary |= {k: v for k, v in metadata.items() if k not in _SUMMARISED}
    hz, steps = metadata.get("physics_hz"), metadata.get("recorded_steps")
    if isinstance(hz, int) and hz > 0 and isinstance(steps, list) and len(steps) == 2:
        summary["duration_s"] = (steps[1] - steps[0]) / hz
    summary["streams"] = {name: _stream_summary(info) for name, info in metadata["streams"].items()}
    instances = metadata.get("instances") or []
    summary["n_instances"] = len(instances)
    summary["n_dynamic_instances"] = sum(bool(i.get("dynamic")) for i in instances)
    by_class = Counter(str(i.get("semantic_class")) for i in instances)
    summary["instances_by_class"] = dict(sorted(by_class.items()))
    summary["n_classes"] = len(metadata.get("classes") or [])
    return summary


def _stream_summary(info: dict) -> dict:
    row = {key: info.get(key) for key in ("type", "rate_hz", "count")}
    if "robot" in info:
        row["robot"] = info["robot"]
    if info.get("type") in ("camera", "event_camera"):
        row["resolution"] = f"{info.get('width')}x{info.get('height')}"
    elif info.get("type") == "lidar":
        row["resolution"] = f"{info.get('rings')} rings x {info.get('columns')}"
        row["model"] = info.get("model")
    return row
