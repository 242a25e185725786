"""`twinsim plugins`: every registered robot, sensor, world generator, navigator, export
format and benchmark method, and where it comes from (twinsim or an installed package)."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from twinsim.commands.common import console, fail
from twinsim.errors import TwinsimError
from twinsim.registries import FAMILIES


def plugins(
    family: Annotated[
        str | None,
        typer.Argument(help=f"Only this family: {', '.join(FAMILIES)}."),
    ] = None,
) -> None:
    """List the registered plug-ins of every family (or one), with their origin; a package
    adds its own through the entry-point group `twinsim.<family>`."""
    try:
        if family is not None and family not in FAMILIES:
            raise TwinsimError(f"unknown family {family!r}; allowed: {', '.join(FAMILIES)}")
        table = Table("family", "name", "from", "entry-point group", box=None)
        for name in [family] if family else list(FAMILIES):
            registry = FAMILIES[name]
            for entry in registry.names():
                table.add_row(name, entry, registry.origin(entry), registry.group)
    except TwinsimError as exc:
        fail(exc)
    console.print(table)


def register(app: typer.Typer) -> None:
    """Add `twinsim plugins`."""
    app.command("plugins")(plugins)
