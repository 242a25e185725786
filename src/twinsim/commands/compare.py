"""`twinsim compare A B`: pose deviation per axis, RGB and depth similarity, LiDAR and event
differences, per stream."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from twinsim.commands.common import console, fail
from twinsim.errors import TwinsimError

#: how each section of a `Comparison` is shown: its title, and whether an empty one is
_TITLES = {
    "poses": ("pose deviation of B from A (mean ± std; m, rad)", True),
    "cameras": ("images (mean ± std, worst frame)", True),
    "lidars": ("LiDAR sweeps (range MAE per sweep: mean ± std, worst sweep)", False),
    "event_cameras": ("event cameras", False),
    "contacts": ("contacts", False),
    "tables": ("other streams", True),
}


def compare_command(
    a: Annotated[Path, typer.Argument(help="Reference sequence.")],
    b: Annotated[Path, typer.Argument(help="Sequence compared with it (e.g. a twin).")],
    stride: Annotated[int, typer.Option(help="Compare every n-th camera frame.")] = 1,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Compare two runs of the same experiment: poses per axis, RGB SSIM, depth MAE and SSIM,
    LiDAR ranges, event counts and rates."""
    from twinsim.replay.compare import ROW_COLUMNS, compare_sequences

    try:
        result = compare_sequences(a, b, stride=stride)
    except TwinsimError as exc:
        fail(exc)
    if as_json:
        console.print_json(json.dumps(result.as_dict()))
        return
    for section in result.SECTIONS:
        title, always = _TITLES[section]
        rows = result.rows(section)
        if not rows and not always:
            continue
        table = Table(title=title)
        for column in ROW_COLUMNS[section]:
            # the pose table's figures align right
            table.add_column(
                column, justify="right" if section == "poses" and column != "stream" else "left"
            )
        for row in rows:
            table.add_row(*row)
        console.print(table)
    for side, names in (("a", result.only_in_a), ("b", result.only_in_b)):
        if names:
            console.print(f"only in {side.upper()}: {', '.join(names)}")


def register(app: typer.Typer) -> None:
    app.command("compare")(compare_command)
