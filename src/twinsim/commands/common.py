"""What every command shares: the consoles and the one way a command fails."""

from __future__ import annotations

import typer
from rich.console import Console

from twinsim.errors import TwinsimError

console = Console()
err_console = Console(stderr=True)


def fail(exc: TwinsimError | str) -> None:
    """Print a one-line error and exit with code 2 (bad input), never a traceback."""
    err_console.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
    raise typer.Exit(code=2)
