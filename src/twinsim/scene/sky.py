"""The sky of an outdoor world (one with a road network), shared by both renderers.

A sky graded by the view ray's elevation from a pale horizon to a blue zenith, the ground
below the horizon at `GROUND_ALBEDO` of the horizon, dimmed with the sun's ambient light (a
night twin's darker ambient gives a dark sky); under a dark sky the street lamps switch on.
Indoors there is no sky: what no surface fills stays black. MuJoCo paints it into the pixels
no geom covers (`engine/render.py`); Cycles makes it the world's background
(`render/cycles/atmosphere.py`).
"""

from __future__ import annotations

import numpy as np

from twinsim.model.scene import SceneSpec

HORIZON_SRGB = (0.78, 0.84, 0.90)
ZENITH_SRGB = (0.33, 0.52, 0.82)
GROUND_ALBEDO = 0.25
DAY_AMBIENT = 0.35  # the sun's ambient in a day town (drawn 0.3-0.4): the sky at full level
LAMPS_ON_BELOW = 0.3  # street lamps switch on when the sky is darker than this (a photocell)


def sky_level(scene: SceneSpec) -> float | None:
    """How bright an outdoor world's sky is (1: day), from its directional lights' ambient;
    None indoors (no road network)."""
    if scene.roads is None:
        return None
    ambient = sum(np.mean(light.ambient) for light in scene.lights if light.directional)
    return float(min(1.0, ambient / DAY_AMBIENT))


def sky_rgb(elevation: np.ndarray, level: float) -> np.ndarray:
    """sRGB colours (n, 3) in [0, 1] of the sky seen along rays of the given elevation sines."""
    horizon, zenith = np.asarray(HORIZON_SRGB), np.asarray(ZENITH_SRGB)
    up = np.clip(elevation, 0.0, 1.0)[:, None]
    colour = horizon + (zenith - horizon) * up
    colour = np.where(elevation[:, None] < 0.0, GROUND_ALBEDO * horizon, colour)
    return colour * level


def lamps_on(scene: SceneSpec) -> bool:
    """Whether a town's street lamps shine: it has some and its sky is dark (night, dusk)."""
    level = sky_level(scene)
    return level is not None and level < LAMPS_ON_BELOW and bool(scene.roads.street_lamps)
