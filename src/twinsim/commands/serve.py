"""`twinsim serve CONFIG --out DIR`: serve closed-loop episodes over ZeroMQ
(docs/closed-loop-protocol.md), each also published live to Foxglove with `--foxglove`."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from twinsim.commands.common import (
    FoxgloveHost,
    FoxglovePort,
    RtfOption,
    SetOption,
    console,
    err_console,
    fail,
)
from twinsim.config import load_config
from twinsim.errors import TwinsimError

if TYPE_CHECKING:
    from twinsim.sim import Observer


def serve(
    config: Annotated[str, typer.Argument(help="Preset name or path to a YAML config.")],
    out: Annotated[Path, typer.Option("--out", help="New (or empty) folder for the episodes.")],
    set_: SetOption = None,
    bind: Annotated[
        str, typer.Option(help="ZeroMQ address to listen on (port * picks a free one).")
    ] = "tcp://127.0.0.1:5555",
    rtf: RtfOption = None,
    timeout: Annotated[
        float, typer.Option(help="Seconds without a request that end a running episode.")
    ] = 10.0,
    control_hz: Annotated[int, typer.Option(help="Control periods per second.")] = 30,
    episodes: Annotated[
        int, typer.Option(help="Episodes to serve before exiting (0: no limit).")
    ] = 1,
    foxglove: Annotated[
        bool,
        typer.Option(
            "--foxglove",
            help="Also publish every episode live over the Foxglove WebSocket protocol as the "
            "client drives it (poses, TF, images, depth, point clouds, boxes, the map).",
        ),
    ] = False,
    port: FoxglovePort = 8765,
    host: FoxgloveHost = "127.0.0.1",
) -> None:
    """Serve the config's world to a client: hello, reset, step, close over ZeroMQ."""
    from twinsim.closedloop.server import Server
    from twinsim.closedloop.session import Session
    from twinsim.sequence.writer import check_output_folder

    with ExitStack() as resources:  # the Foxglove server, up across the episodes
        try:
            cfg = load_config(config, set_ or ())
            check_output_folder(out)
            observe = _foxglove(resources, host, port) if foxglove else None
            session = Session(cfg, out, control_hz=control_hz, observe=observe)
            server = Server(
                session, bind, rtf=rtf, timeout_s=timeout, episodes=episodes, log=err_console.print
            )
        except TwinsimError as exc:
            fail(exc)
        mode = "lock-step" if rtf is None else f"free-running at {rtf:g}× real time"
        console.print(f"serving [bold]{config}[/] on {server.address} ({mode})", highlight=False)
        try:
            server.serve()
        except KeyboardInterrupt:
            session.close("closed")
        finally:
            server.close()
    console.print(f"episodes written to [bold]{out}[/]")


def _foxglove(resources: ExitStack, host: str, port: int) -> Observer:
    """`serve --foxglove`: a Foxglove server (closed with `resources`) and the `observe` hook
    that publishes each episode through it."""
    from twinsim.foxglove.live import live_observer
    from twinsim.foxglove.server import Publisher

    publisher = resources.enter_context(Publisher(host, port))
    console.print(f"Foxglove: open [bold]{publisher.url}[/] (live while episodes run)")
    return live_observer(publisher)


def register(app: typer.Typer) -> None:
    """Add `twinsim serve`."""
    app.command("serve")(serve)
