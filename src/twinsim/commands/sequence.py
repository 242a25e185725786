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
        console.print_json(json.dumps(summary))
        return
    facts = Table(title=f"{path} ({summary.get('status', 'no status')})", show_header=False)
    get = summary.get
    rooms = get("rooms") or []
    by_class = get("instances_by_class", {})
    for key, value in (
        ("seed", get("seed")),
        ("recorded", f"{get('duration_s')} s after {get('bootstrap_steps')} bootstrap steps"),
        ("physics", f"{get('physics_hz')} Hz"),
        ("robots", ", ".join(f"{r.get('name')} ({r.get('kind')})" for r in get("robots") or [])),
        ("versions", f"twinsim {get('twinsim_version')}, mujoco {get('mujoco_version')}"),
        ("rooms", ", ".join(r["type"] for r in rooms) or "-"),
        ("instances", f"{get('n_instances')} ({get('n_dynamic_instances')} dynamic)"),
        ("classes", ", ".join(f"{c} {n}" for c, n in by_class.items())),
        ("people", _placed(get("people"))),
        *_redraw_rows(get("redraw")),
        *_traffic_rows(get("traffic") or {}),
        ("flying objects", get("flying_objects", 0)),
        *_statistics_rows(get("statistics") or {}),
    ):
        facts.add_row(key, str(value))
    console.print(facts)
    streams = Table(title="streams")
    for column in ("stream", "robot", "type", "rate (Hz)", "count", "details"):
        streams.add_column(column)
    for name, entry in summary.get("streams", {}).items():
        count, details = str(entry.get("count")), entry.get("resolution", "")
        robot = str(entry.get("robot") or "-")
        streams.add_row(name, robot, entry["type"], str(entry["rate_hz"]), count, details)
    console.print(streams)


def _dataset_info(path: Path, as_json: bool) -> None:
    """`info DATASET`: the dataset card's summary, from its dataset.json."""
    from twinsim.batch import dataset_summary

    try:
        summary = dataset_summary(path)
    except TwinsimError as exc:
        fail(exc)
    if as_json:
        console.print_json(json.dumps(summary))
        return
    facts = Table(title=f"{path} (dataset: {summary['n_done']} of {summary['n_jobs']} jobs done)")
    facts.show_header = False
    for key, value in (
        ("twinsim", summary["twinsim_version"]),
        ("executor", summary["executor"]),
        ("command", summary["command"]),
        ("jobs", ", ".join(f"{k} {n}" for k, n in summary["jobs"].items())),
        ("sequences", len(summary["sequences"])),
        ("size", f"{summary['size_bytes'] / 1024**2:.1f} MiB"),
    ):
        facts.add_row(key, str(value))
    console.print(facts)
    table = Table(title="sequences")
    table.add_column("sequence", overflow="fold")
    for column in ("frames", "duration (s)", "people", "dynamic fraction"):
        table.add_column(column)
    for seq_id, stats in summary["sequences"].items():
        dyn = stats.get("dynamic_fraction")
        table.add_row(
            seq_id,
            str(stats.get("frames")),
            str(stats.get("duration_s")),
            str(stats.get("people_placed")),
            "-" if dyn is None else f"{dyn:.3f}",
        )
    console.print(table)


def _placed(counts: dict | None) -> str:
    """A `{placed, requested}` count as the line `info` shows ("-" where the metadata has none:
    `summarize_sequence` checked its shape)."""
    return "{placed} placed of {requested} requested".format(**counts) if counts else "-"


def _redraw_rows(redraw: dict | None) -> list[tuple[str, str]]:
    """The redraw that built the world, where the seed's own draw of people left no start."""
    if not redraw:
        return []
    failed = len(redraw.get("failures") or ())
    text = f"draw {redraw.get('draw')} with {redraw.get('people_requested')} people"
    return [("redrawn", f"{text} ({failed} earlier draw(s) left a robot no start or tour)")]


def _traffic_rows(traffic: dict) -> list[tuple[str, str]]:
    """A town's walkers and vehicles as (label, text) rows, apart from the `people` section's."""
    return [(name, _placed(traffic[name])) for name in ("walkers", "vehicles") if traffic.get(name)]


def _statistics_rows(stats: dict) -> list[tuple[str, str]]:
    """GRADE's Table 8 figures as (label, text) rows."""
    rows = []
    for key, unit in (
        ("linear_speed", "m/s"),
        ("linear_accel", "m/s²"),
        ("angular_speed", "rad/s"),
        ("angular_accel", "rad/s²"),
    ):
        values = stats.get("camera_motion", {}).get(key)
        if values:
            rows.append(
                (f"camera |{key}|", " ".join(f"{v:.3f}" for v in values) + f" {unit} (x y z)")
            )
    dyn = stats.get("dynamic_content")
    if dyn:
        rows.append(
            (
                "dynamic content",
                f"{dyn['frames_with_dynamic_content']} of {dyn['frames']} frames, mean coverage "
                f"{dyn['mean_dynamic_coverage']:.1%}",
            )
        )
    return rows


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
