"""Baselines on the shared dynamic sequence (read-only): they track, and their numbers add up."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

from twinsim.eval.io import read_tum
from twinsim.eval.methods import FeatureVO, MethodError, get_method, load_external
from twinsim.eval.metrics import evaluate
from twinsim.sequence import open_sequence


def run_method(name: str, seq_path: Path, folder: Path, seed: int = 0):
    method = get_method(name)
    folder.mkdir()
    lines: list[str] = []
    estimate = method.run(seq_path, folder, seed, lines.append)
    seq = open_sequence(seq_path)
    result = evaluate(
        method.ground_truth(seq), read_tum(estimate), frame_period_s=method.frame_period_s(seq)
    )
    return result, lines


@pytest.mark.parametrize("name", ["rgbd_odometry", "feature_vo", "feature_vo_masked"])
def test_baselines_track_the_dynamic_sequence(dynamic_sequence, tmp_path, name):
    result, lines = run_method(name, dynamic_sequence, tmp_path / name)
    frames = len(open_sequence(dynamic_sequence).camera("cam0"))
    assert math.isfinite(result.ate_rmse) and result.ate_rmse < 0.3
    assert result.tracking_rate > 0.9 and result.matched_poses >= 0.9 * frames
    assert math.isfinite(result.rpe_trans_rmse) and result.rpe_trans_rmse < 0.05
    assert lines[-1].startswith("tracked ")


def test_rgbd_odometry_follows_the_camera(dynamic_sequence, tmp_path):
    """Dense RGB-D odometry on exact depth: frame-to-frame motion within millimetres."""
    result, _ = run_method("rgbd_odometry", dynamic_sequence, tmp_path / "rgbd")
    assert result.rpe_trans_rmse < 0.01 and result.rpe_rot_rmse < 0.5
    assert result.coverage == pytest.approx(1.0, abs=0.1)


def test_feature_vo_trials_differ_but_repeat(dynamic_sequence, tmp_path):
    """RANSAC sampling follows the trial seed: same seed, same bytes; another seed, another run."""
    paths = []
    for i, seed in enumerate((1, 1, 2)):
        folder = tmp_path / f"t{i}"
        folder.mkdir()
        paths.append(FeatureVO().run(dynamic_sequence, folder, seed, lambda _: None))
    assert paths[0].read_bytes() == paths[1].read_bytes()
    assert paths[0].read_bytes() != paths[2].read_bytes()


def test_dynamic_mask_removes_people_and_objects(dynamic_sequence):
    seq = open_sequence(dynamic_sequence)
    dynamic = np.array([i["instance_id"] for i in seq.metadata["instances"] if i["dynamic"]])
    frame = max(seq.camera("cam0"), key=lambda f: f.dynamic_fraction)
    assert frame.dynamic_fraction > 0
    on_dynamic = np.isin(frame.instance, dynamic)
    masked = FeatureVO(mask_dynamic=True)._mask(frame.instance, dynamic)
    assert not masked[on_dynamic].any() and masked[~on_dynamic].mean() > 0.8 * 255
    assert FeatureVO()._mask(frame.instance, dynamic).all()


def test_lidar_methods_need_a_lidar_stream(dynamic_sequence, tmp_path):
    with pytest.raises(MethodError, match="no lidar stream"):
        get_method("kiss_icp").run(dynamic_sequence, tmp_path, 0, lambda _: None)


@pytest.fixture(scope="module")
def lidar_sequence(tmp_path_factory, gl_backend) -> Path:
    """2 s of a tiny world with people, flying objects and a VLP-16 at 10 Hz."""
    from twinsim.config import load_config
    from twinsim.sim import run

    overrides = ("people.count=3", "flying_objects.count=2", "lidars.lidar0.model=vlp-16")
    out = tmp_path_factory.mktemp("lidar") / "seq"
    return run(load_config("tiny", overrides, seed=2, duration_s=2.0), out)


@pytest.mark.parametrize("name", ["kiss_icp", "kiss_icp_static"])
def test_kiss_icp_tracks_the_lidar(lidar_sequence, tmp_path, name):
    result, lines = run_method(name, lidar_sequence, tmp_path / name)
    scans = open_sequence(lidar_sequence).lidar("lidar0")
    dynamic_points = sum(int(scan.dynamic.sum()) for scan in scans)
    # each pose is stamped at its sweep's end (where KISS-ICP's deskewing puts it), the next
    # sweep's start: the last sweep ends after the last recorded LiDAR pose, so it has no match
    assert result.matched_poses == len(scans) - 1 and result.tracking_rate == 1.0
    assert math.isfinite(result.ate_rmse) and result.ate_rmse < 0.15
    removed = int(lines[-1].split("removed ")[1].split()[0])
    assert dynamic_points > 0
    assert removed == (dynamic_points if name == "kiss_icp_static" else 0)


def write_script(folder: Path, name: str, body: str) -> Path:
    path = folder / name
    path.write_text(body)
    return path


def external_yaml(folder: Path, name: str, script: Path, timeout_s: float = 60) -> Path:
    path = folder / f"{name}.yaml"
    path.write_text(
        f"name: {name}\n"
        f'command: "{sys.executable} {script} {{sequence}} {{trial}}/out.txt"\n'
        "format: sequence\n"
        'trajectory: "out.txt"\n'
        f"timeout_s: {timeout_s}\n"
    )
    return path


COPY_GT = """
import sys
from twinsim.eval.io import read_sequence, write_tum
write_tum(sys.argv[2], read_sequence(__import__("pathlib").Path(sys.argv[1])))
print("wrote", sys.argv[2])
"""


def test_external_method_runs_a_program(dynamic_sequence, tmp_path):
    from twinsim.eval.harness import run_trial

    yaml_path = external_yaml(tmp_path, "copy_gt", write_script(tmp_path, "gt.py", COPY_GT))
    status = run_trial(str(yaml_path), dynamic_sequence, tmp_path / "trial_00", 0)
    assert status["ok"], (tmp_path / "trial_00" / "log.txt").read_text()
    assert "wrote" in (tmp_path / "trial_00" / "program.log").read_text()
    method = load_external(yaml_path)
    seq = open_sequence(dynamic_sequence)
    result = evaluate(method.ground_truth(seq), read_tum(tmp_path / "trial_00" / "estimate.tum"))
    assert result.ate_rmse < 1e-9 and result.tracking_rate == 1.0


@pytest.mark.parametrize(
    ("body", "timeout_s", "error"),
    [
        ("import sys; print('segfault, sort of'); sys.exit(3)", 60, "exited with code 3"),
        ("import time; print('thinking'); time.sleep(30)", 1, "timed out after 1 s"),
        ("print('forgot to write')", 60, "wrote no trajectory"),
    ],
)
def test_external_failures_are_failed_trials_with_logs(
    dynamic_sequence, tmp_path, body, timeout_s, error
):
    from twinsim.eval.harness import run_trial

    script = write_script(tmp_path, "bad.py", body)
    yaml_path = external_yaml(tmp_path, "bad", script, timeout_s)
    status = run_trial(str(yaml_path), dynamic_sequence, tmp_path / "trial_00", 0)
    assert not status["ok"] and error in status["error"]
    assert (tmp_path / "trial_00" / "status.json").is_file()
    assert error in (tmp_path / "trial_00" / "log.txt").read_text()
    assert body.split("'")[1] in (tmp_path / "trial_00" / "program.log").read_text()


def test_bad_method_specs(tmp_path):
    with pytest.raises(MethodError, match="unknown method 'orb_slam9'; built-in: rgbd_odometry"):
        get_method("orb_slam9")
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\ncommand: run\ntrajectory: t.txt\ntimeout_s: -1\n")
    with pytest.raises(MethodError, match=r"bad\.yaml: timeout_s: Input should be greater than 0"):
        get_method(str(bad))
    bad.write_text("name: x\ncommand: run\n")
    with pytest.raises(MethodError, match=r"bad\.yaml: trajectory: Field required"):
        get_method(str(bad))


def argv_recorder(folder: Path) -> Path:
    """A program that records the arguments it got and writes the sequence's ground truth."""
    return write_script(
        folder,
        "record_argv.py",
        "import json, sys\n"
        "from pathlib import Path\n"
        "from twinsim.eval.io import read_sequence, write_tum\n"
        "Path(sys.argv[2]).parent.joinpath('argv.json').write_text(json.dumps(sys.argv[1:]))\n"
        "write_tum(sys.argv[2], read_sequence(Path(sys.argv[1])))\n",
    )


