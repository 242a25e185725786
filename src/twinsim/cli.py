"""`twinsim …`: the typer app, with the commands of every module in `twinsim.commands`."""

from __future__ import annotations

import importlib
import pkgutil

import typer

import twinsim.commands

# Modules whose commands lead `twinsim --help` (generation first); the others follow by name.
FIRST = ("run", "sequence", "presets")

app = typer.Typer(
    help="twinsim: physics-enabled dynamic worlds, exact twins, annotated sensor data.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


def _register_commands() -> None:
    """Add the commands of every module in `twinsim.commands` (FIRST, then alphabetical)."""
    found = {m.name for m in pkgutil.iter_modules(twinsim.commands.__path__)} - {"common"}
    for module in (*FIRST, *sorted(found - set(FIRST))):
        importlib.import_module(f"twinsim.commands.{module}").register(app)


_register_commands()


def main() -> None:
    """Run the CLI (the same as the `twinsim` script)."""
    app()
