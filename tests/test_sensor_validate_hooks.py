"""`validate_sequence` hands every sensor stream to its kind's `validate_stream` hook.

The toy kind below records its own file layout (an index table plus one `.npy` per sample)
through the writer's `add_files` / `write_file` and checks it in its own hook, registered from
this module alone: a new kind's files are written and validated with no edit in `sequence/`.
The built-in kinds' hooks still catch the corruptions of their layouts (cases not covered by
test_sequence_format.py and test_lidar_events_run.py).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import ClassVar, Literal

import numpy as np
import pytest

from conftest import structural_problems
from twinsim.errors import SequenceError
from twinsim.geometry import pose_to_T
from twinsim.model.sensors import SensorSpec
from twinsim.registries import SENSORS
from twinsim.sensors.base import SensorConfig, SensorKind, SensorRecorder, base_metadata
from twinsim.sensors.rig import body_mounted
from twinsim.sequence import SequenceWriter, open_sequence, validate_sequence
from twinsim.sequence.checksums import file_crc32
from twinsim.sequence.images import read_npy
from twinsim.sequence.scans import EVENTS_FILE, LidarScan, points_path
from twinsim.sequence.stream_checks import StreamCheck, check_table, check_unlisted

ROTATIONS = "rotations"  # the toy's folder of one R_world_sensor .npy per sample
V1_SEQUENCE = Path(__file__).parent / "data" / "v1_sequence"


def _rotation_file(stream_dir: Path, index: int) -> Path:
    return stream_dir / ROTATIONS / f"{index:06d}.npy"


def _crc(seq: Path, index: int) -> str:
    """The CRC-32 of one rotation file, as checksums.csv writes it."""
    return f"{file_crc32(_rotation_file(seq / 'att0', index))[0]:08x}"


class AttitudeConfig(SensorConfig):
    kind: Literal["attitude"] = "attitude"
    rate_hz: int = 60
    pos: tuple[float, float, float] = (0.0, 0.0, 0.0)
    rpy_deg: tuple[float, float, float] = (0.0, 0.0, 30.0)


class AttitudeRecorder(SensorRecorder):
    """The sensor's orientation in the world, one 3×3 float64 file a sample, listed in data.csv.

    A stream of its own files: `add_files` with an index (data.csv, whose rows `append` writes
    and the writer counts), each rotation queued on the writer's I/O pool by `write_file`.
    """

    def __init__(self, sensor: SensorSpec, ctx) -> None:
        self.sensor, self.ctx = sensor, ctx
        self.period = ctx.physics_hz // sensor.rate_hz
        self.R_body_sensor = pose_to_T(sensor.pos, sensor.quat)[:3, :3]
        ctx.writer.add_files(sensor.name, index_columns=("sample",))
        self.samples = 0

    def before_step(self, k, t_ns, q) -> None:
        if k % self.period == 0:
            R = self.ctx.world.T_world_body()[:3, :3] @ self.R_body_sensor
            self.ctx.writer.write_file(self.sensor.name, _rotation_file(Path(), self.samples), R)
            self.ctx.writer.append(self.sensor.name, t_ns, np.array([self.samples]))
            self.samples += 1


class Attitude(SensorKind):
    type: ClassVar[str] = "attitude"
    config_model = AttitudeConfig

    def spec(self, name, cfg) -> SensorSpec:
        return SensorSpec(name=name, type="attitude", **body_mounted(cfg))

    def mounts(self, sensor):
        return ()

    def metadata(self, sensor) -> dict:
        return base_metadata(sensor) | {"rotations": "R_world_sensor, float64 (3, 3) per sample"}

    def recorder(self, sensor, ctx) -> AttitudeRecorder:
        return AttitudeRecorder(sensor, ctx)

    def validate_stream(self, check: StreamCheck) -> None:
        """The index table on the clock, then every rotation file it lists, decoded."""
        table = check_table(check, ("sample",))
        if table is None:
            return
        n = len(table.ints)
        if not np.array_equal(table.values[:, 0], np.arange(n)):
            check.problems.append(f"{check.name}/data.csv: samples are not numbered 0..{n - 1}")
        found = []
        for index in range(n):
            label = _rotation_file(Path(check.name), index).as_posix()
            try:
                R = read_npy(_rotation_file(check.folder, index), label)
            except SequenceError as exc:
                found.append(str(exc))
                continue
            if R.dtype != np.float64 or R.shape != (3, 3):
                found.append(f"{label}: {R.dtype}{R.shape}, expected float64(3, 3)")
            elif not (np.allclose(R @ R.T, np.eye(3), atol=1e-9) and np.linalg.det(R) > 0):
                found.append(f"{label}: not a rotation matrix")
        check.report(found)
        listed = {_rotation_file(Path(), i).name for i in range(n)}
        check_unlisted(check, check.folder / ROTATIONS, listed, f"{check.name}/data.csv")
        check.count("files", n)


@pytest.fixture(scope="module")
def attitude_sequence(tmp_path_factory, gl_backend) -> Path:
    from twinsim.config import load_config
    from twinsim.sim import run

    with SENSORS.registered("attitude", Attitude()):
        cfg = load_config("tiny", ["sensors.att0.kind=attitude"], duration_s=0.5)
        return run(cfg, tmp_path_factory.mktemp("attitude") / "seq")


@pytest.fixture
def attitude_kind():
    with SENSORS.registered("attitude", Attitude()):
        yield


def _broken(source: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(source, tmp_path / "broken"))


def test_a_toy_kind_records_its_own_layout_of_what_it_measures(attitude_sequence, attitude_kind):
    seq = open_sequence(attitude_sequence)
    index = seq.table("att0")
    t_gt, T_gt = seq.groundtruth()
    assert np.array_equal(index["t_ns"], t_gt)  # both at 60 Hz, on the same steps
    R_body_sensor = np.array(seq.stream_info("att0")["T_body_sensor"])[:3, :3]
    for i, T in enumerate(T_gt):
        R = np.load(_rotation_file(attitude_sequence / "att0", i))
        np.testing.assert_allclose(R, T[:3, :3] @ R_body_sensor, atol=1e-12)
    report = validate_sequence(attitude_sequence)
    assert report.ok, report.problems
    # four images a camera frame, the rotation files the hook counted, the robot's contacts.npy
    assert report.checked["files"] == 4 * report.checked["frames"] + len(T_gt) + 1


def test_the_toy_kinds_hook_names_its_corrupt_files(attitude_sequence, attitude_kind, tmp_path):
    broken = _broken(attitude_sequence, tmp_path)
    stream = broken / "att0"
    np.save(_rotation_file(stream, 3), 2.0 * np.eye(3))
    file = _rotation_file(stream, 5)
    file.write_bytes(file.read_bytes()[:-30])
    _rotation_file(stream, 7).unlink()
    shutil.copy(_rotation_file(stream, 0), stream / ROTATIONS / "999999.npy")
    problems = structural_problems(broken)
    assert problems[0] == "att0/rotations/000003.npy: not a rotation matrix"
    assert problems[1].startswith("att0/rotations/000005.npy: cannot be read (")
    assert problems[2:] == [
        "att0/rotations/000007.npy: missing",
        "att0/rotations/999999.npy: not listed in att0/data.csv",
    ]


def test_without_its_kind_the_toy_stream_is_only_a_table(attitude_sequence, tmp_path):
    broken = _broken(attitude_sequence, tmp_path)
    np.save(_rotation_file(broken / "att0", 3), 2.0 * np.eye(3))
    assert "attitude" not in SENSORS
    # data.csv is a valid table and nobody knows its files, but the checksums still catch it
    assert structural_problems(broken) == []
    assert validate_sequence(broken).problems == [
        f"att0/rotations/000003.npy: content changed (CRC-32 {_crc(broken, 3)}, "
        f"checksums.csv says {_crc(attitude_sequence, 3)})"
    ]


# --- built-in kinds: corruptions of their own layouts --------------------------------------


def _lidar_and_events(path: Path) -> Path:
    """A writer-made sequence with a 4-ring LiDAR (2 sweeps) and an 8×6 event camera, in the
    world and instance table of the stored format-1 sequence."""
    v1 = json.loads((V1_SEQUENCE / "metadata.json").read_text(encoding="utf-8"))
    ids = [0, *(row["instance_id"] for row in v1["instances"])]
    metadata = {
        "physics_hz": 240,
        "recorded_steps": [240, 288],
        "classes": v1["classes"],
        "instances": v1["instances"],
        "streams": {
            "lidar0": {"type": "lidar", "rate_hz": 10, "rings": 4},
            "ev0": {"type": "event_camera", "rate_hz": 240, "width": 8, "height": 6},
        },
    }
    rng = np.random.default_rng(4)
    scene_json = (V1_SEQUENCE / "scene.json").read_text(encoding="utf-8")
    with SequenceWriter(path, scene_json, metadata) as writer:
        writer.add_lidar("lidar0")
        writer.add_events("ev0", 8, 6)
        for index in range(2):
            dirs = rng.normal(size=(30, 3))
            dist = rng.uniform(0.5, 5.0, 30)
            points = dirs / np.linalg.norm(dirs, axis=1, keepdims=True) * dist[:, None]
            scan = LidarScan(
                index=index,
                t_ns=1_000_000_000 + index * 100_000_000,
                T_world_lidar=np.eye(4),
                points=points.astype(np.float32),
                t_offset_ns=np.sort(rng.integers(0, 90_000_000, 30)),
                ring=rng.integers(0, 4, 30).astype(np.uint16),
                intensity=rng.uniform(0, 1, 30).astype(np.float32),
                range=np.linalg.norm(points.astype(np.float32), axis=1).astype(np.float32),
                instance=rng.choice(ids, 30).astype(np.uint32),
                semantic=rng.integers(0, 5, 30).astype(np.uint16),
                dynamic=np.zeros(30, bool),
            )
            writer.write_scan("lidar0", scan)
        t = np.sort(rng.integers(1_000_000_001, 1_199_999_999, 20))
        x, y, pol = rng.integers(0, 8, 20), rng.integers(0, 6, 20), rng.choice([-1, 1], 20)
        writer.append_events("ev0", x, y, t, pol)
    return path


@pytest.fixture(scope="module")
def sensors_sequence(tmp_path_factory) -> Path:
    path = _lidar_and_events(tmp_path_factory.mktemp("sensors") / "seq")
    report = validate_sequence(path)
    assert report.ok, report.problems
    assert report.checked["scans"] == 2 and report.checked["events"] == 20
    return path


def test_lidar_hook_names_a_truncated_and_a_missing_points_file(sensors_sequence, tmp_path):
    broken = _broken(sensors_sequence, tmp_path)
    file = points_path(broken / "lidar0", 0)
    file.write_bytes(file.read_bytes()[:-7])
    points_path(broken / "lidar0", 1).unlink()
    problems = structural_problems(broken)
    assert len(problems) == 2
    assert problems[0].startswith("lidar0/points/000000.npy: cannot be read (")
    assert problems[1] == "lidar0/points/000001.npy: missing"


def test_event_hook_names_events_outside_the_image_and_the_recording(sensors_sequence, tmp_path):
    broken = _broken(sensors_sequence, tmp_path)
    events = np.load(broken / "ev0" / EVENTS_FILE)
    events["x"][4] = 8
    events["t_ns"][-1] = 1_200_000_000  # step 288 = k_end: after the recording
    np.save(broken / "ev0" / EVENTS_FILE, events)
    assert structural_problems(broken) == [
        "ev0/events.npy: event pixels outside 8x6",
        "ev0/events.npy: event times outside the recording [1000000000, 1200000000)",
    ]


def test_event_hook_checks_the_count_against_the_metadata(sensors_sequence, tmp_path):
    broken = _broken(sensors_sequence, tmp_path)
    events = np.load(broken / "ev0" / EVENTS_FILE)
    np.save(broken / "ev0" / EVENTS_FILE, events[:-3])
    assert structural_problems(broken) == ["ev0: 17 events but metadata.json records count 20"]


def test_the_stored_format_1_sequence_validates_through_the_kinds_hooks():
    report = validate_sequence(V1_SEQUENCE)
    assert report.ok, report.problems
    assert report.checked["frames"] == 8 and report.checked["scans"] == 3
    assert report.checked["events"] > 0
