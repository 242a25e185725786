"""The sequence folder format: exact round trips, determinism, and precise validation failures."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import cv2
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from conftest import make_robot, structural_problems
from twinsim.errors import OutputFolderError, SequenceError
from twinsim.model.layout import frame_path
from twinsim.model.scene import GeomSpec, ObjectSpec, SceneSpec
from twinsim.replay.frame_source import frame_source
from twinsim.scene.vocabulary import CLASS_ID, SEMANTIC_CLASSES
from twinsim.sequence import (
    CameraFrame,
    SequenceWriter,
    check_output_folder,
    expected_count,
    open_sequence,
    pose_to_row,
    step_to_ns,
    stream_steps,
    summarize_sequence,
    validate_sequence,
)
from twinsim.sequence.frames import CopiedFrame

PHYSICS_HZ = 240
STEPS = (241, 281)  # starts off every grid, so the first sample of each stream is rounded up
H, W = 12, 16
IMU_COLUMNS = ("gyro_x", "gyro_y", "gyro_z", "accel_x", "accel_y", "accel_z")
POSE_COLUMNS = ("x", "y", "z", "qx", "qy", "qz", "qw")
RATES = {"cam0": 30, "imu0": 240, "groundtruth_body": 60}
K = [[10.0, 0.0, 7.5], [0.0, 10.0, 5.5], [0.0, 0.0, 1.0]]


def _scene() -> SceneSpec:
    geom = (GeomSpec(type="box", size=(0.5, 0.5, 0.5), material="m"),)
    objects = tuple(
        ObjectSpec(
            instance_id=i, name=f"{cls}_{i}", semantic_class=cls, pos=(i, 0.0, 0.5), geoms=geom
        )
        for i, cls in ((1, "wall"), (2, "chair"), (3, "ball"))
    )
    robot = make_robot(start=(0.0, 0.0, 1.0))
    return SceneSpec(
        seed=7,
        wall_height=2.5,
        bounds_min=(0.0, 0.0, 0.0),
        bounds_max=(4.0, 4.0, 2.5),
        rooms=(),
        doors=(),
        objects=objects,
        textures=(),
        materials=(),
        lights=(),
        robots=(robot,),
    )


def _metadata(scene: SceneSpec) -> dict:
    return {
        "seed": 7,
        "physics_hz": PHYSICS_HZ,
        "recorded_steps": list(STEPS),
        "classes": list(SEMANTIC_CLASSES),
        "instances": scene.instance_table(),
        "streams": {
            "cam0": {"type": "camera", "rate_hz": 30, "width": W, "height": H, "K": K},
            "imu0": {"type": "imu", "rate_hz": 240},
            "groundtruth_body": {"type": "pose", "rate_hz": 60},
        },
    }


def _times(stream: str) -> list[int]:
    steps = stream_steps(*STEPS, PHYSICS_HZ // RATES[stream])
    return [step_to_ns(k, PHYSICS_HZ) for k in steps]


class Data:
    """Deterministic synthetic content of the test sequence, including awkward float64 values."""

    def __init__(self) -> None:
        rng = np.random.default_rng(42)
        n_imu = len(_times("imu0"))
        self.imu = rng.normal(size=(n_imu, 6)) * 10.0 ** rng.integers(-8, 8, size=(n_imu, 6))
        self.imu[0] = [0.1, 1 / 3, -0.0, 5e-324, 1e308, 2.0**-1074 * 3]
        self.poses = []
        for _ in _times("groundtruth_body"):
            T = np.eye(4)
            T[:3, :3] = Rotation.random(random_state=rng).as_matrix()
            T[:3, 3] = rng.normal(size=3)
            self.poses.append(T)
        self.frames = []
        for i, t_ns in enumerate(_times("cam0")):
            T = np.eye(4)
            T[:3, :3] = Rotation.random(random_state=rng).as_matrix()
            T[:3, 3] = rng.normal(size=3)
            depth = rng.uniform(0.1, 9.0, size=(H, W)).astype(np.float32)
            depth[0, :3] = 0.0
            instance = rng.integers(0, 4, size=(H, W)).astype(np.uint16)
            class_of = np.array([0, CLASS_ID["wall"], CLASS_ID["chair"], CLASS_ID["ball"]])
            boxes = [
                {
                    "instance_id": 2,
                    "semantic_class": "chair",
                    "tight": [1, 2, 9, 10],
                    "loose": [0, 1, 12, 11],
                    "obb": {
                        "center": [0.1, 1 / 3, 2.0 + i],
                        "half_extents": [0.25, 0.25, 0.4],
                        "rotation": np.eye(3).tolist(),
                    },
                },
                {"instance_id": 3, "semantic_class": "ball", "tight": [4, 4, 5, 5], "loose": None},
            ]
            self.frames.append(
                CameraFrame(
                    index=i,
                    t_ns=t_ns,
                    rgb=rng.integers(0, 256, size=(H, W, 3), dtype=np.uint8),
                    depth=depth,
                    instance=instance,
                    semantic=class_of[instance].astype(np.uint16),
                    T_world_cam=T,
                    boxes=boxes,
                )
            )


def _write(path: Path, data: Data, fail_after_frames: int | None = None) -> None:
    scene = _scene()
    with SequenceWriter(path, scene.to_json(), _metadata(scene)) as writer:
        writer.add_camera("cam0")
        writer.add_table("imu0", IMU_COLUMNS)
        writer.add_table("groundtruth_body", POSE_COLUMNS)
        for t_ns, row in zip(_times("imu0"), data.imu, strict=True):
            writer.append("imu0", t_ns, row)
        for t_ns, T in zip(_times("groundtruth_body"), data.poses, strict=True):
            writer.append("groundtruth_body", t_ns, pose_to_row(T))
        for frame in data.frames:
            if frame.index == fail_after_frames:
                raise RuntimeError("simulated crash")
            writer.write_frame("cam0", frame)
        writer.close({"versions": {"twinsim": "test"}})


@pytest.fixture(scope="module")
def data() -> Data:
    return Data()


@pytest.fixture(scope="module")
def written(tmp_path_factory, data) -> Path:
    path = tmp_path_factory.mktemp("seq") / "run"
    _write(path, data)
    return path


@pytest.fixture
def seq_copy(written, tmp_path) -> Path:
    """A private copy of the written sequence that a test may damage."""
    return Path(shutil.copytree(written, tmp_path / "copy"))


def _problems(path: Path) -> list[str]:
    """The decoding checks' problems (a damaged file also trips its checksum)."""
    assert not validate_sequence(path).ok
    return structural_problems(path)


