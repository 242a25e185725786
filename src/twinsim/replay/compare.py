"""How far apart two runs of the same experiment are, per stream (GRADE's Table 5).

- pose streams: deviation of B from A per axis, x, y, z in metres and roll, pitch, yaw in
  radians (the drone's Z-Y-X angles, wrapped to (−π, π]), as mean and std of the signed
  difference plus the largest absolute one, over the timestamps both streams have;
- camera streams: RGB SSIM (scikit-image, per frame, colour), depth mean absolute difference
  (metres, every pixel) and depth SSIM, as mean, std and worst frame;
- LiDAR streams, over the sweeps both have: the deviation of the sweep poses per axis, point
  counts, and beam by beam (ring and column, the column from the point's azimuth) the range
  differences where both returned (per-sweep mean absolute difference as mean, std and worst
  sweep, and the largest one), the share of those beams that hit another instance, and the
  returns only one of them has;
- event cameras: event counts and rates (events per second of recorded time), whether the
  event arrays are identical, how many events both have (same time, pixel and polarity), and
  how differently the pixels fire: sum |n_B(pixel) − n_A(pixel)| / sum (n_A + n_B), 0 when
  every pixel fires as often in both, 1 when no pixel fires in both;
- other tables (IMU, odometry, …): the largest absolute difference of any value.

`compare_sequences` returns these as a `Comparison`: its fields by stream type, `as_dict()` the
JSON, `rows(section)` the text `twinsim compare` prints.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import ClassVar

import numpy as np
from scipy.spatial.transform import Rotation
from skimage.metrics import structural_similarity

from twinsim.errors import SequenceError
from twinsim.sequence import open_sequence
from twinsim.sequence.reader import SequenceReader
from twinsim.sequence.scans import EventData, LidarScan, event_records

AXES = ("x", "y", "z", "roll", "pitch", "yaw")
EVENT_CAMERA = "event_camera"  # a format-1 sequence's `events` reads as this (`twinsim.compat`)


def _stats(values: np.ndarray) -> dict[str, float]:
    if len(values) == 0:
        return {"mean": float("nan"), "std": float("nan"), "max_abs": float("nan")}
    return {
        "mean": float(values.mean()),
        "std": float(values.std()),
        "max_abs": float(np.abs(values).max()),
    }


def _common(t_a: np.ndarray, t_b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Indices into a and b of the timestamps both have."""
    _, ia, ib = np.intersect1d(t_a, t_b, assume_unique=True, return_indices=True)
    return ia, ib


def pose_deviation(T_a: np.ndarray, T_b: np.ndarray) -> dict[str, dict[str, float]]:
    """Per-axis deviation of poses B from A: translation (m) and Z-Y-X angles (rad)."""
    d = np.empty((len(T_a), 6))
    d[:, :3] = T_b[:, :3, 3] - T_a[:, :3, 3]
    ypr_a = Rotation.from_matrix(T_a[:, :3, :3]).as_euler("ZYX")
    ypr_b = Rotation.from_matrix(T_b[:, :3, :3]).as_euler("ZYX")
    dang = np.angle(np.exp(1j * (ypr_b - ypr_a)))  # wrapped
    d[:, 3], d[:, 4], d[:, 5] = dang[:, 2], dang[:, 1], dang[:, 0]
    return {axis: _stats(d[:, i]) for i, axis in enumerate(AXES)}


def _ssim(a: np.ndarray, b: np.ndarray, data_range: float, channel_axis: int | None) -> float:
    if np.array_equal(a, b):
        return 1.0
    return float(structural_similarity(a, b, data_range=data_range, channel_axis=channel_axis))


def _summary(values: list[float], worst: str) -> dict[str, float]:
    arr = np.asarray(values, dtype=float)
    if not len(arr):
        return {"mean": float("nan"), "std": float("nan"), worst: float("nan")}
    pick = arr.min() if worst == "min" else arr.max()
    return {"mean": float(arr.mean()), "std": float(arr.std()), worst: float(pick)}