def test_placeholders_fill_whole_arguments(dynamic_sequence, tmp_path):
    """A sequence path with a space and a quote stays one argument, as do quoted words."""
    import shutil

    from twinsim.eval.harness import run_trial

    seq = tmp_path / "it's a folder" / "seq"
    shutil.copytree(dynamic_sequence, seq)
    yaml_path = tmp_path / "argv.yaml"
    yaml_path.write_text(
        "name: argv\n"
        f'command: "{sys.executable} {argv_recorder(tmp_path)} {{sequence}} {{trial}}/out.txt '
        "--seed={seed} 'two words' {trial_index}\"\n"
        "trajectory: out.txt\n"
    )
    trial = tmp_path / "trial_03"
    status = run_trial(str(yaml_path), seq, trial, 7)
    assert status["ok"], (trial / "log.txt").read_text()
    argv = json.loads((trial / "argv.json").read_text())
    assert argv == [str(seq), f"{trial}/out.txt", "--seed=7", "two words", "03"]


def test_relative_program_is_relative_to_the_yaml(dynamic_sequence, tmp_path, monkeypatch):
    """The program found at load time is the one run in the trial folder, from any cwd."""
    from twinsim.eval.harness import run_trial

    tools, methods = tmp_path / "tools", tmp_path / "methods"
    tools.mkdir()
    methods.mkdir()
    program = write_script(tools, "copy_gt", f"#!{sys.executable}\n{COPY_GT}")
    program.chmod(0o755)
    yaml_path = methods / "relative.yaml"
    yaml_path.write_text(
        'name: relative\ncommand: "../tools/copy_gt {sequence} {trial}/out.txt"\n'
        "trajectory: out.txt\n"
    )
    for i, cwd in enumerate((methods, tmp_path)):
        monkeypatch.chdir(cwd)
        trial = tmp_path / "runs" / "relative" / f"trial_{i:02d}"
        status = run_trial(str(yaml_path), dynamic_sequence, trial, 0)
        assert status["ok"], (trial / "log.txt").read_text()
        assert "wrote" in (trial / "program.log").read_text()
    assert load_external(yaml_path).program == str(program)


