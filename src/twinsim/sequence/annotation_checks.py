"""The checks of a camera's annotations: `boxes.jsonl` (2D and 3D boxes, people's keypoints and
joints, dynamic fraction) against the image size and the instance table, and its intrinsics.

A box that decodes but lies outside the image, a rotation that is not one, or a keypoint with
an unknown visibility would pass a reader and mislead a detector's training: each is named.
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING

import numpy as np

from twinsim.model.layout import BOXES_FILE, FRAMES_FILE
from twinsim.sequence.tables import is_int

if TYPE_CHECKING:
    from twinsim.sequence.stream_checks import SequenceContext, StreamCheck

N_KEYPOINTS = 17  # COCO's person keypoints


def intrinsics_problems(name: str, info: dict) -> list[str]:
    """A camera's `K`: a 3×3 pinhole matrix with positive focal lengths and finite entries."""
    try:
        K = np.array(info.get("K"), dtype=np.float64).reshape(3, 3)
    except (TypeError, ValueError):
        return [f"{name}: metadata.json gives no 3x3 K"]
    ok = np.isfinite(K).all() and K[0, 0] > 0 and K[1, 1] > 0 and np.allclose(K[2], (0, 0, 1))
    return [] if ok else [f"{name}: metadata.json K is not a pinhole matrix ({K.tolist()})"]


def check_boxes(check: StreamCheck, t_ns: np.ndarray, shape: tuple[int, int] | None) -> None:
    """boxes.jsonl: one object per frame, its index and time, and boxes, keypoints and joints
    of known instances inside the image (`shape` (H, W), if known)."""
    label = f"{check.name}/{BOXES_FILE}"
    try:
        lines = (check.path / label).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        check.problems.append(f"{label}: cannot be read ({exc})")
        return
    if len(lines) != len(t_ns):
        check.problems.append(f"{label}: {len(lines)} lines, expected {len(t_ns)} (one per frame)")
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
        found.extend(_box_problems(where, record["boxes"], check.context, shape))
        found.extend(_people_problems(where, record.get("people", []), check.context, shape))
        fraction = record.get("dynamic_fraction", 0.0)
        if not (isinstance(fraction, (int, float)) and 0.0 <= fraction <= 1.0):
            found.append(f"{where}: dynamic_fraction {fraction!r} is not in [0, 1]")
    check.report(found)


def _box_problems(
    where: str, boxes: list, ctx: SequenceContext, shape: tuple[int, int] | None
) -> list[str]:
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
            if not ((key == "loose" and rect is None) or _is_rect(rect, shape)):
                found.append(
                    f"{where}: box of instance {iid} has {key} {rect!r}, not [x0,y0,x1,y1] "
                    "inside the image"
                )
        if "obb" in box and not _is_obb(box["obb"]):
            found.append(f"{where}: box of instance {iid} has a malformed obb")
    return found


def _people_problems(
    where: str, people: object, ctx: SequenceContext, shape: tuple[int, int] | None
) -> list[str]:
    if not isinstance(people, list):
        return [f"{where}: people must be a list"]
    found = []
    for person in people:
        iid = person.get("instance_id") if isinstance(person, dict) else None
        if ctx.instance_class.get(iid) != "person":
            found.append(f"{where}: keypoints of {iid!r}, which is not a person instance")
            continue
        points = _array(person.get("keypoints"), (N_KEYPOINTS, 3))
        if points is None or not np.isin(points[:, 2], (0, 1, 2)).all():
            found.append(f"{where}: keypoints of person {iid} are not 17 [x, y, v], v in 0/1/2")
        elif shape is not None:
            shown = points[points[:, 2] > 0]
            h, w = shape
            inside = (shown[:, 0] >= -0.5) & (shown[:, 0] <= w - 0.5)
            inside &= (shown[:, 1] >= -0.5) & (shown[:, 1] <= h - 0.5)
            if not inside.all():
                found.append(f"{where}: a visible keypoint of person {iid} is outside the image")
        if _array(person.get("joints_world"), (None, 3)) is None:
            found.append(f"{where}: joints_world of person {iid} is not (J, 3) finite metres")
    return found


def _array(value: object, shape: tuple[int | None, int]) -> np.ndarray | None:
    """`value` as a finite float array of `shape` (None: any length), else None."""
    try:
        a = np.array(value, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    rows, cols = shape
    if a.ndim != 2 or a.shape[1] != cols or (rows is not None and a.shape[0] != rows):
        return None
    return a if np.isfinite(a).all() else None


def _is_rect(rect: object, shape: tuple[int, int] | None) -> bool:
    """An [x0, y0, x1, y1] list of ints with inclusive bounds x0 <= x1, y0 <= y1, inside an
    image of `shape` (H, W) where known."""
    if not (isinstance(rect, list) and len(rect) == 4 and all(map(is_int, rect))):
        return False
    x0, y0, x1, y1 = rect
    if not (0 <= x0 <= x1 and 0 <= y0 <= y1):
        return False
    return shape is None or (x1 < shape[1] and y1 < shape[0])


def _is_obb(obb: object) -> bool:
    """A world box: finite centre, non-negative half extents, a proper rotation."""
    if not isinstance(obb, dict):
        return False
    centre = _array([obb.get("center")], (1, 3))
    half = _array([obb.get("half_extents")], (1, 3))
    R = _array(obb.get("rotation"), (3, 3))
    if centre is None or half is None or R is None or (half < 0).any():
        return False
    return bool(
        np.allclose(R @ R.T, np.eye(3), atol=1e-6)
        and math.isclose(np.linalg.det(R), 1.0, abs_tol=1e-6)
    )
