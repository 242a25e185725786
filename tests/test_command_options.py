"""Commands build their options from the library's models (`commands/model_options.py`) and
print typed results: every model field is an option with the field's default and description,
a field added to a model is an option without a line of the command changed, and the values
given reach the model."""

from __future__ import annotations

import dataclasses
import enum
import math
import sys
from typing import Literal

import pytest
import typer
from pydantic import BaseModel, Field
from typer.core import TyperOption
from typer.testing import CliRunner

import twinsim.commands.navbench as navbench_cmd
import twinsim.commands.replay as replay_cmd
from twinsim.commands.model_options import (
    ModelOptions,
    ModelValues,
    model_fields,
    with_model_options,
)
from twinsim.configmodel import Seed
from twinsim.errors import TwinsimError
from twinsim.eval.metrics import Evaluation
from twinsim.navigation.bench import NavBenchSpec
from twinsim.render.cycles.settings import CyclesSettings
from twinsim.replay.compare import AXES, ROW_COLUMNS, Comparison
from twinsim.replay.variations import LightVariation, StereoVariation, Variations

runner = CliRunner()


def _command(module, name: str):
    """The click command `module.register` makes, on an app of its own."""
    app = typer.Typer()
    module.register(app)
    app.command("other")(lambda: None)  # a group, so the command is found by its name
    return typer.main.get_command(app).commands[name]


def _options(command) -> dict[str, TyperOption]:
    """A command's options by each of their names (`--x` and `--no-x` of a flag)."""
    params = [p for p in command.params if isinstance(p, TyperOption)]
    return {opt: p for p in params for opt in (*p.opts, *p.secondary_opts)}


# --- the helper on a toy model ---------------------------------------------------------------


class Colour(enum.StrEnum):
    red = "red"
    blue = "blue"


class Inner(BaseModel):
    gain: float = Field(1.0, description="Gain of the inner part.")
    hidden: int = Field(0, description="Not on the command line.")


class Toy(BaseModel):
    count: int = Field(3, description="How many.")
    ratio: float | None = Field(None, description="A ratio, or none.")
    colour: Colour = Field(Colour.red, description="Which colour.")
    names: tuple[str, ...] = Field((), description="Names to use.")
    loud: bool = Field(False, description="Shout.")
    quiet: bool = Field(True, description="Whisper.")
    kind: Literal["a", "b"] = Field("a", description="Kind a or b.")
    seed: Seed = Field(0, description="A seed.")
    inner: Inner = Field(Inner(), description="The inner part.")


def _toy_app(group: ModelOptions, seen: dict) -> typer.Typer:
    def toy(
        name: str = typer.Option("x", help="The command's own option."),
        given: ModelValues | None = None,
    ) -> None:
        seen.update(name=name, given=given)

    app = typer.Typer()
    app.command("toy")(with_model_options(toy, given=group))
    app.command("other")(lambda: None)
    return app


def test_every_field_of_a_model_is_an_option_with_its_type_default_and_help():
    seen: dict = {}
    group = ModelOptions(Toy, expand=("inner",), skip=("inner.hidden",), names={"loud": "--yell"})
    app = _toy_app(group, seen)
    options = _options(typer.main.get_command(app).commands["toy"])
    expected = {
        "--count": (3, "How many."),
        "--ratio": (None, "A ratio, or none."),
        "--colour": (Colour.red, "Which colour."),
        "--names": (None, "Names to use (repeatable)."),  # a list: none given is ()
        "--yell": (False, "Shout."),
        "--quiet": (True, "Whisper."),
        "--kind": ("a", "Kind a or b."),
        "--seed": (0, "A seed."),
        "--inner-gain": (1.0, "Gain of the inner part."),
    }
    for name, (default, help_text) in expected.items():
        assert options[name].help == help_text, name
        assert options[name].default in (default, [] if default is None else default), name
    assert "--no-quiet" in options and "--inner-hidden" not in options and "--loud" not in options
    result = runner.invoke(app, ["toy", "--help"])
    assert result.exit_code == 0
    assert all(name in result.output for name in expected)

    assert runner.invoke(app, ["toy"]).exit_code == 0
    assert seen["given"] == {
        "count": 3,
        "ratio": None,
        "colour": "red",
        "names": [],
        "loud": False,
        "quiet": True,
        "kind": "a",
        "seed": 0,
        "inner": {"gain": 1.0},
    }
    assert Toy.model_validate(seen["given"]) == Toy()  # the defaults are the model's
    args = ["toy", "--count", "5", "--colour", "blue", "--names", "p", "--names", "q", "--yell"]
    args += ["--no-quiet", "--inner-gain", "2.5", "--name", "y"]
    assert runner.invoke(app, args).exit_code == 0
    assert seen["name"] == "y"
    toy = Toy.model_validate(seen["given"])
    assert (toy.count, toy.colour, toy.names, toy.loud, toy.quiet) == (5, "blue", ("p", "q"), 1, 0)
    assert toy.inner.gain == 2.5