def _camera(seq_a, seq_b, name: str, stride: int) -> dict:
    cam_a, cam_b = seq_a.camera(name), seq_b.camera(name)
    ia, ib = _common(cam_a.t_ns, cam_b.t_ns)
    ia, ib = ia[::stride], ib[::stride]
    rgb, mae, dssim = [], [], []
    for i, j in zip(ia, ib, strict=True):
        fa, fb = cam_a[int(i)], cam_b[int(j)]
        if fa.rgb.shape != fb.rgb.shape:
            raise SequenceError(f"{name}: frames are {fa.rgb.shape} in A and {fb.rgb.shape} in B")
        rgb.append(_ssim(fa.rgb, fb.rgb, 255.0, channel_axis=2))
        da, db = fa.depth.astype(np.float64), fb.depth.astype(np.float64)
        mae.append(float(np.abs(da - db).mean()))
        dssim.append(_ssim(da, db, max(float(da.max()), float(db.max()), 1e-6), None))
    if not rgb:
        return {"frames": 0}
    return {
        "frames": len(rgb),
        "rgb_ssim": _summary(rgb, "min"),
        "depth_mae_m": _summary(mae, "max"),
        "depth_ssim": _summary(dssim, "min"),
    }


def _beam_grid(seq: SequenceReader, name: str) -> tuple[int, int]:
    info = seq.stream_info(name)
    try:
        return int(info["rings"]), int(info["columns"])
    except (KeyError, TypeError, ValueError) as exc:
        raise SequenceError(
            f"{seq.path}/metadata.json: LiDAR {name} needs rings and columns ({exc})"
        ) from None


def _beams(scan: LidarScan, columns: int) -> np.ndarray:
    """Beam index ring * columns + column of every point; column j points at azimuth
    π − 2πj/columns and a point lies on its beam (LiDAR frame at its capture time)."""
    pts = scan.points.astype(np.float64)
    azimuth = np.arctan2(pts[:, 1], pts[:, 0])
    column = np.rint((np.pi - azimuth) * columns / (2 * np.pi)).astype(np.int64) % columns
    return scan.ring.astype(np.int64) * columns + column


def _lidar(seq_a: SequenceReader, seq_b: SequenceReader, name: str) -> dict:
    lidar_a, lidar_b = seq_a.lidar(name), seq_b.lidar(name)
    grid_a, grid_b = _beam_grid(seq_a, name), _beam_grid(seq_b, name)
    if grid_a != grid_b:
        raise SequenceError(
            f"{name}: {grid_a[0]} rings x {grid_a[1]} columns in A and {grid_b[0]} x "
            f"{grid_b[1]} in B; LiDAR sweeps compare beam by beam"
        )
    ia, ib = _common(lidar_a.t_ns, lidar_b.t_ns)
    if not len(ia):
        return {"scans": 0}
    counts = np.zeros((len(ia), 2), dtype=np.int64)
    identical = len(ia) == len(lidar_a) == len(lidar_b)
    mae, largest, changed, paired = [], 0.0, 0, 0
    for k, (i, j) in enumerate(zip(ia, ib, strict=True)):
        sa, sb = lidar_a[int(i)], lidar_b[int(j)]
        counts[k] = len(sa), len(sb)
        identical = identical and np.array_equal(sa.to_records(), sb.to_records())
        _, pa, pb = np.intersect1d(
            _beams(sa, grid_a[1]), _beams(sb, grid_a[1]), return_indices=True
        )
        if not len(pa):
            continue
        diff = np.abs(sb.range[pb].astype(np.float64) - sa.range[pa].astype(np.float64))
        mae.append(float(diff.mean()))
        largest = max(largest, float(diff.max()))
        changed += int(np.count_nonzero(sa.instance[pa] != sb.instance[pb]))
        paired += len(pa)
    T_a, T_b = lidar_a.T_world_lidar[ia], lidar_b.T_world_lidar[ib]
    return {
        "scans": len(ia),
        "identical": bool(identical and np.array_equal(T_a, T_b)),
        "pose": pose_deviation(T_a, T_b),
        "points": {"a": int(counts[:, 0].sum()), "b": int(counts[:, 1].sum())},
        "count_difference": _stats(counts[:, 1] - counts[:, 0]),
        "beams_in_both": paired,
        "returns_only_in_a": int(counts[:, 0].sum()) - paired,
        "returns_only_in_b": int(counts[:, 1].sum()) - paired,
        "range_mae_m": _summary(mae, "max"),
        "range_max_abs_m": largest if paired else float("nan"),
        "instance_changed": changed / paired if paired else float("nan"),
    }


