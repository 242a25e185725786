"""The warehouse: one large hall with rows of pallet racking (as in Unreal Robotics Lab's
experiments), as data; the second world generator, `scene.generator: warehouse`.

`generate_warehouse` is a pure function of (config, generator state). Conventions as the
apartment's: the floor is one 5 cm slab whose top is at z = 0, spanning the hall between the
walls' centre lines; the ceiling a 5 cm slab whose bottom is at the hall height; four 30 cm
concrete walls centred on the hall's edges (the two along x own the corners). Racks run along
x in double rows (two racks back to back, a mesh in the 20 cm flue between them), one "rack"
object per bay: uprights at the bay's ends, and per level a deck on a front beam. Pallets on
the decks carry cartons or a wrapped load ("pallet" and "box" objects). Aisles lie between
the rows and along the side walls, end aisles along the end walls, and a cross aisle halves
rows of many bays; nothing stands in them. Ceiling lights hang over the aisles. The world has
no rooms and no doors: planners, people and flying objects use its floor minus the racks. Mesh
assets of the config's catalogues (`scene.assets`) stand back to a wall (+x into the hall) in
the aisles along the walls, each of which keeps `KEEP_CLEAR_M` free beside them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from pydantic import Field, model_validator

from twinsim.model.scene import GeomSpec, LightSpec
from twinsim.scene.assets.catalogue import CatalogueFolders
from twinsim.scene.assets.meshes import VisualMesh
from twinsim.scene.assets.placement import (
    PlacedAssets,
    Spot,
    add_mesh_objects,
    load_assets,
    place_assets,
)
from twinsim.scene.generators import Layout, SceneConfig, WorldGenerator
from twinsim.scene.parts import MaterialBook, ObjectList, box, hsv, r3, r4, shift

WALL_T = 0.3
FLOOR_T = 0.05
CEILING_T = 0.05
UPRIGHT = 0.04  # half side of an upright's square section
BEAM_HZ = 0.05  # half height of a front beam
DECK_HZ = 0.015  # half thickness of a shelf deck
FLUE_M = 0.2  # gap between the two racks of a double row (the mesh stands in its middle)
MESH_HT = 0.01  # half thickness of the back mesh
LOW_LEVEL_M = 0.15  # top of the lowest beam
PALLET_X_M = 0.8  # a pallet's width along the beam
PALLET_H_M = 0.144
BAY_M = (2.4, 2.9)
DEPTH_M = (0.9, 1.2)  # depth of one rack
PITCH_M = (1.3, 1.7)  # vertical distance between levels
END_EXTRA_M = 1.0  # end aisles are up to this much wider than the aisles
TOP_CLEAR_M = 1.5  # rack tops stay this far below the ceiling (lights hang there)
CROSS_AISLE_BAYS = 9  # rows that would have this many bays get a cross aisle instead
LOAD_GAP_M = 0.3  # a load keeps this far below the beam of the level above
KEEP_CLEAR_M = 2.0  # an aisle along a wall keeps this much free beside mesh assets
ASSET_GAP_M = 0.03  # between two mesh assets, and between one and a wall
_ASSET_ATTEMPTS = 40


class WarehouseConfig(SceneConfig):
    """One hall with rows of pallet racking; sizes are drawn uniformly from the ranges."""

    generator: Literal["warehouse"] = "warehouse"
    length_m: tuple[float, float] = (20.0, 40.0)
    width_m: tuple[float, float] = (12.0, 25.0)
    height_m: tuple[float, float] = (6.0, 9.0)
    aisle_width_m: tuple[float, float] = (2.6, 3.4)
    levels: tuple[int, int] = (3, 5)
    fill: float = Field(0.7, ge=0.0, le=1.0)  # share of pallet places holding a pallet
    lights: int = Field(8, ge=1, le=8)
    texture_size: int = Field(256, ge=16, le=2048)
    assets: CatalogueFolders = ()

    @model_validator(mode="after")
    def _ranges(self) -> WarehouseConfig:
        for name in ("length_m", "width_m", "height_m", "aisle_width_m", "levels"):
            lo, hi = getattr(self, name)
            if not 0 < lo <= hi:
                raise ValueError(f"{name}={list(getattr(self, name))} must be 0 < low <= high")
        aisle = self.aisle_width_m[1]
        need_l = 2 * (aisle + END_EXTRA_M) + BAY_M[1] + WALL_T
        need_w = 2 * aisle + 2 * DEPTH_M[1] + FLUE_M + WALL_T
        for name, need in (("length_m", need_l), ("width_m", need_w), ("height_m", 4.0)):
            if getattr(self, name)[0] < need - 1e-9:
                raise ValueError(
                    f"{name} must be >= {need:.2f} m for one rack row with "
                    f"aisle_width_m up to {aisle} m"
                )
        if self.aisle_width_m[0] < 2.0:
            raise ValueError("aisle_width_m must be >= 2.0 m (a drone and people pass there)")
        return self


def _r2(v: float) -> float:
    """Round to 1 cm: the hall's dimensions, so that boxes built from them meet exactly."""
    return round(float(v), 2)


