"""KITTI object tracking layout of one camera, as the KITTI tracking devkit and TrackEval's
`Kitti2DBox` read it (`label_02/<seq>.txt`).

`image_02/<seq>/NNNNNN.png`: the colour frames (frame = camera frame index); `calib/<seq>.txt`:
P0..P3 = [K | 0] (3×4 row-major), `R_rect` = I (the images are already a pinhole camera's) and
identity `Tr_velo_cam` / `Tr_imu_velo` placeholders (no velodyne/ or oxts/ is written) so
readers that look the keys up parse it; `label_02/<seq>.txt`: a line per dynamic object visible
in a frame (mask pixels > 0), by frame then track id, KITTI's 17 columns `frame track_id type
truncated occluded alpha x1 y1 x2 y2 h w l x y z rotation_y`:

- track_id: the twinsim instance id (a person's body and clothing are one object, the body's
  id), stable over the sequence; type: `KITTI_TYPES`, every other dynamic class `Misc`;
- x1 y1 x2 y2: the inclusive pixel bounds of the object's mask (0-based, like twinsim's `tight`);
- h w l, x y z, rotation_y: camera frame (x right, y down, z forward), location = bottom face
  centre. It is the smallest box turned about camera y (heading along the longer level axis
  of the object's first box) holding every corner of the sequence's world boxes (`obb`) of the
  object's visible instances: exact for upright objects under a level camera, enclosing
  otherwise (KITTI boxes cannot tilt); alpha = rotation_y − atan2(x, z), in [−π, π];
- truncated: the fraction of the box's image outline (corners projected with P2, cut at the
  camera's near plane) outside the image; written as KITTI tracking's level (default: 0 up to
  1 %, 1 up to 50 %, 2 beyond) or, with `truncation="fraction"`, as the fraction (KITTI
  object style, 2 decimals);
- occluded: visible share = mask pixels / (mask pixels + pixels inside the box's outline that
  show a surface nearer than the box's nearest corner, from depth): 0 (fully visible) from
  0.9, 1 (partly) from 0.5, else 2 (largely). The outline is used rather than the box area
  alone because a person or a ball fills only part of its box.
"""

from __future__ import annotations

import math
from pathlib import Path

import cv2
import numpy as np

from twinsim.export.common import (
    ExportError,
    Progress,
    float_text,
    invert,
    no_progress,
    pick_stream,
    prepare_output,
)
from twinsim.export.objects import ObjectTable
from twinsim.sequence.images import write_png
from twinsim.sequence.reader import SequenceReader

#: twinsim class → KITTI type. KITTI has no bus, and its Truck is a goods vehicle: a bus is
#: Misc (KITTI's "other vehicle" type). A bicycle carries its rider: Cyclist.
KITTI_TYPES = {
    "car": "Car",
    "van": "Van",
    "truck": "Truck",
    "bus": "Misc",
    "person": "Pedestrian",
    "bicycle": "Cyclist",
}
TRUNCATION = ("level", "fraction")
#: upper bounds of the outside fraction for truncation levels 0 and 1 (above: 2)
TRUNCATION_LEVELS = (0.01, 0.5)
#: lower bounds of the visible share for occlusion levels 0 and 1 (below: 2)
OCCLUSION_LEVELS = (0.9, 0.5)


def export_kitti_tracking(
    seq: SequenceReader,
    out: Path,
    *,
    camera: str | None = None,
    sequence: str = "0000",
    truncation: str = "level",
    progress: Progress = no_progress,
) -> Path:
    """Write one camera's frames and its dynamic objects' tracks as KITTI tracking `sequence`."""
    if not (len(sequence) == 4 and sequence.isdigit()):
        raise ExportError(f"sequence={sequence!r} must be four digits, e.g. '0000'")
    if truncation not in TRUNCATION:
        allowed = ", ".join(TRUNCATION)
        raise ExportError(f"truncation={truncation!r} is not a truncation kind; allowed: {allowed}")
    camera = pick_stream(seq, "camera", camera, "camera")
    stream = seq.camera(camera)
    near = float(seq.stream_info(camera).get("near_m", 0.05))
    table = ObjectTable(seq)
    types: dict[int, str] = {}  # object id -> KITTI type, of every dynamic object
    for inst in seq.metadata["instances"]:
        if inst.get("dynamic"):
            oid = int(table.object_of[inst["instance_id"]])
            types[oid] = KITTI_TYPES.get(table.classes[table.class_of[oid]], "Misc")
    wanted = frozenset(int(table.class_of[oid]) for oid in types)
    out = prepare_output(out)
    images = out / "image_02" / sequence
    images.mkdir(parents=True)
    (out / "label_02").mkdir()
    (out / "calib").mkdir()
    P = np.hstack([stream.K, np.zeros((3, 1))])
    calib = [f"P{i}: " + " ".join(map(float_text, P.ravel())) for i in range(4)]
    calib.append("R_rect " + " ".join(map(float_text, np.eye(3).ravel())))
    for key in ("Tr_velo_cam", "Tr_imu_velo"):
        calib.append(f"{key} " + " ".join(map(float_text, np.eye(4)[:3].ravel())))
    _write(out / "calib" / f"{sequence}.txt", calib)
    size = (stream.width, stream.height)
    lines = []
    for i, frame in enumerate(stream):
        write_png(images / f"{frame.index:06d}.png", cv2.cvtColor(frame.rgb, cv2.COLOR_RGB2BGR))
        T_cam_world = invert(frame.T_world_cam)
        boxes = {b["instance_id"]: b["obb"] for b in frame.boxes}
        for obj in table.objects(frame, wanted):
            if obj.object_id not in types:
                continue
            parts = [int(p) for p in np.unique(frame.instance[obj.mask])]
            missing = [p for p in parts if p not in boxes]
            if missing:
                raise ExportError(
                    f"{camera}: frame {frame.index} has no box of visible instance {missing[0]}"
                )
            world = [_obb_corners(boxes[p]) for p in parts]
            axes = T_cam_world[:3, :3] @ np.asarray(boxes[parts[0]]["rotation"], float)
            half = np.asarray(boxes[parts[0]]["half_extents"], float)
            corners = np.vstack(world) @ T_cam_world[:3, :3].T + T_cam_world[:3, 3]
            dims, loc, ry, box = kitti_box(corners, axes, half)
            outline, outside = _outline(box, P, near, size)
            visible = visible_share(obj.mask, frame.depth, outline, max(box[:, 2].min(), near))
            occluded = sum(visible < bound for bound in OCCLUSION_LEVELS)  # 0, 1 or 2
            level = sum(outside > bound for bound in TRUNCATION_LEVELS)
            truncated = f"{outside:.2f}" if truncation == "fraction" else str(level)
            rows, cols = np.nonzero(obj.mask)
            alpha = _wrap(ry - math.atan2(loc[0], loc[2]))
            values = [alpha, cols.min(), rows.min(), cols.max(), rows.max(), *dims, *loc, ry]
            head = f"{frame.index} {obj.object_id} {types[obj.object_id]} {truncated} {occluded}"
            lines.append(" ".join([head, *(f"{float(v):.6f}" for v in values)]))
        progress(i + 1, len(stream))
    _write(out / "label_02" / f"{sequence}.txt", lines)
    return out