def _duration_s(seq: SequenceReader) -> float:
    """Recorded simulation time of a sequence, from its step range."""
    try:
        k0, k1 = seq.metadata["recorded_steps"]
        duration = (int(k1) - int(k0)) / int(seq.metadata["physics_hz"])
    except (KeyError, TypeError, ValueError, ZeroDivisionError) as exc:
        raise SequenceError(
            f"{seq.path}/metadata.json: needs recorded_steps and physics_hz ({exc})"
        ) from None
    if duration <= 0:
        raise SequenceError(f"{seq.path}/metadata.json: recorded_steps span no time")
    return duration


def _pixel_counts(ev: EventData) -> np.ndarray:
    index = ev.y.astype(np.int64) * ev.width + ev.x.astype(np.int64)
    return np.bincount(index, minlength=ev.width * ev.height)


def _events(seq_a: SequenceReader, seq_b: SequenceReader, name: str) -> dict:
    ev_a, ev_b = seq_a.events(name), seq_b.events(name)
    if (ev_a.width, ev_a.height) != (ev_b.width, ev_b.height):
        raise SequenceError(
            f"{name}: events are {ev_a.width}x{ev_a.height} in A and "
            f"{ev_b.width}x{ev_b.height} in B"
        )
    rec_a = event_records(ev_a.x, ev_a.y, ev_a.t_ns, ev_a.polarity)
    rec_b = event_records(ev_b.x, ev_b.y, ev_b.t_ns, ev_b.polarity)
    shared = len(np.intersect1d(rec_a, rec_b))
    rate_a, rate_b = len(ev_a) / _duration_s(seq_a), len(ev_b) / _duration_s(seq_b)
    n_a, n_b = _pixel_counts(ev_a), _pixel_counts(ev_b)
    total = int(n_a.sum() + n_b.sum())
    return {
        "events": {"a": len(ev_a), "b": len(ev_b)},
        "identical": bool(np.array_equal(rec_a, rec_b)),
        "shared_events": shared,
        "events_only_in_a": len(ev_a) - shared,
        "events_only_in_b": len(ev_b) - shared,
        "rate_hz": {"a": rate_a, "b": rate_b, "difference": rate_b - rate_a},
        "pixel_count_difference": float(np.abs(n_b - n_a).sum() / total) if total else 0.0,
    }


def _contacts(seq_a: SequenceReader, seq_b: SequenceReader, name: str) -> dict:
    """Contact records of each, steps in contact in one only, and the largest difference of
    the total normal force at a step both touch."""
    ca, cb = seq_a.contacts(name), seq_b.contacts(name)
    ta, fa = _force_per_step(ca)
    tb, fb = _force_per_step(cb)
    ia, ib = _common(ta, tb)
    diff = float(np.abs(fb[ib] - fa[ia]).max()) if len(ia) else 0.0
    return {
        "records": {"a": len(ca), "b": len(cb)},
        "steps_in_contact": {"a": len(ta), "b": len(tb), "both": len(ia)},
        "max_total_force_difference_n": diff,
    }


