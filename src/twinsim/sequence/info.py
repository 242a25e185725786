"""`summarize_sequence`: what `twinsim info` shows about a sequence folder, as a typed
`SequenceSummary` (its JSON, and the rows `info` prints)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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


@dataclass(frozen=True)
class SequenceSummary:
    """What `summarize_sequence` found: whether the sequence is complete, the metadata entries
    shown as they are (`metadata`: seed, versions, robots, rooms, people, ...), the recorded
    duration, each stream's type, rate, count and resolution, and the instances by class.

    `as_dict()` is the JSON `twinsim info --json` prints; `facts()` and `stream_rows()` the
    text rows of the tables `twinsim info` prints.
    """

    path: str
    complete: bool
    metadata: dict[str, Any]  # every metadata entry but those summarised below, in its order
    duration_s: float | None  # recorded steps ÷ physics rate (None: the metadata cannot say)
    streams: dict[str, dict[str, Any]]  # stream → type, rate_hz, count (robot, resolution, model)
    n_instances: int
    n_dynamic_instances: int
    instances_by_class: dict[str, int]
    n_classes: int

    def as_dict(self) -> dict:
        """Everything as plain JSON data: `path`, `complete`, the metadata entries, then the
        figures computed from the rest."""
        data: dict = {"path": self.path, "complete": self.complete}
        data |= self.metadata
        if self.duration_s is not None:
            data["duration_s"] = self.duration_s
        data["streams"] = self.streams
        data["n_instances"] = self.n_instances
        data["n_dynamic_instances"] = self.n_dynamic_instances
        data["instances_by_class"] = self.instances_by_class
        data["n_classes"] = self.n_classes
        return data

    def facts(self) -> list[tuple[str, str]]:
        """(label, text) rows: seed, duration, physics rate, robots, versions, rooms, instances,
        people (redrawn, traffic), flying objects, the motion and dynamic-content figures."""
        get = self.as_dict().get
        rooms, robots = get("rooms") or [], get("robots") or []
        by_class = get("instances_by_class", {})
        rows = (
            ("seed", get("seed")),
            ("recorded", f"{get('duration_s')} s after {get('bootstrap_steps')} bootstrap steps"),
            ("physics", f"{get('physics_hz')} Hz"),
            ("robots", ", ".join(f"{r.get('name')} ({r.get('kind')})" for r in robots)),
            ("versions", f"twinsim {get('twinsim_version')}, mujoco {get('mujoco_version')}"),
            ("rooms", ", ".join(r["type"] for r in rooms) or "-"),
            ("instances", f"{get('n_instances')} ({get('n_dynamic_instances')} dynamic)"),
            ("classes", ", ".join(f"{c} {n}" for c, n in by_class.items())),
            ("people", _placed(get("people"))),
            *_redraw_rows(get("redraw")),
            *_traffic_rows(get("traffic") or {}),
            ("flying objects", get("flying_objects", 0)),
            *_statistics_rows(get("statistics") or {}),
        )
        return [(key, str(value)) for key, value in rows]

    def stream_rows(self) -> list[tuple[str, str, str, str, str, str]]:
        """(stream, robot, type, rate, count, details) rows, a row per stream."""
        rows = []
        for name, entry in self.streams.items():
            count, details = str(entry.get("count")), entry.get("resolution", "")
            robot = str(entry.get("robot") or "-")
            rows.append((name, robot, entry["type"], str(entry["rate_hz"]), count, details))
        return rows


def _placed(counts: dict | None) -> str:
    """A `{placed, requested}` count as the line `info` shows ("-" where the metadata has none:
    `summarize_sequence` checked its shape)."""
    return "{placed} placed of {requested} requested".format(**counts) if counts else "-"


def _redraw_rows(redraw: dict | None) -> list[tuple[str, str]]:
    """The redraw that built the world, where the seed's own draw of people left no start."""
    if not redraw:
        return []
    failed = len(redraw.get("failures") or ())
    text = f"draw {redraw.get('draw')} with {redraw.get('people_requested')} people"
    return [("redrawn", f"{text} ({failed} earlier draw(s) left a robot no start or tour)")]


def _traffic_rows(traffic: dict) -> list[tuple[str, str]]:
    """A town's walkers and vehicles as (label, text) rows, apart from the `people` section's."""
    return [(name, _placed(traffic[name])) for name in ("walkers", "vehicles") if traffic.get(name)]


def _statistics_rows(stats: dict) -> list[tuple[str, str]]:
    """GRADE's Table 8 figures as (label, text) rows."""
    rows = []
    for key, unit in (
        ("linear_speed", "m/s"),
        ("linear_accel", "m/s²"),
        ("angular_speed", "rad/s"),
        ("angular_accel", "rad/s²"),
    ):
        values = stats.get("camera_motion", {}).get(key)
        if values:
            rows.append(
                (f"camera |{key}|", " ".join(f"{v:.3f}" for v in values) + f" {unit} (x y z)")
            )
    dyn = stats.get("dynamic_content")
    if dyn:
        rows.append(
            (
                "dynamic content",
                f"{dyn['frames_with_dynamic_content']} of {dyn['frames']} frames, mean coverage "
                f"{dyn['mean_dynamic_coverage']:.1%}",
            )
        )
    return rows


def summarize_sequence(path: str | Path) -> SequenceSummary:
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
    hz, steps = metadata.get("physics_hz"), metadata.get("recorded_steps")
    duration_s = None
    if isinstance(hz, int) and hz > 0 and isinstance(steps, list) and len(steps) == 2:
        duration_s = (steps[1] - steps[0]) / hz
    instances = metadata.get("instances") or []
    by_class = Counter(str(i.get("semantic_class")) for i in instances)
    return SequenceSummary(
        path=str(path),
        complete=metadata.get("status") == STATUS_COMPLETE and not (path / INCOMPLETE).exists(),
        metadata={k: v for k, v in metadata.items() if k not in _SUMMARISED},
        duration_s=duration_s,
        streams={name: _stream_summary(info) for name, info in metadata["streams"].items()},
        n_instances=len(instances),
        n_dynamic_instances=sum(bool(i.get("dynamic")) for i in instances),
        instances_by_class=dict(sorted(by_class.items())),
        n_classes=len(metadata.get("classes") or []),
    )


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