def _any(problems: list[str], pattern: str) -> bool:
    return any(re.search(pattern, p) for p in problems)


# --- clock -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("k", "hz", "t_ns"),
    [(0, 240, 0), (1, 240, 4_166_667), (2, 240, 8_333_333), (240, 240, 10**9), (3, 7, 428_571_429)],
)
def test_step_to_ns_rounds_in_integers(k, hz, t_ns):
    assert step_to_ns(k, hz) == t_ns


@pytest.mark.parametrize(
    ("k_start", "k_end", "period", "count"),
    [(240, 720, 1, 480), (240, 720, 8, 60), (241, 281, 8, 5), (241, 281, 4, 10), (5, 5, 2, 0)],
)
def test_expected_count(k_start, k_end, period, count):
    assert expected_count(k_start, k_end, period) == count
    assert all(k % period == 0 for k in stream_steps(k_start, k_end, period))


# --- round trip ------------------------------------------------------------------------------


def test_round_trip_is_exact(written, data):
    seq = open_sequence(written)
    assert seq.metadata["status"] == "complete"
    assert seq.metadata["versions"] == {"twinsim": "test"}
    assert {n: seq.metadata["streams"][n]["count"] for n in RATES} == {
        "cam0": 5,
        "imu0": 40,
        "groundtruth_body": 10,
    }
    assert set(seq.streams) == set(RATES)
    assert seq.scene == _scene()

    imu = seq.imu("imu0")
    assert imu.t_ns.dtype == np.int64 and imu.t_ns.tolist() == _times("imu0")
    stacked = np.hstack([imu.gyro, imu.accel])
    assert stacked.dtype == np.float64
    assert np.array_equal(stacked.view(np.uint64), data.imu.view(np.uint64))  # bit-exact

    t_ns, poses = seq.groundtruth()
    assert t_ns.tolist() == _times("groundtruth_body")
    np.testing.assert_allclose(poses, np.stack(data.poses), atol=1e-12)
    table = seq.table("groundtruth_body")
    rows = np.stack([pose_to_row(T) for T in data.poses])
    got = np.stack([table[c] for c in POSE_COLUMNS], axis=1)
    assert np.array_equal(got.view(np.uint64), rows.view(np.uint64))

    cam = seq.camera("cam0")
    assert len(cam) == len(data.frames)
    for frame, want in zip(cam, data.frames, strict=True):
        assert (frame.index, frame.t_ns) == (want.index, want.t_ns)
        for kind in ("rgb", "depth", "instance", "semantic"):
            got_img, want_img = getattr(frame, kind), getattr(want, kind)
            assert got_img.dtype == want_img.dtype and np.array_equal(got_img, want_img), kind
        np.testing.assert_allclose(frame.T_world_cam, want.T_world_cam, atol=1e-12)
        assert np.array_equal(frame.K, np.array(K))
        assert frame.boxes == want.boxes
    assert cam[-1].index == len(data.frames) - 1
    with pytest.raises(IndexError):
        cam[len(data.frames)]


