"""COCO: images/, annotations/instances.json (boxes, RLE masks) and
annotations/person_keypoints.json (people with the 17 COCO keypoints)."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np

from twinsim.actors.human import COCO_KEYPOINTS
from twinsim.export.common import Progress, no_progress, pick_stream, prepare_output
from twinsim.export.objects import ObjectTable, check_min_area, class_selection
from twinsim.sequence.images import write_png
from twinsim.sequence.reader import SequenceReader

#: COCO's person skeleton: pairs of 1-based keypoint indices.
COCO_SKELETON = (
    (16, 14), (14, 12), (17, 15), (15, 13), (12, 13), (6, 12), (7, 13), (6, 7), (6, 8),
    (7, 9), (8, 10), (9, 11), (2, 3), (1, 2), (1, 3), (2, 4), (3, 5), (4, 6), (5, 7),
)  # fmt: skip


def export_coco(
    seq: SequenceReader,
    out: Path,
    *,
    camera: str | None = None,
    classes: str | None = None,
    min_area: int = 1,
    progress: Progress = no_progress,
) -> Path:
    """Write one camera's frames and their instance and keypoint annotations as COCO JSON."""
    from pycocotools import mask as mask_utils

    camera = pick_stream(seq, "camera", camera, "camera")
    stream = seq.camera(camera)
    table = ObjectTable(seq)
    wanted = class_selection(table.classes, classes)
    check_min_area(min_area)
    person = table.classes.index("person")
    out = prepare_output(out)
    (out / "images").mkdir()
    (out / "annotations").mkdir()
    images, instances, people = [], [], []
    for i, frame in enumerate(stream):
        name = f"{frame.index:06d}.png"
        write_png(out / "images" / name, cv2.cvtColor(frame.rgb, cv2.COLOR_RGB2BGR))
        image_id = frame.index + 1
        images.append(
            {
                "id": image_id,
                "file_name": name,
                "width": stream.width,
                "height": stream.height,
                "t_ns": frame.t_ns,
            }
        )
        for obj in table.objects(frame, wanted, min_area):
            rle = mask_utils.encode(np.asfortranarray(obj.mask.astype(np.uint8)))
            ann = {
                "id": len(instances) + 1,
                "image_id": image_id,
                "category_id": obj.class_id,
                "instance_id": obj.object_id,
                "segmentation": {"size": rle["size"], "counts": rle["counts"].decode("ascii")},
                "area": int(mask_utils.area(rle)),
                "bbox": [float(v) for v in mask_utils.toBbox(rle)],
                "iscrowd": 0,
            }
            instances.append(ann)
            if obj.class_id == person:
                keypoints = frame.keypoints.get(obj.object_id, np.zeros((17, 3)))
                people.append(
                    ann
                    | {
                        "keypoints": [float(v) for v in keypoints.ravel()],
                        "num_keypoints": int((keypoints[:, 2] > 0).sum()),
                    }
                )
        progress(i + 1, len(stream))
    moving = {i["semantic_class"] for i in seq.metadata["instances"] if i.get("dynamic")}
    categories = [
        {
            "id": c,
            "name": table.classes[c],
            "supercategory": _supercategory(table.classes[c], moving),
        }
        for c in sorted(wanted)
    ]
    person_category = {
        "id": person,
        "name": "person",
        "supercategory": "person",
        "keypoints": list(COCO_KEYPOINTS),
        "skeleton": [list(pair) for pair in COCO_SKELETON],
    }
    info = {
        "description": f"twinsim sequence {seq.path.name}, camera {camera}",
        "version": str(seq.metadata.get("twinsim_version", "")),
        "seed": seq.metadata.get("seed"),
    }
    for file, anns, cats in (
        ("instances.json", instances, categories),
        ("person_keypoints.json", people, [person_category]),
    ):
        document = {"info": info, "images": images, "annotations": anns, "categories": cats}
        (out / "annotations" / file).write_text(json.dumps(document), encoding="utf-8")
    return out


def _supercategory(name: str, moving: set[str]) -> str:
    """`person`, `moving` (classes of the sequence's other dynamic instances) or `indoor`."""
    if name in ("person", "clothing"):
        return "person"
    return "moving" if name in moving else "indoor"
