"""Every export format and the scene graph on a drive with CARLA-Loc's rig (shrunk): stereo
cameras, stereo event cameras, the HDL-32E, IMU and GNSS on the car in a small town with traffic.

Each format's own reader checks live in its tests; here every format must take a town drive
and write what its rig has (cameras, LiDAR, GNSS, vehicles and walkers as instances).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from twinsim.export.registry import EXPORT_MARKER, export_sequence
from twinsim.registries import FORMATS
from twinsim.sequence import open_sequence

#: a variant of a capability the everyday tier checks elsewhere (`make test` runs it)
pytestmark = pytest.mark.slow

RIG = [
    "scene.blocks_x=2",
    "scene.blocks_y=2",
    "scene.block_size_m=[22.0,28.0]",
    "scene.texture_size=32",
    "traffic.vehicles=8",
    "traffic.walkers=6",
    *(
        f"sensors.{cam}.{key}={value}"
        for cam in ("cam_left", "cam_right", "event_left", "event_right")
        for key, value in (("width", 64), ("height", 36))
    ),
    "sensors.event_left.rate_hz=20",
    "sensors.event_right.rate_hz=20",
]


@pytest.fixture(scope="module")
def drive(gl_backend, tmp_path_factory):
    from twinsim.config import load_config
    from twinsim.sim import run

    cfg = load_config("carla_loc", [*RIG, "scene.preset=small_town"], seed=1, duration_s=1.0)
    return run(cfg, tmp_path_factory.mktemp("town_drive") / "seq")


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_every_format_exports_a_town_drive(drive, tmp_path, fmt):
    out = tmp_path / fmt
    export_sequence(drive, fmt, out)
    marker = json.loads((out / EXPORT_MARKER).read_text())
    assert marker["format"] == fmt
    files = [p for p in out.rglob("*") if p.is_file() and p.name != EXPORT_MARKER]
    assert files and sum(p.stat().st_size for p in files) > 1000


def test_the_drive_has_the_rig_and_the_traffic_the_exports_carry(drive, tmp_path):
    seq = open_sequence(drive)
    types = {info["type"] for info in seq.metadata["streams"].values()}
    assert {"camera", "event_camera", "lidar", "imu", "gnss"} <= types
    assert seq.metadata["traffic"]["vehicles"]["placed"] > 0
    export_sequence(drive, "kitti", tmp_path / "kitti")
    oxts = next((tmp_path / "kitti").rglob("oxts.txt")).read_text().splitlines()
    lat = np.array([float(line.split()[0]) for line in oxts])
    assert len(lat) == 10 and np.all(np.abs(lat - 49.0) < 0.01)  # the datum's latitude
    scans = list((tmp_path / "kitti").rglob("velodyne/*.bin"))
    assert len(scans) == 20  # 1 s of the 20 Hz HDL-32E


def test_the_scene_graph_of_the_drive_has_vehicles_and_walkers(drive, tmp_path):
    from twinsim.dsg import sequence_graph

    graph = sequence_graph(drive)
    kinds = [a["kind"] for a in graph.metadata.get()["agents"]]
    assert kinds.count("robot") == 1 and "vehicle" in kinds and "person" in kinds
    assert graph.metadata.get()["rooms_from"] == "roads"
