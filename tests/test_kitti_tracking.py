"""KITTI tracking export, read back as the tracking devkit reads label_02/calib files and checked
against the sequence's own masks, 3D boxes and instance table."""

from __future__ import annotations

import math
import re

import cv2
import numpy as np
import pytest
from typer.testing import CliRunner

from twinsim.cli import app
from twinsim.export import FORMATS, ExportError, export_sequence
from twinsim.export.common import invert
from twinsim.export.kitti_tracking import kitti_box, visible_share
from twinsim.sequence import open_sequence

KITTI_TYPES = ("Car", "Van", "Truck", "Pedestrian", "Person_sitting", "Cyclist", "Tram", "Misc")


@pytest.fixture(scope="module")
def seq(dynamic_sequence):
    return open_sequence(dynamic_sequence)


@pytest.fixture(scope="module")
def out(dynamic_sequence, tmp_path_factory):
    folder = tmp_path_factory.mktemp("kitti_tracking") / "out"
    return export_sequence(dynamic_sequence, "kitti_tracking", folder, sequence="0003")


@pytest.fixture(scope="module")
def cli_out(dynamic_sequence, tmp_path_factory):
    """The same export through `twinsim export`, with truncation written as fractions."""
    folder = tmp_path_factory.mktemp("kitti_tracking_cli") / "out"
    args = ["export", str(dynamic_sequence), "--format", "kitti_tracking", "--out", str(folder)]
    result = CliRunner().invoke(app, [*args, "-o", "sequence=0002", "-o", "truncation=fraction"])
    assert result.exit_code == 0, result.output
    return folder


def _labels(path) -> list[dict]:
    """label_02 lines as the devkit's evaluate_tracking.py parses them (int(float(...)) etc.)."""
    rows = []
    for line in path.read_text().splitlines():
        f = line.split(" ")
        assert len(f) == 17, line
        rows.append(
            {
                "frame": int(f[0]),
                "id": int(f[1]),
                "type": f[2],
                "truncated": float(f[3]),
                "occluded": int(f[4]),
                "alpha": float(f[5]),
                "box": np.array(f[6:10], float),
                "dims": np.array(f[10:13], float),  # h w l
                "loc": np.array(f[13:16], float),
                "ry": float(f[16]),
                "raw": f,
            }
        )
    return rows


def _calib(path) -> dict[str, np.ndarray]:
    """calib/<seq>.txt as KITTI tracking readers split it: key (':' optional), then numbers."""
    calib = {}
    for line in path.read_text().splitlines():
        key, values = line.split(" ", 1)
        calib[key.rstrip(":")] = np.array(values.split(), float)
    return calib


def _corners(dims, loc, ry) -> np.ndarray:
    """The devkit's 8 box corners (camera frame) from h w l, the bottom centre and rotation_y."""
    h, w, length = dims
    half = length / 2
    x = [half, half, -half, -half, half, half, -half, -half]
    y = [0, 0, 0, 0, -h, -h, -h, -h]
    z = [w / 2, -w / 2, -w / 2, w / 2, w / 2, -w / 2, -w / 2, w / 2]
    c, s = math.cos(ry), math.sin(ry)
    R = np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])
    return (R @ np.array([x, y, z])).T + loc


def _objects(seq) -> tuple[dict[int, list[int]], dict[int, str]]:
    """Dynamic objects from the instance table alone: id → its instance ids, id → class."""
    instances = [i for i in seq.metadata["instances"] if i["dynamic"]]
    body = {i["person_id"]: i["instance_id"] for i in instances if i["semantic_class"] == "person"}
    parts: dict[int, list[int]] = {}
    classes = {}
    for inst in instances:
        oid = body.get(inst.get("person_id"), inst["instance_id"])
        parts.setdefault(oid, []).append(inst["instance_id"])
        classes.setdefault(oid, inst["semantic_class"])
    return parts, classes


def _masks(seq, parts) -> dict[int, dict[int, np.ndarray]]:
    """frame → object id → mask, for every dynamic object with pixels in the frame."""
    found = {}
    for frame in seq.camera("cam0"):
        found[frame.index] = {}
        for oid, ids in parts.items():
            mask = np.isin(frame.instance, ids)
            if mask.any():
                found[frame.index][oid] = mask
    return found


@pytest.fixture(scope="module")
def masks(seq):
    return _masks(seq, _objects(seq)[0])


def test_registered_with_its_options() -> None:
    assert FORMATS["kitti_tracking"].options() == {
        "camera": None, "sequence": "0000", "truncation": "level"
    }  # fmt: skip


