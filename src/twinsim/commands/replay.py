"""`twinsim replay SRC --out DST [variations…]`: repeat a recorded run exactly, or as a twin.

The options of the variations (`Variations`, its `light` and `stereo`) and of the Cycles
renderer (`CyclesSettings`) are made from those models' fields (`commands/model_options.py`):
a field added to one is an option here. Only what is not one field is declared below: the
`NAME.field=value` sensor assignments and `--stereo-size WIDTHxHEIGHT`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from twinsim.commands.common import console, fail, progress_bar
from twinsim.commands.model_options import ModelOptions, ModelValues, with_model_options
from twinsim.errors import ConfigError, TwinsimError
from twinsim.render.cycles.settings import CyclesSettings
from twinsim.replay.variations import ReplayMode, StereoVariation, Variations
from twinsim.textdata import TextDataError, excerpt, parse_yaml


def _sensor_fields(option: str, assignments: list[str]) -> dict[str, dict]:
    """`NAME.field=value` assignments → {NAME: {field: value}} (values parsed as YAML).

    Sensor fields are flat, so the field follows the last dot before `=`: in
    `bravo.cam1.width=32` the sensor is `bravo.cam1` (robot bravo's cam1).
    """
    sensors: dict[str, dict] = {}
    for item in assignments:
        key, sep, raw = item.partition("=")
        name, dot, field = key.strip().rpartition(".")
        if not (sep and dot and name and field):
            raise ConfigError(
                f"{option} expects NAME.field=value (e.g. cam1.width=320, or bravo.cam1.width=320 "
                f"for robot bravo's), got {item!r}"
            )
        try:
            value = parse_yaml(raw)
        except TextDataError:
            raise ConfigError(
                f"{option} {excerpt(item)}: the value {excerpt(raw)} is not valid YAML (a "
                "number, a word, or a list such as [0, -20, 0])"
            ) from None
        sensors.setdefault(name, {})[field] = value
    return sensors


def _size(text: str) -> tuple[int, int]:
    try:
        width, height = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise ConfigError(f"--stereo-size expects WIDTHxHEIGHT, got {text!r}") from None
    return width, height


def variation_options() -> ModelOptions:
    """`Variations` as options: each defaults to "not given", so a `--variations` file's value
    (or the model's default) stays unless the option is given."""
    return ModelOptions(
        Variations,
        names={
            "static": "--static",
            "remove_classes": "--remove-class",
            "remove_instances": "--remove-instance",
            "add_flying_objects": "--add-flying",
            "light.preset": "--light",
            "light.flicker": "--flicker",
            "remove_sensors": "--remove-sensor",
        },
        # a --variations file's: a mapping, a colour; `sensors` and `stereo` below
        skip=("add_people_motions", "light.color", "light.flicker_hz", "sensors", "stereo"),
        expand=("light",),
        unset=True,
    )


def stereo_options() -> ModelOptions:
    """`StereoVariation` as `--stereo-*` options: `--stereo BASELINE` adds the pair."""
    return ModelOptions(
        StereoVariation,
        prefix="stereo",
        names={"baseline_m": "--stereo", "rate_hz": "--stereo-rate"},
        helps={"baseline_m": "Add a stereo pair with this baseline (m)."},
        # a --variations file's; width and height are --stereo-size
        skip=("name", "width", "height", "hfov_deg", "pos", "rpy_deg"),
        unset=("baseline_m",),
    )


def cycles_options() -> ModelOptions:
    """`CyclesSettings` as options (its seed is the twin's `--seed`)."""
    return ModelOptions(CyclesSettings, skip=("seed",), help_prefix="Cycles: ")


def _default_size() -> str:
    """The model's stereo image size as `--stereo-size` writes it."""
    width = StereoVariation.model_fields["width"].default
    height = StereoVariation.model_fields["height"].default
    return f"{width}x{height}"


def replay_command(
    source: Annotated[Path, typer.Argument(help="Recorded sequence to repeat.")],
    out: Annotated[Path, typer.Option("--out", help="New (or empty) folder for the twin.")],
    mode: Annotated[
        ReplayMode, typer.Option(help="teleport (exact) or control (PID and physics again).")
    ] = ReplayMode.teleport,
    variations_file: Annotated[
        Path | None, typer.Option("--variations", help="YAML file of variations (see docs).")
    ] = None,
    changes: ModelValues | None = None,  # variation_options()
    sensor: Annotated[
        list[str] | None,
        typer.Option(
            help="Add/change a sensor of any kind: NAME.field=value (repeatable); a new sensor "
            "needs its kind, e.g. --sensor depth1.kind=camera --sensor depth1.width=320."
        ),
    ] = None,
    camera: Annotated[
        list[str] | None,
        typer.Option(help="Add/change a camera: NAME.field=value, e.g. cam0.rpy_deg=[0,-20,0]."),
    ] = None,
    remove_camera: Annotated[list[str] | None, typer.Option(help="Drop a camera.")] = None,
    lidar: Annotated[
        list[str] | None,
        typer.Option(help="Add/change a LiDAR: NAME.field=value, e.g. lidar0.model=vlp-16."),
    ] = None,
    event_camera: Annotated[
        list[str] | None,
        typer.Option(help="Add/change an event camera: NAME.field=value, e.g. ev0.rate_hz=480."),
    ] = None,
    stereo: ModelValues | None = None,  # stereo_options()
    stereo_size: Annotated[
        str, typer.Option(help="Stereo image size WIDTHxHEIGHT.")
    ] = _default_size(),
    rerender: Annotated[
        bool,
        typer.Option(help="Render every frame again, even those the source holds (slower)."),
    ] = False,
    renderer: Annotated[
        str, typer.Option(help="Renderer of the colour images: mujoco or cycles (Blender).")
    ] = "mujoco",
    cycles: ModelValues | None = None,  # cycles_options()
) -> None:
    """Replay a sequence exactly (teleport) or through its controllers, optionally as a twin."""
    from twinsim.replay.replay import replay
    from twinsim.replay.variations import load_variations, merge_variations

    changes, stereo, cycles = changes or {}, stereo or {}, cycles or {}
    try:
        base = load_variations(variations_file) if variations_file else Variations()
        settings = CyclesSettings(**cycles, seed=changes.get("seed") or 0)
        given = changes | {
            "sensors": _sensor_fields("--sensor", sensor or []) or None,
            "cameras": _sensor_fields("--camera", camera or []) or None,
            "lidars": _sensor_fields("--lidar", lidar or []) or None,
            "event_cameras": _sensor_fields("--event-camera", event_camera or []) or None,
            "remove_cameras": remove_camera or None,
        }
        if "baseline_m" in stereo:
            width, height = _size(stereo_size)
            given["stereo"] = stereo | {"width": width, "height": height}
        variations = merge_variations(base, {k: v for k, v in given.items() if v is not None})
        with progress_bar("replaying", "steps") as report:
            replay(
                source,
                out,
                variations,
                mode,
                progress=report,
                rerender=rerender,
                renderer=renderer,
                cycles=settings,
            )
    except TwinsimError as exc:
        fail(exc)
    console.print(f"twin written to [bold]{out}[/]")
    added = json.loads((out / "metadata.json").read_text(encoding="utf-8"))["twin"]["people_added"]
    if added["placed"] < added["requested"]:
        asked = f"--add-people {added['requested']}"
        if not variations.add_people:  # the adversity preset added them
            asked = f"--adversity {variations.adversity.value} ({added['requested']} people)"
        console.print(
            f"[yellow]warning:[/] {asked}: only {added['placed']} "
            "fit clear of the furniture, the other people and the recorded robot path"
        )


def register(app: typer.Typer) -> None:
    """Add `twinsim replay`, its options made from the models as they are now."""
    command = with_model_options(
        replay_command,
        changes=variation_options(),
        stereo=stereo_options(),
        cycles=cycles_options(),
    )
    app.command("replay")(command)