def test_identical_inputs_give_identical_bytes(written, data, tmp_path):
    again = tmp_path / "again"
    _write(again, data)
    first = {p.relative_to(written): p.read_bytes() for p in written.rglob("*") if p.is_file()}
    second = {p.relative_to(again): p.read_bytes() for p in again.rglob("*") if p.is_file()}
    assert sorted(first) == sorted(second)
    assert (
        len(first) == 3 + 2 + 4 * 5 + 2
    )  # metadata, scene, checksums; 2 tables; 20 images; csv, jsonl
    assert [f for f in first if first[f] != second[f]] == []


def test_layout_and_plain_csv(written):
    assert not (written / "INCOMPLETE").exists()
    header, first = (written / "cam0" / "frames.csv").read_text().splitlines()[:2]
    assert header == "frame,t_ns,x,y,z,qx,qy,qz,qw"
    assert first.startswith(f"0,{_times('cam0')[0]},")
    assert (written / "imu0" / "data.csv").read_text().splitlines()[0] == "t_ns," + ",".join(
        IMU_COLUMNS
    )
    lines = (written / "cam0" / "boxes.jsonl").read_text().splitlines()
    assert [json.loads(line)["frame"] for line in lines] == list(range(5))


def test_validate_accepts_written_sequence(written):
    report = validate_sequence(written)
    assert report.problems == []
    assert report.ok
    assert report.checked == {"streams": 3, "rows": 50, "frames": 5, "files": 20}


def test_summary(written):
    summary = summarize_sequence(written)
    assert summary.complete is True
    assert summary.metadata["seed"] == 7
    assert summary.duration_s == pytest.approx(40 / 240)
    assert summary.streams["cam0"] == {
        "type": "camera",
        "rate_hz": 30,
        "count": 5,
        "resolution": "16x12",
    }
    assert summary.instances_by_class == {"ball": 1, "chair": 1, "wall": 1}
    # the JSON `info --json` prints: the computed figures after the metadata entries
    data = summary.as_dict()
    assert list(data)[:2] == ["path", "complete"] and data["seed"] == 7
    assert list(data)[-6:] == [
        "duration_s",
        "streams",
        "n_instances",
        "n_dynamic_instances",
        "instances_by_class",
        "n_classes",
    ]


# --- validation failures ---------------------------------------------------------------------


def test_validate_reports_deleted_frame(seq_copy):
    (seq_copy / "cam0" / "rgb" / "000002.png").unlink()
    assert _problems(seq_copy) == ["cam0/rgb/000002.png: missing"]


def test_validate_reports_truncated_png(seq_copy):
    png = seq_copy / "cam0" / "instance" / "000001.png"
    png.write_bytes(png.read_bytes()[:-20])
    assert _problems(seq_copy) == ["cam0/instance/000001.png: cannot be read (not a complete PNG)"]