def test_unset_options_pass_only_what_was_given():
    """`unset`: an option not given leaves its field out, so a file's value (or the model's
    default) stays; a boolean becomes a flag away from its default."""
    seen: dict = {}
    group = ModelOptions(Toy, expand=("inner",), skip=("inner.hidden",), unset=True)
    app = _toy_app(group, seen)
    options = _options(typer.main.get_command(app).commands["toy"])
    assert options["--count"].default is None and options["--inner-gain"].default is None
    assert "--loud" in options and "--no-quiet" in options and "--quiet" not in options
    assert runner.invoke(app, ["toy"]).exit_code == 0
    assert seen["given"] == {}
    assert runner.invoke(app, ["toy", "--no-quiet", "--inner-gain", "2", "--loud"]).exit_code == 0
    assert seen["given"] == {"quiet": False, "inner": {"gain": 2.0}, "loud": True}


def test_a_dataclass_is_read_like_a_model():
    @dataclasses.dataclass(frozen=True)
    class Settings:
        tags: tuple[str, ...] = dataclasses.field(metadata={"description": "Tags."})
        size: int = dataclasses.field(default=4, metadata={"description": "A size."})

    fields = {f.name: f for f in model_fields(Settings)}
    assert fields["size"].default == 4 and not fields["size"].required
    assert fields["tags"].required and fields["tags"].description == "Tags."
    seen: dict = {}
    app = _toy_app(ModelOptions(Settings, notes={"tags": "comma separated"}), seen)
    options = _options(typer.main.get_command(app).commands["toy"])
    assert options["--tags"].required and options["--tags"].help == "Tags; comma separated."
    assert runner.invoke(app, ["toy"]).exit_code == 2  # --tags is required
    assert runner.invoke(app, ["toy", "--tags", "a,b"]).exit_code == 0
    assert seen["given"] == {"tags": ["a,b"], "size": 4}


def test_a_field_without_description_or_command_line_form_is_refused():
    class Bare(BaseModel):
        n: int = 1

    class Mapping(BaseModel):
        table: dict[str, int] = Field(default_factory=dict, description="A table.")

    with pytest.raises(ValueError, match=r"Bare\.n has no description"):
        ModelOptions(Bare).options()
    with pytest.raises(TypeError, match=r"Mapping\.table: a .* has no command-line form"):
        ModelOptions(Mapping).options()
    with pytest.raises(TypeError, match=r"Toy\.inner: a sub-model; expand it or skip it"):
        ModelOptions(Toy).options()


# --- replay ----------------------------------------------------------------------------------


def _groups() -> dict[str, ModelOptions]:
    return {
        "variations": replay_cmd.variation_options(),
        "stereo": replay_cmd.stereo_options(),
        "cycles": replay_cmd.cycles_options(),
    }


