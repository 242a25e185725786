"""`twinsim export`: formats by name, options, and one-line refusals of bad input."""

from __future__ import annotations

import re
import shutil

import pytest
from typer.testing import CliRunner

from conftest import digest_folder
from twinsim.cli import app
from twinsim.export import FORMATS, ExportError, export_sequence
from twinsim.sequence import open_sequence


def _run(*args: str):
    return CliRunner().invoke(app, ["export", *args])


def test_every_format_is_registered_with_its_options() -> None:
    assert list(FORMATS) == [
        "tum",
        "euroc",
        "kitti",
        "kitti_tracking",
        "rosbag2",
        "rosbag1",
        "coco",
        "yolo",
        "rerun",
        "mjcf",
        "mesh",
        "occupancy",
        "pointcloud",
        "usd",
    ]
    assert FORMATS["yolo"].options() == {
        "camera": None, "task": "detect", "classes": None, "min_area": 1
    }  # fmt: skip
    assert FORMATS["kitti"].options() == {"camera": None, "lidar": None, "sequence": "00"}
    assert FORMATS["rosbag2"].options() == {}
    assert FORMATS["rosbag1"].options() == {"compression": "none"}
    assert FORMATS["mjcf"].options() == FORMATS["mesh"].options() == {}
    assert FORMATS["occupancy"].options() == {
        "resolution_m": 0.05, "z_min_m": 0.1, "z_max_m": 2.0, "voxel_m": 0.1
    }  # fmt: skip
    assert FORMATS["pointcloud"].options() == {
        "lidar": None, "static_only": False, "voxel_m": 0.05
    }  # fmt: skip
    assert FORMATS["usd"].options() == {"file_format": "usda"}


def test_cli_exports_with_options(dynamic_sequence, tmp_path) -> None:
    before = digest_folder(dynamic_sequence)
    out = tmp_path / "yolo"
    result = _run(str(dynamic_sequence), "--format", "yolo", "--out", str(out),
                  "-o", "task=segment", "-o", "min_area=30")  # fmt: skip
    assert result.exit_code == 0, result.output
    data = (out / "data.yaml").read_text()
    assert "task: segment" in data
    n_frames = len(open_sequence(dynamic_sequence).camera("cam0"))
    assert len(list((out / "labels/train").glob("*.txt"))) == n_frames
    assert digest_folder(dynamic_sequence) == before  # the source is only read


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--format", "vrml"], r"--format 'vrml' is unknown; allowed: tum, euroc, kitti"),
        (["--format", "tum", "-o", "frames=3"], r"--option 'frames=3'.*key in: camera"),
        (["--format", "coco", "-o", "min_area=big"], r"min_area must be an integer"),
        (["--format", "tum", "-o", "camera=cam9"], r"camera='cam9' is not a camera stream"),
        (["--format", "kitti", "-o", "sequence=7"], r"sequence='7' must be two digits"),
    ],
)
def test_cli_refuses_bad_input_in_one_line(dynamic_sequence, tmp_path, args, message) -> None:
    result = _run(str(dynamic_sequence), "--out", str(tmp_path / "o"), *args)
    assert result.exit_code == 2
    text = " ".join(result.output.split())
    assert text.startswith("error:") and re.search(message, text), text
    assert "Traceback" not in result.output


def test_refuses_used_folders_and_partial_sequences(dynamic_sequence, tmp_path) -> None:
    used = tmp_path / "used"
    used.mkdir()
    (used / "keep.txt").write_text("mine")
    result = _run(str(dynamic_sequence), "--format", "tum", "--out", str(used))
    assert result.exit_code == 2 and "not empty" in result.output
    assert [p.name for p in used.iterdir()] == ["keep.txt"]
    with pytest.raises(ExportError, match="inside the source sequence"):
        export_sequence(dynamic_sequence, "tum", dynamic_sequence / "tum")
    assert not (dynamic_sequence / "tum").exists()
    partial = tmp_path / "partial"
    shutil.copytree(dynamic_sequence, partial, ignore=shutil.ignore_patterns("*.png", "*.npy"))
    (partial / "INCOMPLETE").write_text("interrupted")
    result = _run(str(partial), "--format", "euroc", "--out", str(tmp_path / "e"))
    assert result.exit_code == 2 and "incomplete" in result.output
    assert not (tmp_path / "e").exists()