def test_validate_reports_unreadable_depth(seq_copy):
    (seq_copy / "cam0" / "depth" / "000004.npy").write_bytes(b"garbage")
    assert _any(_problems(seq_copy), r"^cam0/depth/000004\.npy: cannot be read \(")


def test_validate_reports_missing_row(seq_copy):
    csv = seq_copy / "imu0" / "data.csv"
    lines = csv.read_text().splitlines(keepends=True)
    del lines[6]  # data row 5 = step 246
    csv.write_text("".join(lines))
    problems = _problems(seq_copy)
    assert "imu0: 39 samples, expected 40 at 240 Hz over steps [241, 281)" in problems
    assert "imu0: 39 samples but metadata.json records count 40" in problems
    assert f"imu0: no sample at step 246 (t_ns {step_to_ns(246, 240)})" in problems


def test_validate_reports_non_monotonic_timestamp(seq_copy):
    csv = seq_copy / "imu0" / "data.csv"
    lines = csv.read_text().splitlines(keepends=True)
    lines[3], lines[4] = lines[4], lines[3]
    csv.write_text("".join(lines))
    problems = _problems(seq_copy)
    assert problems == [
        f"imu0/data.csv line 5: t_ns {_times('imu0')[2]} is not after the previous "
        f"{_times('imu0')[3]}"
    ]


def test_validate_reports_off_grid_timestamp(seq_copy):
    csv = seq_copy / "groundtruth_body" / "data.csv"
    lines = csv.read_text().splitlines(keepends=True)
    t_ns, rest = lines[2].split(",", 1)
    lines[2] = f"{int(t_ns) + 1},{rest}"
    csv.write_text("".join(lines))
    problems = _problems(seq_copy)
    assert (
        f"groundtruth_body/data.csv line 3: t_ns {int(t_ns) + 1} is not the time of a step of "
        "this stream at 60 Hz over steps [241, 281)"
    ) in problems
    assert f"groundtruth_body: no sample at step 248 (t_ns {t_ns})" in problems


def test_validate_reports_bad_cell(seq_copy):
    csv = seq_copy / "imu0" / "data.csv"
    lines = csv.read_text().splitlines(keepends=True)
    lines[5] = lines[5].rstrip("\n").rsplit(",", 1)[0] + "\n"
    csv.write_text("".join(lines))
    assert _problems(seq_copy) == ["imu0/data.csv line 6: 6 columns, expected 7 like the header"]


def test_validate_reports_imu_columns_other_than_the_fixed_ones(seq_copy):
    csv = seq_copy / "imu0" / "data.csv"
    text = csv.read_text()
    csv.write_text(text.replace("accel_z", "accel_w", 1))
    assert _problems(seq_copy) == [
        "imu0/data.csv: columns gyro_x,gyro_y,gyro_z,accel_x,accel_y,accel_w, expected "
        "gyro_x,gyro_y,gyro_z,accel_x,accel_y,accel_z for type 'imu'"
    ]


def test_validate_reports_non_unit_quaternion_in_a_pose_table(seq_copy):
    csv = seq_copy / "groundtruth_body" / "data.csv"
    lines = csv.read_text().splitlines(keepends=True)
    lines[2] = lines[2].rsplit(",", 1)[0] + ",2.0\n"  # qw
    csv.write_text("".join(lines))
    assert _problems(seq_copy) == [
        "groundtruth_body/data.csv line 3: quaternion is not unit length"
    ]


def test_validate_reports_unknown_instance_in_image(seq_copy):
    png = seq_copy / "cam0" / "instance" / "000003.png"
    image = cv2.imread(str(png), cv2.IMREAD_UNCHANGED)
    image[5, 5] = 77
    cv2.imwrite(str(png), image)
    assert _problems(seq_copy) == [
        "cam0/instance/000003.png: instance ids [77] are not in metadata's instance table"
    ]


def test_validate_reports_unknown_instance_in_boxes(seq_copy):
    jsonl = seq_copy / "cam0" / "boxes.jsonl"
    lines = jsonl.read_text().splitlines(keepends=True)
    lines[1] = lines[1].replace('"instance_id":3', '"instance_id":99')
    jsonl.write_text("".join(lines))
    assert _problems(seq_copy) == [
        "cam0/boxes.jsonl line 2: box instance_id 99 is not in metadata's instance table"
    ]