@pytest.mark.parametrize(
    ("command", "error"),
    [
        ("python3 'unclosed {sequence}", r"command: cannot split .*No closing quotation"),
        ("python3 {sequnce}", r"command: unknown placeholder \{sequnce\} in '\{sequnce\}'"),
        ("python3 {}", r"command: unknown placeholder \{\}"),
        ("python3 {seed!r}", r"command: unknown placeholder \{seed!r\} in '\{seed!r\}'"),
        ("python3 x}", r"command: bad placeholder in 'x\}'"),
        ("{sequence}/run", r"command: the program '\{sequence\}/run' takes no placeholders"),
        ("nowhere-program {sequence}", r"command: program 'nowhere-program' not found on PATH"),
        ("./missing.sh", r"command: program './missing.sh' \(.*\) is not an executable file"),
        ("", r"command: is empty"),
    ],
)
def test_bad_command_templates_fail_at_load(tmp_path, command, error):
    bad = tmp_path / "bad.yaml"
    bad.write_text(f"name: x\ncommand: {json.dumps(command)}\ntrajectory: t.txt\n")
    with pytest.raises(MethodError, match=r"bad\.yaml: " + error):
        get_method(str(bad))


def test_alignment_is_a_property_of_the_method(tmp_path):
    assert {get_method(name).alignment for name in ("feature_vo", "kiss_icp")} == {"se3"}
    path = tmp_path / "mono.yaml"
    path.write_text("name: mono\ncommand: python3\ntrajectory: t.txt\nalignment: sim3\n")
    assert get_method(str(path)).alignment == "sim3"
    path.write_text("name: mono\ncommand: python3\ntrajectory: t.txt\nalignment: sim4\n")
    with pytest.raises(MethodError, match=r"mono\.yaml: alignment: Input should be 'se3' or"):
        get_method(str(path))
    path.write_text("name: t\ncommand: python3\ntrajectory: '{trial}/{bad}.txt'\n")
    with pytest.raises(MethodError, match=r"trajectory: unknown placeholder \{bad\}"):
        get_method(str(path))
