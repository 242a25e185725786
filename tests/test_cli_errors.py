"""Bad input: a one-line error naming the field and what is allowed, exit 2, nothing written."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from twinsim.cli import app

runner = CliRunner()


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            ["--config", "no-such-preset"],
            r"unknown preset 'no-such-preset'; allowed: D, DH, .*default.*tiny",
        ),
        (
            ["--set", "cameras.cam0.widht=320"],
            r"unknown config field 'cameras\.cam0\.widht'.*width",
        ),
        (
            ["--set", "imus.imu0.rate_hz=7"],
            r"imus\.imu0\.rate_hz=7 must divide sim\.physics_hz=240",
        ),
        (
            ["--set", "cameras.cam0.rate_hz=50"],
            r"cameras\.cam0\.rate_hz=50 must divide.*allowed: 1, 2",
        ),
        (["--duration", "0"], r"sim\.duration_s: Input should be greater than 0"),
        (["--duration", "-5"], r"sim\.duration_s: Input should be greater than 0"),
        (["--duration", "inf"], r"sim\.duration_s: Input should be a finite number"),
        (["--duration", "1e12"], r"sim\.duration_s: Input should be less than or equal to 86400"),
        (  # was accepted and ignored
            ["--set", "cameras.cam0=5"],
            r"cameras\.cam0: the settings of sensor 'cam0', a mapping of field to value",
        ),
        (  # once hung listing every divisor of the rate in the message
            ["--set", "sim.physics_hz=1000000000"],
            r"sim\.physics_hz: Input should be less than or equal to 10000",
        ),
        (
            ["--set", "scene.max_rooms=13"],
            r"scene\.max_rooms: Input should be less than or equal to 12",
        ),
        (
            ["--set", "render.backend=vulkan"],
            r"render\.backend: Input should be 'auto', 'egl' or 'osmesa'",
        ),
        (["--set", "nonsense"], r"--set expects key\.path=value"),
    ],
)
def test_bad_config_is_one_line_exit_2(tmp_path, args, expected):
    import re

    out = tmp_path / "seq"
    result = runner.invoke(app, ["run", "--out", str(out), *args])
    assert result.exit_code == 2, result.output
    text = result.output.strip()
    assert "Traceback" not in text
    assert len(text.splitlines()) == 1, text
    assert re.search(expected, text), text
    assert not out.exists()


def test_non_empty_output_folder_is_refused_untouched(tmp_path):
    out = tmp_path / "seq"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    result = runner.invoke(app, ["run", "--config", "tiny", "--out", str(out)])
    assert result.exit_code == 2
    assert "not empty" in result.output
    assert sorted(p.name for p in out.iterdir()) == ["keep.txt"]


def test_output_below_a_file_is_refused(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    result = runner.invoke(app, ["run", "--config", "tiny", "--out", str(blocker / "seq")])
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    assert str(blocker) in result.output.replace("\n", "")


def test_config_file_with_misspelt_key(tmp_path):
    cfg = tmp_path / "bad.yaml"
    cfg.write_text("sim:\n  duraton_s: 3\n")
    result = runner.invoke(app, ["run", "--config", str(cfg), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert (
        "unknown config field 'sim.duraton_s'; allowed here: physics_hz, bootstrap_s, duration_s"
        in result.output
    )


def test_validate_and_info_on_missing_folder(tmp_path):
    missing = tmp_path / "nothing"
    assert runner.invoke(app, ["validate", str(missing)]).exit_code == 1
    result = runner.invoke(app, ["info", str(missing)])
    assert result.exit_code == 2
    assert "Traceback" not in result.output


def test_a_duration_past_the_longest_tour_says_how_long_it_may_be(tmp_path, monkeypatch):
    """Item 15: not "route does not converge (1000 legs)" but the field and its largest value
    (fewer legs here, so that the planner reaches its bound in a second)."""
    import twinsim.robots.common.tour as tour

    monkeypatch.setattr(tour, "MAX_LEGS", 8)
    out = tmp_path / "seq"
    args = ["run", "--config", "tiny", "--duration", "80000", "--out", str(out)]
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    text = result.output.strip()
    assert len(text.splitlines()) == 1 and "Traceback" not in text, text
    assert re.search(
        r"sim\.duration_s=8000\d s is longer than a tour of this world can last: a route has at "
        r"most 8 legs \(\d+ m here, ~\d+ s at [\d.]+ m/s\); allowed: at most ~\d+ s$",
        text,
    ), text
    assert not out.exists()


@pytest.mark.parametrize("left", [(), ("scene.json",), ("scene.json", "imu0/data.csv")])
def test_a_run_killed_at_start_up_is_named_as_interrupted(tmp_path, left):
    """Item 15: INCOMPLETE and no metadata.json is an interrupted run, whatever else the kill
    left; not "missing (is … a sequence folder?)" nor "neither a twinsim sequence …"."""
    seq = tmp_path / "seq"
    seq.mkdir()
    (seq / "INCOMPLETE").write_text("")
    for name in left:
        (seq / name).parent.mkdir(exist_ok=True)
        (seq / name).write_text("{}")
    said = f"{seq}: interrupted before its metadata.json was written (INCOMPLETE is there"
    info = runner.invoke(app, ["info", str(seq)])
    assert info.exit_code == 2 and said in info.output.replace("\n", ""), info.output
    check = runner.invoke(app, ["validate", str(seq)])
    assert check.exit_code == 1 and said in check.output.replace("\n", ""), check.output
    estimate = tmp_path / "est.txt"
    estimate.write_text("0 0 0 0 0 0 0 1\n1 0 0 0 0 0 0 1\n")
    scored = runner.invoke(app, ["eval", str(seq), str(estimate)])
    assert scored.exit_code == 2 and "Traceback" not in scored.output, scored.output
    assert f"{seq}: sequence is incomplete" in scored.output.replace("\n", ""), scored.output
