"""`twinsim presets`: the names of the built-in config presets."""

from __future__ import annotations

import typer

from twinsim.commands.common import console
from twinsim.config import preset_names


def presets() -> None:
    """List the built-in config presets."""
    for name in preset_names():
        console.print(name)


def register(app: typer.Typer) -> None:
    """Add `twinsim presets`."""
    app.command("presets")(presets)
