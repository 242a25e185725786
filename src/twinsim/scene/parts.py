"""Building blocks shared by world generators: seeded colours, a book of uniquely named
textured and plain materials, an object list handing out instance ids 1, 2, 3, …, and exact
structure boxes (centres and half sizes on a 0.1 mm grid, so neighbouring boxes meet)."""

from __future__ import annotations

import colorsys

import numpy as np

from twinsim.geometry import yaw_quat_wxyz
from twinsim.model.base import RGB
from twinsim.model.scene import GeomSpec, MaterialSpec, ObjectSpec, TextureKind, TextureSpec


def r3(v: float) -> float:
    """Round to 1 mm (colours, light parameters, material settings)."""
    return round(float(v), 3)


def r4(v: float) -> float:
    """Round to 0.1 mm: exact for structure, whose edges all lie on a 5 mm grid."""
    return round(float(v), 4)


def hsv(
    rng: np.random.Generator, h: tuple[float, float], s: tuple[float, float], v: tuple[float, float]
) -> RGB:
    """A random colour from hue (degrees), saturation and value ranges."""
    hue = (rng.uniform(*h) % 360.0) / 360.0
    rgb = colorsys.hsv_to_rgb(hue, rng.uniform(*s), rng.uniform(*v))
    return (r3(rgb[0]), r3(rgb[1]), r3(rgb[2]))


def shift(c: RGB, factor: float) -> RGB:
    """The colour made lighter (factor > 1) or darker (< 1), clipped to [0, 1]."""
    return (r3(min(1.0, c[0] * factor)), r3(min(1.0, c[1] * factor)), r3(min(1.0, c[2] * factor)))


class MaterialBook:
    """Collects uniquely named textures and materials; every random choice comes from `rng`."""

    def __init__(self, rng: np.random.Generator, texture_size: int) -> None:
        self.rng = rng
        self.size = texture_size
        self.textures: list[TextureSpec] = []
        self.materials: list[MaterialSpec] = []

    def textured(
        self,
        name: str,
        kind: TextureKind,
        colors: tuple[RGB, RGB],
        span_m: float,
        reflectance: float = 0.0,
        params: dict[str, float] | None = None,
    ) -> str:
        """A material showing a procedural texture whose one tile spans `span_m` metres."""
        rng = self.rng
        tex = TextureSpec(
            name=f"tex_{name}",
            kind=kind,
            seed=int(rng.integers(0, 2**31 - 1)),
            size=self.size,
            color_a=colors[0],
            color_b=colors[1],
            params=params or {},
        )
        rep = r3(1.0 / span_m)
        mat = MaterialSpec(
            name=f"mat_{name}",
            texture=tex.name,
            specular=r3(rng.uniform(0.05, 0.5)),
            shininess=r3(rng.uniform(0.05, 0.6)),
            reflectance=r3(reflectance),
            texrepeat=(rep, rep),
            texuniform=True,
        )
        self.textures.append(tex)
        self.materials.append(mat)
        return mat.name

    def plain(self, name: str, rgb: RGB, reflectance: float = 0.0, glossy: bool = False) -> str:
        """An untextured material of one colour."""
        rng = self.rng
        lo = 0.4 if glossy else 0.05
        mat = MaterialSpec(
            name=f"mat_{name}",
            rgba=(*rgb, 1.0),
            specular=r3(rng.uniform(lo, lo + 0.4)),
            shininess=r3(rng.uniform(lo, lo + 0.4)),
            reflectance=r3(reflectance),
        )
        self.materials.append(mat)
        return mat.name

    def wood_colors(self) -> tuple[RGB, RGB]:
        """A wood tone and its lighter grain colour."""
        base = hsv(self.rng, (18, 40), (0.35, 0.7), (0.35, 0.8))
        return base, shift(base, self.rng.uniform(1.2, 1.5))


class ObjectList:
    """Hands out instance ids 1, 2, 3, … in creation order."""

    def __init__(self) -> None:
        self.items: list[ObjectSpec] = []

    def add(
        self,
        name: str,
        cls: str,
        pos: tuple[float, float, float],
        geoms: list[GeomSpec] | tuple[GeomSpec, ...],
        room_id: int | None,
        yaw: float = 0.0,
        mesh: str | None = None,
    ) -> None:
        """Append an object at `pos` turned by `yaw` about z (showing the mesh asset `mesh`,
        if given); its id is the next one."""
        self.items.append(
            ObjectSpec(
                instance_id=len(self.items) + 1,
                name=name,
                semantic_class=cls,
                room_id=room_id,
                pos=(r4(pos[0]), r4(pos[1]), r4(pos[2])),
                quat=yaw_quat_wxyz(yaw),
                geoms=tuple(geoms),
                mesh=mesh,
            )
        )


def box(center: tuple[float, float, float], half: tuple[float, float, float], mat: str) -> GeomSpec:
    """A structure box; centre and half size stay exact so neighbouring boxes meet, not overlap."""
    return GeomSpec(
        type="box",
        size=tuple(r4(h) for h in half),
        pos=(r4(center[0]), r4(center[1]), r4(center[2])),
        material=mat,
    )
