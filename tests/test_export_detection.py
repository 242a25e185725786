"""COCO export checked with pycocotools (GT evaluated against itself gives AP 1), YOLO labels
checked against the sequence's own masks and boxes."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import cv2
import numpy as np
import pytest
import yaml
from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval

from twinsim.export import ExportError, export_sequence
from twinsim.export.yolo import mask_polygon
from twinsim.sequence import open_sequence


@pytest.fixture(scope="module")
def seq(dynamic_sequence):
    return open_sequence(dynamic_sequence)


@pytest.fixture(scope="module")
def coco(dynamic_sequence, tmp_path_factory):
    return export_sequence(dynamic_sequence, "coco", tmp_path_factory.mktemp("coco") / "out")


def _quiet(fn, *args):
    with contextlib.redirect_stdout(io.StringIO()):
        return fn(*args)


def _evaluate(gt: COCO, kind: str, with_keypoints: bool = False) -> float:
    """AP of the ground truth used as detections (score 1) against itself."""
    anns = gt.loadAnns(gt.getAnnIds())
    if with_keypoints:
        anns = [a for a in anns if a["num_keypoints"] > 0]
    dets = [a | {"score": 1.0} for a in anns]
    dt = _quiet(gt.loadRes, dets)
    evaluation = COCOeval(gt, dt, kind)
    _quiet(evaluation.evaluate)
    _quiet(evaluation.accumulate)
    _quiet(evaluation.summarize)
    return float(evaluation.stats[0])


def test_coco_loads_and_self_evaluation_gives_ap_one(coco) -> None:
    gt = _quiet(COCO, str(coco / "annotations/instances.json"))
    assert len(gt.getImgIds()) > 0 and len(gt.getAnnIds()) > 0
    assert _evaluate(gt, "bbox") == 1.0
    assert _evaluate(gt, "segm") == 1.0
    people = _quiet(COCO, str(coco / "annotations/person_keypoints.json"))
    assert any(a["num_keypoints"] > 0 for a in people.loadAnns(people.getAnnIds()))
    assert _evaluate(people, "keypoints", with_keypoints=True) == 1.0


def test_coco_masks_boxes_and_keypoints_match_the_sequence(coco, seq) -> None:
    gt = _quiet(COCO, str(coco / "annotations/instances.json"))
    cam = seq.camera("cam0")
    instances = {i["instance_id"]: i for i in seq.metadata["instances"]}
    person_class = seq.metadata["classes"].index("person")
    n_people = 0
    for image in gt.loadImgs(gt.getImgIds())[::10]:
        frame = cam[image["id"] - 1]
        assert image["t_ns"] == frame.t_ns
        png = cv2.imread(str(coco / "images" / image["file_name"]))
        np.testing.assert_array_equal(png[..., ::-1], frame.rgb)
        tight = {b["instance_id"]: b["tight"] for b in frame.boxes}
        for ann in gt.loadAnns(gt.getAnnIds(imgIds=image["id"])):
            mask = gt.annToMask(ann).astype(bool)
            iid = ann["instance_id"]
            if ann["category_id"] == person_class:
                # body and clothing of one person merge into one person annotation
                pid = instances[iid]["person_id"]
                members = [i for i, v in instances.items() if v.get("person_id") == pid]
                np.testing.assert_array_equal(mask, np.isin(frame.instance, members))
                n_people += 1
            else:
                np.testing.assert_array_equal(mask, frame.instance == iid)
                x0, y0, x1, y1 = tight[iid]
                assert ann["bbox"] == [x0, y0, x1 - x0 + 1, y1 - y0 + 1]
                assert (
                    seq.metadata["classes"][ann["category_id"]] == instances[iid]["semantic_class"]
                )
            assert ann["area"] == mask.sum()
    assert n_people > 0
    people = json.loads((coco / "annotations/person_keypoints.json").read_text())
    assert people["categories"][0]["keypoints"][0] == "nose"
    assert len(people["categories"][0]["keypoints"]) == 17
    for ann in people["annotations"]:
        frame = cam[ann["image_id"] - 1]
        expected = frame.keypoints.get(ann["instance_id"], np.zeros((17, 3)))
        np.testing.assert_array_equal(np.reshape(ann["keypoints"], (17, 3)), expected)


def _objects(seq, frame) -> dict[int, tuple[str, np.ndarray]]:
    """Visible objects of a frame, a person's instances merged: key -> (class, mask)."""
    instances = {i["instance_id"]: i for i in seq.metadata["instances"]}
    objects: dict[int, tuple[str, np.ndarray]] = {}
    for iid in np.unique(frame.instance):
        if iid == 0:
            continue
        info = instances[int(iid)]
        key = -1 - info["person_id"] if "person_id" in info else int(iid)
        cls = "person" if "person_id" in info else info["semantic_class"]
        mask = objects.get(key, (cls, np.zeros(frame.instance.shape, bool)))[1]
        objects[key] = (cls, mask | (frame.instance == iid))
    return objects


