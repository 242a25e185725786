"""A placed person's look: skin and hair tones, and shirts, trousers and shoes as uniquely
named materials (plain, or seeded fabric textures: weaves, twill, plaid, denim)."""

from __future__ import annotations

import colorsys

import numpy as np

from twinsim.model.base import RGB
from twinsim.model.people import HumanBodySpec
from twinsim.model.scene import MaterialSpec, TextureSpec

TEXTURE_SIZE = 128

# Skin tones from light to dark (sRGB), after common make-up / photographic references.
SKIN_TONES: tuple[RGB, ...] = (
    (0.96, 0.82, 0.72),
    (0.92, 0.74, 0.60),
    (0.84, 0.64, 0.49),
    (0.72, 0.52, 0.37),
    (0.58, 0.40, 0.27),
    (0.44, 0.29, 0.19),
    (0.32, 0.21, 0.14),
)
HAIR_COLORS: tuple[RGB, ...] = (
    (0.05, 0.04, 0.03),
    (0.18, 0.11, 0.06),
    (0.35, 0.22, 0.12),
    (0.62, 0.46, 0.26),
    (0.85, 0.72, 0.48),
    (0.55, 0.25, 0.12),
    (0.62, 0.62, 0.60),
)


def round3(v: float) -> float:
    """A parameter as stored in the scene: three decimals."""
    return round(float(v), 3)


def _hsv(rng: np.random.Generator, h, s, v) -> RGB:
    rgb = colorsys.hsv_to_rgb((rng.uniform(*h) % 360.0) / 360.0, rng.uniform(*s), rng.uniform(*v))
    return (round3(rgb[0]), round3(rgb[1]), round3(rgb[2]))


def _jitter(rng: np.random.Generator, c: RGB, spread: float) -> RGB:
    f = rng.uniform(1.0 - spread, 1.0 + spread, 3)
    return tuple(round3(min(1.0, x * k)) for x, k in zip(c, f, strict=True))


def _shade(c: RGB, factor: float) -> RGB:
    return tuple(round3(min(1.0, x * factor)) for x in c)


class Wardrobe:
    """Makes one placed person's uniquely named materials and fabric textures."""

    def __init__(self, name: str, rng: np.random.Generator) -> None:
        self.name, self.rng = name, rng
        self.materials: list[MaterialSpec] = []
        self.textures: list[TextureSpec] = []

    def plain(self, part: str, rgb: RGB, shiny: float = 0.1) -> str:
        mat = MaterialSpec(
            name=f"mat_{self.name}_{part}",
            rgba=(*rgb, 1.0),
            specular=round3(self.rng.uniform(0.5, 1.5) * shiny),
            shininess=round3(self.rng.uniform(0.1, 0.4)),
        )
        self.materials.append(mat)
        return mat.name

    def fabric(self, part: str, colors: tuple[RGB, RGB], span_m: float, params: dict) -> str:
        tex = TextureSpec(
            name=f"tex_{self.name}_{part}",
            kind="fabric",
            seed=int(self.rng.integers(0, 2**31 - 1)),
            size=TEXTURE_SIZE,
            color_a=colors[0],
            color_b=colors[1],
            params=params,
        )
        rep = round3(1.0 / span_m)
        mat = MaterialSpec(
            name=f"mat_{self.name}_{part}",
            texture=tex.name,
            specular=round3(self.rng.uniform(0.02, 0.15)),
            shininess=round3(self.rng.uniform(0.05, 0.2)),
            texrepeat=(rep, rep),
        )
        self.textures.append(tex)
        self.materials.append(mat)
        return mat.name

    def shirt(self) -> str:
        rng = self.rng
        a = _hsv(rng, (0, 360), (0.1, 0.8), (0.2, 0.95))
        if rng.uniform() < 0.4:
            return self.plain("shirt", a)
        b = _hsv(rng, (0, 360), (0.1, 0.7), (0.2, 0.95)) if rng.uniform() < 0.6 else _shade(a, 0.7)
        params = {
            "threads": float(rng.integers(24, 48)),
            "twill": float(rng.integers(2)),
            "plaid": float(rng.integers(0, 2) * rng.integers(2, 6)),
        }
        return self.fabric("shirt", (a, b), rng.uniform(0.15, 0.35), params)

    def pants(self) -> str:
        rng = self.rng
        if rng.uniform() < 0.5:  # denim
            a = _hsv(rng, (205, 230), (0.35, 0.75), (0.2, 0.6))
            params = {"threads": float(rng.integers(40, 64)), "twill": 1.0, "plaid": 0.0}
            return self.fabric("pants", (a, _shade(a, 1.35)), rng.uniform(0.1, 0.2), params)
        a = _hsv(rng, (0, 360), (0.0, 0.35), (0.08, 0.6))
        return self.plain("pants", a)

    def shoes(self) -> str:
        rng = self.rng
        if rng.uniform() < 0.3:
            return self.plain("shoes", _hsv(rng, (0, 360), (0.0, 0.1), (0.8, 0.97)), 0.3)
        return self.plain("shoes", _hsv(rng, (15, 35), (0.2, 0.7), (0.05, 0.35)), 0.5)

    def dress(self, body: HumanBodySpec) -> HumanBodySpec:
        """The body with skin, hair (most people) and clothing materials."""
        rng = self.rng
        skin = SKIN_TONES[int(rng.integers(len(SKIN_TONES)))]
        hair = None
        if rng.uniform() < 0.85:
            tone = HAIR_COLORS[int(rng.integers(len(HAIR_COLORS)))]
            hair = self.plain("hair", _jitter(rng, tone, 0.1), 0.2)
        return body.model_copy(
            update={
                "skin_material": self.plain("skin", _jitter(rng, skin, 0.04), 0.15),
                "hair_material": hair,
                "shirt_material": self.shirt(),
                "pants_material": self.pants(),
                "shoes_material": self.shoes(),
            }
        )
