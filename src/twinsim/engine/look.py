"""`Look`: how a world is rendered beyond its `SceneSpec` (plain data; importing it loads no GL)."""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Look:
    """How a world looks beyond its `SceneSpec` (twins change it; the defaults change nothing).

    Fog is MuJoCo's linear fog: colour blends into `fog_rgb` from `fog_start_m` to `fog_end_m`
    of distance, in the colour pass only (depth and masks never see it). `headlight` scales
    MuJoCo's camera headlight; `lamp_rgb` adds a spot light carried by the robot, aimed along its
    first camera; `flicker` in [0, 1] makes all scene light (every light and the headlight)
    dim together at `flicker_hz` to 1 - `flicker` of its level, from a phase drawn from
    `flicker_seed` (1.0: dark at each trough; the robot's lamp stays steady).
    """

    fog_rgb: tuple[float, float, float] = (0.62, 0.63, 0.66)
    fog_start_m: float | None = None  # None: no fog
    fog_end_m: float = 10.0
    headlight: float = 1.0
    lamp_rgb: tuple[float, float, float] | None = None
    flicker: float = 0.0
    flicker_hz: float = 2.0
    flicker_seed: int = 0


def with_render_flicker(look: Look, render, seed: int) -> Look:
    """`look` with the render config's changing light (`render.flicker`, `flicker_hz`, the
    phase drawn from the world's `seed`) where the look has no flicker of its own: a live world
    and the replays of its sequence dim alike; a twin's own flicker wins."""
    if look.flicker > 0.0 or render.flicker <= 0.0:
        return look
    return replace(look, flicker=render.flicker, flicker_hz=render.flicker_hz, flicker_seed=seed)