@dataclass(frozen=True)
class _Plan:
    """The hall's dimensions and where the racks go (world metres, hall centred on 0)."""

    length: float
    width: float
    height: float
    depth: float  # of one rack
    bay: float
    pitch: float
    levels: int
    rows_y: tuple[float, ...]  # centre lines of the double rows
    segments: tuple[tuple[float, int], ...]  # (x where its first bay starts, bays) of each row
    aisles_y: tuple[float, ...]  # centre lines of the aisles along x

    @property
    def rack_top(self) -> float:
        """Height of the uprights: the top deck and room for its load."""
        return _r2(LOW_LEVEL_M + self.levels * self.pitch - 0.2)

    def level_z(self, k: int) -> float:
        """Top of the deck of level k (0 = lowest)."""
        return _r2(LOW_LEVEL_M + k * self.pitch)


def _plan(cfg: WarehouseConfig, rng: np.random.Generator) -> _Plan:
    """Draw the hall's size and lay out rack rows, bays and aisles."""
    length, width = _r2(rng.uniform(*cfg.length_m)), _r2(rng.uniform(*cfg.width_m))
    height = _r2(rng.uniform(*cfg.height_m))
    aisle = rng.uniform(*cfg.aisle_width_m)
    depth, bay = _r2(rng.uniform(*DEPTH_M)), _r2(rng.uniform(*BAY_M))
    pitch = _r2(rng.uniform(*PITCH_M))
    levels = int(rng.integers(cfg.levels[0], cfg.levels[1] + 1))
    fit = math.floor((height - TOP_CLEAR_M - LOW_LEVEL_M + 0.2) / pitch)
    levels = max(1, min(levels, fit))
    inner_l, inner_w = length - WALL_T, width - WALL_T
    row_d = 2 * depth + FLUE_M
    # as many rows as leave every aisle wider than drawn (by 1 cm, for rounding)
    n_rows = max(1, math.floor((inner_w - aisle - 0.01) / (row_d + aisle)))
    gap = (inner_w - n_rows * row_d) / (n_rows + 1)  # the aisles share what is left
    rows_y = tuple(r4(-inner_w / 2 + gap * (k + 1) + row_d * (k + 0.5)) for k in range(n_rows))
    aisles_y = tuple(-inner_w / 2 + gap / 2 + (gap + row_d) * k for k in range(n_rows + 1))
    end = rng.uniform(aisle, aisle + END_EXTRA_M)
    span = inner_l - 2 * end
    n_bays = max(1, math.floor(span / bay))
    if n_bays >= CROSS_AISLE_BAYS:  # two halves with a cross aisle between them
        n_bays = math.floor((span - aisle) / bay)
        first = n_bays // 2
        total = n_bays * bay + aisle
        x0 = r4(-total / 2)
        segments = ((x0, first), (r4(x0 + first * bay + aisle), n_bays - first))
    else:
        segments = ((r4(-n_bays * bay / 2), n_bays),)
    return _Plan(
        length=length,
        width=width,
        height=height,
        depth=depth,
        bay=bay,
        pitch=pitch,
        levels=levels,
        rows_y=rows_y,
        segments=segments,
        aisles_y=tuple(_r2(y) for y in aisles_y),
    )


