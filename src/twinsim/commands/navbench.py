"""`twinsim navbench`: navigation methods × worlds × adversity × trials into a report folder.

Its options are `NavBenchSpec`'s fields (`commands/model_options.py`), but for the goal range
(`--goal-min`, `--goal-max`) and how the trials run (`--out`, `--workers`, `--ray`).
"""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path
from typing import Annotated

import typer

from twinsim.commands.common import RayOption, console, fail, trials_bar
from twinsim.commands.model_options import ModelOptions, ModelValues, with_model_options
from twinsim.errors import TwinsimError
from twinsim.navigation.bench import NavBenchSpec

#: the spec's goal range, shortest and longest (`--goal-min`, `--goal-max`)
GOAL_M = next(f.default for f in fields(NavBenchSpec) if f.name == "goal_m")


def spec_options() -> ModelOptions:
    """`NavBenchSpec` as options: a field added to the spec is an option of navbench."""
    return ModelOptions(
        NavBenchSpec,
        names={"duration_s": "--duration", "overrides": "--set"},
        notes={key: "comma separated" for key in ("methods", "worlds", "adversity")},
        skip=("goal_m", "external"),  # goal_m is --goal-min/--goal-max; external from methods
    )


def navbench_command(
    out: Annotated[Path, typer.Option("--out", help="Report folder (new, empty, or resumed).")],
    spec: ModelValues | None = None,  # spec_options()
    workers: Annotated[int, typer.Option(help="Trials at once, each in its own process.")] = 2,
    goal_min: Annotated[float, typer.Option(help="Shortest goal distance (m, geodesic).")] = GOAL_M[
        0
    ],
    goal_max: Annotated[float, typer.Option(help="Longest goal distance (m, geodesic).")] = GOAL_M[
        1
    ],
    ray: RayOption = None,
) -> None:
    """Run every method in every world at every adversity level N times; write Table I.

    Re-running the same command resumes: successful trials are kept, unfinished and failed ones
    run again.
    """
    from twinsim.navigation.bench import navbench, parse_list, with_policies
    from twinsim.sequence import check_output_outside_sequences

    given = dict(spec or {})
    for key in ("methods", "worlds", "adversity"):
        given[key] = parse_list(given[key])
    given["overrides"] = tuple(given["overrides"])
    given["adversity_set"] = tuple(given["adversity_set"])
    bench_spec = NavBenchSpec(**given, goal_m=(goal_min, goal_max))
    try:
        bench_spec = with_policies(bench_spec)  # every policy YAML checked before the first trial
        check_output_outside_sequences(out)  # before the progress bar shows
        with trials_bar("navbench", "episodes") as report:
            files = navbench(bench_spec, out, workers=workers, progress=report, ray=ray)
    except TwinsimError as exc:
        fail(exc)
    console.print((out / "table.md").read_text(encoding="utf-8"), markup=False)
    console.print(f"report written to [bold]{out}[/]: {len(files)} files")


def register(app: typer.Typer) -> None:
    """Add `twinsim navbench`, its options made from `NavBenchSpec` as it is now."""
    app.command("navbench")(with_model_options(navbench_command, spec=spec_options()))
