"""Reading and writing trajectories: TUM, EuRoC, KITTI (+ times), ROS bags and twinsim sequences."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from enum import StrEnum
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

from twinsim.eval.trajectory import Trajectory, TrajectoryError, clean, from_poses
from twinsim.model.layout import INCOMPLETE, METADATA


class TrajectoryFormat(StrEnum):
    """Trajectory file formats `read_trajectory` understands."""

    tum = "tum"
    euroc = "euroc"
    kitti = "kitti"
    bag = "bag"
    sequence = "sequence"


def read_trajectory(
    path: str | Path,
    fmt: TrajectoryFormat | str | None = None,
    *,
    times: str | Path | None = None,
    topic: str | None = None,
    stream: str | None = None,
) -> Trajectory:
    """Read a trajectory; `fmt` is guessed from the path when not given (see `guess_format`).

    `times` is KITTI's times.txt, `topic` a bag's pose topic, `stream` a sequence's pose or
    camera stream (default: the first camera's optical frame).
    """
    path = Path(path)
    if not path.exists():
        raise TrajectoryError(f"{path}: no such trajectory file or folder")
    try:
        fmt = TrajectoryFormat(fmt) if fmt is not None else guess_format(path)
    except ValueError:
        allowed = ", ".join(f.value for f in TrajectoryFormat)
        raise TrajectoryError(f"unknown trajectory format {fmt!r}; allowed: {allowed}") from None
    if fmt is TrajectoryFormat.kitti:
        return read_kitti(path, times)
    if times is not None:
        raise TrajectoryError(f"{path}: a times file goes with KITTI poses, not {fmt.value}")
    if fmt is TrajectoryFormat.bag:
        return read_bag(path, topic)
    if fmt is TrajectoryFormat.sequence:
        return read_sequence(path, stream)
    return _READERS[fmt](path)


def guess_format(path: Path) -> TrajectoryFormat:
    """Sequence folder (also one a run left INCOMPLETE, which its reader names), bag (folder with
    metadata.yaml, .mcap/.db3/.bag), .csv = EuRoC, else by the number of columns: 8 = TUM,
    12 = KITTI."""
    if path.is_dir():
        if (path / METADATA).is_file() or (path / INCOMPLETE).exists():
            return TrajectoryFormat.sequence
        if (path / "metadata.yaml").is_file():
            return TrajectoryFormat.bag
        if (path / "mav0").is_dir():
            return TrajectoryFormat.euroc
        raise TrajectoryError(
            f"{path}: a folder that is neither a twinsim sequence (metadata.json), a ROS 2 bag "
            "(metadata.yaml) nor EuRoC (mav0/)"
        )
    if path.suffix in (".mcap", ".db3", ".bag"):
        return TrajectoryFormat.bag
    if path.suffix == ".csv":
        return TrajectoryFormat.euroc
    rows = _data_lines(path)
    width = len(rows[0][1].split()) if rows else 0
    if width == 8:
        return TrajectoryFormat.tum
    if width == 12:
        return TrajectoryFormat.kitti
    raise TrajectoryError(
        f"{path}: cannot tell the format from {width} columns (TUM has 8, KITTI 12); "
        "pass the format explicitly"
    )


def read_tum(path: Path) -> Trajectory:
    """TUM: `timestamp tx ty tz qx qy qz qw` per line, seconds, `#` comments."""
    rows = _data_lines(path)
    t_ns, values = _parse_rows(path, rows, 8, sep=None, stamp_unit="s")
    return clean(t_ns, values[:, :3], values[:, 3:7], path.name, lines=[n for n, _ in rows])


def read_euroc(path: Path) -> Trajectory:
    """EuRoC/ASL CSV: `timestamp [ns], p_x, p_y, p_z, q_w, q_x, q_y, q_z, …` (qw first)."""
    if path.is_dir():
        path = path / "mav0" / "state_groundtruth_estimate0" / "data.csv"
    rows = _data_lines(path)
    t_ns, values = _parse_rows(path, rows, 8, sep=",", stamp_unit="ns", at_least=True)
    quat_xyzw = np.roll(values[:, 3:7], -1, axis=1)
    return clean(t_ns, values[:, :3], quat_xyzw, path.name, lines=[n for n, _ in rows])


def read_kitti(path: Path, times: str | Path | None) -> Trajectory:
    """KITTI poses (12 values: row-major 3×4) with their `times.txt` (seconds, one per line)."""
    if times is None:
        raise TrajectoryError(
            f"{path}: KITTI poses carry no timestamps; pass their times.txt "
            "(--gt-times / --est-times)"
        )
    times = Path(times)
    pose_rows = _data_lines(path)
    time_rows = _data_lines(times)
    if len(pose_rows) != len(time_rows):
        raise TrajectoryError(
            f"{path}: {len(pose_rows)} poses but {times} has {len(time_rows)} times; "
            "KITTI poses and times must have one line each per frame"
        )
    _, values = _parse_rows(path, pose_rows, 12, None, None)
    t_ns, _ = _parse_rows(times, time_rows, 1, None, "s")
    poses = np.zeros((len(values), 4, 4))
    poses[:, :3, :] = values[:, :12].reshape(-1, 3, 4)
    poses[:, 3, 3] = 1.0
    lines = [n for n, _ in pose_rows]
    _check_rotations(path, poses, lines)
    quat = Rotation.from_matrix(poses[:, :3, :3]).as_quat(canonical=True)
    return clean(t_ns, poses[:, :3, 3], quat, path.name, lines=lines)


def read_bag(path: Path, topic: str | None) -> Trajectory:
    """A pose topic (PoseStamped, Odometry, TransformStamped…) of a ROS 1/2 bag, read by evo."""
    from evo.tools import file_interface
    from rosbags.rosbag1 import Reader as Rosbag1Reader
    from rosbags.rosbag2 import Reader as Rosbag2Reader

    reader_type = Rosbag1Reader if path.suffix == ".bag" else Rosbag2Reader
    bag_path = path.parent if path.suffix in (".mcap", ".db3") else path
    try:
        with reader_type(bag_path) as reader:
            topics = file_interface.get_supported_topics(reader)
            if topic is None:
                if len(topics) != 1:
                    raise TrajectoryError(
                        f"{path}: pass the pose topic (--gt-topic, --est-topic); pose topics: "
                        f"{', '.join(topics) or 'none'}"
                    )
                topic = topics[0]
            if topic not in topics:
                raise TrajectoryError(
                    f"{path}: no pose topic {topic!r}; pose topics: {', '.join(topics) or 'none'}"
                )
            traj = file_interface.read_bag_trajectory(reader, topic)
    except TrajectoryError:
        raise
    except Exception as exc:  # rosbags and evo raise many types for unreadable bags
        raise TrajectoryError(f"{path}: cannot read the bag ({exc})") from None
    t_ns = np.round(np.asarray(traj.timestamps) * 1e9).astype(np.int64)
    quat = np.roll(traj.orientations_quat_wxyz, -1, axis=1)
    return clean(t_ns, traj.positions_xyz, quat, topic)


def read_sequence(path: Path, stream: str | None = None) -> Trajectory:
    """Ground truth of a sequence: a pose stream, or a camera's optical frame (default: first
    camera, from `groundtruth_<camera>` when recorded, else its frames)."""
    from twinsim.sequence import open_sequence

    seq = open_sequence(path)
    kinds = {name: info.get("type") for name, info in seq.metadata["streams"].items()}
    if stream is None:
        cameras = [n for n, kind in kinds.items() if kind == "camera"]
        if not cameras:
            raise TrajectoryError(f"{path}: no camera stream; pass a stream ({', '.join(kinds)})")
        stream = cameras[0]
    if stream not in kinds:
        raise TrajectoryError(f"{path}: no stream {stream!r}; streams: {', '.join(kinds)}")
    name = f"{path.name}/{stream}"
    if kinds[stream] == "camera":
        prefix = seq.stream_prefix(stream)
        gt = f"{prefix}groundtruth_{stream.removeprefix(prefix)}"
        if gt in kinds:
            t_ns, poses = seq.groundtruth(gt)
        else:
            cam = seq.camera(stream)
            t_ns, poses = cam.t_ns, cam.T_world_cam
    elif kinds[stream] == "lidar":
        scans = seq.lidar(stream)
        t_ns, poses = scans.t_ns, scans.T_world_lidar
    elif kinds[stream] in ("pose", "odometry"):
        t_ns, poses = seq.groundtruth(stream)
    else:
        raise TrajectoryError(f"{path}: stream {stream!r} ({kinds[stream]}) holds no poses")
    return from_poses(t_ns, poses, name)


def write_tum(path: str | Path, traj: Trajectory) -> None:
    """Write TUM text: exact stamps (seconds with 9 decimals) and poses as `repr` floats."""
    lines = ["# timestamp[s] tx ty tz qx qy qz qw  (T_world_x, quaternion scalar last)"]
    for t, p, q in zip(traj.t_ns, traj.xyz, traj.quat_xyzw, strict=True):
        stamp = f"{int(t) // 10**9}.{int(t) % 10**9:09d}"
        lines.append(" ".join([stamp, *(repr(float(v)) for v in (*p, *q))]))
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")


def _data_lines(path: Path) -> list[tuple[int, str]]:
    """(line number, text) of every non-empty, non-comment line."""
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise TrajectoryError(f"{path}: cannot be read ({exc})") from None
    rows = [(n, line.strip()) for n, line in enumerate(text.splitlines(), 1)]
    rows = [(n, line) for n, line in rows if line and not line.startswith("#")]
    if not rows:
        raise TrajectoryError(f"{path}: holds no poses")
    return rows


def _parse_rows(
    path: Path,
    rows: list[tuple[int, str]],
    width: int,
    sep: str | None,
    stamp_unit: str | None,
    at_least: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Split rows into int64 ns stamps (exact decimal conversion; first column, unless
    `stamp_unit` is None) and float64 values."""
    t_ns = np.zeros(len(rows), dtype=np.int64)
    first = 0 if stamp_unit is None else 1
    values = np.zeros((len(rows), width - first))
    scale = Decimal(10**9) if stamp_unit == "s" else Decimal(1)
    for i, (number, line) in enumerate(rows):
        cells = [c.strip() for c in line.split(sep)]
        if len(cells) != width and not (at_least and len(cells) > width):
            need = f"at least {width}" if at_least else str(width)
            raise TrajectoryError(f"{path}:{number}: {len(cells)} values, expected {need}")
        try:
            if first:
                t_ns[i] = int((Decimal(cells[0]) * scale).to_integral_value())
            values[i] = [float(c) for c in cells[first:width]]
        except (InvalidOperation, ValueError, OverflowError):
            raise TrajectoryError(f"{path}:{number}: not a number in {line!r}") from None
        if not np.isfinite(values[i]).all():
            cell = cells[first + int(np.flatnonzero(~np.isfinite(values[i]))[0])]
            raise TrajectoryError(f"{path}:{number}: {cell!r} is not a finite number")
    return t_ns, values


def _check_rotations(path: Path, poses: np.ndarray, lines: list[int]) -> None:
    R = poses[:, :3, :3]
    with np.errstate(over="ignore", invalid="ignore"):
        error = np.abs(R @ np.swapaxes(R, 1, 2) - np.eye(3)).max(axis=(1, 2))
    bad = np.flatnonzero(~(error <= 1e-3))
    if len(bad):
        raise TrajectoryError(f"{path}:{lines[bad[0]]}: not a rotation (R Rᵀ ≠ I)")


_READERS: dict[TrajectoryFormat, Callable[[Path], Trajectory]] = {
    TrajectoryFormat.tum: read_tum,
    TrajectoryFormat.euroc: read_euroc,
}
