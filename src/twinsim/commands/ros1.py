"""`twinsim ros1-bridge CONFIG --out DIR`: run a closed-loop episode as a ROS 1 node
(docs/ros1-bridge.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from twinsim.commands.common import RtfOption, SetOption, console, fail
from twinsim.config import load_config
from twinsim.errors import TwinsimError


def ros1_bridge(
    config: Annotated[str, typer.Argument(help="Preset name or path to a YAML config.")],
    out: Annotated[Path, typer.Option("--out", help="New (or empty) folder for the episode.")],
    set_: SetOption = None,
    seed: Annotated[int | None, typer.Option(help="Episode seed.")] = None,
    rtf: RtfOption = None,
    timeout: Annotated[
        float, typer.Option(help="Lock-step: seconds without a command that end the episode.")
    ] = 10.0,
) -> None:
    """Publish a live episode on ROS 1 (/clock, /tf, odom, images) and drive it by cmd_vel/goal."""
    from twinsim.closedloop.session import Session
    from twinsim.sequence.writer import check_output_folder

    if rtf is not None and not rtf > 0:
        fail(f"--rtf: a positive real-time factor, got {rtf}")
    if not timeout > 0:
        fail(f"--timeout: positive seconds, got {timeout}")
    try:
        cfg = load_config(config, set_ or ())
        check_output_folder(out)
        session = Session(cfg, out)
    except TwinsimError as exc:
        fail(exc)
    try:
        from twinsim.ros1.bridge import Bridge
    except ImportError as exc:
        fail(f"ROS 1 is not installed (scripts/install-ros1.sh): {exc}")
    ended_by = Bridge(session, rtf=rtf, timeout_s=timeout).run(seed)
    console.print(f"episode ended by {ended_by}; written to [bold]{out}[/]")


def register(app: typer.Typer) -> None:
    """Add `twinsim ros1-bridge`."""
    app.command("ros1-bridge")(ros1_bridge)