class _Materials(MaterialBook):
    """The warehouse's finishes: concrete, blockwork, painted steel, chipboard, wood, cardboard."""

    def __init__(self, rng: np.random.Generator, texture_size: int) -> None:
        super().__init__(rng, texture_size)
        grey = hsv(rng, (0, 360), (0.0, 0.06), (0.45, 0.65))
        self.floor = self.textured(
            "concrete", "plaster", (grey, shift(grey, 0.85)), rng.uniform(1.5, 2.5), 0.05
        )
        block = hsv(rng, (25, 50), (0.03, 0.15), (0.6, 0.85))
        params = {"tiles": 4.0, "grout": 0.04, "variation": 0.15, "marble": 0.0}
        self.wall = self.textured(
            "blockwork", "tiles", (block, shift(block, 0.9)), rng.uniform(1.4, 1.8), 0.0, params
        )
        roof = hsv(rng, (0, 360), (0.0, 0.05), (0.55, 0.8))
        self.ceiling = self.textured(
            "roof", "plaster", (roof, shift(roof, 0.9)), rng.uniform(1.5, 2.5)
        )
        self.upright = self.plain(
            "upright", hsv(rng, (200, 225), (0.6, 0.9), (0.35, 0.6)), 0.1, True
        )
        self.beam = self.plain("beam", hsv(rng, (18, 32), (0.8, 1.0), (0.8, 1.0)), 0.1, True)
        self.deck = self.textured(
            "deck", "wood", self.wood_colors(), rng.uniform(0.6, 1.0), 0.0, {"planks": 2.0}
        )
        steel = hsv(rng, (0, 360), (0.0, 0.05), (0.45, 0.65))
        params = {"threads": 24.0, "twill": 0.0, "plaid": 0.0}
        self.mesh = self.textured("mesh", "fabric", (steel, shift(steel, 0.6)), 0.4, 0.0, params)
        pale = hsv(rng, (28, 42), (0.3, 0.5), (0.6, 0.8))
        params = {"planks": 5.0, "rings": 6.0}
        self.pallet = self.textured("pallet", "wood", (pale, shift(pale, 1.2)), 0.8, 0.0, params)
        self.cartons = tuple(
            self.textured(
                f"carton_{k}",
                "plaster",
                (c := hsv(rng, (24, 38), (0.4, 0.65), (0.45, 0.8)), shift(c, 1.1)),
                rng.uniform(0.4, 0.8),
            )
            for k in range(3)
        )
        self.wrap = self.plain("wrap", hsv(rng, (190, 230), (0.0, 0.1), (0.8, 0.95)), 0.2, True)
        self.fixture = self.plain("fixture", hsv(rng, (0, 360), (0.0, 0.05), (0.75, 0.95)), 0.1)


