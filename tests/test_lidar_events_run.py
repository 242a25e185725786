"""A tiny run with a LiDAR and an event camera: valid, readable, labelled, byte-identical."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from conftest import SENSOR_OVERRIDES, digest_folder, structural_problems
from twinsim.errors import SequenceError
from twinsim.scene.vocabulary import SEMANTIC_CLASSES
from twinsim.sequence import open_sequence, summarize_sequence, validate_sequence
from twinsim.sequence.scans import EVENT_DTYPE, POINT_DTYPE, LidarScan, points_path

DURATION_S = 0.25  # steps [240, 300): sweeps at 240, 264 and 288, the last cut short


def _record(out):
    from twinsim.config import load_config
    from twinsim.sim import run

    return run(load_config("tiny", SENSOR_OVERRIDES, seed=5, duration_s=DURATION_S), out)


@pytest.fixture(scope="module")
def runs(tmp_path_factory, gl_backend):
    base = tmp_path_factory.mktemp("sensors")
    return _record(base / "a"), _record(base / "b")


def test_run_is_valid_and_byte_identical_on_rerun(runs):
    a, b = runs
    report = validate_sequence(a)
    assert report.ok, report.problems
    assert report.checked["scans"] == 3 and report.checked["events"] > 0
    assert digest_folder(a) == digest_folder(b)


def test_lidar_stream_follows_the_contract(runs):
    seq = open_sequence(runs[0])
    info = seq.stream_info("lidar0")
    assert info["type"] == "lidar" and info["rate_hz"] == 10 and info["rings"] == 6
    lidar = seq.lidar("lidar0")
    assert len(lidar) == 3 and lidar.t_ns.tolist() == [1_000_000_000, 1_100_000_000, 1_200_000_000]
    step_ns = 1_000_000_000 / 240
    t_gt, T_gt = seq.groundtruth()
    T_body_lidar = np.array(info["T_body_sensor"])
    for scan in lidar:
        assert scan.points.dtype == np.float32 and scan.points.shape == (len(scan), 3)
        assert scan.t_offset_ns.dtype == np.int64 and scan.ring.dtype == np.uint16
        assert scan.instance.dtype == np.uint32 and scan.semantic.dtype == np.uint16
        assert scan.dynamic.dtype == bool and scan.intensity.dtype == np.float32
        row = int(np.flatnonzero(t_gt == scan.t_ns)[0])
        np.testing.assert_allclose(scan.T_world_lidar, T_gt[row] @ T_body_lidar, atol=1e-9)
    full, cut = lidar[0], lidar[-1]
    assert len(full) == 6 * 240  # indoors every ray returns
    assert full.t_offset_ns.max() == round(23 * step_ns)  # stamps span the whole sweep
    assert cut.t_offset_ns.max() == round(11 * step_ns)  # the run ended after 12 sectors
    assert len(cut) == 6 * 120


def test_lidar_labels_agree_with_the_instance_table(runs):
    seq = open_sequence(runs[0])
    table = {row["instance_id"]: row for row in seq.metadata["instances"]}
    scans = list(seq.lidar("lidar0"))
    instance = np.concatenate([s.instance for s in scans])
    semantic = np.concatenate([s.semantic for s in scans])
    dynamic = np.concatenate([s.dynamic for s in scans])
    assert (instance > 0).all()
    cls = np.array([SEMANTIC_CLASSES.index(table[int(i)]["semantic_class"]) for i in instance])
    np.testing.assert_array_equal(semantic, cls)
    np.testing.assert_array_equal(dynamic, [table[int(i)]["dynamic"] for i in instance])


def test_event_stream_follows_the_contract(runs):
    seq = open_sequence(runs[0])
    events = seq.events("ev0")
    assert seq.stream_info("ev0")["type"] == "event_camera"
    assert (events.width, events.height) == (48, 36) and events.K.shape == (3, 3)
    assert events.x.dtype == np.uint16 and events.y.dtype == np.uint16
    assert events.t_ns.dtype == np.int64 and events.polarity.dtype == np.int8
    assert (np.diff(events.t_ns) >= 0).all()
    assert events.t_ns[0] > 1_000_000_000 and events.t_ns[-1] <= 1_250_000_000
    assert set(np.unique(events.polarity)) == {-1, 1}  # the drone moves: edges both ways
    assert events.x.max() < 48 and events.y.max() < 36
    assert seq.metadata["streams"]["ev0"]["count"] == len(events)
    with pytest.raises(SequenceError, match="not a LiDAR stream"):
        seq.lidar("ev0")
    with pytest.raises(SequenceError, match="not an event stream"):
        seq.events("lidar0")
    streams = summarize_sequence(runs[0]).streams
    assert streams["lidar0"]["resolution"] == "6 rings x 240"
    assert streams["ev0"]["resolution"] == "48x36"


def test_validate_names_broken_lidar_and_event_files(runs, tmp_path):
    broken = tmp_path / "broken"
    shutil.copytree(runs[0], broken)
    scan_file = points_path(broken / "lidar0", 1)
    rec = np.load(scan_file)
    rec["ring"][0] = 6
    rec["intensity"][1] = 1.5
    np.save(scan_file, rec.astype(POINT_DTYPE))
    (broken / "lidar0" / "points" / "000009.npy").write_bytes(scan_file.read_bytes())
    events = np.load(broken / "ev0" / "events.npy")
    events["t_ns"][[0, 1]] = events["t_ns"][[1, 0]] + np.array([0, 1])
    events["polarity"][2] = 0
    np.save(broken / "ev0" / "events.npy", events.astype(EVENT_DTYPE))
    problems = "\n".join(structural_problems(broken))
    assert "lidar0/points/000001.npy: ring ids not below rings = 6" in problems
    assert "lidar0/points/000001.npy: intensity outside [0, 1]" in problems
    assert "lidar0/points/000009.npy: not listed in lidar0/scans.csv" in problems
    assert "ev0/events.npy record 1: t_ns" in problems
    assert "ev0/events.npy: polarity must be +1 or -1" in problems


def _writer_metadata() -> tuple[str, dict]:
    from conftest import box_room_scene

    scene = box_room_scene()
    metadata = {
        "physics_hz": 240,
        "recorded_steps": [240, 288],
        "classes": list(SEMANTIC_CLASSES),
        "instances": scene.instance_table(),
        "streams": {
            "lidar0": {"type": "lidar", "rate_hz": 10, "rings": 4},
            "ev0": {
                "type": "event_camera",
                "rate_hz": 240,
                "width": 8,
                "height": 6,
                "K": np.eye(3),
            },
        },
    }
    return scene.to_json(), metadata


def _scan(index: int, rng) -> LidarScan:
    n = 50
    dirs = rng.normal(size=(n, 3))
    rng_m = rng.uniform(0.5, 20.0, n).astype(np.float32)
    points = (dirs / np.linalg.norm(dirs, axis=1, keepdims=True) * rng_m[:, None]).astype(
        np.float32
    )
    T = np.eye(4)
    T[:3, 3] = rng.normal(size=3)
    return LidarScan(
        index=index,
        t_ns=1_000_000_000 + index * 100_000_000,
        T_world_lidar=T,
        points=points,
        t_offset_ns=np.sort(rng.integers(0, 95_833_334, n)),
        ring=rng.integers(0, 4, n).astype(np.uint16),
        intensity=rng.uniform(0, 1, n).astype(np.float32),
        range=np.linalg.norm(points.astype(np.float64), axis=1).astype(np.float32),
        instance=rng.integers(0, 9, n).astype(np.uint32),
        semantic=rng.integers(0, 5, n).astype(np.uint16),
        dynamic=rng.integers(0, 2, n).astype(bool),
    )


def test_writer_round_trips_scans_and_events_exactly(tmp_path):
    from twinsim.sequence import SequenceWriter

    rng = np.random.default_rng(9)
    scans = [_scan(i, rng) for i in range(2)]
    t = np.sort(rng.integers(1_000_000_001, 1_199_999_999, 40))
    x, y = rng.integers(0, 8, 40), rng.integers(0, 6, 40)
    pol = rng.choice([-1, 1], 40)
    with SequenceWriter(tmp_path / "s", *_writer_metadata()) as writer:
        with pytest.raises(ValueError, match="has type 'lidar': use add_lidar"):
            writer.add_table("lidar0", ["a"])
        writer.add_lidar("lidar0")
        writer.add_events("ev0", 8, 6)
        with pytest.raises(ValueError, match="scan index 1, expected 0"):
            writer.write_scan("lidar0", scans[1])
        with pytest.raises(ValueError, match="copied line is not scan 0"):
            writer.write_scan("lidar0", scans[0], scan_line=f"1,{scans[0].t_ns},0,0,0,0,0,0,1")
        for scan in scans:
            writer.write_scan("lidar0", scan)
        writer.append_events("ev0", x[:20], y[:20], t[:20], pol[:20])
        with pytest.raises(ValueError, match="must not decrease"):
            writer.append_events("ev0", x[:1], y[:1], t[:1], pol[:1])
        with pytest.raises(ValueError, match="outside 8x6"):
            writer.append_events("ev0", np.array([8]), y[:1], t[-1:], pol[:1])
        with pytest.raises(ValueError, match=r"\+1 or -1"):
            writer.append_events("ev0", x[:1], y[:1], t[-1:], np.array([0]))
        writer.append_events("ev0", x[20:], y[20:], t[20:], pol[20:])
    report = validate_sequence(tmp_path / "s")
    assert report.ok, report.problems
    seq = open_sequence(tmp_path / "s")
    for scan, back in zip(scans, seq.lidar("lidar0"), strict=True):
        assert back.t_ns == scan.t_ns and back.index == scan.index
        np.testing.assert_allclose(back.T_world_lidar, scan.T_world_lidar, atol=1e-15)
        for field in ("points", "t_offset_ns", "ring", "intensity", "range", "instance"):
            np.testing.assert_array_equal(getattr(back, field), getattr(scan, field))
        np.testing.assert_array_equal(back.semantic, scan.semantic)
        np.testing.assert_array_equal(back.dynamic, scan.dynamic)
    events = seq.events("ev0")
    np.testing.assert_array_equal(events.t_ns, t)
    np.testing.assert_array_equal(events.x, x)
    np.testing.assert_array_equal(events.y, y)
    np.testing.assert_array_equal(events.polarity, pol)
    assert seq.metadata["streams"]["ev0"]["count"] == 40
    assert seq.metadata["streams"]["lidar0"]["count"] == 2