def test_replay_has_an_option_for_every_field_of_its_models():
    """Each field of Variations (its light), StereoVariation and CyclesSettings is an option
    of `twinsim replay` with the field's description as help, or one the command names as
    taken otherwise; an option not given leaves the model's default."""
    options = _options(_command(replay_cmd, "replay"))
    groups = _groups()
    models = {
        "variations": [(Variations, ""), (LightVariation, "light.")],
        "stereo": [(StereoVariation, "")],
        "cycles": [(CyclesSettings, "")],
    }
    for key, group in groups.items():
        made = {".".join(o.path): o for o in group.options()}
        for model, under in models[key]:
            for f in model_fields(model):
                path = under + f.name
                if path in group.skip or path in group.expand:
                    continue
                option = options[made[path].name]
                assert option.help, path
                expected = group.helps.get(path) or f.description
                assert expected.removesuffix(".").lower() in option.help.lower(), path
                if made[path].unset:  # not given: the field keeps the file's or the default
                    assert option.default in (None, False), path
                else:
                    assert option.default == f.default, path
    # the options not given leave every model at its defaults
    assert (
        groups["variations"].values(
            {o.parameter.name: o.parameter.default for o in groups["variations"].options()}
        )
        == {}
    )
    cycles = groups["cycles"]
    values = cycles.values({o.parameter.name: o.parameter.default for o in cycles.options()})
    assert CyclesSettings(**values) == CyclesSettings()
    # every option is listed by --help, names as the README gives them
    shown = runner.invoke(replay_cmd_app(), ["replay", "--help"], env={"COLUMNS": "250"}).output
    names = [o.name for g in groups.values() for o in g.options()]
    assert "--add-flying" in names and "--flicker" in names and "--stereo-rate" in names
    for name in [*names, "--sensor", "--camera", "--lidar", "--stereo-size", "--renderer"]:
        assert name in shown, name


def replay_cmd_app() -> typer.Typer:
    app = typer.Typer()
    replay_cmd.register(app)
    app.command("other")(lambda: None)
    return app


def _stop(seen: dict):
    def record(*args, **kwargs):
        seen.update(args=args, kwargs=kwargs)
        raise TwinsimError("stopped by the test")

    return record


def test_a_field_added_to_variations_or_cycles_settings_is_a_replay_option(monkeypatch, tmp_path):
    """A subclass of each model with one more field, read by the command as it registers: the
    new field is an option (default, help) and its value reaches the models the replay gets."""

    class MoreVariations(Variations):
        brightness: float | None = Field(None, description="Scene brightness gain.")

    @dataclasses.dataclass(frozen=True)
    class MoreCycles(CyclesSettings):
        glare: float = dataclasses.field(default=0.25, metadata={"description": "Lens glare."})

    monkeypatch.setattr(replay_cmd, "Variations", MoreVariations)
    monkeypatch.setattr(replay_cmd, "CyclesSettings", MoreCycles)
    options = _options(_command(replay_cmd, "replay"))
    assert options["--brightness"].help == "Scene brightness gain."
    assert options["--brightness"].default is None  # a variation: not given unless given
    assert options["--glare"].help == "Cycles: lens glare." and options["--glare"].default == 0.25

    merged: dict = {}
    monkeypatch.setattr("twinsim.replay.variations.merge_variations", _stop(merged))
    args = ["replay", str(tmp_path), "--out", str(tmp_path / "t"), "--brightness", "1.5"]
    result = runner.invoke(replay_cmd_app(), [*args, "--fog", "0.2", "--light-intensity", "2"])
    assert result.exit_code == 2 and "stopped by the test" in result.output
    base, override = merged["args"]
    assert isinstance(base, MoreVariations)
    assert override == {"brightness": 1.5, "fog": 0.2, "light": {"intensity": 2.0}}

    # the new Cycles field reaches the settings the replay is given
    replayed: dict = {}
    monkeypatch.undo()
    monkeypatch.setattr(replay_cmd, "CyclesSettings", MoreCycles)
    monkeypatch.setattr(sys.modules["twinsim.replay.replay"], "replay", _stop(replayed))
    args = ["replay", str(tmp_path), "--out", str(tmp_path / "t"), "--glare", "0.5"]
    result = runner.invoke(replay_cmd_app(), [*args, "--seed", "3", "--samples", "4"])
    assert result.exit_code == 2, result.output
    settings = replayed["kwargs"]["cycles"]
    assert isinstance(settings, MoreCycles)
    assert (settings.glare, settings.samples, settings.seed) == (0.5, 4, 3)
    assert replayed["args"][2].seed == 3  # --seed is the variations' seed too


