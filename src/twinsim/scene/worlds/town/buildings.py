"""The town's ground and blocks: road surfaces (a piece per road and a square per node, top at
z = 0), raised sidewalks ringing each block behind a kerb (gaps at the crosswalks), the land
inside (grass or a paved plaza) and the buildings on it, one object of a few boxes each.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
import shapely

from twinsim.geometry import yaw_quat_wxyz
from twinsim.model.scene import GeomSpec
from twinsim.scene.overlay import difference, intersection, union_all
from twinsim.scene.parts import ObjectList, box, r4
from twinsim.scene.worlds.town.materials import TownMaterials
from twinsim.scene.worlds.town.network import CROSSWALK_W
from twinsim.scene.worlds.town.paths import trim_path
from twinsim.scene.worlds.town.roads import Node, RoadPlan

ROAD_T = 0.1  # road slab thickness (top at z = 0)
SIDEWALK_Z = 0.15  # top of sidewalks, kerbs and block land
KERB_W = 0.15
GROUND_Z = -0.02  # the land around the town lies just below the road top


@dataclass(frozen=True)
class BlockStyle:
    """How a block kind is built up: lot size, setback, gaps and which lots get a building."""

    lot_m: tuple[float, float]
    setback_m: tuple[float, float]
    gap_m: tuple[float, float]
    fill: float  # share of lots with a building
    interior: bool  # lots inside the perimeter are built on too
    plaza: bool  # paved land instead of grass


STYLES = {
    "residential": BlockStyle((11.0, 16.0), (2.0, 4.0), (2.0, 4.0), 0.8, False, False),
    "commercial": BlockStyle((14.0, 22.0), (0.0, 1.0), (0.0, 1.5), 0.95, False, True),
    "downtown": BlockStyle((20.0, 30.0), (0.0, 2.0), (3.0, 6.0), 0.9, True, True),
    "park": BlockStyle((20.0, 30.0), (0.0, 0.0), (0.0, 0.0), 0.0, False, False),
    "rural": BlockStyle((30.0, 50.0), (5.0, 15.0), (10.0, 20.0), 0.15, False, False),
}


def _slab(x0: float, y0: float, x1: float, y1: float, z0: float, z1: float, mat: str):
    """A box spanning [x0, x1] x [y0, y1] x [z0, z1], relative to the origin."""
    return box(
        ((x0 + x1) / 2, (y0 + y1) / 2, (z0 + z1) / 2),
        ((x1 - x0) / 2, (y1 - y0) / 2, (z1 - z0) / 2),
        mat,
    )


def road_extent(node: Node, d: tuple[int, int]) -> float:
    """Distance from a node's centre to where the road piece along d begins."""
    if node.dead_end or node.ramp:
        return 0.0
    return node.half[0] if d[0] else node.half[1]


def add_roads(plan: RoadPlan, mats: TownMaterials, objs: ObjectList) -> None:
    """One road object per piece between node squares and one per node square."""
    for edge in plan.edges:
        a, b = plan.nodes[edge.a], plan.nodes[edge.b]
        if len(edge.path) > 2:
            _add_path_road(edge, road_extent(a, edge.key_a), road_extent(b, edge.key_b), mats, objs)
            continue
        ax = 0 if abs(b.xy[0] - a.xy[0]) > abs(b.xy[1] - a.xy[1]) else 1
        sa = road_extent(a, (1, 0) if ax == 0 else (0, 1))
        sb = road_extent(b, (1, 0) if ax == 0 else (0, 1))
        half_w = edge.line.half_width
        (lo, sa), (hi, sb) = sorted([(a.xy[ax], sa), (b.xy[ax], sb)])
        length = (hi - sb) - (lo + sa)
        centre = [0.0, 0.0, 0.0]
        centre[ax] = (lo + sa + hi - sb) / 2
        centre[1 - ax] = a.xy[1 - ax]
        half = [0.0, 0.0, ROAD_T / 2]
        half[ax], half[1 - ax] = length / 2, half_w
        geom = box((0.0, 0.0, -ROAD_T / 2), tuple(half), mats.asphalt)
        objs.add(f"road_{edge.road_id}", "road", tuple(centre), [geom], None)
    for key in sorted(plan.nodes):
        node = plan.nodes[key]
        if node.dead_end or node.ramp:
            continue
        hx, hy = node.half
        geom = box((0.0, 0.0, -ROAD_T / 2), (hx, hy, ROAD_T / 2), mats.asphalt)
        objs.add(f"junction_{key[0]}_{key[1]}", "road", (*node.xy, 0.0), [geom], None)


