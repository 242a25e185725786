"""`twinsim compare A B`: pose deviation per axis, RGB and depth similarity, LiDAR and event
differences, per stream."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from twinsim.commands.common import console, fail
from twinsim.errors import TwinsimError


def _fmt(value: float) -> str:
    return f"{value:.3g}" if value else "0"


def compare_command(
    a: Annotated[Path, typer.Argument(help="Reference sequence.")],
    b: Annotated[Path, typer.Argument(help="Sequence compared with it (e.g. a twin).")],
    stride: Annotated[int, typer.Option(help="Compare every n-th camera frame.")] = 1,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Compare two runs of the same experiment: poses per axis, RGB SSIM, depth MAE and SSIM,
    LiDAR ranges, event counts and rates."""
    from twinsim.replay.compare import AXES, compare_sequences

    try:
        result = compare_sequences(a, b, stride=stride)
    except TwinsimError as exc:
        fail(exc)
    if as_json:
        console.print_json(json.dumps(result))
        return
    poses = Table(title="pose deviation of B from A (mean ± std; m, rad)")
    poses.add_column("stream")
    poses.add_column("samples", justify="right")
    for axis in AXES:
        poses.add_column(axis, justify="right")
    for name, dev in result["poses"].items():
        cells = [f"{_fmt(dev[x]['mean'])} ± {_fmt(dev[x]['std'])}" for x in AXES]
        poses.add_row(name, str(dev["samples"]), *cells)
    console.print(poses)
    images = Table(title="images (mean ± std, worst frame)")
    for column in ("stream", "frames", "RGB SSIM", "depth MAE (m)", "depth SSIM"):
        images.add_column(column)
    for name, cam in result["cameras"].items():
        if not cam["frames"]:
            images.add_row(name, "0", "-", "-", "-")
            continue
        rgb, mae, dssim = cam["rgb_ssim"], cam["depth_mae_m"], cam["depth_ssim"]
        images.add_row(
            name,
            str(cam["frames"]),
            f"{rgb['mean']:.4f} ± {rgb['std']:.4f} (min {rgb['min']:.4f})",
            f"{_fmt(mae['mean'])} ± {_fmt(mae['std'])} (max {_fmt(mae['max'])})",
            f"{dssim['mean']:.4f} ± {dssim['std']:.4f} (min {dssim['min']:.4f})",
        )
    console.print(images)
    if result["lidars"]:
        lidars = Table(title="LiDAR sweeps (range MAE per sweep: mean ± std, worst sweep)")
        for column in (
            "stream",
            "sweeps",
            "points A / B",
            "range MAE (m)",
            "max |Δ range| (m)",
            "other instance",
            "identical",
        ):
            lidars.add_column(column)
        for name, s in result["lidars"].items():
            if not s["scans"]:
                lidars.add_row(name, "0", "-", "-", "-", "-", "-")
                continue
            mae = s["range_mae_m"]
            lidars.add_row(
                name,
                str(s["scans"]),
                f"{s['points']['a']} / {s['points']['b']}",
                f"{_fmt(mae['mean'])} ± {_fmt(mae['std'])} (max {_fmt(mae['max'])})",
                _fmt(s["range_max_abs_m"]),
                f"{100 * s['instance_changed']:.1f} %",
                "yes" if s["identical"] else "no",
            )
        console.print(lidars)
    if result["event_cameras"]:
        events = Table(title="event cameras")
        for column in (
            "stream",
            "events A / B",
            "rate A / B (1/s)",
            "in both",
            "pixel counts differ",
            "identical",
        ):
            events.add_column(column)
        for name, e in result["event_cameras"].items():
            events.add_row(
                name,
                f"{e['events']['a']} / {e['events']['b']}",
                f"{e['rate_hz']['a']:.0f} / {e['rate_hz']['b']:.0f}",
                str(e["shared_events"]),
                f"{100 * e['pixel_count_difference']:.1f} %",
                "yes" if e["identical"] else "no",
            )
        console.print(events)
    if result["contacts"]:
        contacts = Table(title="contacts")
        for column in (
            "stream",
            "records A / B",
            "steps in contact A / B / both",
            "max |Δ force| (N)",
        ):
            contacts.add_column(column)
        for name, c in result["contacts"].items():
            steps = c["steps_in_contact"]
            contacts.add_row(
                name,
                f"{c['records']['a']} / {c['records']['b']}",
                f"{steps['a']} / {steps['b']} / {steps['both']}",
                _fmt(c["max_total_force_difference_n"]),
            )
        console.print(contacts)
    tables = Table(title="other streams")
    for column in ("stream", "samples", "max |B − A|"):
        tables.add_column(column)
    for name, t in result["tables"].items():
        tables.add_row(name, str(t["samples"]), _fmt(t.get("max_abs_difference", 0.0)))
    console.print(tables)
    for side in ("a", "b"):
        if result[f"only_in_{side}"]:
            console.print(f"only in {side.upper()}: {', '.join(result[f'only_in_{side}'])}")


def register(app: typer.Typer) -> None:
    app.command("compare")(compare_command)
