"""`twinsim run --out DIR [--config …] [--set key=value …]`: generate a world and record it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from twinsim.commands.common import (
    FoxgloveHost,
    FoxglovePort,
    SetOption,
    console,
    fail,
    progress_bar,
)
from twinsim.config import load_config
from twinsim.errors import ConfigError, TwinsimError
from twinsim.registries import DEFAULT_PRESET


def run(
    out: Annotated[
        Path | None, typer.Option("--out", help="New (or empty) folder for the sequence.")
    ] = None,
    config: Annotated[
        str, typer.Option("--config", "-c", help="Preset name or path to a YAML config.")
    ] = DEFAULT_PRESET,
    seed: Annotated[int | None, typer.Option(help="Seed of every random choice.")] = None,
    duration: Annotated[
        float | None, typer.Option(help="Recorded seconds (after the 1 s bootstrap).")
    ] = None,
    set_: SetOption = None,
    resume: Annotated[
        Path | None,
        typer.Option(
            "--resume",
            help="Finish an interrupted run in this folder from its last checkpoint "
            "(its config is the one it started with).",
        ),
    ] = None,
    foxglove: Annotated[
        bool,
        typer.Option(
            "--foxglove",
            help="Also publish the world live over the Foxglove WebSocket protocol while it "
            "records (poses, TF, images, depth, point clouds, boxes, the map).",
        ),
    ] = False,
    port: FoxglovePort = 8765,
    host: FoxgloveHost = "127.0.0.1",
) -> None:
    """Generate a world, fly the robot through it and record a sequence folder."""
    from twinsim.sequence.writer import check_output_folder
    from twinsim.sim import run as run_sim

    try:
        if resume is not None:
            _resume(resume, out, config, seed, duration, set_)
            return
        if out is None:
            raise ConfigError("--out: the folder to record into (or --resume DIR)")
        cfg = load_config(config, set_ or (), seed=seed, duration_s=duration)
        check_output_folder(out)
        if foxglove:
            _run_live(cfg, out, host, port)
        else:
            with progress_bar("recording", "steps") as report:
                run_sim(cfg, out, progress=report)
    except TwinsimError as exc:
        fail(exc)
    console.print(f"sequence written to [bold]{out}[/]")


def _run_live(cfg, out: Path, host: str, port: int) -> None:
    """`run --foxglove`: the run's writes also published to Foxglove clients as recorded."""
    from twinsim.foxglove.live import live_observer
    from twinsim.foxglove.server import Publisher
    from twinsim.sim import run as run_sim

    with Publisher(host, port) as publisher:
        console.print(f"Foxglove: open [bold]{publisher.url}[/] (live while recording)")
        with progress_bar("recording", "steps") as report:
            run_sim(cfg, out, progress=report, observe=live_observer(publisher))
        console.print(f"{publisher.messages} messages published")


def _resume(folder: Path, out, config, seed, duration, set_) -> None:
    """`run --resume DIR`: the folder holds the config, so nothing else may be given."""
    from twinsim.resume import resume

    given = [
        name
        for name, value in (
            ("--out", out),
            ("--config", None if config == DEFAULT_PRESET else config),
            ("--seed", seed),
            ("--duration", duration),
            ("--set", set_ or None),
        )
        if value is not None
    ]
    if given:
        raise ConfigError(f"--resume takes its config from {folder}; drop {', '.join(given)}")
    with progress_bar("resuming", "steps") as report:
        resume(folder, progress=report)
    console.print(f"sequence written to [bold]{folder}[/]")


def register(app: typer.Typer) -> None:
    """Add `twinsim run`."""
    app.command("run")(run)
