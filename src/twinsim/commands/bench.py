"""`twinsim bench`: methods × sequences × trials into a report folder."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from twinsim.commands.common import RayOption, console, fail, trials_bar
from twinsim.errors import TwinsimError


def _split(values: list[str]) -> list[str]:
    return [item for value in values for item in value.split(",") if item]


def bench_command(
    methods: Annotated[
        list[str],
        typer.Option(
            "--methods",
            help="Built-in baselines (rgbd_odometry, feature_vo, feature_vo_masked, kiss_icp, "
            "kiss_icp_static) or method YAML files; comma separated or repeated.",
        ),
    ],
    sequences: Annotated[
        list[str],
        typer.Option("--sequences", help="Sequence folders; comma separated or repeated."),
    ],
    out: Annotated[Path, typer.Option("--out", help="Report folder (new, empty, or resumed).")],
    trials: Annotated[int, typer.Option(help="Trials per method and sequence.")] = 3,
    workers: Annotated[int, typer.Option(help="Trials at once, each in its own process.")] = 2,
    seed: Annotated[int, typer.Option(help="Trial i runs with seed + i.")] = 0,
    ray: RayOption = None,
) -> None:
    """Run every method on every sequence N times; write results.csv, tables and plots.

    Re-running the same command resumes: successful trials are kept, unfinished and failed ones
    run again; a sequence whose content differs from the one benchmarked under its name is refused.
    """
    from twinsim.eval.harness import bench
    from twinsim.sequence import check_output_outside_sequences

    try:
        check_output_outside_sequences(out)  # before the progress bar shows
        with trials_bar("bench", "trials") as report:
            result = bench(
                _split(methods),
                _split(sequences),
                trials,
                out,
                workers=workers,
                seed=seed,
                progress=report,
                ray=ray,
            )
    except TwinsimError as exc:
        fail(exc)
    failed = sum(not r.ok for r in result.results)
    console.print((out / "table.md").read_text(encoding="utf-8"), markup=False)
    console.print(
        f"{len(result.results)} trials ({failed} failed); report written to [bold]{out}[/]: "
        + ", ".join(sorted(result.files))
    )


def register(app: typer.Typer) -> None:
    """Add `twinsim bench`."""
    app.command("bench")(bench_command)
