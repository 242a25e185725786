"""`twinsim navbench`: navigation methods × worlds × adversity × trials into a report folder."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from twinsim.commands.common import RayOption, console, fail, trials_bar
from twinsim.errors import TwinsimError


def navbench_command(
    methods: Annotated[
        list[str],
        typer.Option(
            "--methods",
            help="Registered methods (planner, reactive_depth) or external policy YAML files "
            "(*.yaml, docs/navbench.md); comma separated.",
        ),
    ],
    out: Annotated[Path, typer.Option("--out", help="Report folder (new, empty, or resumed).")],
    worlds: Annotated[
        list[str], typer.Option("--worlds", help="World generators; comma separated.")
    ] = ["apartment", "warehouse"],  # noqa: B006 (typer reads the default list)
    adversity: Annotated[
        list[str], typer.Option("--adversity", help="Levels: none, minor, major; comma separated.")
    ] = ["none", "minor", "major"],  # noqa: B006
    trials: Annotated[int, typer.Option(help="Trials per method, world and level.")] = 5,
    workers: Annotated[int, typer.Option(help="Trials at once, each in its own process.")] = 2,
    seed: Annotated[int, typer.Option(help="Trial i runs in the world and goal of seed + i.")] = 0,
    robot: Annotated[str, typer.Option(help="Robot kind driven.")] = "omni",
    duration: Annotated[float, typer.Option(help="Episode time limit (s).")] = 60.0,
    goal_min: Annotated[float, typer.Option(help="Shortest goal distance (m, geodesic).")] = 2.0,
    goal_max: Annotated[float, typer.Option(help="Longest goal distance (m, geodesic).")] = 6.0,
    preset: Annotated[str, typer.Option(help="Preset or YAML the worlds start from.")] = "default",
    overrides: Annotated[
        list[str], typer.Option("--set", help="Config override for every trial (key=value).")
    ] = [],  # noqa: B006
    ray: RayOption = None,
) -> None:
    """Run every method in every world at every adversity level N times; write Table I.

    Re-running the same command resumes: successful trials are kept, unfinished and failed ones
    run again.
    """
    from twinsim.navigation.bench import NavBenchSpec, navbench, parse_list, with_policies
    from twinsim.sequence import check_output_outside_sequences

    spec = NavBenchSpec(
        methods=parse_list(methods),
        worlds=parse_list(worlds),
        adversity=parse_list(adversity),
        trials=trials,
        seed=seed,
        robot=robot,
        duration_s=duration,
        goal_m=(goal_min, goal_max),
        overrides=tuple(overrides),
        preset=preset,
    )
    try:
        spec = with_policies(spec)  # every policy YAML checked before the first trial
        check_output_outside_sequences(out)  # before the progress bar shows
        with trials_bar("navbench", "episodes") as report:
            files = navbench(spec, out, workers=workers, progress=report, ray=ray)
    except TwinsimError as exc:
        fail(exc)
    console.print((out / "table.md").read_text(encoding="utf-8"), markup=False)
    console.print(f"report written to [bold]{out}[/]: {len(files)} files")


def register(app: typer.Typer) -> None:
    """Add `twinsim navbench`."""
    app.command("navbench")(navbench_command)