def kitti_box(
    corners: np.ndarray, axes: np.ndarray, half: np.ndarray
) -> tuple[tuple[float, float, float], tuple[float, float, float], float, np.ndarray]:
    """KITTI's (h, w, l), bottom-centre (x, y, z), rotation_y and 8 corners (bit-indexed: bit 0
    length, 1 height, 2 width) of the smallest box turned about camera y holding `corners`
    (N, 3, camera frame), heading along the longer level one of `axes` (columns, half extents
    `half`)."""
    vertical = int(np.argmax(np.abs(axes[1])))
    heading = max((k for k in range(3) if k != vertical), key=lambda k: half[k])
    ry = math.atan2(-axes[2, heading], axes[0, heading])
    c, s = math.cos(ry), math.sin(ry)
    R = np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])  # columns: length, down, width
    local = corners @ R
    lo, hi = local.min(axis=0), local.max(axis=0)
    bits = np.array([[(i >> k) & 1 for k in range(3)] for i in range(8)])
    box = np.where(bits, hi, lo) @ R.T
    centre = R @ ((lo + hi) / 2)
    loc = (float(centre[0]), float(hi[1]), float(centre[2]))
    dims = (float(hi[1] - lo[1]), float(hi[2] - lo[2]), float(hi[0] - lo[0]))
    return dims, loc, ry, box


def visible_share(mask: np.ndarray, depth: np.ndarray, outline: np.ndarray, z_min: float) -> float:
    """Mask pixels over those plus the pixels in `outline` (image polygon) nearer than `z_min`."""
    region = np.zeros(mask.shape, np.uint8)
    if len(outline) >= 3:
        cv2.fillConvexPoly(region, np.round(outline).astype(np.int32), 1)
    front = (region > 0) & ~mask & (depth > 0) & (depth < z_min)
    seen = int(mask.sum())
    return seen / (seen + int(front.sum()))


def _outline(
    box: np.ndarray, P: np.ndarray, near: float, size: tuple[int, int]
) -> tuple[np.ndarray, float]:
    """The box's image outline cut to the image (M, 2) and the fraction of it outside."""
    points = [box[i] for i in range(8) if box[i, 2] >= near]
    for i in range(8):
        for j in (i | 1, i | 2, i | 4):  # the box's 12 edges, each once
            zi, zj = box[i, 2] - near, box[j, 2] - near
            if j != i and zi * zj < 0:
                points.append(box[i] + zi / (zi - zj) * (box[j] - box[i]))
    uvw = np.array(points) @ P[:, :3].T
    hull = cv2.convexHull((uvw[:, :2] / uvw[:, 2:]).astype(np.float32))
    width, height = size
    image = np.array(
        [[-0.5, -0.5], [width - 0.5, -0.5], [width - 0.5, height - 0.5], [-0.5, height - 0.5]],
        np.float32,
    )
    area = cv2.contourArea(hull)
    inside, clipped = cv2.intersectConvexConvex(hull, image)
    clipped = np.zeros((0, 2)) if clipped is None else clipped.reshape(-1, 2)
    outside = 0.0 if area <= 0 else float(np.clip(1.0 - inside / area, 0.0, 1.0))
    return clipped, outside


def _obb_corners(obb: dict) -> np.ndarray:
    """The 8 world corners of a sequence box (`center`, `half_extents`, `rotation`)."""
    signs = np.array([[(i >> k) & 1 for k in range(3)] for i in range(8)]) * 2.0 - 1.0
    R = np.asarray(obb["rotation"], float)
    return (signs * np.asarray(obb["half_extents"], float)) @ R.T + np.asarray(obb["center"])


def _wrap(angle: float) -> float:
    """An angle in [−π, π)."""
    return (angle + math.pi) % (2 * math.pi) - math.pi


def _write(path: Path, lines: list[str]) -> None:
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
