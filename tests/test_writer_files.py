"""`SequenceWriter.add_files` / `write_file`: a stream of a sensor kind's own files.

The files go through the writer's I/O pool like images, a failed write surfaces (at a later
write or at `close`) and keeps the folder marked incomplete, paths outside the stream folder
and the writer's built-in layouts are refused, and `count` is the index's rows (else the files).
"""

from __future__ import annotations

import io
import json
import threading
from pathlib import Path, PurePosixPath

import numpy as np
import pytest

from twinsim.errors import OutputFolderError
from twinsim.recording import robot_streams
from twinsim.sequence import SequenceWriter, open_sequence, stream_writers
from twinsim.sequence.write_queue import MAX_BATCHES_IN_FLIGHT

STREAMS = {
    "att0": {"type": "attitude", "rate_hz": 60},
    "blobs": {"type": "blob_sensor", "rate_hz": 10},
    "cam0": {"type": "camera", "rate_hz": 30},
    "lidar0": {"type": "lidar", "rate_hz": 10},
    "ev0": {"type": "event_camera", "rate_hz": 240},
    "b.att0": {"type": "attitude", "rate_hz": 60},
}


def _writer(path: Path) -> SequenceWriter:
    metadata = {"physics_hz": 240, "recorded_steps": [0, 24], "streams": STREAMS}
    return SequenceWriter(path, "{}", metadata)


