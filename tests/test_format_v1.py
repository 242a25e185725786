"""Sequences of format 1 (one robot, `events` streams) still open, validate, replay and export.

`data/v1_sequence` was written by twinsim before format 2 (see `data/README.md`); it is copied
into a temporary folder so nothing here can change it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from conftest import digest_folder
from twinsim.model.layout import SEQUENCE_FORMAT_VERSION
from twinsim.sequence import open_sequence, validate_sequence

V1 = Path(__file__).parent / "data" / "v1_sequence"


@pytest.fixture
def v1(tmp_path) -> Path:
    return Path(shutil.copytree(V1, tmp_path / "v1"))


def test_a_format_1_sequence_reads_as_one_robot_with_kind_named_streams(v1):
    on_disk = json.loads((v1 / "metadata.json").read_text())
    assert on_disk["format_version"] == 1 and on_disk["streams"]["ev0"]["type"] == "events"
    seq = open_sequence(v1)
    assert seq.robots == ["robot"] and seq.for_robot() is seq
    assert seq.stream_info("ev0")["type"] == "event_camera"
    assert {seq.stream_info(s)["robot"] for s in seq.streams} == {"robot"}
    events = seq.events("ev0")
    assert len(events.t_ns) == on_disk["streams"]["ev0"]["count"] > 0
    assert seq.scene.robot.name == "robot" and seq.scene.robot.kind == "drone"
    assert {s.robot for s in seq.scene.sensors} == {"robot"}
    assert validate_sequence(v1).ok


#: what the MuJoCo cameras draw: round geoms are drawn finer since the fixture was written
#: (`engine/round_meshes.py`), so these differ where a round surface is in view
RENDERED = ("cam0/rgb/", "cam0/depth/", "cam0/instance/", "cam0/semantic/", "cam0/boxes", "ev0/")


def test_a_format_1_sequence_replays_byte_identically_as_format_2(v1, tmp_path, gl_backend):
    """Every stream but the camera images (and what is drawn from them) is byte-identical; the
    images are the same views, differing only on the round surfaces drawn finer now."""
    from twinsim.replay import replay

    twin = replay(v1, tmp_path / "twin", rerender=True)
    want, got = digest_folder(v1), digest_folder(twin)
    streams = [k for k in want if k not in ("metadata.json", "scene.json")]
    assert set(streams) <= set(got)
    exact = [k for k in streams if not k.startswith(RENDERED)]
    assert {k: got[k] for k in exact} == {k: want[k] for k in exact}
    for name in (k for k in streams if k.startswith("cam0/depth/")):
        a, b = np.load(v1 / name), np.load(twin / name)
        assert a.shape == b.shape and np.mean(np.abs(a - b) < 1e-4) > 0.9, name
    assert json.loads((twin / "metadata.json").read_text())["format_version"] == (
        SEQUENCE_FORMAT_VERSION
    )
    assert validate_sequence(twin).ok
    assert digest_folder(V1) == want  # the source is unchanged


def test_a_format_1_sequence_exports(v1, tmp_path):
    from twinsim.export import export_sequence

    tum = export_sequence(v1, "tum", tmp_path / "tum")
    rows = np.loadtxt(tum / "groundtruth.txt")
    _, T = open_sequence(v1).groundtruth("groundtruth_cam0")
    assert np.allclose(rows[:, 1:4], T[:, :3, 3], atol=1e-9)
    bag = export_sequence(v1, "rosbag2", tmp_path / "bag")
    assert any(bag.rglob("*.mcap"))