def _add_path_road(edge, s0: float, s1: float, mats: TownMaterials, objs: ObjectList) -> None:
    """A road along a polyline: a turned box per segment, a disc at each bend to close it."""
    pts = trim_path(np.array(edge.path, dtype=float), s0, s1)
    half_w = edge.line.half_width
    geoms = []
    for p, q in itertools.pairwise(pts):
        c, d = (p + q) / 2, q - p
        length = float(np.linalg.norm(d))
        if length < 0.01:
            continue
        quat = yaw_quat_wxyz(math.atan2(d[1], d[0]))
        size = (r4(length / 2), r4(half_w), ROAD_T / 2)
        pos = (r4(c[0]), r4(c[1]), -ROAD_T / 2)
        geoms.append(GeomSpec(type="box", size=size, pos=pos, quat=quat, material=mats.asphalt))
    for p in pts[1:-1]:  # a hair lower than the boxes, so their tops do not fight
        pos = (r4(p[0]), r4(p[1]), -ROAD_T / 2 - 0.002)
        size = (r4(half_w), ROAD_T / 2)
        geoms.append(GeomSpec(type="cylinder", size=size, pos=pos, material=mats.asphalt))
    objs.add(f"road_{edge.road_id}", "road", (0.0, 0.0, 0.0), geoms, None)


def crosswalk_rects(plan: RoadPlan) -> list[shapely.Polygon]:
    """Ground rectangles of every crosswalk (across each approach of each node square)."""
    out = []
    for key in sorted(plan.nodes):
        node = plan.nodes[key]
        if node.dead_end or node.ramp:
            continue
        for d, edge in sorted(node.edges.items()):
            e = road_extent(node, d)
            w = edge.line.half_width
            cx, cy = node.xy
            if d[0]:
                xs = sorted((cx + d[0] * e, cx + d[0] * (e + CROSSWALK_W)))
                out.append(shapely.box(xs[0], cy - w, xs[1], cy + w))
            else:
                ys = sorted((cy + d[1] * e, cy + d[1] * (e + CROSSWALK_W)))
                out.append(shapely.box(cx - w, ys[0], cx + w, ys[1]))
    return out


def add_blocks(
    plan: RoadPlan,
    mats: TownMaterials,
    objs: ObjectList,
    rng: np.random.Generator,
    heights: tuple[float, float],
) -> list[tuple[shapely.Polygon, float]]:
    """Sidewalks, kerbs, land and buildings of every block; returns the buildings' footprints
    (with a roof's overhang) and heights."""
    crossings = union_all(crosswalk_rects(plan)).buffer(0.01)
    s = plan.sidewalk_m
    footprints = []
    for blk in plan.blocks:
        x0, y0, x1, y1 = blk.rect
        z = SIDEWALK_Z
        strips = [
            (x0, y0, x1, y0 + KERB_W),
            (x0, y1 - KERB_W, x1, y1),
            (x0, y0 + KERB_W, x0 + KERB_W, y1 - KERB_W),
            (x1 - KERB_W, y0 + KERB_W, x1, y1 - KERB_W),
        ]
        kerb, gaps = [], []
        for strip in strips:
            poly = shapely.box(*strip)
            for part in shapely.get_parts(difference(poly, crossings)):
                if part.area > 1e-4:
                    kerb.append(_slab(*(r4(v) for v in part.bounds), 0.0, z, mats.kerb))
            for part in shapely.get_parts(intersection(poly, crossings)):
                if part.area > 1e-4:
                    gaps.append(_slab(*(r4(v) for v in part.bounds), 0.0, z, mats.paving))
        k = KERB_W
        walk = [
            _slab(x0 + k, y0 + k, x1 - k, y0 + s, 0.0, z, mats.paving),
            _slab(x0 + k, y1 - s, x1 - k, y1 - k, 0.0, z, mats.paving),
            _slab(x0 + k, y0 + s, x0 + s, y1 - s, 0.0, z, mats.paving),
            _slab(x1 - s, y0 + s, x1 - k, y1 - s, 0.0, z, mats.paving),
        ]
        objs.add(f"sidewalk_{blk.block_id}", "sidewalk", (0.0, 0.0, 0.0), walk + gaps, None)
        objs.add(f"kerb_{blk.block_id}", "kerb", (0.0, 0.0, 0.0), kerb, None)
        style = STYLES[blk.kind]
        land = mats.plaza if style.plaza else mats.grass
        inner = (x0 + s, y0 + s, x1 - s, y1 - s)
        objs.add(
            f"land_{blk.block_id}", "terrain", (0.0, 0.0, 0.0), [_slab(*inner, 0.0, z, land)], None
        )
        footprints += _buildings(blk.block_id, inner, style, mats, objs, rng, heights)
    return footprints