# --- navbench --------------------------------------------------------------------------------


def test_navbench_has_an_option_for_every_field_of_its_spec():
    options = _options(_command(navbench_cmd, "navbench"))
    group = navbench_cmd.spec_options()
    made = {o.path[0]: o for o in group.options()}
    for f in model_fields(NavBenchSpec):
        if f.name in group.skip:
            continue
        option = options[made[f.name].name]
        assert option.help.startswith(f.description.removesuffix(".")), f.name
        default = group.defaults.get(f.name, f.default)
        if f.required and f.name not in group.defaults:
            assert option.required, f.name
        else:
            expected = list(default) if isinstance(default, tuple) else default
            assert option.default == expected, f.name
    assert {"--duration", "--set", "--methods", "--worlds", "--goal-min"} <= set(options)


def test_a_field_added_to_the_navbench_spec_is_an_option(monkeypatch, tmp_path):
    @dataclasses.dataclass(frozen=True)
    class MoreSpec(NavBenchSpec):
        max_steps: int = dataclasses.field(default=100, metadata={"description": "Step cap."})

    monkeypatch.setattr(navbench_cmd, "NavBenchSpec", MoreSpec)
    options = _options(_command(navbench_cmd, "navbench"))
    assert options["--max-steps"].default == 100 and options["--max-steps"].help == "Step cap."
    checked: dict = {}
    monkeypatch.setattr("twinsim.navigation.bench.with_policies", _stop(checked))
    app = typer.Typer()
    navbench_cmd.register(app)
    app.command("other")(lambda: None)
    args = ["navbench", "--methods", "planner,reactive_depth", "--out", str(tmp_path / "nb")]
    result = runner.invoke(app, [*args, "--max-steps", "7", "--goal-max", "4", "--set", "a=1"])
    assert result.exit_code == 2 and "stopped by the test" in result.output
    (spec,) = checked["args"]
    assert isinstance(spec, MoreSpec) and spec.max_steps == 7
    assert spec.methods == ("planner", "reactive_depth") and spec.goal_m == (2.0, 4.0)
    assert spec.worlds == ("apartment", "warehouse") and spec.overrides == ("a=1",)


# --- typed results ---------------------------------------------------------------------------


def test_an_evaluation_renders_its_rows():
    nan = math.nan
    result = Evaluation(0.0123, 0.002, 0.5, nan, nan, 1.0, 0.98, 0.01255, 40, 41, 40, 1.0, "se3")
    rows = dict(result.rows())
    assert rows["ATE RMSE"] == "0.0123 m" and rows["RPE rotation (per frame)"] == "0.5 deg"
    assert rows["RPE translation (per 1 m)"] == "n/a" and rows["tracking rate"] == "1"
    assert rows["matched poses"] == "40 (estimate 40, ground truth 41), SE3 alignment"
    assert result.summary()["rpe_trans_per_m_rmse"] is None


def test_a_comparison_is_typed_and_its_json_keeps_its_keys():
    zero = {"mean": 0.0, "std": 0.0, "max_abs": 0.0}
    result = Comparison("a", "b")
    result.poses["gt"] = {"samples": 3} | {axis: zero for axis in AXES}
    result.tables["imu0"] = {"samples": 3, "max_abs_difference": 0.5}
    assert list(result.as_dict()) == [
        "a",
        "b",
        "poses",
        "cameras",
        "lidars",
        "event_cameras",
        "contacts",
        "tables",
        "only_in_a",
        "only_in_b",
    ]
    assert result.rows("poses") == [("gt", "3", *["0 ± 0"] * 6)]
    assert result.rows("tables") == [("imu0", "3", "0.5")] and result.rows("lidars") == []
    assert all(len(row) == len(ROW_COLUMNS[s]) for s in result.SECTIONS for row in result.rows(s))
    with pytest.raises(ValueError, match="unknown section 'imus'"):
        result.rows("imus")
