"""TUM RGB-D layout: rgb/ and depth/ PNGs (depth ×5000, 16 bit), rgb.txt, depth.txt,
groundtruth.txt of the colour camera's optical centre, and associations.txt."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from twinsim.export.common import (
    Progress,
    float_text,
    no_progress,
    pick_stream,
    prepare_output,
    seconds_text,
)
from twinsim.sequence.images import write_png
from twinsim.sequence.poses import pose_to_row
from twinsim.sequence.reader import SequenceReader

#: TUM depth PNGs: value / DEPTH_SCALE = metres, 0 = no reading.
DEPTH_SCALE = 5000.0
#: Deepest depth a 16-bit TUM PNG can hold (farther readings become 0 = no reading).
MAX_DEPTH_M = 65535 / DEPTH_SCALE


def depth_to_png16(depth_m: np.ndarray) -> np.ndarray:
    """Float metres as TUM's uint16 (×5000, rounded); 0 and out-of-range depths become 0."""
    scaled = np.rint(np.asarray(depth_m, np.float64) * DEPTH_SCALE)
    return np.where((scaled > 0) & (scaled <= 65535), scaled, 0).astype(np.uint16)


def export_tum(
    seq: SequenceReader, out: Path, *, camera: str | None = None, progress: Progress = no_progress
) -> Path:
    """Write one camera of `seq` in the TUM RGB-D layout into the new folder `out`."""
    camera = pick_stream(seq, "camera", camera, "camera")
    stream = seq.camera(camera)
    out = prepare_output(out)
    (out / "rgb").mkdir()
    (out / "depth").mkdir()
    rgb_lines = [f"# color images of twinsim {camera}", "# timestamp filename"]
    depth_lines = [
        f"# depth images of twinsim {camera}: 16-bit PNG, value / 5000 = metres (z-depth), "
        f"0 = no reading or deeper than {MAX_DEPTH_M:.3f} m",
        "# timestamp filename",
    ]
    assoc_lines = []
    for i, frame in enumerate(stream):
        stamp = seconds_text(frame.t_ns)
        rgb_name, depth_name = f"rgb/{stamp}.png", f"depth/{stamp}.png"
        write_png(out / rgb_name, cv2.cvtColor(frame.rgb, cv2.COLOR_RGB2BGR))
        write_png(out / depth_name, depth_to_png16(frame.depth))
        rgb_lines.append(f"{stamp} {rgb_name}")
        depth_lines.append(f"{stamp} {depth_name}")
        assoc_lines.append(f"{stamp} {rgb_name} {stamp} {depth_name}")
        progress(i + 1, len(stream))
    gt_lines = [
        f"# ground truth of twinsim {camera}: pose of the colour camera's optical centre "
        "(OpenCV optical frame: x right, y down, z forward) in the world frame (z up)",
        "# timestamp tx ty tz qx qy qz qw",
    ]
    t_ns, T_world_cam = _camera_poses(seq, camera)
    for t, T in zip(t_ns, T_world_cam, strict=True):
        gt_lines.append(" ".join([seconds_text(t), *map(float_text, pose_to_row(T))]))
    K = stream.K
    calib = [
        f"# intrinsics of twinsim {camera} (pinhole, no distortion, pixel-centre origin)",
        "# fx fy cx cy width height depth_scale",
        " ".join(
            [
                *map(float_text, (K[0, 0], K[1, 1], K[0, 2], K[1, 2])),
                str(stream.width),
                str(stream.height),
                float_text(DEPTH_SCALE),
            ]
        ),
    ]
    for name, lines in (
        ("rgb.txt", rgb_lines),
        ("depth.txt", depth_lines),
        ("associations.txt", assoc_lines),
        ("groundtruth.txt", gt_lines),
        ("intrinsics.txt", calib),
    ):
        (out / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def _camera_poses(seq: SequenceReader, camera: str) -> tuple[np.ndarray, np.ndarray]:
    """The camera's ground-truth poses: its pose stream if recorded, else its frame poses."""
    if f"groundtruth_{camera}" in seq.streams:
        return seq.groundtruth(f"groundtruth_{camera}")
    stream = seq.camera(camera)
    return stream.t_ns, stream.T_world_cam
