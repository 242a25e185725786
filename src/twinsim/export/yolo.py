"""YOLO (Ultralytics layout): images/train, labels/train (one .txt per image) and data.yaml.

`task="detect"` writes `class cx cy w h`, `task="segment"` writes `class x1 y1 x2 y2 …` (a
polygon of at least 3 vertices at pixel centres); all coordinates normalised to [0, 1] by the
image size. YOLO class = semantic id − 1. data.yaml has no `path`, so Ultralytics resolves
`train`/`val` against data.yaml's folder from any working directory.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import yaml

from twinsim.export.common import ExportError, Progress, no_progress, pick_stream, prepare_output
from twinsim.export.objects import ObjectTable, check_min_area, class_selection
from twinsim.sequence.images import write_png
from twinsim.sequence.reader import SequenceReader

TASKS = ("detect", "segment")
SPLIT = "train"


def export_yolo(
    seq: SequenceReader,
    out: Path,
    *,
    camera: str | None = None,
    task: str = "detect",
    classes: str | None = None,
    min_area: int = 1,
    progress: Progress = no_progress,
) -> Path:
    """Write one camera's frames with YOLO detection or segmentation labels."""
    if task not in TASKS:
        raise ExportError(f"task={task!r} is not a YOLO task; allowed: {', '.join(TASKS)}")
    camera = pick_stream(seq, "camera", camera, "camera")
    stream = seq.camera(camera)
    table = ObjectTable(seq)
    wanted = class_selection(table.classes, classes)
    check_min_area(min_area)
    out = prepare_output(out)
    images, labels = out / "images" / SPLIT, out / "labels" / SPLIT
    images.mkdir(parents=True)
    labels.mkdir(parents=True)
    size = np.array([stream.width, stream.height], dtype=np.float64)
    for i, frame in enumerate(stream):
        name = f"{frame.index:06d}"
        write_png(images / f"{name}.png", cv2.cvtColor(frame.rgb, cv2.COLOR_RGB2BGR))
        lines = []
        for obj in table.objects(frame, wanted, min_area):
            if task == "detect":
                values = _box_cxcywh(obj.mask) / np.tile(size, 2)
            else:
                values = ((mask_polygon(obj.mask) + 0.5) / size).ravel()  # pixel centres
            lines.append(" ".join([str(obj.class_id - 1), *(f"{v:.6f}" for v in values)]))
        (labels / f"{name}.txt").write_text("".join(f"{line}\n" for line in lines))
        progress(i + 1, len(stream))
    data = {  # no `path`: Ultralytics then takes data.yaml's own folder as the dataset root
        "train": f"images/{SPLIT}",
        "val": f"images/{SPLIT}",
        "task": task,
        "names": {c - 1: name for c, name in enumerate(table.classes) if c},
    }
    header = (
        f"# twinsim sequence {seq.path.name}, camera {camera}: YOLO {task} labels; "
        "class = twinsim semantic id - 1\n"
    )
    (out / "data.yaml").write_text(header + yaml.safe_dump(data, sort_keys=False))
    return out


def _box_cxcywh(mask: np.ndarray) -> np.ndarray:
    """Centre and size of the pixel-edge box around a mask (pixel i spans [i, i + 1))."""
    rows, cols = np.nonzero(mask)
    x0, x1, y0, y1 = cols.min(), cols.max() + 1, rows.min(), rows.max() + 1
    return np.array([(x0 + x1) / 2, (y0 + y1) / 2, x1 - x0, y1 - y0], dtype=np.float64)


def mask_polygon(mask: np.ndarray) -> np.ndarray:
    """One polygon (N, 2) of pixel indices (x, y) covering every part of a mask.

    Vertices are boundary pixels (at least 3, repeated for a tiny object), so filling the
    polygon (Ultralytics' `polygon2mask` uses `cv2.fillPoly`) gives the mask back; separate
    parts are joined by zero-width bridges from each part's first point (YOLO has one polygon
    per object); holes are not represented.
    """
    contours, _ = cv2.findContours(mask.astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    contours = sorted(contours, key=lambda c: (-cv2.contourArea(c), c[0, 0, 1], c[0, 0, 0]))
    path = []
    for contour in contours:
        points = contour[:, 0, :]
        path.extend([*points, points[0]])
    path.extend(c[0, 0, :] for c in reversed(contours[:-1]))
    path.extend([path[-1]] * (3 - len(path)))  # a segment row needs 3 vertices (else a box row)
    return np.asarray(path, dtype=np.float64)