def _rack_geoms(plan: _Plan, mats: _Materials, last: bool) -> list[GeomSpec]:
    """One bay of a double row (relative to its centre on the floor): uprights at its start
    (and end, for the last bay), per side and level a deck on a front beam, the back mesh."""
    b, d, top = plan.bay, plan.depth, plan.rack_top
    geoms = []
    ends = (-b / 2, b / 2) if last else (-b / 2,)
    for s in (-1.0, 1.0):
        for x in ends:
            for y in (FLUE_M / 2 + UPRIGHT, FLUE_M / 2 + d - UPRIGHT):
                geoms.append(box((x, s * y, top / 2), (UPRIGHT, UPRIGHT, top / 2), mats.upright))
        for k in range(plan.levels):
            z = plan.level_z(k)
            geoms.append(
                box(
                    (0.0, s * (FLUE_M / 2 + d / 2), z - DECK_HZ),
                    (b / 2 - UPRIGHT, d / 2 - UPRIGHT, DECK_HZ),
                    mats.deck,
                )
            )
            geoms.append(
                box(
                    (0.0, s * (FLUE_M / 2 + d - UPRIGHT), z - 2 * DECK_HZ - BEAM_HZ),
                    (b / 2 - UPRIGHT, UPRIGHT, BEAM_HZ),
                    mats.beam,
                )
            )
    geoms.append(box((0.0, 0.0, top / 2), (b / 2, MESH_HT, top / 2), mats.mesh))
    return geoms


def _pallet_geoms(depth: float, mat: str) -> list[GeomSpec]:
    """A pallet (relative to its centre on the deck): a top board on two runners."""
    hx, hy, board = PALLET_X_M / 2, depth / 2, 0.011
    runner = (PALLET_H_M - 2 * board) / 2
    geoms = [box((0.0, 0.0, PALLET_H_M - board), (hx, hy, board), mat)]
    geoms += [box((x, 0.0, runner), (0.05, hy, runner), mat) for x in (-0.34, 0.34)]
    return geoms


def _load_geoms(
    rng: np.random.Generator, depth: float, max_h: float, mats: _Materials
) -> list[GeomSpec]:
    """What a pallet carries (relative to the pallet's top): a wrapped block or cartons."""
    if rng.uniform() < 0.35:
        hx, hy = rng.uniform(0.3, 0.4), rng.uniform(0.3, depth / 2)
        h = rng.uniform(0.3, max_h)
        return [box((0.0, 0.0, h / 2), (hx, hy, h / 2), mats.wrap)]
    nx, ny, layers = (int(rng.integers(1, 3)) for _ in range(3))
    cx, cy = PALLET_X_M / nx, depth / ny
    ch = rng.uniform(0.2, min(0.5, max_h / layers))
    geoms = []
    for layer in range(layers):
        for i in range(nx):
            for j in range(ny):
                if layer and rng.uniform() < 0.3:  # gaps in the upper layers
                    continue
                half = (cx / 2 - 0.01, cy / 2 - 0.01, ch / 2 - 0.002)
                centre = (-PALLET_X_M / 2 + cx * (i + 0.5), -depth / 2 + cy * (j + 0.5))
                mat = mats.cartons[int(rng.integers(len(mats.cartons)))]
                geoms.append(box((*centre, ch * (layer + 0.5)), half, mat))
    return geoms


