"""`twinsim …` commands: a thin typer layer that parses, calls the library and prints."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from twinsim.config import load_config, preset_names
from twinsim.errors import TwinsimError

app = typer.Typer(
    help="twinsim: physics-enabled dynamic worlds, exact twins, annotated sensor data.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
console = Console()
err_console = Console(stderr=True)


def _fail(exc: TwinsimError) -> None:
    err_console.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
    raise typer.Exit(code=2)


@app.command()
def run(
    out: Annotated[Path, typer.Option("--out", help="New (or empty) folder for the sequence.")],
    config: Annotated[
        str, typer.Option("--config", "-c", help="Preset name or path to a YAML config.")
    ] = "default",
    seed: Annotated[int | None, typer.Option(help="Seed of every random choice.")] = None,
    duration: Annotated[
        float | None, typer.Option(help="Recorded seconds (after the 1 s bootstrap).")
    ] = None,
    set_: Annotated[
        list[str] | None,
        typer.Option("--set", help="Override a config field: key.path=value (repeatable)."),
    ] = None,
) -> None:
    """Generate a world, fly the robot through it and record a sequence folder."""
    from twinsim.sequence.writer import check_output_folder
    from twinsim.sim import run as run_sim

    try:
        cfg = load_config(config, set_ or (), seed=seed, duration_s=duration)
        check_output_folder(out)
        with Progress(
            TextColumn("[bold]recording[/]"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("steps"),
            TimeRemainingColumn(),
            console=console,
        ) as bar:
            task = bar.add_task("run", total=None)

            def report(done: int, total: int) -> None:
                bar.update(task, completed=done, total=total)

            run_sim(cfg, out, progress=report)
    except TwinsimError as exc:
        _fail(exc)
    console.print(f"sequence written to [bold]{out}[/]")


@app.command()
def validate(path: Annotated[Path, typer.Argument(help="Sequence folder.")]) -> None:
    """Check a sequence for completeness, counts, exact timestamps and readable files."""
    from twinsim.sequence import validate_sequence

    report = validate_sequence(path)
    if not report.ok:
        for problem in report.problems:
            err_console.print(f"[red]✗[/] {problem}", highlight=False, soft_wrap=True)
        err_console.print(f"[bold red]invalid:[/] {path} ({len(report.problems)} problems)")
        raise typer.Exit(code=1)
    console.print(f"[green]✓[/] {path} is a complete, valid sequence")


@app.command()
def info(
    path: Annotated[Path, typer.Argument(help="Sequence folder.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
) -> None:
    """Summarise a sequence: seed, duration, streams, rates, counts, instances."""
    from twinsim.sequence import summarize_sequence

    try:
        summary = summarize_sequence(path)
    except TwinsimError as exc:
        _fail(exc)
    if as_json:
        console.print_json(json.dumps(summary))
        return
    table = Table(title=str(path))
    table.add_column("field")
    table.add_column("value")
    for key, value in summary.items():
        if isinstance(value, dict | list):
            value = json.dumps(value)
        table.add_row(str(key), str(value))
    console.print(table)


@app.command()
def presets() -> None:
    """List the built-in config presets."""
    for name in preset_names():
        console.print(name)


def main() -> None:
    app()