def test_validate_reports_wrong_image_shape(seq_copy):
    cv2.imwrite(str(seq_copy / "cam0" / "semantic" / "000000.png"), np.zeros((H, W + 1), np.uint16))
    assert _problems(seq_copy) == [
        "cam0/semantic/000000.png: uint16(12, 17), expected uint8 or uint16(12, 16)"
    ]


def test_interrupted_run_stays_marked_partial(tmp_path, data):
    path = tmp_path / "crashed"
    with pytest.raises(RuntimeError, match="simulated crash"):
        _write(path, data, fail_after_frames=3)
    assert (path / "INCOMPLETE").exists()
    assert json.loads((path / "metadata.json").read_text())["status"] == "incomplete"
    # what was written before the crash is on disk
    assert len((path / "imu0" / "data.csv").read_text().splitlines()) == 41
    assert sorted(p.name for p in (path / "cam0" / "rgb").iterdir()) == [
        "000000.png",
        "000001.png",
        "000002.png",
    ]
    problems = _problems(path)
    assert _any(problems, r"^INCOMPLETE marker present: the run was interrupted")
    assert _any(problems, r"^metadata\.json: status is 'incomplete'.*partial")
    with pytest.raises(SequenceError, match=r"incomplete .*interrupted"):
        open_sequence(path)
    assert summarize_sequence(path).complete is False


def test_failed_image_write_surfaces_at_close(tmp_path, data):
    scene = _scene()
    writer = SequenceWriter(tmp_path / "s", scene.to_json(), _metadata(scene))
    writer.add_camera("cam0")
    shutil.rmtree(tmp_path / "s" / "cam0" / "depth")
    writer.write_frame("cam0", data.frames[0])
    with pytest.raises(OutputFolderError, match=r"000000\.npy: cannot be written"):
        writer.close()
    assert (tmp_path / "s" / "INCOMPLETE").exists()


# --- reader and writer refusals --------------------------------------------------------------


def test_open_sequence_refuses_missing_and_unreadable(tmp_path):
    with pytest.raises(SequenceError, match="no such sequence folder"):
        open_sequence(tmp_path / "nope")
    (tmp_path / "metadata.json").write_text("{not json")
    with pytest.raises(SequenceError, match=r"metadata\.json: not valid JSON"):
        open_sequence(tmp_path)


