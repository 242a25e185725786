"""`twinsim replay SRC --out DST [variations…]`: repeat a recorded run exactly, or as a twin."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from twinsim.commands.common import console, fail, progress_bar
from twinsim.errors import ConfigError, TwinsimError
from twinsim.replay.variations import Adversity, LightPreset, ReplayMode
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


def replay_command(
    source: Annotated[Path, typer.Argument(help="Recorded sequence to repeat.")],
    out: Annotated[Path, typer.Option("--out", help="New (or empty) folder for the twin.")],
    mode: Annotated[
        ReplayMode, typer.Option(help="teleport (exact) or control (PID and physics again).")
    ] = ReplayMode.teleport,
    variations_file: Annotated[
        Path | None, typer.Option("--variations", help="YAML file of variations (see docs).")
    ] = None,
    static: Annotated[bool, typer.Option("--static", help="Remove every dynamic actor.")] = False,
    remove_class: Annotated[
        list[str] | None, typer.Option(help="Remove dynamic actors of a class (repeatable).")
    ] = None,
    remove_instance: Annotated[
        list[int] | None, typer.Option(help="Remove a dynamic instance by id (repeatable).")
    ] = None,
    add_people: Annotated[int | None, typer.Option(help="People to add.")] = None,
    add_flying: Annotated[int | None, typer.Option(help="Flying objects to add.")] = None,
    light: Annotated[LightPreset | None, typer.Option(help="Light preset.")] = None,
    light_intensity: Annotated[float | None, typer.Option(help="Global light gain.")] = None,
    light_seed: Annotated[int | None, typer.Option(help="New random light tints.")] = None,
    flicker: Annotated[float | None, typer.Option(help="Light flicker amplitude 0..1.")] = None,
    materials_seed: Annotated[
        int | None, typer.Option(help="Re-randomise textures and reflectance.")
    ] = None,
    fog: Annotated[float | None, typer.Option(help="Fog density 0..1.")] = None,
    rain: Annotated[float | None, typer.Option(help="Rain 0..1.")] = None,
    snow: Annotated[float | None, typer.Option(help="Snow 0..1.")] = None,
    smoke: Annotated[float | None, typer.Option(help="Drifting smoke 0..1.")] = None,
    adversity: Annotated[
        Adversity | None,
        typer.Option(help="Preset combining fog, rain, smoke, flicker (major: walking people)."),
    ] = None,
    sensor: Annotated[
        list[str] | None,
        typer.Option(
            help="Add/change a sensor of any kind: NAME.field=value (repeatable); a new sensor "
            "needs its kind, e.g. --sensor depth1.kind=camera --sensor depth1.width=320."
        ),
    ] = None,
    remove_sensor: Annotated[
        list[str] | None, typer.Option(help="Drop a sensor of any kind (repeatable).")
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
    stereo: Annotated[
        float | None, typer.Option(help="Add a stereo pair with this baseline (m).")
    ] = None,
    stereo_size: Annotated[str, typer.Option(help="Stereo image size WIDTHxHEIGHT.")] = "640x480",
    stereo_rate: Annotated[int, typer.Option(help="Stereo frame rate (Hz).")] = 30,
    seed: Annotated[int | None, typer.Option(help="Seed of added actors and weather.")] = None,
    rerender: Annotated[
        bool,
        typer.Option(help="Render every frame again, even those the source holds (slower)."),
    ] = False,
    renderer: Annotated[
        str, typer.Option(help="Renderer of the colour images: mujoco or cycles (Blender).")
    ] = "mujoco",
    samples: Annotated[int, typer.Option(help="Cycles samples per pixel.")] = 16,
    denoise: Annotated[bool, typer.Option(help="Cycles: OpenImageDenoise the images.")] = True,
    every: Annotated[
        int, typer.Option(help="Cycles: render every K-th frame, copy the others' colour.")
    ] = 1,
    ground_truth: Annotated[
        str,
        typer.Option(
            help="Cycles: whose depth, masks and boxes the twin stores: mujoco or cycles."
        ),
    ] = "mujoco",
    exposure: Annotated[
        str, typer.Option(help="Cycles: the camera's exposure, fixed or auto.")
    ] = "fixed",
    vignetting: Annotated[
        float, typer.Option(help="Cycles: vignetting strength in [0, 1] (cos⁴ fall-off).")
    ] = 0.0,
    chromatic_aberration: Annotated[
        float, typer.Option(help="Cycles: lateral chromatic aberration in [0, 0.05].")
    ] = 0.0,
    motion_blur: Annotated[
        bool, typer.Option(help="Cycles: blur shuttered cameras with Cycles' own shutter.")
    ] = True,
    bump: Annotated[
        float, typer.Option(help="Cycles: strength of the textures' bump maps in [0, 1].")
    ] = 0.3,
    workers: Annotated[
        int, typer.Option(help="Cycles: processes rendering frames side by side (same bytes).")
    ] = 1,
    adaptive_threshold: Annotated[
        float, typer.Option(help="Cycles: adaptive sampling noise threshold (0: off).")
    ] = 0.0,
) -> None:
    """Replay a sequence exactly (teleport) or through its controllers, optionally as a twin."""
    from twinsim.render.cycles.settings import CyclesSettings
    from twinsim.replay.replay import replay
    from twinsim.replay.variations import Variations, load_variations, merge_variations

    try:
        base = load_variations(variations_file) if variations_file else Variations()
        cycles = CyclesSettings(
            samples=samples,
            denoise=denoise,
            seed=seed or 0,
            every=every,
            ground_truth=ground_truth,
            exposure=exposure,
            vignetting=vignetting,
            chromatic_aberration=chromatic_aberration,
            motion_blur=motion_blur,
            bump=bump,
            workers=workers,
            adaptive_threshold=adaptive_threshold,
        )
        light_fields = {
            k: v
            for k, v in (
                ("preset", light and light.value),
                ("intensity", light_intensity),
                ("seed", light_seed),
                ("flicker", flicker),
            )
            if v is not None
        }
        given = {
            "static": static or None,
            "remove_classes": remove_class or None,
            "remove_instances": remove_instance or None,
            "add_people": add_people,
            "add_flying_objects": add_flying,
            "light": light_fields or None,
            "materials_seed": materials_seed,
            "fog": fog,
            "rain": rain,
            "snow": snow,
            "smoke": smoke,
            "adversity": adversity and adversity.value,
            "sensors": _sensor_fields("--sensor", sensor or []) or None,
            "remove_sensors": remove_sensor or None,
            "cameras": _sensor_fields("--camera", camera or []) or None,
            "lidars": _sensor_fields("--lidar", lidar or []) or None,
            "event_cameras": _sensor_fields("--event-camera", event_camera or []) or None,
            "remove_cameras": remove_camera or None,
            "seed": seed,
        }
        if stereo is not None:
            width, height = _size(stereo_size)
            given["stereo"] = {
                "baseline_m": stereo,
                "width": width,
                "height": height,
                "rate_hz": stereo_rate,
            }
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
                cycles=cycles,
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
    app.command("replay")(replay_command)
