"""`twinsim eval GT EST`: trajectory metrics of an estimate against its ground truth."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from twinsim.commands.common import console, err_console, fail
from twinsim.errors import TwinsimError

FORMATS = "tum, euroc, kitti, bag, sequence"


def evaluate_command(
    gt: Annotated[Path, typer.Argument(help="Ground truth: trajectory file, bag or sequence.")],
    est: Annotated[Path, typer.Argument(help="Estimate: trajectory file or bag.")],
    gt_format: Annotated[
        str | None, typer.Option("--gt-format", help=f"Format of GT ({FORMATS}); guessed.")
    ] = None,
    est_format: Annotated[
        str | None, typer.Option("--est-format", help=f"Format of EST ({FORMATS}); guessed.")
    ] = None,
    gt_times: Annotated[
        Path | None, typer.Option("--gt-times", help="times.txt of KITTI ground truth.")
    ] = None,
    est_times: Annotated[
        Path | None, typer.Option("--est-times", help="times.txt of a KITTI estimate.")
    ] = None,
    gt_topic: Annotated[str | None, typer.Option("--gt-topic", help="Pose topic of a bag.")] = None,
    est_topic: Annotated[
        str | None, typer.Option("--est-topic", help="Pose topic of a bag.")
    ] = None,
    stream: Annotated[
        str | None,
        typer.Option(help="Sequence stream of the ground truth (default: first camera)."),
    ] = None,
    sim3: Annotated[
        bool, typer.Option("--sim3", help="Align with scale (monocular estimates).")
    ] = False,
    max_diff: Annotated[
        float,
        typer.Option("--max-diff", min=0.0, help="Largest stamp difference to associate, s."),
    ] = 0.01,
    frame_period: Annotated[
        float | None,
        typer.Option(
            "--frame-period",
            min=1e-6,
            help="Frame period for the tracking rate, s (default: the estimate's median spacing).",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the metrics as JSON.")] = False,
) -> None:
    """ATE, RPE, tracking rate, coverage and scaled ATE of EST against GT (evo underneath)."""
    from twinsim.eval.io import read_trajectory
    from twinsim.eval.metrics import evaluate

    try:
        ground_truth = read_trajectory(gt, gt_format, times=gt_times, topic=gt_topic, stream=stream)
        estimate = read_trajectory(est, est_format, times=est_times, topic=est_topic)
        result = evaluate(
            ground_truth, estimate, sim3=sim3, max_diff_s=max_diff, frame_period_s=frame_period
        )
    except TwinsimError as exc:
        fail(exc)
    if as_json:
        console.print_json(json.dumps(result.summary(), allow_nan=False))
        return
    for note in result.notes:
        err_console.print(f"[yellow]warning:[/] {note}", highlight=False, soft_wrap=True)
    table = Table(title=f"{est} vs {gt}", show_header=False)
    for label, text in result.rows():
        table.add_row(label, text)
    console.print(table)


def register(app: typer.Typer) -> None:
    """Add `twinsim eval`."""
    app.command("eval")(evaluate_command)