def _npy_bytes(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return buffer.getvalue()


def _metadata(path: Path) -> dict:
    return json.loads((path / "metadata.json").read_text(encoding="utf-8"))


def test_files_and_their_index_round_trip(tmp_path):
    out = tmp_path / "s"
    rng = np.random.default_rng(5)
    arrays = [rng.normal(size=(3, 3)) for _ in range(3)]
    arrays[1] = np.asfortranarray(arrays[1])  # kept in Fortran order, as np.save keeps it
    structured = np.array([(1, 2.5), (3, -0.0)], dtype=[("id", "<u4"), ("v", "<f8")])
    with _writer(out) as writer:
        writer.add_files("att0", index_columns=("sample", "angle"))
        for i, array in enumerate(arrays):
            writer.write_file("att0", f"rotations/{i:06d}.npy", array)
            writer.append("att0", 10 + i, [i, 0.1 * i])
        reused = arrays[2].copy()
        writer.write_file("att0", PurePosixPath("deep/er/reused.npy"), reused)
        reused[:] = 0.0  # the writer copied it
        writer.write_file("att0", "deep/table.npy", structured)
        writer.write_file("att0", "notes.txt", b"plain bytes\n")
        writer.write_file("att0", "deep/view.bin", memoryview(b"\x00\x01\x02"))
        buffer = bytearray(b"kept")
        writer.write_file("att0", "deep/buffer.bin", buffer)
        buffer[:] = b"gone"
    stream = out / "att0"
    for i, array in enumerate(arrays):
        file = stream / "rotations" / f"{i:06d}.npy"
        assert file.read_bytes() == _npy_bytes(array)
        np.testing.assert_array_equal(np.load(file), array)
    assert np.load(stream / "rotations" / "000001.npy").flags.f_contiguous
    np.testing.assert_array_equal(np.load(stream / "deep" / "er" / "reused.npy"), arrays[2])
    assert (stream / "deep" / "table.npy").read_bytes() == _npy_bytes(structured)
    assert (stream / "notes.txt").read_bytes() == b"plain bytes\n"
    assert (stream / "deep" / "view.bin").read_bytes() == b"\x00\x01\x02"
    assert (stream / "deep" / "buffer.bin").read_bytes() == b"kept"
    index_lines = ["t_ns,sample,angle", "10,0.0,0.0", "11,1.0,0.1", "12,2.0,0.2", ""]
    assert (stream / "data.csv").read_text() == "\n".join(index_lines)
    metadata = _metadata(out)
    assert metadata["status"] == "complete" and not (out / "INCOMPLETE").exists()
    assert metadata["streams"]["att0"]["count"] == 3  # the index's rows, not the 8 files
    index = open_sequence(out, check=False).table("att0")
    assert index["t_ns"].tolist() == [10, 11, 12] and index["sample"].tolist() == [0, 1, 2]


def test_without_an_index_the_count_is_the_files_written(tmp_path):
    with _writer(tmp_path / "s") as writer:
        writer.add_files("blobs")
        for i in range(4):
            writer.write_file("blobs", f"{i}.bin", bytes([i]))
        with pytest.raises(ValueError, match="blobs: this files stream has no index"):
            writer.append("blobs", 0, [1.0])
    assert _metadata(tmp_path / "s")["streams"]["blobs"]["count"] == 4
    assert sorted(p.name for p in (tmp_path / "s" / "blobs").iterdir()) == [
        "0.bin",
        "1.bin",
        "2.bin",
        "3.bin",
    ]


def test_files_are_written_on_the_writers_io_pool(tmp_path, monkeypatch):
    threads = []
    write = stream_writers._write_file

    def recording_write(path, content):
        threads.append(threading.current_thread().name)
        write(path, content)

    monkeypatch.setattr(stream_writers, "_write_file", recording_write)
    with _writer(tmp_path / "s") as writer:
        writer.add_files("blobs")
        for i in range(6):
            writer.write_file("blobs", f"{i}.bin", b"x")
    assert len(threads) == 6
    assert all(name.startswith("seq-io") for name in threads), threads


@pytest.mark.parametrize(
    "relpath",
    [
        "/etc/passwd",
        "../outside.bin",
        "sub/../../outside.bin",
        "sub/../inside.bin",
        "./a.bin",
        "a//b.bin",
        "a/",
        "",
        ".hidden",
        "..",
        "a\\b.bin",
        "C:/x.bin",
        PurePosixPath("/abs.bin"),
        Path("..") / "x.bin",
    ],
)
def test_paths_outside_the_stream_folder_are_refused(tmp_path, relpath):
    out = tmp_path / "s"
    with _writer(out) as writer:
        writer.add_files("blobs")
        with pytest.raises(ValueError, match="must be a relative path of plain names"):
            writer.write_file("blobs", relpath, b"x")
    assert list((out / "blobs").iterdir()) == []
    assert sorted(p.name for p in out.iterdir()) == [
        "blobs",
        "checksums.csv",
        "metadata.json",
        "scene.json",
    ]
    assert _metadata(out)["streams"]["blobs"]["count"] == 0


def test_the_index_a_rewrite_and_data_that_is_not_a_file_are_refused(tmp_path):
    with _writer(tmp_path / "s") as writer:
        writer.add_files("att0", index_columns=("sample",))
        with pytest.raises(ValueError, match=r"att0: data\.csv is the stream's index"):
            writer.write_file("att0", "data.csv", b"t_ns\n")
        writer.write_file("att0", "r/0.npy", np.eye(3))
        with pytest.raises(ValueError, match=r"file 'r/0\.npy' was already written"):
            writer.write_file("att0", "r/0.npy", np.eye(3))
        with pytest.raises(ValueError, match=r"att0/r/1\.bin: an array is written as \.npy"):
            writer.write_file("att0", "r/1.bin", np.eye(3))
        with pytest.raises(ValueError, match="object arrays need pickle"):
            writer.write_file("att0", "r/2.npy", np.array([{}, 1], dtype=object))
        with pytest.raises(TypeError, match="data must be bytes or a numpy array"):
            writer.write_file("att0", "r/3.bin", [1, 2, 3])
        with pytest.raises(ValueError, match="columns must be unique"):
            writer.add_files("blobs", index_columns=("t_ns",))
    assert sorted(p.name for p in (tmp_path / "s" / "att0" / "r").iterdir()) == ["0.npy"]
    assert not (tmp_path / "s" / "blobs").exists()  # refused columns leave no folder


def test_streams_of_the_writers_layouts_and_misuse_are_refused(tmp_path):
    writer = _writer(tmp_path / "s")
    for name, use in (("cam0", "add_camera"), ("lidar0", "add_lidar"), ("ev0", "add_events")):
        with pytest.raises(ValueError, match=f"has type '{STREAMS[name]['type']}': use {use}$"):
            writer.add_files(name)
    with pytest.raises(ValueError, match="'att0' has type 'attitude': use add_table or add_files"):
        writer.add_camera("att0")
    with pytest.raises(ValueError, match="not described in metadata"):
        writer.add_files("imu7")
    with pytest.raises(ValueError, match="must be a plain folder name"):
        writer.add_files("../att0")
    writer.add_table("blobs", ("a",))
    with pytest.raises(ValueError, match=r"blobs: not an open files stream \(add_files first"):
        writer.write_file("blobs", "x.bin", b"x")
    writer.add_files("att0")
    with pytest.raises(ValueError, match="'att0' was already added"):
        writer.add_files("att0")
    with pytest.raises(ValueError, match="att0: not an open camera stream"):
        writer.write_frame("att0", None)
    writer.close()
    with pytest.raises(ValueError, match="att0: not an open files stream"):
        writer.write_file("att0", "late.bin", b"x")
    assert not (tmp_path / "s" / "att0" / "late.bin").exists()


def _blocked(writer: SequenceWriter, out: Path) -> None:
    """Start `blobs` with a file where the folder of its next write must go."""
    writer.add_files("blobs")
    (out / "blobs" / "sub").write_bytes(b"in the way")
    writer.write_file("blobs", "sub/0.bin", b"x")


def test_a_failed_write_surfaces_at_close_and_the_folder_stays_incomplete(tmp_path):
    out = tmp_path / "s"
    writer = _writer(out)
    _blocked(writer, out)
    writer.write_file("blobs", "fine.bin", b"y")
    with pytest.raises(OutputFolderError, match=r"blobs/sub/0\.bin: cannot be written"):
        writer.close()
    assert (out / "INCOMPLETE").exists()
    assert _metadata(out)["status"] == "incomplete"
    assert (out / "blobs" / "fine.bin").read_bytes() == b"y"  # the other writes finished


def test_a_failed_write_surfaces_at_a_later_write_once_the_queue_is_full(tmp_path):
    out = tmp_path / "s"
    failure = pytest.raises(OutputFolderError, match=r"blobs/sub/0\.bin: cannot be written")
    with failure, _writer(out) as writer:
        _blocked(writer, out)
        for i in range(MAX_BATCHES_IN_FLIGHT):  # the last one waits for the failed write
            writer.write_file("blobs", f"{i}.bin", b"x")
    assert (out / "INCOMPLETE").exists()
    assert _metadata(out)["status"] == "incomplete"


def test_a_caller_going_on_after_a_failed_write_cannot_close_it_as_complete(tmp_path):
    out = tmp_path / "s"
    writer = _writer(out)
    _blocked(writer, out)
    with pytest.raises(OutputFolderError):
        for i in range(MAX_BATCHES_IN_FLIGHT):
            writer.write_file("blobs", f"{i}.bin", b"x")
    writer.write_file("blobs", "after.bin", b"x")
    with pytest.raises(OutputFolderError, match=r"blobs/sub/0\.bin: cannot be written"):
        writer.close()
    assert (out / "INCOMPLETE").exists()
    assert _metadata(out)["status"] == "incomplete"


def test_a_robots_writer_prefixes_its_files_streams(tmp_path):
    out = tmp_path / "s"
    with _writer(out) as writer:
        streams = robot_streams(writer, "b.")
        streams.add_files("att0", index_columns=("sample",))
        streams.write_file("att0", "r/0.npy", np.eye(3))
        streams.append("att0", 5, [0.0])
    assert np.array_equal(np.load(out / "b.att0" / "r" / "0.npy"), np.eye(3))
    assert _metadata(out)["streams"]["b.att0"]["count"] == 1