def _force_per_step(records: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(step times with a contact, total normal force at each)."""
    t, first = np.unique(records["t_ns"], return_index=True)
    return t, np.add.reduceat(records["normal_force_n"], first) if len(t) else np.zeros(0)


def _kind(seq: SequenceReader, name: str) -> str | None:
    return seq.stream_info(name).get("type")


def _poses(seq_a: SequenceReader, seq_b: SequenceReader, name: str, stride: int) -> dict:
    t_a, T_a = seq_a.groundtruth(name)
    t_b, T_b = seq_b.groundtruth(name)
    ia, ib = _common(t_a, t_b)
    return {"samples": len(ia)} | pose_deviation(T_a[ia], T_b[ib])


def _table(seq_a, seq_b, name: str) -> dict:
    ta, tb = seq_a.table(name), seq_b.table(name)
    ia, ib = _common(ta["t_ns"], tb["t_ns"])
    cols = [c for c in ta if c != "t_ns" and c in tb]
    if not cols or not len(ia):
        return {"samples": 0}
    diff = max(float(np.abs(tb[c][ib] - ta[c][ia]).max()) for c in cols)
    return {"samples": len(ia), "max_abs_difference": diff}


def _fmt(value: float) -> str:
    """A difference as `twinsim compare` shows it: three significant digits, or 0."""
    return f"{value:.3g}" if value else "0"


@dataclass(frozen=True)
class Comparison:
    """What `compare_sequences` found, per stream of each type (each stream's figures as the
    module docstring lists them), and the streams only one sequence has.

    `as_dict()` is the JSON `twinsim compare --json` prints; `rows(section)` the text rows of
    one section's table, as `twinsim compare` prints them.
    """

    a: str
    b: str
    poses: dict[str, dict] = field(default_factory=dict)
    cameras: dict[str, dict] = field(default_factory=dict)
    lidars: dict[str, dict] = field(default_factory=dict)
    event_cameras: dict[str, dict] = field(default_factory=dict)
    contacts: dict[str, dict] = field(default_factory=dict)
    tables: dict[str, dict] = field(default_factory=dict)
    only_in_a: list[str] = field(default_factory=list)
    only_in_b: list[str] = field(default_factory=list)

    #: the sections of streams compared, in the order they are shown
    SECTIONS: ClassVar[tuple[str, ...]] = (
        "poses",
        "cameras",
        "lidars",
        "event_cameras",
        "contacts",
        "tables",
    )

    def as_dict(self) -> dict:
        """Everything as plain JSON data (NaN where a stream had nothing to compare)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def rows(self, section: str) -> list[tuple[str, ...]]:
        """The text rows of one section, a row per stream (columns: `ROW_COLUMNS[section]`)."""
        if section not in self.SECTIONS:
            raise ValueError(f"unknown section {section!r}; sections: {', '.join(self.SECTIONS)}")
        return [getattr(self, f"_{section}_row")(n, v) for n, v in getattr(self, section).items()]

    @staticmethod
    def _poses_row(name: str, dev: dict) -> tuple[str, ...]:
        cells = [f"{_fmt(dev[x]['mean'])} ± {_fmt(dev[x]['std'])}" for x in AXES]
        return (name, str(dev["samples"]), *cells)

    @staticmethod
    def _cameras_row(name: str, cam: dict) -> tuple[str, ...]:
        if not cam["frames"]:
            return (name, "0", "-", "-", "-")
        rgb, mae, dssim = cam["rgb_ssim"], cam["depth_mae_m"], cam["depth_ssim"]
        return (
            name,
            str(cam["frames"]),
            f"{rgb['mean']:.4f} ± {rgb['std']:.4f} (min {rgb['min']:.4f})",
            f"{_fmt(mae['mean'])} ± {_fmt(mae['std'])} (max {_fmt(mae['max'])})",
            f"{dssim['mean']:.4f} ± {dssim['std']:.4f} (min {dssim['min']:.4f})",
        )

    @staticmethod
    def _lidars_row(name: str, s: dict) -> tuple[str, ...]:
        if not s["scans"]:
            return (name, "0", "-", "-", "-", "-", "-")
        mae = s["range_mae_m"]
        return (
            name,
            str(s["scans"]),
            f"{s['points']['a']} / {s['points']['b']}",
            f"{_fmt(mae['mean'])} ± {_fmt(mae['std'])} (max {_fmt(mae['max'])})",
            _fmt(s["range_max_abs_m"]),
            f"{100 * s['instance_changed']:.1f} %",
            "yes" if s["identical"] else "no",
        )

    @staticmethod
    def _event_cameras_row(name: str, e: dict) -> tuple[str, ...]:
        return (
            name,
            f"{e['events']['a']} / {e['events']['b']}",
            f"{e['rate_hz']['a']:.0f} / {e['rate_hz']['b']:.0f}",
            str(e["shared_events"]),
            f"{100 * e['pixel_count_difference']:.1f} %",
            "yes" if e["identical"] else "no",
        )

    @staticmethod
    def _contacts_row(name: str, c: dict) -> tuple[str, ...]:
        steps = c["steps_in_contact"]
        return (
            name,
            f"{c['records']['a']} / {c['records']['b']}",
            f"{steps['a']} / {steps['b']} / {steps['both']}",
            _fmt(c["max_total_force_difference_n"]),
        )

    @staticmethod
    def _tables_row(name: str, t: dict) -> tuple[str, ...]:
        return (name, str(t["samples"]), _fmt(t.get("max_abs_difference", 0.0)))


#: the columns of each section's rows (`Comparison.rows`)
ROW_COLUMNS = {
    "poses": ("stream", "samples", *AXES),
    "cameras": ("stream", "frames", "RGB SSIM", "depth MAE (m)", "depth SSIM"),
    "lidars": (
        "stream",
        "sweeps",
        "points A / B",
        "range MAE (m)",
        "max |Δ range| (m)",
        "other instance",
        "identical",
    ),
    "event_cameras": (
        "stream",
        "events A / B",
        "rate A / B (1/s)",
        "in both",
        "pixel counts differ",
        "identical",
    ),
    "contacts": ("stream", "records A / B", "steps in contact A / B / both", "max |Δ force| (N)"),
    "tables": ("stream", "samples", "max |B − A|"),
}


_Comparison = tuple[str, Callable[[SequenceReader, SequenceReader, str, int], dict]]
#: how a stream of each type is compared, and the section of the result it goes in
_COMPARISONS: dict[str | None, _Comparison] = {
    "pose": ("poses", _poses),
    "camera": ("cameras", _camera),
    "lidar": ("lidars", lambda a, b, name, stride: _lidar(a, b, name)),
    EVENT_CAMERA: ("event_cameras", lambda a, b, name, stride: _events(a, b, name)),
    "contacts": ("contacts", lambda a, b, name, stride: _contacts(a, b, name)),
}
_TABLES: _Comparison = ("tables", lambda a, b, name, stride: _table(a, b, name))


def compare_sequences(a: str | Path, b: str | Path, stride: int = 1) -> Comparison:
    """Compare every stream the two sequences share, each by its type: poses, cameras (every
    `stride`-th frame), LiDARs, event cameras, and tables."""
    if stride < 1:
        raise SequenceError(f"stride={stride} must be >= 1")
    seq_a, seq_b = open_sequence(a), open_sequence(b)
    shared = [s for s in seq_a.streams if s in seq_b.streams]
    if not shared:
        raise SequenceError(f"{a} and {b} share no stream")
    result = Comparison(str(a), str(b))
    for name in shared:
        kind = _kind(seq_a, name)
        if kind != _kind(seq_b, name):
            continue
        section, compare = _COMPARISONS.get(kind, _TABLES)
        getattr(result, section)[name] = compare(seq_a, seq_b, name, stride)
    result.only_in_a.extend(s for s in seq_a.streams if s not in seq_b.streams)
    result.only_in_b.extend(s for s in seq_b.streams if s not in seq_a.streams)
    return result