def test_layout_calib_and_images(out, seq) -> None:
    cam = seq.camera("cam0")
    pngs = sorted(p.name for p in (out / "image_02" / "0003").iterdir())
    assert pngs == [f"{i:06d}.png" for i in range(len(cam))]
    bgr = cv2.imread(str(out / "image_02" / "0003" / "000005.png"))
    assert np.array_equal(bgr[..., ::-1], cam[5].rgb)
    calib = _calib(out / "calib" / "0003.txt")
    assert np.array_equal(calib["P2"].reshape(3, 4), np.hstack([cam.K, np.zeros((3, 1))]))
    assert np.array_equal(calib["R_rect"].reshape(3, 3), np.eye(3))
    assert calib["Tr_velo_cam"].shape == (12,)
    assert [p.name for p in (out / "label_02").iterdir()] == ["0003.txt"]


def test_lines_are_the_visible_dynamic_objects_with_stable_tracks(out, seq, masks) -> None:
    rows = _labels(out / "label_02" / "0003.txt")
    _, classes = _objects(seq)
    expected = {(f, oid) for f, objs in masks.items() for oid in objs}
    assert [(r["frame"], r["id"]) for r in rows] == sorted(expected)
    kind = {"person": "Pedestrian", "ball": "Misc", "toy": "Misc", "box": "Misc", "bottle": "Misc"}
    types: dict[int, str] = {}
    for r in rows:
        assert r["type"] in KITTI_TYPES
        assert types.setdefault(r["id"], r["type"]) == r["type"]  # one type per track
        assert r["type"] == kind[classes[r["id"]]]
    assert {"Pedestrian", "Misc"} <= set(types.values())
    assert any(len({r["frame"] for r in rows if r["id"] == t}) > 10 for t in types)


def test_2d_box_is_the_mask_box(out, masks) -> None:
    for r in _labels(out / "label_02" / "0003.txt"):
        rows, cols = np.nonzero(masks[r["frame"]][r["id"]])
        assert list(r["box"]) == [cols.min(), rows.min(), cols.max(), rows.max()], r["raw"]


def test_3d_box_holds_the_sequence_boxes_and_projects_around_the_mask(out, seq, masks) -> None:
    cam = seq.camera("cam0")
    P = _calib(out / "calib" / "0003.txt")["P2"].reshape(3, 4)
    parts, _ = _objects(seq)
    checked = 0
    for r in _labels(out / "label_02" / "0003.txt"):
        frame = cam[r["frame"]]
        h, w, length = r["dims"]
        x, z = r["loc"][0], r["loc"][2]
        assert min(h, w, length) > 0 and z > 0
        want = math.remainder(r["ry"] - math.atan2(x, z), 2 * math.pi)
        assert abs(math.remainder(r["alpha"] - want, 2 * math.pi)) < 1e-5
        # every corner of the sequence's boxes of the visible parts is inside, touching all faces
        T = invert(frame.T_world_cam)
        corners = []
        for b in frame.boxes:
            if b["instance_id"] in parts[r["id"]]:
                o = b["obb"]
                signs = np.array(np.meshgrid(*[[-1, 1]] * 3)).reshape(3, -1).T
                world = (signs * o["half_extents"]) @ np.array(o["rotation"]).T + o["center"]
                corners.append(world @ T[:3, :3].T + T[:3, 3])
        c, s = math.cos(r["ry"]), math.sin(r["ry"])
        local = (np.vstack(corners) - r["loc"]) @ np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])
        lo = np.array([-length / 2, -h, -w / 2])
        hi = np.array([length / 2, 0, w / 2])
        assert (local >= lo - 1e-4).all() and (local <= hi + 1e-4).all(), r["raw"]
        assert np.allclose(local.min(axis=0), lo, atol=1e-4), r["raw"]
        assert np.allclose(local.max(axis=0), hi, atol=1e-4), r["raw"]
        if r["truncated"] == 0:  # in the image: the projected box holds the mask box
            uvw = np.hstack([_corners(r["dims"], r["loc"], r["ry"]), np.ones((8, 1))]) @ P.T
            assert (uvw[:, 2] > 0).all()
            uv = uvw[:, :2] / uvw[:, 2:]
            x1, y1, x2, y2 = r["box"]
            assert uv[:, 0].min() <= x1 + 1 and uv[:, 1].min() <= y1 + 1, r["raw"]
            assert uv[:, 0].max() >= x2 - 1 and uv[:, 1].max() >= y2 - 1, r["raw"]
            checked += 1
    assert checked > 20


