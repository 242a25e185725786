"""A twin can add a LiDAR and an event camera: their streams equal those of a run recorded
with them from the start, and every shared stream stays byte-identical to the source."""

from __future__ import annotations

import pytest

from conftest import digest_folder
from twinsim.config import load_config
from twinsim.errors import ConfigError
from twinsim.sequence import open_sequence, validate_sequence
from twinsim.sim import run

BASE = [
    "people.count=2",
    "flying_objects.count=1",
    "cameras.cam0.width=32",
    "cameras.cam0.height=24",
]
LIDAR = {"model": "custom", "elevations_deg": [-10.0, 0.0, 10.0], "columns": 240}
EVENTS = {"width": 32, "height": 24, "rate_hz": 120}


def _lidar_overrides() -> list[str]:
    return [
        "lidars.lidar0.model=custom",
        "lidars.lidar0.elevations_deg=[-10.0, 0.0, 10.0]",
        "lidars.lidar0.columns=240",
        "event_cameras.ev0.width=32",
        "event_cameras.ev0.height=24",
        "event_cameras.ev0.rate_hz=120",
    ]


@pytest.fixture(scope="module")
def runs(tmp_path_factory, gl_backend):
    root = tmp_path_factory.mktemp("twin_sensors")
    plain = run(load_config("tiny", BASE, seed=5, duration_s=0.6), root / "plain")
    full = run(
        load_config("tiny", BASE + _lidar_overrides(), seed=5, duration_s=0.6), root / "full"
    )
    return plain, full


@pytest.mark.slow
def test_twin_adds_lidar_and_event_camera_as_if_recorded(runs, tmp_path):
    from twinsim.replay import Variations, replay

    plain, full = runs
    twin = replay(
        plain,
        tmp_path / "twin",
        Variations(lidars={"lidar0": LIDAR}, event_cameras={"ev0": EVENTS}),
    )
    assert validate_sequence(twin).ok
    seq = open_sequence(twin)
    assert len(seq.lidar("lidar0")) > 0 and len(seq.events("ev0").t_ns) > 0
    recorded, twinned, source = digest_folder(full), digest_folder(twin), digest_folder(plain)
    added = [p for p in recorded if p.startswith(("lidar0/", "ev0/"))]
    assert added and all(recorded[p] == twinned.get(p) for p in added)
    shared = [p for p in source if p not in ("metadata.json", "scene.json", "checksums.csv")]
    assert all(source[p] == twinned[p] for p in shared)


def test_twin_sensor_with_a_bad_field_is_refused(runs, tmp_path):
    from twinsim.replay import Variations, replay

    plain, _ = runs
    with pytest.raises(ConfigError, match=r"'lidars\.lidar0\.colums'; allowed here: .*columns"):
        replay(plain, tmp_path / "bad", Variations(lidars={"lidar0": {"colums": 10}}))
    assert not (tmp_path / "bad").exists() or not any((tmp_path / "bad").iterdir())
