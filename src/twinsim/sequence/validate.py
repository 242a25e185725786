"""`validate_sequence`: every check a downstream tool relies on, each failure named precisely.

Checks the completion marker and status, metadata and scene parse, every stream's count against
both the metadata and the step clock, every timestamp against the clock (exact integers), CSV
cells, and for cameras every image file (decoded: shape, dtype, ids) and boxes.jsonl line.
"""

from __future__ import annotations

import json
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from twinsim.errors import SequenceError
from twinsim.scene.spec import SceneSpec
from twinsim.sequence.clock import step_to_ns, stream_steps
from twinsim.sequence.images import read_npy, read_png
from twinsim.sequence.layout import (
    BOXES_FILE,
    FRAME_COLUMNS,
    FRAMES_FILE,
    IMAGE_KINDS,
    IMU_COLUMNS,
    INCOMPLETE,
    METADATA,
    POSE_COLUMNS,
    SCENE,
    STATUS_COMPLETE,
    TABLE_FILE,
    frame_path,
)
from twinsim.sequence.reader import read_metadata
from twinsim.sequence.scans import (
    EVENT_DTYPE,
    EVENTS_FILE,
    POINT_DTYPE,
    POINTS_DIR,
    SCAN_COLUMNS,
    SCANS_FILE,
    points_path,
    read_records,
)
from twinsim.sequence.tables import Table, parse_table

#: Problems of one kind listed per stream before the rest are summarised as a count.
MAX_DETAILS = 10

#: Columns a table stream of a known type must have after t_ns.
_TYPE_COLUMNS = {"imu": IMU_COLUMNS, "pose": POSE_COLUMNS}

_DTYPES = {
    "rgb": (np.uint8,),
    "depth": (np.float32,),
    "instance": (np.uint16,),
    "semantic": (np.uint8, np.uint16),
}


@dataclass
class ValidationReport:
    """Outcome of `validate_sequence`: ok iff no problems; `checked` counts what was read."""

    ok: bool
    problems: list[str]
    checked: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class _Context:
    """The metadata every stream is checked against."""

    physics_hz: int
    k_start: int
    k_end: int
    instance_class: dict[int, str]
    instance_ids: np.ndarray  # sorted, with 0 (= nothing)
    n_classes: int


def validate_sequence(path: str | Path) -> ValidationReport:
    """Check a sequence folder against docs/sequence-format.md and list every problem found."""
    path = Path(path)
    problems: list[str] = []
    checked = {"streams": 0, "rows": 0, "frames": 0, "files": 0}
    if not path.is_dir():
        return ValidationReport(False, [f"{path}: no such sequence folder"], checked)
    if (path / INCOMPLETE).exists():
        problems.append(
            f"{INCOMPLETE} marker present: the run was interrupted or is still being written, "
            "so the sequence is partial"
        )
    try:
        metadata = read_metadata(path)
    except SequenceError as exc:
        return ValidationReport(False, [*problems, str(exc)], checked)
    status = metadata.get("status")
    if status != STATUS_COMPLETE:
        problems.append(
            f"{METADATA}: status is {status!r}, not {STATUS_COMPLETE!r}: the run was interrupted "
            "or the sequence is partial"
        )
    _check_scene(path, problems)
    context = _context(metadata, problems)
    if context is not None:
        for name, info in metadata["streams"].items():
            checked["streams"] += 1
            if not isinstance(info, dict) or not (path / name).is_dir():
                problems.append(f"{name}: listed in {METADATA} but its folder does not exist")
            elif info.get("type") == "camera":
                _check_camera(path, name, info, context, problems, checked)
            elif info.get("type") == "lidar":
                _check_lidar(path, name, info, context, problems, checked)
            elif info.get("type") == "events":
                _check_events(path, name, info, context, problems, checked)
            else:
                _check_table(path, name, info, context, problems, checked)
    for child in sorted(path.iterdir()):
        if child.is_dir() and child.name not in metadata["streams"]:
            problems.append(f"{child.name}/: folder is not a stream listed in {METADATA}")
    return ValidationReport(not problems, problems, checked)


