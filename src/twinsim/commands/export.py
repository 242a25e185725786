"""`twinsim export SEQ --format F --out DIR`: a sequence in the formats the field reads."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from twinsim.commands.common import console, fail, progress_bar
from twinsim.errors import TwinsimError
from twinsim.export import FORMATS, ExportError, export_sequence
from twinsim.sequence.writer import check_output_folder

_FORMAT_HELP = "; ".join(f"{f.name}: {f.summary}" for f in FORMATS.values())


def export(
    path: Annotated[Path, typer.Argument(help="Sequence folder (only read).")],
    fmt: Annotated[str, typer.Option("--format", "-f", help=f"Format. {_FORMAT_HELP}.")],
    out: Annotated[Path, typer.Option("--out", help="New (or empty) output folder.")],
    option: Annotated[
        list[str] | None,
        typer.Option(
            "--option",
            "-o",
            help="Format option key=value (repeatable), e.g. camera=cam0, task=segment, "
            "classes=person,chair, sequence=05, min_area=20, resolution_m=0.05, "
            "static_only=true, file_format=usdc.",
        ),
    ] = None,
    robot: Annotated[
        str | None,
        typer.Option("--robot", help="Robot whose streams to export (default: the first)."),
    ] = None,
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Replace an existing export folder.")
    ] = False,
) -> None:
    """Export a sequence as TUM, EuRoC, KITTI (odometry or tracking), a ROS 2 or ROS 1 bag, COCO,
    YOLO or Rerun, its world as MJCF, meshes, occupancy maps or a point-cloud map, or the whole
    run as a USD stage."""
    try:
        options = _parse_options(fmt, option or [])
        if not overwrite:
            check_output_folder(out)
        with progress_bar(f"exporting {fmt}") as report:
            result = export_sequence(
                path, fmt, out, progress=report, robot=robot, overwrite=overwrite, **options
            )
    except TwinsimError as exc:
        fail(exc)
    console.print(f"{fmt} export written to [bold]{result}[/]")


def _parse_options(fmt: str, pairs: list[str]) -> dict[str, object]:
    """key=value strings as typed keyword arguments (booleans, integers and numbers where the
    default is one)."""
    if fmt not in FORMATS:
        raise ExportError(f"--format {fmt!r} is unknown; allowed: {', '.join(FORMATS)}")
    defaults = FORMATS[fmt].options()
    options: dict[str, object] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or key not in defaults:
            allowed = ", ".join(defaults) or "none"
            raise ExportError(f"--option {pair!r}: expected key=value with key in: {allowed}")
        options[key] = _typed(pair, key, value, defaults[key])
    return options


def _typed(pair: str, key: str, value: str, default: object) -> object:
    """An option's text as its default's type (text where the default is text or None)."""
    if isinstance(default, bool):
        truth = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}
        if value.lower() not in truth:
            raise ExportError(f"--option {pair!r}: {key} must be true or false")
        return truth[value.lower()]
    for kind, word in ((int, "an integer"), (float, "a number")):
        if isinstance(default, kind):
            try:
                return kind(value)
            except ValueError:
                raise ExportError(f"--option {pair!r}: {key} must be {word}") from None
    return value


def register(app: typer.Typer) -> None:
    app.command()(export)
