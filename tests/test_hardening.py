"""Input that could only record garbage, or reach outside a sequence, is refused in one line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from conftest import structural_problems
from twinsim.cli import app
from twinsim.config import load_config
from twinsim.errors import ConfigError, SequenceError
from twinsim.sequence import open_sequence, validate_sequence

V1 = Path(__file__).parent / "data" / "v1_sequence"


@pytest.mark.parametrize(
    ("overrides", "duration_s", "message"),
    [
        (["sensors.cam0.near_m=40"], None, r"sensors\.cam0: near_m=40.0 must be < far_m=30.0"),
        (
            ["sensors.ev.kind=event_camera", "sensors.ev.far_m=0.01"],
            None,
            r"sensors\.ev: near_m=0.05 must be < far_m=0.01",
        ),
        (
            ["sensors.l.kind=lidar", "sensors.l.min_range_m=500"],
            None,
            r"sensors\.l: min_range_m=500.0 must be < max_range_m=120.0 \(hdl-32e's\)",
        ),
        ([], 0.001, r"sim\.duration_s=0.001 records nothing of sensors\.cam0\.rate_hz=30"),
        (["sensors.odometry.kind=imu"], None, r"sensor name 'odometry' is taken"),
        (["sensors.groundtruth_x.kind=imu"], None, r"sensor name 'groundtruth_x' is taken"),
        (["sensors.a/b.kind=imu"], None, r"sensor name 'a/b': a letter or digit"),
    ],
)
def test_configs_that_could_only_record_garbage_are_refused(overrides, duration_s, message):
    with pytest.raises(ConfigError, match=message):
        load_config("tiny", overrides, duration_s=duration_s)


def test_the_cli_refuses_them_before_writing_anything(tmp_path):
    out = tmp_path / "run"
    result = CliRunner().invoke(
        app, ["run", "--config", "tiny", "--set", "sensors.cam0.near_m=40", "--out", str(out)]
    )
    assert result.exit_code == 2
    assert len(result.output.strip().splitlines()) == 1 and "near_m" in result.output
    assert not out.exists()


def _crafted(tmp_path: Path, rename: tuple[str, str]) -> Path:
    seq = Path(shutil.copytree(V1, tmp_path / "seq"))
    meta = json.loads((seq / "metadata.json").read_text())
    meta["streams"][rename[1]] = meta["streams"].pop(rename[0])
    (seq / "metadata.json").write_text(json.dumps(meta))
    return seq


@pytest.mark.parametrize("name", ["../planted", "/tmp/planted", "metadata.json", "a/b"])
def test_stream_names_that_leave_the_folder_are_refused_everywhere(tmp_path, name):
    seq = _crafted(tmp_path, ("imu0", name))
    with pytest.raises(SequenceError, match=r"must be a plain folder name|is reserved"):
        open_sequence(seq)
    report = validate_sequence(seq)
    assert not report.ok
    assert any("plain folder name" in p or "reserved" in p for p in report.problems)
    runner = CliRunner()
    noisy = tmp_path / "out" / "noisy"
    result = runner.invoke(app, ["noise", str(seq), "-p", "carla-loc", "--out", str(noisy)])
    assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1
    result = runner.invoke(
        app, ["export", str(seq), "-f", "euroc", "--out", str(tmp_path / "out" / "e")]
    )
    assert result.exit_code == 2
    assert not (tmp_path / "planted").exists() and not (tmp_path / "out" / "planted").exists()
    assert not Path("/tmp/planted").exists()


def test_a_stream_folder_that_is_a_link_is_refused(tmp_path):
    seq = Path(shutil.copytree(V1, tmp_path / "seq"))
    outside = Path(shutil.move(seq / "imu0", tmp_path / "elsewhere"))
    (seq / "imu0").symlink_to(outside, target_is_directory=True)
    with pytest.raises(SequenceError, match="must not be a symbolic link"):
        open_sequence(seq)
    assert not validate_sequence(seq).ok


def test_single_file_outputs_are_whole_or_absent(tmp_path):
    """A preview into a missing folder, without an image suffix, or that cannot be written
    (its temporary name is past the file system's 255 bytes) fails in one line and leaves
    nothing; a good one leaves exactly the file."""
    runner = CliRunner()
    for out, why in (
        (tmp_path / "missing" / "p.png", "does not exist"),
        (tmp_path / "noext", "name a .png or .jpg"),
        (tmp_path / ("p" * 246 + ".png"), "could not be written"),
    ):
        result = runner.invoke(app, ["preview", str(V1), "--out", str(out)])
        assert result.exit_code == 2, (out, result.output)
        assert why in result.output and len(result.output.strip().splitlines()) == 1
        assert not out.exists()
    assert list(tmp_path.iterdir()) == []
    good = tmp_path / "p.png"
    assert runner.invoke(app, ["preview", str(V1), "--out", str(good)]).exit_code == 0
    assert [p.name for p in tmp_path.iterdir()] == ["p.png"]


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["run", "--config", "tiny", "--set", "sim.duration_s=[1,2"], "is not a YAML value"),
        (["run", "--config", "tiny", "--set", "seed='x"], "is not a YAML value"),
        (["run", "--config", "tiny", "--set", "seed=!!python/object:os.system"], "not a YAML"),
        (["noise", str(V1), "-p", "carla-loc", "--seed", "-1"], "--seed"),
        (["dsg", str(V1), "--spacing", "-1"], "--spacing"),
        (["dsg", str(V1), "--spacing", "0"], "--spacing"),
        (["eval", str(V1), str(V1), "--frame-period", "0"], "--frame-period"),
        (["eval", str(V1), str(V1), "--max-diff", "-1"], "--max-diff"),
    ],
)
def test_bad_arguments_exit_2_without_a_traceback(tmp_path, args, says):
    out = tmp_path / "out.json" if args[0] == "dsg" else tmp_path / "out"
    extra = [] if args[0] == "eval" else ["--out", str(out)]
    result = CliRunner().invoke(app, [*args, *extra])
    assert result.exit_code == 2, result.output
    assert says in result.output and "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert not out.exists()


def test_an_output_name_past_255_bytes_is_refused_in_one_line(tmp_path, dynamic_sequence):
    """Every stat of such a path fails (ENAMETOOLONG), even the check whether it exists: each
    writing command names it before touching it; 128 × 'é' is 256 bytes in 128 characters."""
    seq = str(dynamic_sequence)
    plan = str(Path(__file__).parent / "data" / "batch_plan.yaml")
    for name in ("a" * 300, "é" * 128):
        long = tmp_path / name
        commands = {
            "run": ["run", "--config", "tiny", "--out", str(long)],
            "preview": ["preview", seq, "--out", str(long / "p.png")],
            "dsg": ["dsg", seq, "--out", f"{long}.json"],
            "bench": [
                "bench",
                "--sequences",
                seq,
                "--methods",
                "rgbd_odometry",
                "--out",
                str(long),
            ],
            "batch": ["batch", plan, "--out", str(long / "sub")],
            "export": ["export", seq, "--format", "tum", "--out", str(long)],
        }
        for command, args in commands.items():
            result = CliRunner().invoke(app, args)
            assert result.exit_code == 2, (command, result.output)
            assert "is over 255 bytes" in result.output, (command, result.output)
            assert result.exception is None or isinstance(result.exception, SystemExit)
    assert not list(tmp_path.iterdir())


def test_an_interrupted_export_leaves_nothing_that_looks_finished(tmp_path):
    from twinsim.export import export_sequence
    from twinsim.export.registry import EXPORT_MARKER

    out = tmp_path / "kitti"

    def killed(done: int, total: int) -> None:
        if done >= 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        export_sequence(V1, "kitti", out, progress=killed)
    assert list(tmp_path.iterdir()) == []  # neither the folder nor its partial sibling
    done = export_sequence(V1, "kitti", out)
    marker = json.loads((done / EXPORT_MARKER).read_text())
    assert marker["format"] == "kitti" and marker["source"] == str(V1.resolve())
    assert [p.name for p in tmp_path.iterdir()] == ["kitti"]


def test_overwrite_replaces_an_export_but_never_a_sequence(tmp_path):
    runner = CliRunner()
    out = tmp_path / "tum"
    args = ["export", str(V1), "-f", "tum", "--out", str(out)]
    assert runner.invoke(app, args).exit_code == 0
    (out / "stale.txt").write_text("from before")
    assert runner.invoke(app, args).exit_code == 2  # not empty
    assert runner.invoke(app, [*args, "--overwrite"]).exit_code == 0
    assert not (out / "stale.txt").exists() and (out / "groundtruth.txt").is_file()
    seq = Path(shutil.copytree(V1, tmp_path / "seq"))
    result = runner.invoke(app, ["export", str(V1), "-f", "tum", "--out", str(seq), "--overwrite"])
    assert result.exit_code == 2 and "never replaces one" in result.output
    assert validate_sequence(seq).ok


@pytest.fixture
def damaged(dynamic_sequence, tmp_path) -> Path:
    """A private copy of the session's dynamic sequence (people in view) to damage."""
    return Path(shutil.copytree(dynamic_sequence, tmp_path / "seq"))


def _flip_last_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[-1] ^= 0x01
    path.write_bytes(bytes(data))


def test_a_flipped_byte_that_still_decodes_is_caught_by_the_checksums(damaged):
    assert validate_sequence(damaged).ok
    depth = damaged / "cam0" / "depth" / "000003.npy"
    _flip_last_byte(depth)
    assert np.load(depth).shape == (96, 128)  # still a valid depth image
    (damaged / "cam0" / "rgb" / "stray.png").write_bytes(b"x")
    problems = validate_sequence(damaged).problems
    assert any(p.startswith("cam0/depth/000003.npy: content changed (CRC-32") for p in problems)
    assert "cam0/rgb/stray.png: not listed in checksums.csv" in problems


def _edit_boxes(seq: Path, edit) -> None:
    """Apply `edit(record)` to the first boxes.jsonl record with a box and a person."""
    path = seq / "cam0" / "boxes.jsonl"
    lines = path.read_text().splitlines()
    i = next(i for i, line in enumerate(lines) if '"keypoints"' in line)
    record = json.loads(lines[i])
    edit(record)
    lines[i] = json.dumps(record)
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize(
    ("edit", "says"),
    [
        (lambda r: r["boxes"][0].update(tight=[0, 0, 100000, 100000]), "inside the image"),
        (lambda r: r["boxes"][0].update(tight=[-3, 0, 5, 5]), "inside the image"),
        (lambda r: r["boxes"][0]["obb"].update(rotation=[[2, 0, 0], [0, 1, 0], [0, 0, 1]]), "obb"),
        (lambda r: r["boxes"][0]["obb"].update(half_extents=[1, -1, 1]), "malformed obb"),
        (lambda r: r["people"][0].update(keypoints=[[1, 2, 7]] * 17), "v in 0/1/2"),
        (lambda r: r["people"][0].update(keypoints="garbage"), "are not 17 [x, y, v]"),
        (lambda r: r["people"][0].update(joints_world=[[1e999, 0, 0]]), "joints_world"),
        (lambda r: r.update(dynamic_fraction=3.0), "dynamic_fraction"),
    ],
)
def test_annotations_out_of_range_are_named(damaged, edit, says):
    _edit_boxes(damaged, edit)
    problems = structural_problems(damaged)
    assert any(says in p and "cam0/boxes.jsonl line" in p for p in problems), problems


def test_a_camera_without_intrinsics_is_named(damaged):
    meta = json.loads((damaged / "metadata.json").read_text())
    del meta["streams"]["cam0"]["K"]
    (damaged / "metadata.json").write_text(json.dumps(meta))
    assert "cam0: metadata.json gives no 3x3 K" in validate_sequence(damaged).problems


def _race_writer(out: str, who: int, start, results) -> None:
    """One of several processes starting a sequence in the same empty folder at once."""
    from twinsim.errors import OutputFolderError
    from twinsim.sequence import SequenceWriter

    metadata = {"physics_hz": 240, "recorded_steps": [0, 24], "streams": {"w": {"type": "who"}}}
    start.wait()
    try:
        with SequenceWriter(Path(out), "{}", metadata) as writer:
            writer.add_table("w", ("who",))
            for k in range(24):
                writer.append("w", k * 4166667, [float(who)])
        results.put((who, "wrote"))
    except OutputFolderError as exc:
        results.put((who, str(exc)))


def test_writers_racing_for_one_empty_folder_leave_one_whole_sequence(tmp_path):
    """Of six processes that all find `out` empty and start at once, one writes its sequence;
    every other is refused in one line and the winner's sequence has only its own rows."""
    import multiprocessing

    context = multiprocessing.get_context("fork")
    for round_ in range(3):
        out = tmp_path / f"out{round_}"
        out.mkdir()
        start, results = context.Barrier(6), context.Queue()
        workers = [
            context.Process(target=_race_writer, args=(str(out), who, start, results))
            for who in range(6)
        ]
        for w in workers:
            w.start()
        for w in workers:
            w.join(60)
        outcome = dict(results.get(timeout=10) for _ in workers)
        winners = [who for who, what in outcome.items() if what == "wrote"]
        assert len(winners) == 1, outcome
        refusals = ("not empty", "another writer", "another twinsim is writing it")  # the lock
        assert all(any(r in v for r in refusals) for v in outcome.values() if v != "wrote")
        assert not (out / "INCOMPLETE").exists()
        assert json.loads((out / "metadata.json").read_text())["status"] == "complete"
        rows = (out / "w" / "data.csv").read_text().splitlines()[1:]
        assert len(rows) == 24
        assert {row.split(",")[1] for row in rows} == {repr(float(winners[0]))}


def test_commands_refuse_a_sequence_validate_rejects(damaged, tmp_path):
    """A duplicated t_ns in frames.csv used to export with a stamp listed twice and a PNG
    overwritten; now every reader refuses it, naming the line."""
    frames = damaged / "cam0" / "frames.csv"
    lines = frames.read_text().splitlines()
    second = lines[2].split(",")
    second[1] = lines[1].split(",")[1]  # frame 1 stamped as frame 0
    lines[2] = ",".join(second)
    frames.write_text("\n".join(lines) + "\n")
    with pytest.raises(SequenceError, match=r"not a valid sequence: cam0/frames.csv"):
        open_sequence(damaged)
    runner = CliRunner()
    for args in (
        ["export", str(damaged), "-f", "tum", "--out", str(tmp_path / "tum")],
        ["noise", str(damaged), "-p", "carla-loc", "--out", str(tmp_path / "noisy")],
        ["dsg", str(damaged), "--out", str(tmp_path / "g.json")],
        ["eval", str(damaged), str(V1)],
    ):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, (args, result.output)
        assert "cam0/frames.csv" in result.output and "Traceback" not in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["seq"]


def test_a_full_disk_ends_in_one_line_not_a_traceback(tmp_path, monkeypatch, capsys):
    """An ENOSPC from deep inside a command (here the simulation's writer) exits 2 in one line."""
    import errno
    import sys

    import twinsim.sim
    from twinsim.cli import main

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "run" / "imu0"))

    monkeypatch.setattr(twinsim.sim, "run", full)
    monkeypatch.setattr(
        sys, "argv", ["twinsim", "run", "--config", "tiny", "--out", str(tmp_path / "run")]
    )
    with pytest.raises(SystemExit) as exit_:
        main()
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: {tmp_path / 'run' / 'imu0'}: No space left on device"]


