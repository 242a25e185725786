"""What every command shares: the consoles, progress bars and the one way a command fails."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from twinsim.errors import TwinsimError

console = Console()
err_console = Console(stderr=True)


def fail(exc: TwinsimError | str) -> None:
    """Print a one-line error and exit with code 2 (bad input), never a traceback."""
    # the message is plain text: `twinsim[ray]` or `[1,2` must not be read as rich markup
    err_console.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
    raise typer.Exit(code=2)


@contextmanager
def trials_bar(label: str, unit: str) -> Iterator[Callable[[int, int, str], None]]:
    """A rich progress bar over a benchmark's trials; yields the `(done, total, label)`
    callback the harness reports through after each finished trial."""
    columns = [TextColumn(f"[bold]{label}[/]"), BarColumn(), MofNCompleteColumn()]
    columns += [TextColumn(f"{unit} · {{task.description}}"), TimeElapsedColumn()]
    with Progress(*columns, console=console) as bar:
        task = bar.add_task("starting", total=None)

        def report(done: int, total: int, what: str) -> None:
            bar.update(task, completed=done, total=total, description=what)

        yield report


@contextmanager
def progress_bar(label: str, unit: str = "") -> Iterator[Callable[[int, int], None]]:
    """A rich progress bar for a long job; yields the `(done, total)` callback the library
    reports through. The bar appears with the first report, so input errors come first."""
    columns = [TextColumn(f"[bold]{label}[/]"), BarColumn(), MofNCompleteColumn()]
    columns += [TextColumn(unit)] if unit else []
    with Progress(*columns, TimeRemainingColumn(), console=console) as bar:
        tasks: list[TaskID] = []

        def report(done: int, total: int) -> None:
            if not tasks:
                tasks.append(bar.add_task(label, total=total))
            bar.update(tasks[0], completed=done, total=total)

        yield report


#: `--ray ADDRESS` of every command that can run its jobs on Ray (`twinsim.cluster`)
RayOption = Annotated[
    str | None,
    typer.Option(
        "--ray",
        help="Run on Ray: 'local' (a private local instance), 'auto' (the running cluster) "
        "or HOST:PORT / ray://HOST:PORT. Default: local processes.",
    ),
]

#: `--set key.path=value` (repeatable) of every command that builds a world from a config
SetOption = Annotated[
    list[str] | None,
    typer.Option("--set", help="Override a config field: key.path=value (repeatable)."),
]
#: `--rtf X` of the live servers (`serve`, `ros1-bridge`)
RtfOption = Annotated[
    float | None,
    typer.Option(help="Free-running at this real-time factor (default: lock-step)."),
]
#: `--port` / `--host` of the Foxglove WebSocket server (`view`, `run`, `serve` `--foxglove`)
FoxglovePort = Annotated[
    int,
    typer.Option("--port", min=0, max=65535, help="With --foxglove: the WebSocket port (0: free)."),
]
FoxgloveHost = Annotated[
    str, typer.Option("--host", help="With --foxglove: the address to listen on.")
]
