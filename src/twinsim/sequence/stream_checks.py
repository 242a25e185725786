"""The checks of one stream's files, for `validate_sequence` and the sensor kinds' hooks.

`validate_sequence` builds a `StreamCheck` for each stream and hands it to the stream's sensor
kind (`SensorKind.validate_stream`) or, for streams no sensor owns, to `check_table` /
`check_pose_table`. A kind checks its own file layout by composing the functions here: a table
(`data.csv`), a camera (frames.csv, images, boxes.jsonl), a LiDAR (scans.csv, points/), an
event camera (events.npy), files a stream's index does not list (`check_unlisted`).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from twinsim.errors import SequenceError
from twinsim.model.clock import step_to_ns, stream_steps
from twinsim.model.layout import (
    FRAME_COLUMNS,
    FRAMES_FILE,
    IMAGE_KINDS,
    METADATA,
    POSE_COLUMNS,
    TABLE_FILE,
    frame_path,
    surface_kinds,
)
from twinsim.sequence.annotation_checks import check_boxes, intrinsics_problems
from twinsim.sequence.images import read_npy, read_png
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
from twinsim.sequence.tables import Table, is_int, parse_table

#: Problems of one kind listed per stream before the rest are summarised as a count.
MAX_DETAILS = 10

_DTYPES = {
    "rgb": (np.uint8,),
    "depth": (np.float32,),
    "instance": (np.uint16,),
    "semantic": (np.uint8, np.uint16),
}


@dataclass(frozen=True)
class SequenceContext:
    """What every stream is checked against: the step clock, instance table and vocabulary."""

    physics_hz: int
    k_start: int
    k_end: int
    instance_class: dict[int, str]
    instance_ids: np.ndarray  # sorted, with 0 (= nothing)
    n_classes: int

    @classmethod
    def from_metadata(cls, metadata: dict, problems: list[str]) -> SequenceContext | None:
        """The context a sequence's metadata gives; None (and a problem) if it is unusable."""
        hz, steps = metadata.get("physics_hz"), metadata.get("recorded_steps")
        classes, instances = metadata.get("classes"), metadata.get("instances")
        if not is_int(hz) or hz <= 0:
            problems.append(f"{METADATA}: physics_hz must be a positive integer, got {hz!r}")
            return None
        if not (isinstance(steps, list) and len(steps) == 2 and all(map(is_int, steps))) or (
            steps[0] > steps[1]
        ):
            problems.append(f"{METADATA}: recorded_steps must be [k_start, k_end], got {steps!r}")
            return None
        if not isinstance(classes, list) or not all(isinstance(c, str) for c in classes):
            problems.append(f"{METADATA}: classes must be a list of class names, got {classes!r}")
            return None
        if not isinstance(instances, list) or not all(
            isinstance(i, dict) and is_int(i.get("instance_id")) for i in instances
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
        return cls(
            physics_hz=hz,
            k_start=steps[0],
            k_end=steps[1],
            instance_class=instance_class,
            instance_ids=np.array(sorted({0, *instance_class}), dtype=np.int64),
            n_classes=len(classes),
        )


@dataclass
class StreamCheck:
    """One stream to check: where it is, its metadata entry, the sequence's context, and the
    report's problem list and `checked` counters the check adds to."""

    path: Path  # the sequence folder
    name: str
    info: dict
    context: SequenceContext
    problems: list[str]
    checked: dict[str, int]
    decode: bool = True  # False: a quick structural check (files present, not decoded)

    @property
    def folder(self) -> Path:
        """The stream's folder in the sequence."""
        return self.path / self.name

    def report(self, found: list[str]) -> None:
        """Add up to MAX_DETAILS problems of one kind and count the rest, so reports stay
        readable."""
        self.problems.extend(found[:MAX_DETAILS])
        if len(found) > MAX_DETAILS:
            self.problems.append(f"... and {len(found) - MAX_DETAILS} more like the one above")

    def count(self, what: str, n: int) -> None:
        """Add `n` to the report's `checked[what]` (rows, frames, files, scans, ...)."""
        self.checked[what] = self.checked.get(what, 0) + n


def check_table(check: StreamCheck, columns: tuple[str, ...] | None = None) -> Table | None:
    """`data.csv`: t_ns first (then exactly `columns` where given), finite values, times on
    the stream's schedule; the table for further checks, None if it cannot be parsed."""
    label = f"{check.name}/{TABLE_FILE}"
    try:
        table = parse_table(check.path / label, 1, label)
    except SequenceError as exc:
        check.problems.append(str(exc))
        return None
    if table.columns[0] != "t_ns":
        check.problems.append(f"{label}: first column is {table.columns[0]!r}, expected 't_ns'")
    if columns is not None and table.columns[1:] != tuple(columns):
        check.problems.append(
            f"{label}: columns {','.join(table.columns[1:])}, expected {','.join(columns)} "
            f"for type {check.info.get('type')!r}"
        )
    _check_values(check, label, table)
    check.count("rows", len(table.ints))
    _check_times(check, label, "sample", table.ints[:, 0])
    return table


def check_pose_table(check: StreamCheck) -> Table | None:
    """A `pose` table: the pose columns, with unit quaternions."""
    table = check_table(check, POSE_COLUMNS)
    if table is not None and table.columns[1:] == POSE_COLUMNS:
        _check_quaternions(check, f"{check.name}/{TABLE_FILE}", table.values[:, 3:])
    return table


def check_unlisted(check: StreamCheck, folder: Path, listed: set[str], label: str) -> None:
    """Files in `folder` (inside the stream's folder) that the index `label` does not list."""
    present = {p.name for p in folder.iterdir()} if folder.is_dir() else set()
    rel = folder.relative_to(check.path).as_posix()
    check.report([f"{rel}/{f}: not listed in {label}" for f in sorted(present - listed)])


def _frame_files(kinds: tuple[str, ...], n: int) -> list[tuple[str, int]]:
    """Every (kind, frame) file of a camera of n frames: the four images and the optional
    kinds of each frame, flow for all but the last."""
    count = {kind: n - 1 if kind.startswith("flow") else n for kind in kinds}
    return [(kind, i) for kind in (*IMAGE_KINDS, *kinds) for i in range(count.get(kind, n))]


def check_camera(check: StreamCheck) -> None:
    """frames.csv, boxes.jsonl and every frame's four images (and its normals and flow where
    the metadata says the stream holds them), decoded and checked."""
    name, info, ctx = check.name, check.info, check.context
    label = f"{name}/{FRAMES_FILE}"
    table = _indexed_poses(check, label, FRAME_COLUMNS, "frame")
    if table is None:
        return
    n = len(table.ints)
    width, height = info.get("width"), info.get("height")
    shape = (height, width) if is_int(width) and is_int(height) else None
    if shape is None:
        check.problems.append(f"{name}: metadata.json gives no integer width and height")
    check.problems.extend(intrinsics_problems(name, info))
    check_boxes(check, table.ints[:, 1], shape)
    kinds = surface_kinds(info)
    files = _frame_files(kinds, n)
    if check.decode:
        workers = min(8, os.cpu_count() or 1)
        K = np.array(info.get("K", np.eye(3)), float).reshape(3, 3)

        def problems(i: int) -> list[str]:
            found = _frame_problems(check.path, name, i, shape, ctx)
            return found + _surface_problems(check.path, name, i, n, shape, kinds, K)

        with ThreadPoolExecutor(max_workers=workers) as pool:
            frames = pool.map(problems, range(n))
            check.report([p for found in frames for p in found])
    else:
        paths = [frame_path(Path(name), kind, i) for kind, i in files]
        check.report([f"{f.as_posix()}: missing" for f in paths if not (check.path / f).is_file()])
    for kind in (*IMAGE_KINDS, *kinds):
        listed = {frame_path(Path(), kind, i).name for k, i in files if k == kind}
        check_unlisted(check, check.folder / kind, listed, label)
    check.count("frames", n)
    check.count("files", len(files))


def check_lidar(check: StreamCheck) -> None:
    """scans.csv like frames.csv; every points file decoded and its fields checked."""
    name, info, ctx = check.name, check.info, check.context
    label = f"{name}/{SCANS_FILE}"
    table = _indexed_poses(check, label, SCAN_COLUMNS, "scan")
    if table is None:
        return
    n = len(table.ints)
    rings, rate = info.get("rings"), info.get("rate_hz")
    if not is_int(rings) or rings <= 0:
        check.problems.append(f"{name}: metadata.json gives no positive integer rings")
        rings = None
    sweep_ns = None
    if is_int(rate) and rate > 0 and ctx.physics_hz % rate == 0:
        sweep_ns = step_to_ns(ctx.physics_hz // rate, ctx.physics_hz)
    found = []
    for index in range(n):
        if check.decode:
            found.extend(_scan_problems(check, index, rings, sweep_ns))
        elif not points_path(check.folder, index).is_file():
            found.append(f"{points_path(Path(name), index).as_posix()}: missing")
    check.report(found)
    listed = {points_path(Path(), i).name for i in range(n)}
    check_unlisted(check, check.folder / POINTS_DIR, listed, label)
    check.count("scans", n)
    check.count("files", n)


def check_events(check: StreamCheck) -> None:
    """events.npy: record type, count, sorted times inside the recording, pixels, polarity."""
    name, info, ctx = check.name, check.info, check.context
    label = f"{name}/{EVENTS_FILE}"
    try:
        rec = read_records(check.path / label, EVENT_DTYPE, label)
    except SequenceError as exc:
        check.problems.append(str(exc))
        return
    n, recorded = len(rec), info.get("count")
    if recorded != n:
        check.problems.append(f"{name}: {n} events but {METADATA} records count {recorded!r}")
    rate_period(check)
    width, height = info.get("width"), info.get("height")
    if not (is_int(width) and is_int(height)):
        check.problems.append(f"{name}: metadata.json gives no integer width and height")
    elif n and (rec["x"].max() >= width or rec["y"].max() >= height):
        check.problems.append(f"{label}: event pixels outside {width}x{height}")
    t = rec["t_ns"]
    lo, hi = step_to_ns(ctx.k_start, ctx.physics_hz), step_to_ns(ctx.k_end, ctx.physics_hz)
    bad = np.flatnonzero(np.diff(t) < 0)
    check.report([f"{label} record {i + 1}: t_ns {t[i + 1]} is before {t[i]}" for i in bad])
    if n and (t[0] < lo or t[-1] >= hi):
        check.problems.append(f"{label}: event times outside the recording [{lo}, {hi})")
    if not np.isin(rec["polarity"], (-1, 1)).all():
        check.problems.append(f"{label}: polarity must be +1 or -1")
    check.count("events", n)
    check.count("files", 1)


def _indexed_poses(
    check: StreamCheck, label: str, columns: tuple[str, ...], what: str
) -> Table | None:
    """Parse and check a per-frame (or per-scan) pose table: header, consecutive indices,
    finite values, unit quaternions, timestamps on the stream's schedule; None if unreadable."""
    try:
        table = parse_table(check.path / label, 2, label)
    except SequenceError as exc:
        check.problems.append(str(exc))
        return None
    if table.columns != columns:
        check.problems.append(
            f"{label}: header {','.join(table.columns)}, expected {','.join(columns)}"
        )
        return None
    n = len(table.ints)
    wrong = np.flatnonzero(table.ints[:, 0] != np.arange(n))
    check.report([f"{label} line {i + 2}: {what} {table.ints[i, 0]}, expected {i}" for i in wrong])
    _check_values(check, label, table)
    _check_quaternions(check, label, table.values[:, 3:])
    _check_times(check, label, what, table.ints[:, 1])
    return table


def _scan_problems(
    check: StreamCheck, index: int, rings: int | None, sweep_ns: int | None
) -> list[str]:
    """Decode one scan's points and check every field against the format."""
    ctx = check.context
    label = points_path(Path(check.name), index).as_posix()
    try:
        rec = read_records(points_path(check.folder, index), POINT_DTYPE, label)
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
    return found + label_problems(rec, label, ctx)


def label_problems(rec: np.ndarray, label: str, ctx: SequenceContext) -> list[str]:
    """Points' instance ids missing from the instance table and semantic ids past the classes."""
    found = []
    unknown = np.setdiff1d(np.unique(rec["instance"]), ctx.instance_ids)
    if unknown.size:
        found.append(f"{label}: instance ids {unknown.tolist()} are not in the instance table")
    if np.any(rec["semantic"] >= ctx.n_classes):
        found.append(f"{label}: semantic ids not below len(classes) = {ctx.n_classes}")
    return found


def _frame_problems(
    path: Path, name: str, index: int, shape: tuple[int, int] | None, ctx: SequenceContext
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


#: A recorded normal is unit length to within this (float32), or 0 where nothing was seen.
NORMAL_TOL = 1e-3


def _surface_problems(
    path: Path,
    name: str,
    index: int,
    n: int,
    shape: tuple[int, int] | None,
    kinds: tuple[str, ...],
    K: np.ndarray,
) -> list[str]:
    """Decode one frame's normals and flow (all but the last frame) and check shape, dtype,
    unit normals facing the camera, flow validity codes and finite flow where valid."""
    found: list[str] = []
    arrays = {}
    wanted = {
        "normals": (np.float32, (3,)),
        "flow": (np.float32, (2,)),
        "flow_valid": (np.uint8, ()),
    }
    for kind in kinds:
        if kind.startswith("flow") and index == n - 1:
            continue
        label = frame_path(Path(name), kind, index).as_posix()
        file = frame_path(path / name, kind, index)
        try:
            array = read_npy(file, label) if file.suffix == ".npy" else read_png(file, label)
        except SequenceError as exc:
            found.append(str(exc))
            continue
        dtype, channels = wanted[kind]
        want = None if shape is None else (*shape, *channels)
        if array.dtype != dtype or (want is not None and array.shape != want):
            found.append(f"{label}: {array.dtype}{array.shape}, expected {np.dtype(dtype)}{want}")
            continue
        arrays[kind] = (label, array)
    if "normals" in arrays:
        label, normals = arrays["normals"]
        length = np.linalg.norm(normals.astype(np.float64), axis=-1)
        bad = int(np.count_nonzero(~((length == 0.0) | (np.abs(length - 1.0) <= NORMAL_TOL))))
        if bad:
            found.append(f"{label}: {bad} normals are neither unit length nor 0")
        h, w = normals.shape[:2]
        u, v = np.meshgrid(np.arange(w), np.arange(h))
        rays = np.stack([(u - K[0, 2]) / K[0, 0], (v - K[1, 2]) / K[1, 1], np.ones((h, w))], -1)
        away = np.einsum("hwc,hwc->hw", normals, rays) > NORMAL_TOL * np.linalg.norm(rays, axis=-1)
        if np.any(away):
            found.append(f"{label}: {int(away.sum())} normals face away from the camera")
    if "flow_valid" in arrays:
        label, valid = arrays["flow_valid"]
        if np.any(valid > 2):
            found.append(f"{label}: values {np.unique(valid[valid > 2]).tolist()} are not 0, 1, 2")
        if "flow" in arrays:
            flow_label, flow = arrays["flow"]
            bad = int(np.count_nonzero(~np.isfinite(flow[valid > 0]).all(axis=-1)))
            if bad:
                found.append(f"{flow_label}: {bad} pixels of valid flow are not finite")
    return found


def _check_values(check: StreamCheck, label: str, table: Table) -> None:
    bad = np.flatnonzero(~np.isfinite(table.values).all(axis=1))
    check.report([f"{label} line {i + 2}: value is not finite" for i in bad])


def _check_quaternions(check: StreamCheck, label: str, quats: np.ndarray) -> None:
    bad = np.flatnonzero(np.abs(np.linalg.norm(quats, axis=1) - 1.0) > 1e-6)
    check.report([f"{label} line {i + 2}: quaternion is not unit length" for i in bad])


def rate_period(check: StreamCheck) -> int | None:
    """The stream's period in physics steps; None (and a problem) if its rate_hz is unusable."""
    rate, hz = check.info.get("rate_hz"), check.context.physics_hz
    if not is_int(rate) or rate <= 0 or hz % rate:
        check.problems.append(
            f"{check.name}: rate_hz {rate!r} must be a positive integer dividing physics_hz {hz}"
        )
        return None
    return hz // rate


def _check_times(check: StreamCheck, label: str, noun: str, t_ns: np.ndarray) -> None:
    """Counts against metadata and the clock; every t_ns increasing and exactly on the grid."""
    name, ctx = check.name, check.context
    n, recorded, rate = len(t_ns), check.info.get("count"), check.info.get("rate_hz")
    if recorded != n:
        check.problems.append(f"{name}: {n} {noun}s but {METADATA} records count {recorded!r}")
    period = rate_period(check)
    if period is None:
        return
    steps = stream_steps(ctx.k_start, ctx.k_end, period)
    span = f"at {rate} Hz over steps [{ctx.k_start}, {ctx.k_end})"
    if n != len(steps):
        check.problems.append(f"{name}: {n} {noun}s, expected {len(steps)} {span}")
    step_of = {step_to_ns(k, ctx.physics_hz): k for k in steps}
    times = t_ns.tolist()
    check.report(
        [
            f"{label} line {i + 3}: t_ns {times[i + 1]} is not after the previous {times[i]}"
            for i in np.flatnonzero(np.diff(t_ns) <= 0)
        ]
    )
    check.report(
        [
            f"{label} line {i + 2}: t_ns {t} is not the time of a step of this stream {span}"
            for i, t in enumerate(times)
            if t not in step_of
        ]
    )
    seen = set(times)
    check.report(
        [f"{name}: no {noun} at step {k} (t_ns {t})" for t, k in step_of.items() if t not in seen]
    )
