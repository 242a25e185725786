"""Text a user or a file gives — configs, `--set` values, plans, variations, noise settings,
`metadata.json`, `dataset.json` — fails in one line naming where, with exit code 2, however it
is wrong: bad YAML, nesting that a parser's recursion cannot take, entries of the wrong shape.
"""

from __future__ import annotations

import json
import shutil

import pytest
from typer.testing import CliRunner

from twinsim.cli import app
from twinsim.textdata import MAX_DEPTH, TextDataError, parse_json, parse_yaml

DEEP = "[" * 100_000


def _fails_in_one_line(args: list[str], *expected: str) -> str:
    result = CliRunner().invoke(app, args)
    text = result.output.strip()
    assert result.exit_code == 2, text
    assert "Traceback" not in text and len(text.splitlines()) == 1, text
    assert len(text) < 400, text  # a huge input is quoted in part only
    for part in expected:
        assert part in text, text
    return text


def test_nesting_past_the_limit_is_refused_and_within_it_taken():
    within = "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1)
    assert isinstance(parse_json(within), list) and isinstance(parse_yaml(within), list)
    for parse in (parse_json, parse_yaml):
        with pytest.raises(TextDataError, match=f"nested more than {MAX_DEPTH} deep"):
            parse(DEEP)
        with pytest.raises(TextDataError, match=f"nested more than {MAX_DEPTH} deep"):
            parse("[" * (MAX_DEPTH + 2) + "]" * (MAX_DEPTH + 2))


def test_configs_and_set_values_that_do_not_parse(tmp_path):
    out = str(tmp_path / "out")
    deep = tmp_path / "deep.yaml"
    deep.write_text("seed: " + DEEP)
    _fails_in_one_line(["run", "--config", str(deep), "--out", out], "deep.yaml", "nested")
    _fails_in_one_line(["run", "--config", "tiny", "--set", f"seed={DEEP}", "--out", out], "--set")
    assert not (tmp_path / "out").exists()


def test_noise_settings_that_do_not_parse(tmp_path, dynamic_sequence):
    out = str(tmp_path / "noisy")
    args = ["noise", str(dynamic_sequence), "-p", "rotors-default", "--out", out, "--set"]
    _fails_in_one_line([*args, "imu.gyro_noise_density=[1"], "imu.gyro_noise_density", "'[1'")
    _fails_in_one_line([*args, f"imu.gyro_noise_density={DEEP}"], "nested")


def test_plans_and_variations_that_do_not_parse(tmp_path, dynamic_sequence):
    plan = tmp_path / "plan.yaml"
    plan.write_text("jobs: " + DEEP)
    _fails_in_one_line(["batch", str(plan), "--out", str(tmp_path / "ds")], "plan.yaml")
    variations = tmp_path / "variations.yaml"
    variations.write_bytes(b"fog: \xff\xfe")
    out = str(tmp_path / "twin")
    args = ["replay", str(dynamic_sequence), "--variations", str(variations), "--out", out]
    _fails_in_one_line(args, "variations.yaml")


def test_metadata_of_the_wrong_shape_is_named(tmp_path, dynamic_sequence):
    seq = tmp_path / "seq"
    shutil.copytree(dynamic_sequence, seq)
    metadata = json.loads((seq / "metadata.json").read_text())
    for change, entry in [
        (lambda m: m.pop("status"), None),  # absent: shown as unknown
        (lambda m: m.update(people={"placed": 1}), "people.requested"),
        (lambda m: m.update(rooms=5), "rooms"),
        (lambda m: m.update(robots=[1]), "robots.0"),
    ]:
        edited = json.loads(json.dumps(metadata))
        change(edited)
        (seq / "metadata.json").write_text(json.dumps(edited))
        if entry is None:
            result = CliRunner().invoke(app, ["info", str(seq)])
            assert result.exit_code == 0, result.output
            assert "no status" in " ".join(result.output.split()), result.output
        else:
            _fails_in_one_line(["info", str(seq)], "metadata.json", entry)
    (seq / "metadata.json").write_text(DEEP)
    _fails_in_one_line(["info", str(seq)], "metadata.json", "nested")
    checked = CliRunner().invoke(app, ["validate", str(seq)])  # invalid: exit 1, named
    assert checked.exit_code == 1 and "Traceback" not in checked.output
    assert "nested more than" in " ".join(checked.output.split())


def test_a_dataset_manifest_of_the_wrong_shape_is_named(tmp_path):
    dataset = tmp_path / "ds"
    dataset.mkdir()
    for manifest, entry in [
        ({"jobs": []}, "jobs"),
        ({"jobs": {"a": {"id": "a"}}, "stale": {}}, "jobs.a.type"),
        ({"jobs": {"a": {"id": "a", "type": "run", "status": 3}}, "stale": {}}, "jobs.a.status"),
    ]:
        (dataset / "dataset.json").write_text(json.dumps({"format": "twinsim-dataset", **manifest}))
        _fails_in_one_line(["info", str(dataset)], "dataset.json", entry)


def test_a_sensor_section_of_settings_not_sensors_is_refused(tmp_path):
    """`cameras: {width: 64}` once made a camera named "width"."""
    config = tmp_path / "c.yaml"
    config.write_text("extends: tiny\ncameras:\n  width: 64\n")
    out = str(tmp_path / "out")
    _fails_in_one_line(["run", "--config", str(config), "--out", out], "cameras.width", "got 64")
