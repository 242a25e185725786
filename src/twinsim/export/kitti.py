"""KITTI odometry layout with SemanticKITTI labels, as KISS-ICP's KITTI loader reads it.

`poses/<seq>.txt`: camera 0 w.r.t. frame 0, row-major 3×4 per frame; `sequences/<seq>/`:
`times.txt` (sequence clock, seconds), `calib.txt` (P0..P3 = [K | 0], `Tr` = T_cam_lidar),
`image_0/` (grey) and `image_2/` (colour) PNGs, `velodyne/NNNNNN.bin` (float32 x y z
intensity, LiDAR frame, raw sweep) and `labels/NNNNNN.label` (uint32 semantic | instance << 16);
`labels.yaml`: semantic-kitti-api's data config (labels, color_map, learning maps, split).
With a LiDAR, a frame is a sweep (pose at its start); images are added when every sweep has a
camera frame at the same instant. Without one, a frame is a camera frame. Each GNSS stream
goes to `gnss/<name>/` at its own rate: `times.txt` (seconds) and `oxts.txt`, one sample a line
with KITTI raw's OXTS fields lat lon alt (deg, deg, m), then vn ve vu (m/s, north, east, up)
and navstat (0 fix, −1 no fix: nan position); `dataformat.txt` says so, as KITTI raw's does.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import yaml

from twinsim.errors import OutputFolderError
from twinsim.export.common import (
    ExportError,
    Progress,
    T_body_sensor,
    class_palette,
    float_text,
    invert,
    no_progress,
    pick_stream,
    prepare_output,
    seconds_text,
    streams_of_type,
)
from twinsim.sequence.images import write_png
from twinsim.sequence.reader import SequenceReader


def export_kitti(
    seq: SequenceReader,
    out: Path,
    *,
    camera: str | None = None,
    lidar: str | None = None,
    sequence: str = "00",
    progress: Progress = no_progress,
) -> Path:
    """Write `seq` as KITTI odometry sequence `sequence` (two digits) into the new folder `out`."""
    if not (len(sequence) == 2 and sequence.isdigit()):
        raise ExportError(f"sequence={sequence!r} must be two digits, e.g. '00'")
    camera = pick_stream(seq, "camera", camera, "camera")
    if lidar is not None or streams_of_type(seq, "lidar"):
        lidar = pick_stream(seq, "lidar", lidar, "lidar")
    cam = seq.camera(camera)
    T_lidar_cam = np.eye(4)
    if lidar is None:
        t_ns, T_world_cam, image_index = cam.t_ns, cam.T_world_cam, np.arange(len(cam))
        scans = None
    else:
        scans = seq.lidar(lidar)
        T_lidar_cam = invert(T_body_sensor(seq, lidar)) @ T_body_sensor(seq, camera)
        t_ns = scans.t_ns
        T_world_cam = scans.T_world_lidar @ T_lidar_cam
        lookup = {int(t): i for i, t in enumerate(cam.t_ns)}
        matched = [lookup.get(int(t)) for t in t_ns]
        image_index = None if None in matched else np.array(matched)
    out = prepare_output(out)
    folder = out / "sequences" / sequence
    folder.mkdir(parents=True)
    (out / "poses").mkdir()
    relative = invert(T_world_cam[0]) @ T_world_cam
    _write(
        out / "poses" / f"{sequence}.txt",
        [" ".join(map(float_text, T[:3].ravel())) for T in relative],
    )
    _write(folder / "times.txt", [seconds_text(t) for t in t_ns])
    P = np.hstack([cam.K, np.zeros((3, 1))])
    calib = [f"P{i}: " + " ".join(map(float_text, P.ravel())) for i in range(4)]
    calib.append("Tr: " + " ".join(map(float_text, invert(T_lidar_cam)[:3].ravel())))
    _write(folder / "calib.txt", calib)
    total = len(t_ns)
    if image_index is not None:
        for kind in ("image_0", "image_2"):
            (folder / kind).mkdir()
        for i, index in enumerate(image_index):
            rgb = cam[int(index)].rgb
            write_png(folder / "image_0" / f"{i:06d}.png", cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY))
            write_png(folder / "image_2" / f"{i:06d}.png", cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR))
            if scans is None:
                progress(i + 1, total)
    if scans is not None:
        (folder / "velodyne").mkdir()
        (folder / "labels").mkdir()
        for i, scan in enumerate(scans):
            cloud = np.zeros((len(scan.points), 4), dtype="<f4")
            cloud[:, :3] = scan.points
            cloud[:, 3] = scan.intensity
            _write_raw(folder / "velodyne" / f"{i:06d}.bin", cloud)
            _write_raw(
                folder / "labels" / f"{i:06d}.label",
                semantic_kitti_label(scan.semantic, scan.instance),
            )
            progress(i + 1, total)
    for gnss in streams_of_type(seq, "gnss"):
        _write_gnss(seq, gnss, folder / "gnss" / gnss)
    labels = semantic_kitti_config(seq.metadata["classes"], int(sequence))
    (out / "labels.yaml").write_text(
        "# semantic-kitti-api data config: label = semantic | instance << 16; color_map is BGR\n"
        + yaml.safe_dump(labels, sort_keys=False, default_flow_style=None),
        encoding="utf-8",
    )
    return out


def semantic_kitti_config(classes: list[str], sequence: int) -> dict:
    """semantic-kitti-api's data config of `classes`: names, BGR colours, identity maps."""
    ids = range(len(classes))
    bgr = class_palette(len(classes))[:, ::-1]
    return {
        "labels": dict(zip(ids, classes, strict=True)),
        "color_map": {i: [int(c) for c in bgr[i]] for i in ids},
        "learning_map": {i: i for i in ids},
        "learning_map_inv": {i: i for i in ids},
        "learning_ignore": {i: i == 0 for i in ids},
        "split": {"train": [], "valid": [sequence], "test": []},
    }


