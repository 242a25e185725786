"""`twinsim validate|info|preview SEQ`: check, summarise or look at one frame of a sequence."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from twinsim.atomic import atomic_file
from twinsim.commands.common import console, err_console, fail
from twinsim.errors import TwinsimError


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


def info(
    path: Annotated[Path, typer.Argument(help="Sequence or dataset folder.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
) -> None:
    """Summarise a sequence (seed, duration, streams, rates, counts, instances) or a dataset
    made by `twinsim batch` (its card: jobs, sequences, size, command)."""
    from twinsim.sequence import summarize_sequence

    if (path / "dataset.json").is_file():
        _dataset_info(path, as_json)
        return
    try:
        summary = summarize_sequence(path)
    except TwinsimError as exc:
        fail(exc)
    if as_json:
        console.print_json(json.dumps(summary.as_dict()))
        return
    status = summary.metadata.get("status", "no status")
    console.print(_facts(f"{path} ({status})", summary.facts()))
    streams = Table(title="streams")
    for column in ("stream", "robot", "type", "rate (Hz)", "count", "details"):
        streams.add_column(column)
    for row in summary.stream_rows():
        streams.add_row(*row)
    console.print(streams)


def _dataset_info(path: Path, as_json: bool) -> None:
    """`info DATASET`: the dataset card's summary, from its dataset.json."""
    from twinsim.batch import dataset_summary

    try:
        summary = dataset_summary(path)
    except TwinsimError as exc:
        fail(exc)
    if as_json:
        console.print_json(json.dumps(summary.as_dict()))
        return
    title = f"{path} (dataset: {summary.n_done} of {summary.n_jobs} jobs done)"
    console.print(_facts(title, summary.facts()))
    table = Table(title="sequences")
    table.add_column("sequence", overflow="fold")
    for column in ("frames", "duration (s)", "people", "dynamic fraction"):
        table.add_column(column)
    for row in summary.sequence_rows():
        table.add_row(*row)
    console.print(table)


def _facts(title: str, rows: list[tuple[str, str]]) -> Table:
    """(label, text) rows as a table without a header."""
    facts = Table(title=title, show_header=False)
    for label, text in rows:
        facts.add_row(label, text)
    return facts


def preview(
    path: Annotated[Path, typer.Argument(help="Sequence folder.")],
    out: Annotated[Path, typer.Option("--out", help="PNG file to write.")],
    camera: Annotated[
        str | None, typer.Option(help="Camera stream (default: the first, e.g. cam0).")
    ] = None,
    frame: Annotated[int, typer.Option(help="Frame index (negative counts from the end).")] = 0,
    most_dynamic: Annotated[
        bool,
        typer.Option(
            "--most-dynamic", help="Take the frame showing the most people and moving objects."
        ),
    ] = False,
) -> None:
    """Write one frame as a contact sheet: RGB, depth, instances, boxes."""
    import cv2

    from twinsim.sequence import check_output_outside_sequences, open_sequence
    from twinsim.sequence.preview import preview_frame

    try:
        check_output_outside_sequences(out)
        seq = open_sequence(path)
        cameras = [n for n in seq.streams if seq.stream_info(n).get("type") == "camera"]
        if camera is None and not cameras:
            raise TwinsimError(f"{path}: has no camera stream to preview")
        camera = camera or cameras[0]
        stream = seq.camera(camera)
        if most_dynamic:
            shares = [json.loads(line).get("dynamic_fraction", 0.0) for line in stream.boxes_lines]
            frame = max(range(len(shares)), key=shares.__getitem__, default=0)
        if not -len(stream) <= frame < len(stream):
            raise TwinsimError(f"--frame {frame}: {camera} has frames 0..{len(stream) - 1}")
        sheet = preview_frame(stream[frame])
        if out.suffix.lower() not in (".png", ".jpg", ".jpeg"):
            raise TwinsimError(f"--out {out}: the contact sheet is an image: name a .png or .jpg")
        with atomic_file(out) as tmp:
            if not cv2.imwrite(str(tmp), sheet[..., ::-1]):
                raise TwinsimError(f"--out {out}: the image could not be written")
    except TwinsimError as exc:
        fail(exc)
    console.print(f"preview written to [bold]{out}[/]")


def register(app: typer.Typer) -> None:
    """Add `twinsim validate`, `twinsim info` and `twinsim preview`."""
    app.command("validate")(validate)
    app.command("info")(info)
    app.command("preview")(preview)
