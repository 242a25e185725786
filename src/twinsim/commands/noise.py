"""`twinsim noise`: a noisy copy of a sequence under a named noise profile."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from twinsim.commands.common import console, fail, progress_bar
from twinsim.errors import TwinsimError
from twinsim.noise import apply_noise, resolve_profile
from twinsim.registries import NOISE_PROFILES

_PROFILE_HELP = "Noise profile: " + "; ".join(
    f"{name} ({NOISE_PROFILES[name].description})" for name in NOISE_PROFILES
)


def noise(
    src: Annotated[Path, typer.Argument(help="Source sequence folder (never modified).")],
    out: Annotated[Path, typer.Option("--out", help="New (or empty) folder for the result.")],
    profile: Annotated[str, typer.Option("--profile", "-p", help=_PROFILE_HELP)],
    set_: Annotated[
        list[str] | None,
        typer.Option(
            "--set", help="Override a parameter: section.key=value, e.g. imu.spline=true."
        ),
    ] = None,
    seed: Annotated[int, typer.Option(min=0, help="Seed of every noise draw (>= 0).")] = 0,
) -> None:
    """Add realistic sensor noise (IMU, depth, RGB blur and rolling shutter, LiDAR, GNSS,
    radar)."""
    try:
        resolved = resolve_profile(profile, set_ or ())
        with progress_bar("noise", "frames / streams") as report:
            apply_noise(src, out, resolved, seed=seed, progress=report)
    except TwinsimError as exc:
        fail(exc)
    console.print(f"noisy sequence ({resolved.name}, seed {seed}) written to [bold]{out}[/]")


def register(app: typer.Typer) -> None:
    """Add `twinsim noise` to the CLI."""
    app.command("noise")(noise)