@pytest.mark.parametrize(
    ("damage", "says"),
    [
        (lambda seq: (seq / "metadata.json").unlink(), "missing (is"),
        (
            lambda seq: ((seq / "metadata.json").unlink(), (seq / "INCOMPLETE").write_text("x")),
            "interrupted",  # info: "interrupted before its metadata.json was written"
        ),
        (
            lambda seq: (seq / "metadata.json").write_text(
                json.dumps(json.loads((seq / "metadata.json").read_text()) | {"streams": {"a": 3}})
            ),
            "stream 'a': its entry must be an object",
        ),
    ],
)
def test_metadata_damage_is_named_by_info_and_every_reader(tmp_path, damage, says):
    seq = Path(shutil.copytree(V1, tmp_path / "seq"))
    damage(seq)
    for args in (
        ["info", str(seq)],
        ["export", str(seq), "-f", "tum", "--out", str(tmp_path / "t")],
    ):
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 2 and says in result.output, (args, result.output)
        assert "Traceback" not in result.output


def test_configs_that_are_not_utf8_or_not_finite_are_refused(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_bytes(b"seed: 1\nname: \xff\xfe\n")
    with pytest.raises(ConfigError, match="is not UTF-8 text"):
        load_config(str(bad))
    with pytest.raises(ConfigError, match=r"sim\.duration_s"):
        load_config("tiny", ["sim.duration_s=.inf"])


def test_a_rate_no_physics_rate_divides_says_which_would(tmp_path):
    with pytest.raises(ConfigError, match=r"or set sim\.physics_hz to a multiple of 600, which"):
        load_config("tiny", ["sensors.imu0.rate_hz=200"])


def test_a_pickled_npy_is_not_advised_to_be_unpickled(tmp_path):
    from twinsim.sequence.images import read_npy

    path = tmp_path / "x.npy"
    np.save(path, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(SequenceError, match="holds Python objects") as err:
        read_npy(path, "x.npy")
    assert "allow_pickle" not in str(err.value)


@pytest.mark.slow
def test_a_twin_that_fits_fewer_people_than_asked_says_so(tmp_path):
    runner = CliRunner()
    many = runner.invoke(
        app, ["replay", str(V1), "--out", str(tmp_path / "many"), "--add-people", "100"]
    )
    assert many.exit_code == 0, many.output
    added = json.loads((tmp_path / "many" / "metadata.json").read_text())["twin"]["people_added"]
    assert added["requested"] == 100 and 0 <= added["placed"] < 100
    assert f"--add-people 100: only {added['placed']} fit" in " ".join(many.output.split())
    one = runner.invoke(
        app, ["replay", str(V1), "--out", str(tmp_path / "one"), "--add-people", "1"]
    )
    assert one.exit_code == 0 and "warning" not in one.output
    assert json.loads((tmp_path / "one" / "metadata.json").read_text())["twin"]["people_added"] == {
        "requested": 1,
        "placed": 1,
    }


def test_a_seed_is_an_int64_everywhere(tmp_path):
    """A seed past 2**63-1 would be written into metadata no C++, ROS or int64 reader can hold:
    refused in one line by the config, a plan's seeds and a live reset alike."""
    from twinsim.batch import PlanError, load_plan
    from twinsim.closedloop import Session

    result = CliRunner().invoke(
        app, ["run", "--config", "tiny", "--seed", str(2**64), "--out", str(tmp_path / "s")]
    )
    assert result.exit_code == 2 and "less than or equal to 9223372036854775807" in result.output
    plan = tmp_path / "plan.yaml"
    plan.write_text(f"runs: {{configs: [tiny], seeds: [0, {2**63}]}}\n")
    with pytest.raises(PlanError, match=r"runs\.seeds\.1: .* less than or equal to 922337"):
        load_plan(plan)
    session = Session("tiny", record=False)
    for seed in (-1, 2**63, 1.5, True):
        with pytest.raises(ConfigError, match="reset seed: an integer from 0 to 2"):
            session.reset(seed=seed)
    assert not list(p for p in tmp_path.iterdir() if p.name != "plan.yaml")