def _lights(
    plan: _Plan, cfg: WarehouseConfig, rng: np.random.Generator
) -> list[tuple[float, float, LightSpec]]:
    """Ceiling spot lights in one or two lines over aisles; only the first casts shadows."""
    aisles = plan.aisles_y
    if cfg.lights >= 4 and len(aisles) >= 2:
        ys = [aisles[round((len(aisles) - 1) * f)] for f in (0.25, 0.75)]
    else:
        ys = [aisles[len(aisles) // 2]]
    per_line = cfg.lights // len(ys)
    inner = plan.length - WALL_T
    out = []
    for j, y in enumerate(ys):
        for i in range(per_line):
            k = j * per_line + i
            x = _r2(-inner / 2 + inner * (i + 0.5) / per_line)
            level = rng.uniform(0.55, 0.8)
            tint = rng.uniform(0.9, 1.0)
            light = LightSpec(
                name=f"light_{k}",
                pos=(x, y, r3(plan.height - 0.4)),
                dir=(0.0, 0.0, -1.0),
                diffuse=(r3(level), r3(level), r3(level * tint)),
                specular=(0.1, 0.1, 0.1),
                ambient=(r3(rng.uniform(0.03, 0.06)),) * 3,
                directional=False,
                castshadow=k == 0,
                attenuation=(1.0, 0.0, r3(rng.uniform(0.002, 0.006))),
                cutoff_deg=r3(rng.uniform(80.0, 89.0)),
                exponent=r3(rng.uniform(0.3, 1.0)),
            )
            out.append((x, y, light))
    return out


def generate_warehouse(cfg: WarehouseConfig, rng: np.random.Generator) -> Layout:
    """Generate a lit warehouse hall with stocked racks from the config, drawing only from `rng`."""
    plan = _plan(cfg, rng)
    mats = _Materials(rng, cfg.texture_size)
    objs = ObjectList()
    hl, hw, h, t = plan.length / 2, plan.width / 2, plan.height, WALL_T / 2
    objs.add(
        "floor",
        "floor",
        (0.0, 0.0, 0.0),
        [box((0, 0, -FLOOR_T / 2), (hl, hw, FLOOR_T / 2), mats.floor)],
        None,
    )
    objs.add(
        "ceiling",
        "ceiling",
        (0.0, 0.0, h),
        [box((0, 0, CEILING_T / 2), (hl, hw, CEILING_T / 2), mats.ceiling)],
        None,
    )
    for side, y in (("south", -hw), ("north", hw)):
        objs.add(
            f"wall_{side}",
            "wall",
            (0.0, y, 0.0),
            [box((0, 0, h / 2), (hl + t, t, h / 2), mats.wall)],
            None,
        )
    for side, x in (("west", -hl), ("east", hl)):
        objs.add(
            f"wall_{side}",
            "wall",
            (x, 0.0, 0.0),
            [box((0, 0, h / 2), (t, hw - t, h / 2), mats.wall)],
            None,
        )
    lights = _lights(plan, cfg, rng)
    fixture = [
        GeomSpec(type="cylinder", size=(0.01, 0.15), pos=(0.0, 0.0, -0.15), material=mats.fixture),
        box((0.0, 0.0, -0.33), (0.6, 0.12, 0.03), mats.fixture),
    ]
    for x, y, light in lights:
        objs.add(f"ceiling_lamp_{light.name}", "lamp", (x, y, h), fixture, None)
    _stock(plan, cfg, mats, objs, rng)
    assets = PlacedAssets()
    if cfg.assets:
        spot = _wall_spots(plan)
        assets = add_mesh_objects(place_assets(load_assets(cfg.assets), rng, spot), objs)
    return Layout(
        objects=tuple(objs.items),
        textures=tuple(mats.textures),
        materials=(*mats.materials, *assets.materials),
        lights=tuple(light for _, _, light in lights),
        wall_height=h,
        bounds_min=(r3(-hl - t), r3(-hw - t), -FLOOR_T),
        bounds_max=(r3(hl + t), r3(hw + t), r3(h + CEILING_T)),
        mesh_assets=assets.specs,
        asset_bytes=assets.blobs,
    )


def _wall_spots(plan: _Plan):
    """Where a copy of a floor asset stands: back to one of the four walls (drawn by the
    length of its free band), in the band between the wall and the racks that leaves
    `KEEP_CLEAR_M` of the aisle free, clear of the copies placed before."""
    hx, hy = (plan.length - WALL_T) / 2, (plan.width - WALL_T) / 2  # the inner faces
    row_half = plan.depth + FLUE_M / 2
    first, (last, bays) = plan.segments[0][0], plan.segments[-1]
    ends = (first + hx, hx - (last + bays * plan.bay))  # west and east end aisles
    sides = (plan.rows_y[0] - row_half + hy, hy - plan.rows_y[-1] - row_half)  # south, north
    # per wall: (free band depth, length along it, yaw pointing into the hall)
    walls = (
        (ends[0] - KEEP_CLEAR_M, 2 * hy, 0.0),
        (ends[1] - KEEP_CLEAR_M, 2 * hy, math.pi),
        (sides[0] - KEEP_CLEAR_M, 2 * hx, math.pi / 2),
        (sides[1] - KEEP_CLEAR_M, 2 * hx, -math.pi / 2),
    )
    taken: list[tuple[float, float, float, float]] = []

    def spot(asset: VisualMesh, rng: np.random.Generator) -> Spot | None:
        depth, width, _ = asset.footprint()  # half extents: x (front) and y
        fits = [k for k, (band, length, _) in enumerate(walls) if 2 * depth + ASSET_GAP_M <= band]
        fits = [k for k in fits if 2 * width + 2 * ASSET_GAP_M <= walls[k][1]]
        if not fits:
            return None
        lengths = np.array([walls[k][1] for k in fits])
        for _ in range(_ASSET_ATTEMPTS):
            k = fits[int(rng.choice(len(fits), p=lengths / lengths.sum()))]
            reach = walls[k][1] / 2 - width - ASSET_GAP_M
            along, off = float(rng.uniform(-reach, reach)), ASSET_GAP_M + depth
            x, y = [(-hx + off, along), (hx - off, along), (along, -hy + off), (along, hy - off)][k]
            half = (depth, width) if k < 2 else (width, depth)
            rect = (x - half[0], y - half[1], x + half[0], y + half[1])
            if all(_apart(rect, other) for other in taken):
                taken.append(rect)
                return Spot(round(x, 3), round(y, 3), walls[k][2])
        return None

    return spot


def _apart(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    """Whether two rectangles (x0, y0, x1, y1) are at least `ASSET_GAP_M` apart on an axis."""
    return (
        a[2] + ASSET_GAP_M <= b[0]
        or b[2] + ASSET_GAP_M <= a[0]
        or a[3] + ASSET_GAP_M <= b[1]
        or b[3] + ASSET_GAP_M <= a[1]
    )


def _stock(
    plan: _Plan, cfg: WarehouseConfig, mats: _Materials, objs: ObjectList, rng: np.random.Generator
) -> None:
    """The racks, bay by bay, and the pallets with their loads on each level of both sides."""
    pallet_d = min(1.2, plan.depth - 2 * UPRIGHT - 0.05)
    inner_b = plan.bay - 2 * UPRIGHT
    slots = max(1, math.floor(inner_b / (PALLET_X_M + 0.05)))
    max_load = plan.pitch - LOAD_GAP_M - PALLET_H_M - 2 * BEAM_HZ
    for r, yc in enumerate(plan.rows_y):
        for s, (x0, n_bays) in enumerate(plan.segments):
            for b in range(n_bays):
                xc = x0 + (b + 0.5) * plan.bay
                name = f"rack_{r}_{s}_{b}"
                geoms = _rack_geoms(plan, mats, last=b == n_bays - 1)
                objs.add(name, "rack", (xc, yc, 0.0), geoms, None)
                for side in (-1.0, 1.0):
                    y = yc + side * (FLUE_M / 2 + plan.depth / 2)
                    for k in range(plan.levels):
                        z = plan.level_z(k)
                        for j in range(slots):
                            if rng.uniform() >= cfg.fill:
                                continue
                            x = xc - plan.bay / 2 + UPRIGHT + inner_b * (j + 0.5) / slots
                            where = f"{name}_{'ab'[side > 0]}{k}{j}"
                            pallet = _pallet_geoms(pallet_d, mats.pallet)
                            objs.add(f"pallet_{where}", "pallet", (x, y, z), pallet, None)
                            if rng.uniform() < 0.9:
                                load = _load_geoms(rng, pallet_d, max_load, mats)
                                objs.add(f"load_{where}", "box", (x, y, z + PALLET_H_M), load, None)


class Warehouse(WorldGenerator):
    """A warehouse hall with rows of stocked pallet racking and no rooms (`generate_warehouse`)."""

    name = "warehouse"
    config_model = WarehouseConfig

    def generate(self, cfg: WarehouseConfig, rng: np.random.Generator) -> Layout:
        return generate_warehouse(cfg, rng)