def _check_scene(path: Path, problems: list[str]) -> None:
    try:
        SceneSpec.from_json((path / SCENE).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        reason = " ".join(str(exc).split())
        problems.append(f"{SCENE}: cannot be parsed as a SceneSpec ({reason})")


def _context(metadata: dict, problems: list[str]) -> _Context | None:
    """Clock, instance table and vocabulary from metadata; None (and a problem) if unusable."""
    hz, steps = metadata.get("physics_hz"), metadata.get("recorded_steps")
    classes, instances = metadata.get("classes"), metadata.get("instances")
    if not _is_int(hz) or hz <= 0:
        problems.append(f"{METADATA}: physics_hz must be a positive integer, got {hz!r}")
        return None
    if not (isinstance(steps, list) and len(steps) == 2 and all(map(_is_int, steps))) or (
        steps[0] > steps[1]
    ):
        problems.append(f"{METADATA}: recorded_steps must be [k_start, k_end], got {steps!r}")
        return None
    if not isinstance(classes, list) or not all(isinstance(c, str) for c in classes):
        problems.append(f"{METADATA}: classes must be a list of class names, got {classes!r}")
        return None
    if not isinstance(instances, list) or not all(
        isinstance(i, dict) and _is_int(i.get("instance_id")) for i in instances
    ):
        problems.append(f"{METADATA}: instances must be a list of objects with an instance_id")
        return None
    for row in instances:
        if row.get("semantic_class") not in classes:
            problems.append(
                f"{METADATA}: instance {row['instance_id']} has class "
                f"{row.get('semantic_class')!r}, not in classes"
            )
    instance_class = {row["instance_id"]: row.get("semantic_class") for row in instances}
    return _Context(
        physics_hz=hz,
        k_start=steps[0],
        k_end=steps[1],
        instance_class=instance_class,
        instance_ids=np.array(sorted({0, *instance_class}), dtype=np.int64),
        n_classes=len(classes),
    )


def _check_table(
    path: Path, name: str, info: dict, ctx: _Context, problems: list[str], checked: dict
) -> None:
    label = f"{name}/{TABLE_FILE}"
    try:
        table = parse_table(path / label, 1, label)
    except SequenceError as exc:
        problems.append(str(exc))
        return
    if table.columns[0] != "t_ns":
        problems.append(f"{label}: first column is {table.columns[0]!r}, expected 't_ns'")
    wanted = _TYPE_COLUMNS.get(info.get("type"))
    if wanted is not None and table.columns[1:] != wanted:
        problems.append(
            f"{label}: columns {','.join(table.columns[1:])}, expected {','.join(wanted)} "
            f"for type {info.get('type')!r}"
        )
    _check_values(label, table, problems)
    if wanted == POSE_COLUMNS:
        _check_quaternions(label, table.values[:, 3:], problems)
    checked["rows"] += len(table.ints)
    _check_times(name, label, "sample", table.ints[:, 0], info, ctx, problems)


def _indexed_poses(
    path: Path,
    name: str,
    label: str,
    columns: tuple[str, ...],
    what: str,
    info: dict,
    ctx: _Context,
    problems: list[str],
):
    """Parse and check a per-frame (or per-scan) pose table: header, consecutive indices,
    finite values, unit quaternions, timestamps on the stream's schedule; None if unreadable."""
    try:
        table = parse_table(path / label, 2, label)
    except SequenceError as exc:
        problems.append(str(exc))
        return None
    if table.columns != columns:
        problems.append(f"{label}: header {','.join(table.columns)}, expected {','.join(columns)}")
        return None
    n = len(table.ints)
    wrong = np.flatnonzero(table.ints[:, 0] != np.arange(n))
    _add_limited(
        problems, [f"{label} line {i + 2}: {what} {table.ints[i, 0]}, expected {i}" for i in wrong]
    )
    _check_values(label, table, problems)
    _check_quaternions(label, table.values[:, 3:], problems)
    _check_times(name, label, what, table.ints[:, 1], info, ctx, problems)
    return table


def _check_unlisted(folder: Path, listed: set[str], label: str, problems: list[str]) -> None:
    """Files in `folder` that the stream's table does not list."""
    present = {p.name for p in folder.iterdir()} if folder.is_dir() else set()
    rel = f"{folder.parent.name}/{folder.name}"
    _add_limited(problems, [f"{rel}/{f}: not listed in {label}" for f in sorted(present - listed)])


def _check_camera(
    path: Path, name: str, info: dict, ctx: _Context, problems: list[str], checked: dict
) -> None:
    label = f"{name}/{FRAMES_FILE}"
    table = _indexed_poses(path, name, label, FRAME_COLUMNS, "frame", info, ctx, problems)
    if table is None:
        return
    n = len(table.ints)
    t_ns = table.ints[:, 1]
    _check_boxes(path, name, t_ns, ctx, problems)

    width, height = info.get("width"), info.get("height")
    shape = (height, width) if _is_int(width) and _is_int(height) else None
    if shape is None:
        problems.append(f"{name}: metadata.json gives no integer width and height")
    workers = min(8, os.cpu_count() or 1)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        results = pool.map(lambda i: _check_frame_files(path, name, i, shape, ctx), range(n))
        _add_limited(problems, [p for found in results for p in found])
    for kind in IMAGE_KINDS:
        listed = {frame_path(Path(), kind, i).name for i in range(n)}
        _check_unlisted(path / name / kind, listed, label, problems)
    checked["frames"] += n
    checked["files"] += n * len(IMAGE_KINDS)


def _check_lidar(
    path: Path, name: str, info: dict, ctx: _Context, problems: list[str], checked: dict
) -> None:
    """scans.csv like frames.csv; every points file decoded and its fields checked."""
    label = f"{name}/{SCANS_FILE}"
    table = _indexed_poses(path, name, label, SCAN_COLUMNS, "scan", info, ctx, problems)
    if table is None:
        return
    n = len(table.ints)
    rings, rate = info.get("rings"), info.get("rate_hz")
    if not _is_int(rings) or rings <= 0:
        problems.append(f"{name}: metadata.json gives no positive integer rings")
        rings = None
    sweep_ns = None
    if _is_int(rate) and rate > 0 and ctx.physics_hz % rate == 0:
        sweep_ns = step_to_ns(ctx.physics_hz // rate, ctx.physics_hz)
    found = []
    for index in range(n):
        found.extend(_scan_problems(path, name, index, rings, sweep_ns, ctx))
    _add_limited(problems, found)
    listed = {points_path(Path(), i).name for i in range(n)}
    _check_unlisted(path / name / POINTS_DIR, listed, label, problems)
    checked["scans"] = checked.get("scans", 0) + n
    checked["files"] += n


def _scan_problems(
    path: Path, name: str, index: int, rings: int | None, sweep_ns: int | None, ctx: _Context
) -> list[str]:
    """Decode one scan's points and check every field against the format."""
    label = points_path(Path(name), index).as_posix()
    try:
        rec = read_records(points_path(path / name, index), POINT_DTYPE, label)
    except SequenceError as exc:
        return [str(exc)]
    found = []
    xyz = np.stack([rec["x"], rec["y"], rec["z"]], axis=1).astype(np.float64)
    rng = rec["range"].astype(np.float64)
    if not (np.isfinite(xyz).all() and np.isfinite(rng).all()):
        found.append(f"{label}: points or ranges are not finite")
    elif np.any(np.abs(np.linalg.norm(xyz, axis=1) - rng) > 1e-3 + 1e-5 * rng):
        found.append(f"{label}: point distances differ from their range")
    intensity = rec["intensity"]
    if np.any(~((intensity >= 0.0) & (intensity <= 1.0))):
        found.append(f"{label}: intensity outside [0, 1]")
    offsets = rec["t_offset_ns"]
    if np.any(offsets < 0) or (sweep_ns is not None and np.any(offsets >= sweep_ns)):
        found.append(f"{label}: t_offset_ns outside the sweep [0, {sweep_ns})")
    if rings is not None and np.any(rec["ring"] >= rings):
        found.append(f"{label}: ring ids not below rings = {rings}")
    unknown = np.setdiff1d(np.unique(rec["instance"]), ctx.instance_ids)
    if unknown.size:
        found.append(f"{label}: instance ids {unknown.tolist()} are not in the instance table")
    if np.any(rec["semantic"] >= ctx.n_classes):
        found.append(f"{label}: semantic ids not below len(classes) = {ctx.n_classes}")
    return found


def _check_events(
    path: Path, name: str, info: dict, ctx: _Context, problems: list[str], checked: dict
) -> None:
    """events.npy: record type, count, sorted times inside the recording, pixels, polarity."""
    label = f"{name}/{EVENTS_FILE}"
    try:
        rec = read_records(path / label, EVENT_DTYPE, label)
    except SequenceError as exc:
        problems.append(str(exc))
        return
    n, recorded, rate = len(rec), info.get("count"), info.get("rate_hz")
    if recorded != n:
        problems.append(f"{name}: {n} events but {METADATA} records count {recorded!r}")
    if not _is_int(rate) or rate <= 0 or ctx.physics_hz % rate:
        problems.append(
            f"{name}: rate_hz {rate!r} must be a positive integer dividing "
            f"physics_hz {ctx.physics_hz}"
        )
    width, height = info.get("width"), info.get("height")
    if not (_is_int(width) and _is_int(height)):
        problems.append(f"{name}: metadata.json gives no integer width and height")
    elif n and (rec["x"].max() >= width or rec["y"].max() >= height):
        problems.append(f"{label}: event pixels outside {width}x{height}")
    t = rec["t_ns"]
    lo, hi = step_to_ns(ctx.k_start, ctx.physics_hz), step_to_ns(ctx.k_end, ctx.physics_hz)
    bad = np.flatnonzero(np.diff(t) < 0)
    _add_limited(
        problems, [f"{label} record {i + 1}: t_ns {t[i + 1]} is before {t[i]}" for i in bad]
    )
    if n and (t[0] < lo or t[-1] >= hi):
        problems.append(f"{label}: event times outside the recording [{lo}, {hi})")
    if not np.isin(rec["polarity"], (-1, 1)).all():
        problems.append(f"{label}: polarity must be +1 or -1")
    checked["events"] = checked.get("events", 0) + n
    checked["files"] += 1


def _check_frame_files(
    path: Path, name: str, index: int, shape: tuple[int, int] | None, ctx: _Context
) -> list[str]:
    """Decode one frame's four images and check shape, dtype, depth values and ids."""
    found = []
    for kind, dtypes in _DTYPES.items():
        label = frame_path(Path(name), kind, index).as_posix()
        file = frame_path(path / name, kind, index)
        try:
            array = read_npy(file, label) if kind == "depth" else read_png(file, label)
        except SequenceError as exc:
            found.append(str(exc))
            continue
        want = None if shape is None else ((*shape, 3) if kind == "rgb" else shape)
        if array.dtype not in dtypes or (want is not None and array.shape != want):
            allowed = " or ".join(np.dtype(d).name for d in dtypes)
            found.append(f"{label}: {array.dtype}{array.shape}, expected {allowed}{want or ''}")
            continue
        if kind == "depth":
            bad = int(np.count_nonzero(~(array >= 0.0)))
            if bad:
                found.append(f"{label}: {bad} pixels are negative or not finite")
        elif kind == "instance":
            ids = np.flatnonzero(np.bincount(array.ravel()))
            unknown = np.setdiff1d(ids, ctx.instance_ids)
            if unknown.size:
                found.append(
                    f"{label}: instance ids {unknown.tolist()} are not in metadata's instance table"
                )
        elif kind == "semantic" and array.size and int(array.max()) >= ctx.n_classes:
            ids = np.flatnonzero(np.bincount(array.ravel()))
            found.append(
                f"{label}: semantic ids {ids[ids >= ctx.n_classes].tolist()} are not below "
                f"len(classes) = {ctx.n_classes}"
            )
    return found


def _check_boxes(
    path: Path, name: str, t_ns: np.ndarray, ctx: _Context, problems: list[str]
) -> None:
    label = f"{name}/{BOXES_FILE}"
    try:
        lines = (path / label).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        problems.append(f"{label}: cannot be read ({exc})")
        return
    if len(lines) != len(t_ns):
        problems.append(f"{label}: {len(lines)} lines, expected {len(t_ns)} (one per frame)")
    found = []
    for index, line in enumerate(lines):
        where = f"{label} line {index + 1}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            found.append(f"{where}: not valid JSON ({exc})")
            continue
        if not isinstance(record, dict) or not isinstance(record.get("boxes"), list):
            found.append(f"{where}: expected an object with a 'boxes' list")
            continue
        if record.get("frame") != index:
            found.append(f"{where}: frame {record.get('frame')!r}, expected {index}")
        if index < len(t_ns) and record.get("t_ns") != int(t_ns[index]):
            found.append(f"{where}: t_ns {record.get('t_ns')!r}, {FRAMES_FILE} has {t_ns[index]}")
        found.extend(_box_problems(where, record["boxes"], ctx))
    _add_limited(problems, found)


def _box_problems(where: str, boxes: list, ctx: _Context) -> list[str]:
    found = []
    for box in boxes:
        iid = box.get("instance_id") if isinstance(box, dict) else None
        if iid not in ctx.instance_class:
            found.append(f"{where}: box instance_id {iid!r} is not in metadata's instance table")
            continue
        if box.get("semantic_class") != ctx.instance_class[iid]:
            found.append(
                f"{where}: box of instance {iid} has class {box.get('semantic_class')!r}, "
                f"metadata says {ctx.instance_class[iid]!r}"
            )
        for key in ("tight", "loose"):
            rect = box.get(key)
            if not ((key == "loose" and rect is None) or _is_rect(rect)):
                found.append(
                    f"{where}: box of instance {iid} has {key} {rect!r}, not [x0,y0,x1,y1]"
                )
    return found


def _check_values(label: str, table: Table, problems: list[str]) -> None:
    bad = np.flatnonzero(~np.isfinite(table.values).all(axis=1))
    _add_limited(problems, [f"{label} line {i + 2}: value is not finite" for i in bad])


def _check_quaternions(label: str, quats: np.ndarray, problems: list[str]) -> None:
    bad = np.flatnonzero(np.abs(np.linalg.norm(quats, axis=1) - 1.0) > 1e-6)
    _add_limited(problems, [f"{label} line {i + 2}: quaternion is not unit length" for i in bad])


def _check_times(
    name: str,
    label: str,
    noun: str,
    t_ns: np.ndarray,
    info: dict,
    ctx: _Context,
    problems: list[str],
) -> None:
    """Counts against metadata and the clock; every t_ns increasing and exactly on the grid."""
    n, recorded, rate = len(t_ns), info.get("count"), info.get("rate_hz")
    if recorded != n:
        problems.append(f"{name}: {n} {noun}s but {METADATA} records count {recorded!r}")
    if not _is_int(rate) or rate <= 0 or ctx.physics_hz % rate:
        problems.append(
            f"{name}: rate_hz {rate!r} must be a positive integer dividing "
            f"physics_hz {ctx.physics_hz}"
        )
        return
    steps = stream_steps(ctx.k_start, ctx.k_end, ctx.physics_hz // rate)
    span = f"at {rate} Hz over steps [{ctx.k_start}, {ctx.k_end})"
    if n != len(steps):
        problems.append(f"{name}: {n} {noun}s, expected {len(steps)} {span}")
    step_of = {step_to_ns(k, ctx.physics_hz): k for k in steps}
    times = t_ns.tolist()
    _add_limited(
        problems,
        [
            f"{label} line {i + 3}: t_ns {times[i + 1]} is not after the previous {times[i]}"
            for i in np.flatnonzero(np.diff(t_ns) <= 0)
        ],
    )
    _add_limited(
        problems,
        [
            f"{label} line {i + 2}: t_ns {t} is not the time of a step of this stream {span}"
            for i, t in enumerate(times)
            if t not in step_of
        ],
    )
    seen = set(times)
    _add_limited(
        problems,
        [f"{name}: no {noun} at step {k} (t_ns {t})" for t, k in step_of.items() if t not in seen],
    )


def _add_limited(problems: list[str], found: list[str]) -> None:
    """Add up to MAX_DETAILS problems of one kind and count the rest, so reports stay readable."""
    problems.extend(found[:MAX_DETAILS])
    if len(found) > MAX_DETAILS:
        problems.append(f"... and {len(found) - MAX_DETAILS} more like the one above")


def _is_rect(rect: object) -> bool:
    """An [x0, y0, x1, y1] list of ints with inclusive bounds x0 <= x1, y0 <= y1."""
    return (
        isinstance(rect, list)
        and len(rect) == 4
        and all(map(_is_int, rect))
        and rect[0] <= rect[2]
        and rect[1] <= rect[3]
    )


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
