"""The town's finishes: asphalt, paving, kerb stone, grass, facades with window grids, roofs,
bark and leaves, painted metal, car paint, road paint.

Asphalt, grass and facades use the outdoor texture kinds of `scene.textures` (`asphalt`,
`grass`, `facade`) where `model.scene.TextureKind` admits them, else the nearest indoor kind
(`plaster`; `carpet`; `tiles` whose tiles are the windows and whose grout the wall), so the
town's scenes stay valid `SceneSpec`s either way.
"""

from __future__ import annotations

from typing import get_args

import numpy as np

from twinsim.model.scene import TextureKind
from twinsim.scene.parts import MaterialBook, hsv, shift

OUTDOOR_KINDS = {"asphalt", "grass", "facade"} <= set(get_args(TextureKind))


class TownMaterials(MaterialBook):
    """Every material of a town, drawn from `rng`."""

    def __init__(self, rng: np.random.Generator, texture_size: int, facades: int) -> None:
        super().__init__(rng, texture_size)
        dark = hsv(rng, (0, 360), (0.0, 0.05), (0.16, 0.24))
        if OUTDOOR_KINDS:
            kind, params = "asphalt", {"aggregate": 0.08, "patches": 0.2}
        else:
            kind, params = "plaster", {"roughness": 2.0}
        span = rng.uniform(2.0, 3.0)
        self.asphalt = self.textured("asphalt", kind, (dark, shift(dark, 1.5)), span, 0.0, params)
        pave = hsv(rng, (20, 45), (0.02, 0.1), (0.55, 0.7))
        self.paving = self.textured(
            "paving",
            "tiles",
            (pave, shift(pave, 1.1)),
            rng.uniform(1.6, 2.4),
            0.0,
            {"tiles": 4.0, "grout": 0.04, "variation": 0.12, "marble": 0.0},
        )
        self.kerb = self.plain("kerb", hsv(rng, (0, 360), (0.0, 0.04), (0.6, 0.75)))
        green = hsv(rng, (85, 115), (0.45, 0.7), (0.3, 0.45))
        if OUTDOOR_KINDS:
            kind, params = "grass", {"blades": 48.0, "clover": 0.15}
        else:
            kind, params = "carpet", {"loops": 64.0, "mottle": 0.6}
        span = rng.uniform(1.0, 2.0)
        self.grass = self.textured("grass", kind, (green, shift(green, 1.4)), span, 0.0, params)
        plaza = hsv(rng, (0, 360), (0.0, 0.05), (0.5, 0.65))
        self.plaza = self.textured(
            "plaza",
            "tiles",
            (plaza, shift(plaza, 1.15)),
            rng.uniform(3.0, 4.0),
            0.0,
            {"tiles": 4.0, "grout": 0.03, "variation": 0.2, "marble": 0.2},
        )
        self.facades = tuple(self._facade(k) for k in range(facades))
        self.roofs = tuple(
            self.plain(f"roof_{k}", hsv(rng, (0, 40), (0.0, 0.35), (0.2, 0.45))) for k in range(3)
        )
        self.marking = self.plain("marking", (0.92, 0.92, 0.9), 0.0)
        self.bark = self.plain("bark", hsv(rng, (20, 35), (0.4, 0.6), (0.2, 0.3)))
        self.leaves = tuple(
            self.plain(f"leaves_{k}", hsv(rng, (80, 130), (0.5, 0.8), (0.2, 0.45)))
            for k in range(3)
        )
        self.metal = self.plain("metal", hsv(rng, (0, 360), (0.0, 0.05), (0.25, 0.4)), 0.1, True)
        self.lamp = self.plain("lamp_glass", (0.95, 0.93, 0.8), 0.0, True)
        self.signal = self.plain("signal", (0.08, 0.08, 0.08), 0.0, True)
        self.sign = self.plain("sign", (0.8, 0.05, 0.05), 0.0, True)
        self.glass = self.plain("car_glass", (0.1, 0.12, 0.15), 0.3, True)
        self.tyre = self.plain("tyre", (0.05, 0.05, 0.05))
        self.paints = tuple(
            self.plain(f"paint_{k}", hsv(rng, (0, 360), (0.0, 0.9), (0.2, 0.95)), 0.2, True)
            for k in range(6)
        )

    def _facade(self, k: int) -> str:
        """A facade: dark glass windows (the tiles) in a wall colour (the grout between)."""
        rng = self.rng
        glass = hsv(rng, (190, 230), (0.2, 0.5), (0.1, 0.25))
        wall = hsv(rng, (0, 50), (0.05, 0.4), (0.75, 1.0))
        storey = rng.uniform(3.0, 3.6)  # one texture tile: 2 x 2 windows, so 2 storeys
        if OUTDOOR_KINDS:
            ww, wh = rng.uniform(0.35, 0.7), rng.uniform(0.45, 0.65)
            params = {"columns": 2.0, "rows": 2.0, "window_w": ww, "window_h": wh, "lit": 0.1}
            return self.textured(f"facade_{k}", "facade", (wall, glass), 2 * storey, 0.05, params)
        params = {"tiles": 2.0, "grout": rng.uniform(0.3, 0.45), "variation": 0.1, "marble": 0.0}
        return self.textured(f"facade_{k}", "tiles", (glass, wall), 2 * storey, 0.05, params)