def test_truncation_levels_match_fractions_and_occlusion_levels(out, cli_out, seq) -> None:
    cam = seq.camera("cam0")
    P = _calib(cli_out / "calib" / "0002.txt")["P2"].reshape(3, 4)
    levels = _labels(out / "label_02" / "0003.txt")
    fractions = _labels(cli_out / "label_02" / "0002.txt")
    assert len(levels) == len(fractions)
    for a, b in zip(levels, fractions, strict=True):
        assert a["raw"][:3] == b["raw"][:3] and a["raw"][4:] == b["raw"][4:]
        assert a["truncated"] in (0, 1, 2) and a["occluded"] in (0, 1, 2)
        f = b["truncated"]
        assert 0 <= f <= 1
        if abs(f - 0.01) > 0.006 and abs(f - 0.5) > 0.006:  # not a rounding case
            assert a["truncated"] == (0 if f <= 0.01 else 1 if f <= 0.5 else 2), b["raw"]
        uvw = np.hstack([_corners(b["dims"], b["loc"], b["ry"]), np.ones((8, 1))]) @ P.T
        uv = uvw[:, :2] / np.maximum(uvw[:, 2:], 1e-9)
        size = np.array([cam.width, cam.height]) - 0.5
        inside = (uvw[:, 2] > 0).all() and (uv >= -0.5 + 1e-3).all() and (uv <= size - 1e-3).all()
        if inside:
            assert f == 0, b["raw"]
        if f >= 0.01:
            assert not inside, b["raw"]
    assert {r["truncated"] for r in levels} >= {0, 1}
    assert {r["occluded"] for r in levels} >= {0, 2}  # the fixture's person leaves a doorway


@pytest.mark.parametrize("ry", [0.0, 0.7, -1.2, math.pi / 2, 3.1, -3.1])
def test_kitti_box_gives_back_a_devkit_box(ry) -> None:
    dims, loc = (1.5, 1.8, 4.2), np.array([2.0, 1.6, 12.0])  # h w l: a car 12 m ahead
    corners = _corners(dims, loc, ry)
    c, s = math.cos(ry), math.sin(ry)
    axes = np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])  # length, down, width
    got_dims, got_loc, got_ry, box = kitti_box(corners, axes, np.array([2.1, 0.75, 0.9]))
    assert np.allclose(got_dims, dims) and np.allclose(got_loc, loc)
    assert abs(math.remainder(got_ry - ry, 2 * math.pi)) < 1e-9  # rotation_y 0: facing camera x
    assert np.allclose(sorted(map(tuple, box)), sorted(map(tuple, corners)))


def test_visible_share_counts_nearer_pixels_inside_the_outline() -> None:
    mask = np.zeros((40, 40), bool)
    mask[10:30, 10:20] = True  # 200 pixels of the object, 5 m away
    depth = np.full((40, 40), 9.0, np.float32)  # a wall behind it
    depth[mask] = 5.0
    outline = np.array([[10, 10], [29, 10], [29, 29], [10, 29]], float)  # its box: 20 x 20 px
    assert visible_share(mask, depth, outline, 4.9) == 1.0  # the wall is behind: not occluding
    depth[10:30, 20:30] = 2.0  # something nearer beside it, inside its box: 200 pixels
    assert visible_share(mask, depth, outline, 4.9) == 0.5
    depth[10:30, 20:30] = 0.0  # no depth reading there: not counted
    assert visible_share(mask, depth, outline, 4.9) == 1.0


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"sequence": "7"}, r"sequence='7' must be four digits, e\.g\. '0000'"),
        ({"sequence": "00a1"}, r"sequence='00a1' must be four digits"),
        ({"sequence": "12345"}, r"sequence='12345' must be four digits"),
        ({"camera": "cam9"}, r"camera='cam9' is not a camera stream; allowed: cam0"),
        ({"truncation": "percent"}, r"truncation='percent' .*allowed: level, fraction"),
        ({"classes": "person"}, r"unknown option 'classes'; allowed: camera, sequence"),
    ],
)
def test_bad_options_are_refused(dynamic_sequence, tmp_path, options, message) -> None:
    with pytest.raises(ExportError, match=message) as info:
        export_sequence(dynamic_sequence, "kitti_tracking", tmp_path / "o", **options)
    assert "\n" not in str(info.value)
    assert not (tmp_path / "o").exists()


def test_cli_refuses_a_bad_sequence_in_one_line(dynamic_sequence, tmp_path) -> None:
    args = ["export", str(dynamic_sequence), "--format", "kitti_tracking"]
    result = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "o"), "-o", "sequence=3"])
    assert result.exit_code == 2
    text = " ".join(result.output.split())
    assert text.startswith("error:") and re.search(r"sequence='3' must be four digits", text)
    assert "Traceback" not in result.output
