"""`twinsim view SEQ`: write the sequence's Rerun recording and open it where a display exists;
`twinsim view SEQ --foxglove`: stream it over Foxglove's WebSocket protocol instead."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Annotated

import typer

from twinsim.commands.common import FoxgloveHost, FoxglovePort, console, fail
from twinsim.errors import TwinsimError
from twinsim.export import export_sequence
from twinsim.sequence import check_output_outside_sequences


def has_display() -> bool:
    """Whether a graphical viewer can open: macOS and Windows always, elsewhere X11 or Wayland."""
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def view(
    path: Annotated[Path, typer.Argument(help="Sequence folder (only read).")],
    out: Annotated[
        Path | None,
        typer.Option("--out", help="The .rrd file to write (default: <SEQ>.rrd next to SEQ)."),
    ] = None,
    no_open: Annotated[
        bool, typer.Option("--no-open", help="Only write the recording; do not start a viewer.")
    ] = False,
    foxglove: Annotated[
        bool,
        typer.Option(
            "--foxglove",
            help="Stream the sequence over the Foxglove WebSocket protocol (open the printed "
            "ws:// URL in Foxglove) instead of writing a Rerun recording; Ctrl-C stops.",
        ),
    ] = False,
    port: FoxglovePort = 8765,
    host: FoxgloveHost = "127.0.0.1",
    rate: Annotated[
        float, typer.Option("--rate", help="With --foxglove: playback speed, x real time.")
    ] = 1.0,
    once: Annotated[
        bool,
        typer.Option(
            "--once",
            help="With --foxglove: exit at the end of the sequence "
            "(default: play it again until Ctrl-C).",
        ),
    ] = False,
) -> None:
    """Write a Rerun recording of a sequence and open it in the Rerun viewer if possible, or
    with --foxglove stream it to Foxglove."""
    if foxglove:
        _stream(path, port, host, rate, once)
        return
    target = out if out is not None else path.parent / f"{path.name}.rrd"
    try:
        if target.exists():
            raise TwinsimError(f"{target}: exists; remove it or choose another --out")
        check_output_outside_sequences(target)
        with tempfile.TemporaryDirectory() as tmp:
            rrd = export_sequence(path, "rerun", Path(tmp) / "rrd")
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(rrd, target)
    except (TwinsimError, OSError) as exc:
        fail(exc if isinstance(exc, TwinsimError) else TwinsimError(f"{target}: {exc}"))
    console.print(f"Rerun recording written to [bold]{target}[/]")
    if no_open or not has_display():
        reason = "--no-open" if no_open else "no display found"
        console.print(f"not opening a viewer ({reason}); open it with: rerun {target}")
        return
    viewer = shutil.which("rerun") or str(Path(sys.executable).with_name("rerun"))
    subprocess.Popen([viewer, str(target)], start_new_session=True)
    console.print("opened in the Rerun viewer")


def _stream(path: Path, port: int, host: str, rate: float, once: bool) -> None:
    from twinsim.foxglove.replay import stream_sequence

    if not rate > 0:
        fail(TwinsimError(f"--rate: a positive factor of real time, got {rate}"))

    def ready(url: str) -> None:
        console.print(f"Foxglove: open [bold]{url}[/] (Open connection → Foxglove WebSocket)")
        console.print("playing once" if once else "playing in a loop; Ctrl-C stops")

    try:
        sent = stream_sequence(path, port, rate, host=host, loop=not once, on_ready=ready)
    except KeyboardInterrupt:
        console.print("stopped")
        return
    except TwinsimError as exc:
        fail(exc)
    console.print(f"{sent} messages published")


def register(app: typer.Typer) -> None:
    app.command()(view)