def _buildings(
    block_id: int,
    inner: tuple[float, float, float, float],
    style: BlockStyle,
    mats: TownMaterials,
    objs: ObjectList,
    rng: np.random.Generator,
    heights: tuple[float, float],
) -> list[tuple[shapely.Polygon, float]]:
    """Buildings on a block's lots: perimeter lots (and interior ones, downtown)."""
    if style.fill <= 0.0:
        return []
    x0, y0, x1, y1 = inner
    lot = rng.uniform(*style.lot_m)
    nx, ny = max(1, round((x1 - x0) / lot)), max(1, round((y1 - y0) / lot))
    wx, wy = (x1 - x0) / nx, (y1 - y0) / ny
    out = []
    for i in range(nx):
        for j in range(ny):
            edge = i in (0, nx - 1) or j in (0, ny - 1)
            if not (edge or style.interior) or rng.uniform() >= style.fill:
                continue
            gap = rng.uniform(*style.gap_m) / 2
            back = rng.uniform(*style.setback_m)
            lx0, ly0 = x0 + i * wx + gap, y0 + j * wy + gap
            lx1, ly1 = x0 + (i + 1) * wx - gap, y0 + (j + 1) * wy - gap
            lx0 += back if i == 0 else 0.0
            lx1 -= back if i == nx - 1 else 0.0
            ly0 += back if j == 0 else 0.0
            ly1 -= back if j == ny - 1 else 0.0
            if lx1 - lx0 < 4.0 or ly1 - ly0 < 4.0:
                continue
            h = float(rng.uniform(*heights))
            hx, hy = (lx1 - lx0) / 2, (ly1 - ly0) / 2
            facade = mats.facades[int(rng.integers(len(mats.facades)))]
            roof = mats.roofs[int(rng.integers(len(mats.roofs)))]
            if h > 40.0:  # a tower on a podium, its top stepped back
                base = h * rng.uniform(0.55, 0.75)
                f = rng.uniform(0.6, 0.85)
                geoms = [
                    box((0.0, 0.0, base / 2), (hx, hy, base / 2), facade),
                    box((0.0, 0.0, (base + h) / 2), (hx * f, hy * f, (h - base) / 2), facade),
                    box((0.0, 0.0, h + 0.5), (hx * f * 0.5, hy * f * 0.5, 0.5), roof),
                ]
                h = h + 1.0
            else:
                geoms = [
                    box((0.0, 0.0, h / 2), (hx, hy, h / 2), facade),
                    box((0.0, 0.0, h + 0.15), (hx + 0.2, hy + 0.2, 0.15), roof),
                ]
                h = h + 0.3
            centre = (r4((lx0 + lx1) / 2), r4((ly0 + ly1) / 2), 0.0)
            objs.add(f"building_{block_id}_{i}_{j}", "building", centre, geoms, None)
            out.append((shapely.box(lx0 - 0.2, ly0 - 0.2, lx1 + 0.2, ly1 + 0.2), h))
    return out