@pytest.mark.parametrize("task", ["detect", "segment"])
def test_yolo_labels_match_masks(dynamic_sequence, seq, tmp_path, task) -> None:
    wanted = ("person", "chair", "table", "toy", "ball", "cabinet")
    out = export_sequence(
        dynamic_sequence, "yolo", tmp_path / task, task=task, classes=",".join(wanted)
    )
    data = yaml.safe_load((out / "data.yaml").read_text())
    classes = seq.metadata["classes"]
    assert data["names"][classes.index("person") - 1] == "person"
    assert len(data["names"]) == len(classes) - 1 and data["task"] == task
    cam = seq.camera("cam0")
    assert len(sorted((out / data["train"]).glob("*.png"))) == len(cam)
    size = np.array([cam.width, cam.height], float)
    checked = 0
    for index in range(0, len(cam), 10):
        frame = cam[index]
        objects = [o for o in _objects(seq, frame).values() if o[0] in wanted]
        lines = (out / "labels/train" / f"{index:06d}.txt").read_text().splitlines()
        assert len(lines) == len(objects)
        for line in lines:
            cls, *values = line.split()
            name = data["names"][int(cls)]
            values = np.array(values, float)
            assert ((values >= 0) & (values <= 1)).all()
            if task == "detect":
                cx, cy, w, h = values * np.tile(size, 2)
                box = np.round([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2]).astype(int)
                boxes = []
                for c, mask in objects:
                    rows, cols = np.nonzero(mask)
                    if c == name:
                        boxes.append([cols.min(), rows.min(), cols.max() + 1, rows.max() + 1])
                assert box.tolist() in boxes
            else:
                assert len(values) >= 6  # Ultralytics: a row of <= 6 numbers is a box row
                # Ultralytics: float32 labels, denormalised by (W, H), int32 before fillPoly
                polygon = (values.reshape(-1, 2).astype(np.float32) * size).astype(np.int32)
                filled = np.zeros((cam.height, cam.width), np.uint8)
                cv2.fillPoly(filled, [polygon], 1)
                filled = filled.astype(bool)
                mine = [m for c, m in objects if c == name and filled[m].all()]
                assert mine and any(m[polygon[:, 1], polygon[:, 0]].all() for m in mine)
            checked += 1
    assert checked > 10


def test_mask_polygon_covers_every_part() -> None:
    mask = np.zeros((20, 30), bool)
    mask[2:8, 3:10] = True
    mask[12:18, 20:27] = True
    filled = np.zeros(mask.shape, np.uint8)
    cv2.fillPoly(filled, [mask_polygon(mask).astype(np.int32)], 1)
    filled = filled.astype(bool)
    assert filled[mask].all()
    # only the one-pixel bridge between the parts' first pixels, (3, 2) -> (20, 12), is extra
    bridge = np.zeros(mask.shape, np.uint8)
    cv2.line(bridge, (3, 2), (20, 12), 1)
    np.testing.assert_array_equal(filled & ~mask, bridge.astype(bool) & ~mask)


def test_yolo_data_yaml_resolves_from_any_folder(dynamic_sequence, tmp_path, monkeypatch) -> None:
    out = export_sequence(dynamic_sequence, "yolo", tmp_path / "yolo")
    monkeypatch.chdir(tmp_path)  # not the export folder
    data = yaml.safe_load((out / "data.yaml").read_text())
    # Ultralytics' check_det_dataset: root = `path`, else data.yaml's folder; relative `path`s
    # that exist are taken from the working directory
    root = Path(data.get("path") or out)
    assert len(list((root / data["train"]).resolve().glob("*.png"))) > 0


def test_mask_polygon_of_a_tiny_object_is_a_segment() -> None:
    for pixels in ([(4, 5)], [(4, 5), (4, 6)]):
        mask = np.zeros((10, 10), bool)
        for y, x in pixels:
            mask[y, x] = True
        polygon = mask_polygon(mask)
        assert len(polygon) >= 3
        filled = np.zeros(mask.shape, np.uint8)
        cv2.fillPoly(filled, [polygon.astype(np.int32)], 1)
        np.testing.assert_array_equal(filled.astype(bool), mask)


def test_yolo_refuses_unknown_task_and_class(dynamic_sequence, tmp_path) -> None:
    with pytest.raises(ExportError, match=r"task='boxes'.*allowed: detect, segment"):
        export_sequence(dynamic_sequence, "yolo", tmp_path / "a", task="boxes")
    with pytest.raises(ExportError, match=r"unknown class 'dragon'"):
        export_sequence(dynamic_sequence, "yolo", tmp_path / "b", classes="person,dragon")
    with pytest.raises(ExportError, match=r"classes=' , ' names no class"):
        export_sequence(dynamic_sequence, "coco", tmp_path / "c", classes=" , ")
    with pytest.raises(ExportError, match=r"min_area=0 must be a whole number of pixels"):
        export_sequence(dynamic_sequence, "coco", tmp_path / "d", min_area=0)
    assert not any(tmp_path.iterdir())  # refused before anything was written
