"""Navbench's adversity levels are documented bundles of config overrides (docs/navbench.md):
`none` changes nothing of the base world, `minor` is light rain, dusk and a few people,
`major` dense smoke, night and a crowd; `--adversity-set level.key=value` changes one value,
bad entries are refused in one line before any trial, and a trial records the values it ran
with (its result and its sequence's metadata)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from twinsim.cli import app
from twinsim.config import load_config
from twinsim.model.sections import LightConfig
from twinsim.navigation.bench import ADVERSITY, BASE_OVERRIDES, NavBenchSpec, navbench

runner = CliRunner()
#: the bundles as docs/navbench.md lists them
DOCUMENTED = {
    "none": {},
    "minor": {"weather.rain": 0.3, "light.preset": "dusk", "people.count": 8},
    "major": {
        "weather.smoke": 0.8,
        "light.preset": "night",
        "people.count": 20,
        "flying_objects.count": 5,
    },
}


def _config(spec: NavBenchSpec, level: str):
    return load_config("tiny", spec.config_overrides("apartment", level))


def test_the_bundles_are_the_documented_overrides():
    spec = NavBenchSpec(("planner",))
    assert ADVERSITY == DOCUMENTED and spec.adversity_bundles() == DOCUMENTED
    base = [f"robot.kind={spec.robot}", "scene.generator=apartment", *BASE_OVERRIDES]
    assert spec.config_overrides("apartment", "none") == base  # none: the base world
    none, minor, major = (_config(spec, level) for level in ("none", "minor", "major"))
    assert none.weather.model_dump() == {"fog": None, "rain": None, "snow": None, "smoke": None}
    assert none.light == LightConfig() and none.people.count == 0 == none.flying_objects.count
    assert (minor.weather.rain, minor.light.preset, minor.people.count) == (0.3, "dusk", 8)
    assert minor.weather.smoke is None and minor.flying_objects.count == 0
    assert (major.weather.smoke, major.light.preset, major.people.count) == (0.8, "night", 20)
    assert major.weather.rain is None and major.flying_objects.count == 5
    docs = Path("docs/navbench.md").read_text(encoding="utf-8")
    for level, bundle in DOCUMENTED.items():
        for key, value in bundle.items():
            assert f"`{key}={value}`" in docs, (level, key)


def test_an_override_changes_one_value_of_one_bundle():
    spec = NavBenchSpec(("planner",), adversity_set=("major.weather.smoke=0.9",))
    bundles = spec.adversity_bundles()
    assert bundles["major"] == DOCUMENTED["major"] | {"weather.smoke": 0.9}
    assert {k: v for k, v in bundles.items() if k != "major"} == {
        k: v for k, v in DOCUMENTED.items() if k != "major"
    }
    spec.check()
    assert _config(spec, "major").weather.smoke == 0.9
    assert _config(spec, "minor").weather.smoke is None
    rain = NavBenchSpec(
        ("planner",), adversity_set=("major.weather.smoke=0", "major.weather.rain=0.8")
    )
    rain.check()
    heavy_rain = _config(rain, "major")
    assert (heavy_rain.weather.rain, heavy_rain.weather.smoke) == (0.8, 0.0)
    assert ADVERSITY == DOCUMENTED  # the table itself is untouched


@pytest.mark.parametrize(
    ("entry", "says"),
    [
        ("extreme.weather.fog=1", r"unknown level 'extreme'; levels: none, minor, major"),
        ("major.weather.hail=0.5", r"unknown config field 'weather\.hail'; allowed here: fog"),
        ("major.weather.smoke=2", r"weather\.smoke: Input should be less than or equal to 1"),
        ("minor.light.preset=dawn", r"light\.preset: Input should be 'day', 'dusk' or 'night'"),
        ("major", r"level\.key=value, e.g\. major\.weather\.smoke=0\.9; got 'major'"),
    ],
    ids=["level", "key", "range", "preset", "malformed"],
)
def test_a_bad_override_is_refused_in_one_line_before_any_trial(tmp_path, entry, says):
    out = tmp_path / "nb"
    args = ["navbench", "--methods", "planner", "--worlds", "apartment", "--adversity", "major"]
    args += ["--trials", "1", "--preset", "tiny", "--out", str(out), "--adversity-set", entry]
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, result.output
    assert errors[0].startswith("error: --adversity-set") and re.search(says, errors[0])
    assert "Traceback" not in result.output and not out.exists()


def test_a_major_trial_records_its_smoke_and_night(tmp_path, gl_backend):
    """One short trial at `major` (a small crowd, to be quick): its result names the bundle's
    values and its sequence's metadata the smoke and the night light."""
    spec = NavBenchSpec(
        ("planner",),
        ("apartment",),
        ("major",),
        trials=1,
        seed=2,
        duration_s=1.0,
        goal_m=(2.0, 4.0),
        overrides=("sensors.cam0.width=32", "sensors.cam0.height=24"),
        preset="tiny",
        adversity_set=("major.people.count=2", "major.flying_objects.count=0"),
    )
    out = tmp_path / "nb"
    navbench(spec, out, workers=1)
    trial = out / "runs/planner/apartment/major/trial_00"
    status = json.loads((trial / "status.json").read_text())
    assert status["ok"], (trial / "log.txt").read_text()
    result = json.loads((trial / "result.json").read_text())
    values = DOCUMENTED["major"] | {"people.count": 2, "flying_objects.count": 0}
    assert result["adversity"] == {"level": "major", "values": values}
    meta = json.loads((trial / "episode/metadata.json").read_text())
    assert meta["weather"]["smoke"] == 0.8 and meta["weather"]["rain"] == 0.0
    assert meta["light"]["preset"] == "night"
    manifest = json.loads((out / "navbench.json").read_text())
    assert manifest["adversity_bundles"]["major"] == values