def test_writer_refuses_non_empty_folder(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    scene = _scene()
    with pytest.raises(OutputFolderError, match=r"out: exists and is not empty"):
        SequenceWriter(out, scene.to_json(), _metadata(scene))
    assert [p.name for p in out.iterdir()] == ["notes.txt"]
    assert (out / "notes.txt").read_text() == "keep me"


def test_writer_refuses_unusable_paths(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(OutputFolderError, match="exists and is not a directory"):
        check_output_folder(tmp_path / "file")
    with pytest.raises(OutputFolderError, match=r"cannot be created, .*file is not a directory"):
        check_output_folder(tmp_path / "file" / "sub" / "seq")
    check_output_folder(tmp_path / "new" / "nested")  # parents are created by the writer
    assert not (tmp_path / "new").exists()


def test_writer_accepts_empty_folder_and_creates_parents(tmp_path):
    scene = _scene()
    (tmp_path / "empty").mkdir()
    for out in (tmp_path / "empty", tmp_path / "a" / "b" / "c"):
        with SequenceWriter(out, scene.to_json(), _metadata(scene)) as writer:
            assert (out / "INCOMPLETE").exists()
            assert json.loads((out / "metadata.json").read_text())["status"] == "incomplete"
            writer.add_table("imu0", IMU_COLUMNS)
        assert not (out / "INCOMPLETE").exists()


def test_writer_rejects_misuse(tmp_path, data):
    scene = _scene()
    with SequenceWriter(tmp_path / "s", scene.to_json(), _metadata(scene)) as writer:
        with pytest.raises(ValueError, match="not described in metadata"):
            writer.add_table("lidar0", ["r"])
        with pytest.raises(ValueError, match="use add_camera"):
            writer.add_table("cam0", ["r"])
        writer.add_camera("cam0")
        writer.add_table("imu0", IMU_COLUMNS)
        with pytest.raises(ValueError, match="already added"):
            writer.add_camera("cam0")
        with pytest.raises(ValueError, match="expected 6 values"):
            writer.append("imu0", 0, [1.0, 2.0])
        with pytest.raises(TypeError, match="integer number of nanoseconds"):
            writer.append("imu0", 0.5, np.zeros(6))
        writer.append("imu0", 10, np.zeros(6))
        with pytest.raises(ValueError, match="not after the previous 10"):
            writer.append("imu0", 10, np.zeros(6))
        with pytest.raises(ValueError, match="frame index 1, expected 0"):
            writer.write_frame("cam0", data.frames[1])
        bad = CameraFrame(**{**vars(data.frames[0]), "depth": data.frames[0].depth.astype(float)})
        with pytest.raises(ValueError, match=r"depth is float64\(12, 16\), expected float32"):
            writer.write_frame("cam0", bad)


def test_uint8_semantic_round_trips_and_closed_writer_refuses_rows(tmp_path, data):
    scene = _scene()
    frame = data.frames[0]
    frame8 = CameraFrame(**{**vars(frame), "semantic": frame.semantic.astype(np.uint8)})
    writer = SequenceWriter(tmp_path / "s", scene.to_json(), _metadata(scene))
    writer.add_camera("cam0")
    writer.write_frame("cam0", frame8)
    writer.close()
    with pytest.raises(ValueError, match="not an open camera stream"):
        writer.write_frame("cam0", frame8)
    got = open_sequence(tmp_path / "s", check=False).camera("cam0")[0].semantic
    assert got.dtype == np.uint8 and np.array_equal(got, frame8.semantic)


def test_copied_frames_keep_the_source_bytes(written, data, tmp_path):
    """A twin's unchanged camera copies its source's frames: image files and boxes lines as
    they are, a new colour image encoded where one is given; mismatched frames are refused."""
    source = open_sequence(written).camera("cam0")
    frames = frame_source(source, colour=True)
    new_rgb = np.full_like(data.frames[0].rgb, 7)
    new_depth = np.full_like(data.frames[0].depth, 2.5)
    scene = _scene()
    out = tmp_path / "twin"
    with SequenceWriter(out, scene.to_json(), _metadata(scene)) as writer:
        writer.add_camera("cam0")
        writer.add_table("imu0", IMU_COLUMNS)
        writer.add_table("groundtruth_body", POSE_COLUMNS)
        for want in data.frames:
            rgb = new_rgb if want.index == 1 else None
            depth = new_depth if want.index == 2 else None
            copied = frames.frame(want.index, want.t_ns, want.T_world_cam, rgb, depth)
            writer.write_copied_frame("cam0", copied)
        with pytest.raises(ValueError, match="no frame"):
            frames.frame(0, data.frames[0].t_ns + 1, np.eye(4))
        later, lines = int(source.t_ns[-1]) + 1, (source.frame_lines[0], source.boxes_lines[0])
        wrong = CopiedFrame(len(data.frames), later, source.folder, *lines, np.eye(4))
        with pytest.raises(ValueError, match="copied lines are not frame 5"):
            writer.write_copied_frame("cam0", wrong)
        writer.close()
    for name in ("frames.csv", "boxes.jsonl"):
        assert (out / "cam0" / name).read_bytes() == (written / "cam0" / name).read_bytes()
    for i in range(len(data.frames)):
        for kind in ("rgb", "depth", "instance", "semantic"):
            rel = frame_path(Path("cam0"), kind, i)
            same = (out / rel).read_bytes() == (written / rel).read_bytes()
            assert same == ((kind, i) not in {("rgb", 1), ("depth", 2)}), rel
    copy = open_sequence(out, check=False).camera("cam0")
    assert np.array_equal(copy[1].rgb, new_rgb) and np.array_equal(copy[2].depth, new_depth)
    assert frames.dynamic_fraction(0) == data.frames[0].dynamic_fraction