def semantic_kitti_label(semantic: np.ndarray, instance: np.ndarray) -> np.ndarray:
    """SemanticKITTI's uint32 label: class id in the lower 16 bits, instance id in the upper."""
    semantic, instance = np.asarray(semantic, np.uint32), np.asarray(instance, np.uint32)
    if semantic.size and (semantic.max() > 0xFFFF or instance.max() > 0xFFFF):
        raise ExportError("SemanticKITTI labels hold class and instance ids below 65536 only")
    return (semantic | (instance << 16)).astype("<u4")


#: `dataformat.txt` of a GNSS stream, KITTI raw's OXTS wording for the fields it shares
GNSS_DATAFORMAT = (
    "lat:     latitude of the antenna (deg)",
    "lon:     longitude of the antenna (deg)",
    "alt:     altitude of the antenna above the WGS-84 ellipsoid (m)",
    "vn:      velocity towards north (m/s)",
    "ve:      velocity towards east (m/s)",
    "vu:      upward velocity, i.e. perpendicular to earth-surface (m/s)",
    "navstat: navigation status (0 = fix, -1 = no fix: lat, lon, alt, velocities are nan)",
)


def _write_gnss(seq: SequenceReader, gnss: str, folder: Path) -> None:
    """A GNSS stream as `times.txt`, OXTS-ordered `oxts.txt` and `dataformat.txt`."""
    folder.mkdir(parents=True)
    table = seq.table(gnss)
    columns = ("lat_deg", "lon_deg", "alt_m", "vy", "vx", "vz")
    rows = np.stack([table[c] for c in columns], axis=1)
    lines = [
        " ".join([*map(float_text, row), str(int(status))])
        for row, status in zip(rows, table["status"], strict=True)
    ]
    _write(folder / "times.txt", [seconds_text(t) for t in table["t_ns"]])
    _write(folder / "oxts.txt", lines)
    _write(folder / "dataformat.txt", list(GNSS_DATAFORMAT))


def _write(path: Path, lines: list[str]) -> None:
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")


def _write_raw(path: Path, array: np.ndarray) -> None:
    """An array's raw bytes as KITTI stores them (`ndarray.tofile` reports a short write
    without an errno, so the bytes are written here and a failure names the file)."""
    try:
        path.write_bytes(np.ascontiguousarray(array).tobytes())
    except OSError as exc:
        raise OutputFolderError(f"{path}: cannot be written ({exc.strerror})") from None
