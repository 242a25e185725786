"""What stands on and beside the town's roads: lane markings and stop lines, zebra crossings,
signal poles with their heads (at `TrafficLightSpec.pos`), stop signs, street lights, parked
cars in the parking strips, trees in the blocks' open land and on the hills.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import shapely

from twinsim.geometry import yaw_quat_wxyz
from twinsim.model.roads import RoadNetworkSpec
from twinsim.model.scene import GeomSpec, TerrainSpec
from twinsim.scene.overlay import union_all
from twinsim.scene.parts import ObjectList, box, r4
from twinsim.scene.terrain import grid_axes, heights, surface_z
from twinsim.scene.worlds.town.buildings import SIDEWALK_Z, road_extent
from twinsim.scene.worlds.town.materials import TownMaterials
from twinsim.scene.worlds.town.network import CROSSWALK_W, RING_ISLAND_R, STOP_GAP
from twinsim.scene.worlds.town.paths import trim_path
from twinsim.scene.worlds.town.roads import LANE_W, RoadPlan

PAINT_Z = 0.002  # half height of painted lines (they lie on the road's top)
DASH_M, PERIOD_M = 3.0, 6.0
LINE_HW = 0.075
CAR_HALF = (2.25, 0.9)
_WHEEL_QUAT = (math.sqrt(0.5), math.sqrt(0.5), 0.0, 0.0)  # cylinder axis along local y


def _frame(plan: RoadPlan, edge) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, float, float]:
    """A road piece's start node centre, its direction, right normal, length and the free
    spans at its ends (square + crosswalk + stop gap, or nothing at a dead end)."""
    a, b = plan.nodes[edge.a], plan.nodes[edge.b]
    pa, pb = np.array(a.xy), np.array(b.xy)
    length = float(np.linalg.norm(pb - pa))
    d = (pb - pa) / length
    dk = (round(d[0]), round(d[1]))
    ea = 0.0 if a.dead_end or a.ramp else road_extent(a, dk) + CROSSWALK_W + STOP_GAP
    eb = 0.0 if b.dead_end or b.ramp else road_extent(b, dk) + CROSSWALK_W + STOP_GAP
    return pa, d, np.array((d[1], -d[0])), length, ea, eb


def _strip(p: np.ndarray, d: np.ndarray, s0: float, s1: float, off: float, hw: float, mat: str):
    """A painted box along d from arc length s0 to s1, offset `off` to the right of p."""
    r = np.array((d[1], -d[0]))
    c = p + d * (s0 + s1) / 2 + r * off
    half = np.abs(d) * (s1 - s0) / 2 + np.abs(r) * hw
    return box((c[0], c[1], PAINT_Z), (half[0], half[1], PAINT_Z), mat)


def add_markings(plan: RoadPlan, mats: TownMaterials, objs: ObjectList) -> None:
    """Per road piece: dashed centre and lane lines, solid edge lines, stop lines."""
    for edge in plan.edges:
        if len(edge.path) > 2:
            _path_markings(plan, edge, mats, objs)
            continue
        p, d, _, length, ea, eb = _frame(plan, edge)
        n = edge.line.lanes
        geoms: list[GeomSpec] = []
        s = ea + 1.0
        while s + DASH_M <= length - eb - 1.0:
            for k in range(-(n - 1), n):  # centre (k = 0) and lane lines of both directions
                geoms.append(_strip(p, d, s, s + DASH_M, k * LANE_W, LINE_HW, mats.marking))
            s += PERIOD_M
        if edge.line.parking_m > 0:
            for side in (-1, 1):
                off = side * (n * LANE_W)
                geoms.append(_strip(p, d, ea, length - eb, off, LINE_HW, mats.marking))
        for at_end, span in ((False, ea), (True, eb)):
            if span <= 0.0:
                continue
            s0 = length - span if at_end else span - 0.4
            off = (n * LANE_W / 2) * (1 if at_end else -1)  # the lanes that arrive there
            geoms.append(_strip(p, d, s0, s0 + 0.4, off, n * LANE_W / 2, mats.marking))
        if geoms:
            objs.add(f"markings_{edge.road_id}", "road_marking", (0.0, 0.0, 0.0), geoms, None)


def _path_markings(plan: RoadPlan, edge, mats: TownMaterials, objs: ObjectList) -> None:
    """A dash on the centre line of each segment of a two-way road along a polyline."""
    if edge.one_way:
        return
    pts = trim_path(np.array(edge.path, dtype=float), 12.0, 12.0)
    geoms = []
    for p, q in itertools.pairwise(pts):
        d = q - p
        length = float(np.linalg.norm(d))
        if length < DASH_M + 1.0:
            continue
        c = (p + q) / 2
        quat = yaw_quat_wxyz(math.atan2(d[1], d[0]))
        size = (DASH_M / 2, LINE_HW, PAINT_Z)
        pos = (r4(c[0]), r4(c[1]), PAINT_Z)
        geoms.append(GeomSpec(type="box", size=size, pos=pos, quat=quat, material=mats.marking))
    if geoms:
        objs.add(f"markings_{edge.road_id}", "road_marking", (0.0, 0.0, 0.0), geoms, None)


def add_crosswalks(network: RoadNetworkSpec, mats: TownMaterials, objs: ObjectList) -> None:
    """Zebra stripes (along the traffic) across every crosswalk."""
    for cw in network.crosswalks:
        a, b = np.array(cw.start), np.array(cw.end)
        span = float(np.linalg.norm(b - a))
        u = (b - a) / span
        along = np.array((-u[1], u[0]))  # the traffic's direction
        geoms = []
        for k in range(int(span // 1.0)):
            c = a + u * (k + 0.5 + (span % 1.0) / 2)
            half = np.abs(u) * 0.25 + np.abs(along) * cw.width_m / 2 * 0.9
            geoms.append(box((c[0], c[1], PAINT_Z), (half[0], half[1], PAINT_Z), mats.marking))
        objs.add(f"crosswalk_{cw.crosswalk_id}", "crosswalk", (0.0, 0.0, 0.0), geoms, None)


def add_islands(plan: RoadPlan, mats: TownMaterials, objs: ObjectList) -> None:
    """The raised grass island in the middle of each mini roundabout."""
    for key in sorted(plan.nodes):
        node = plan.nodes[key]
        if node.roundabout:
            size = (RING_ISLAND_R, SIDEWALK_Z / 2)
            island = GeomSpec(
                type="cylinder", size=size, pos=(0.0, 0.0, SIDEWALK_Z / 2), material=mats.grass
            )
            objs.add(f"island_{key[0]}_{key[1]}", "terrain", (*node.xy, 0.0), [island], None)


def add_signals(network: RoadNetworkSpec, mats: TownMaterials, objs: ObjectList) -> None:
    """A pole and a head per traffic light, the head's centre at the light's `pos`."""
    for light in network.traffic_lights:
        x, y, z = light.pos
        top = z - 0.45
        pole = GeomSpec(
            type="cylinder",
            size=(0.07, r4((top - SIDEWALK_Z) / 2)),
            pos=(0.0, 0.0, r4((top + SIDEWALK_Z) / 2)),
            material=mats.metal,
        )
        objs.add(f"signal_pole_{light.light_id}", "pole", (x, y, 0.0), [pole], None)
        head = [box((0.0, 0.0, 0.0), (0.15, 0.18, 0.45), mats.signal)]
        objs.add(f"signal_{light.light_id}", "traffic_light", (x, y, z), head, None, light.yaw)


def add_stop_signs(
    plan: RoadPlan, network: RoadNetworkSpec, mats: TownMaterials, objs: ObjectList
) -> None:
    """A stop sign on the right of each approach along y at priority intersections."""
    kinds = {j.intersection_id: j.kind for j in network.intersections}
    k = 0
    for lane in network.lanes:
        if lane.kind != "driving" or lane.right_neighbor is not None or lane.stop_line_s_m is None:
            continue
        (x0, y0, _), (x1, y1, _) = lane.centerline[0], lane.centerline[-1]
        nxt = [network.lanes[s].intersection_id for s in lane.successors]
        if not nxt or kinds.get(nxt[0]) != "priority" or abs(x1 - x0) > abs(y1 - y0):
            continue
        end, yaw = lane.point_at(lane.stop_line_s_m)
        d = np.array((math.cos(yaw), math.sin(yaw)))
        r = np.array((d[1], -d[0]))
        half_road = plan.edges[lane.road_id].line.half_width
        off = half_road - LANE_W * 0.5 - LANE_W * (plan.edges[lane.road_id].line.lanes - 1) + 0.5
        at = end[:2] + r * off
        geoms = [
            GeomSpec(type="cylinder", size=(0.04, 1.1), pos=(0.0, 0.0, 1.25), material=mats.metal),
            box((0.0, 0.0, 2.55), (0.02, 0.33, 0.33), mats.sign),
        ]
        objs.add(f"stop_sign_{k}", "traffic_sign", (at[0], at[1], 0.0), geoms, None, yaw + math.pi)
        k += 1


def add_street_lights(
    plan: RoadPlan, mats: TownMaterials, objs: ObjectList, spacing: float
) -> list[tuple[float, float, float]]:
    """Street lights on each block's sidewalk, 0.6 m behind the kerb, clear of the corners;
    where each lamp shines from (just under its head, over the road)."""
    k, lamps = 0, []
    for blk in plan.blocks:
        x0, y0, x1, y1 = blk.rect
        sides = (  # start, direction along, outward normal (toward the road)
            ((x0, y0), (1, 0), (0, -1), x1 - x0),
            ((x1, y1), (-1, 0), (0, 1), x1 - x0),
            ((x0, y1), (0, -1), (-1, 0), y1 - y0),
            ((x1, y0), (0, 1), (1, 0), y1 - y0),
        )
        for start, d, out, length in sides:
            clear = CROSSWALK_W + 2.0
            n = int((length - 2 * clear) // spacing)
            for i in range(n + 1):
                s = clear + (length - 2 * clear) * (i / n if n else 0.5)
                p = np.array(start) + np.array(d) * s - np.array(out) * 0.6
                yaw = math.atan2(out[1], out[0])
                geoms = [
                    GeomSpec(
                        type="cylinder",
                        size=(0.08, 3.2),
                        pos=(0.0, 0.0, SIDEWALK_Z + 3.2),
                        material=mats.metal,
                    ),
                    box((0.6, 0.0, SIDEWALK_Z + 6.35), (0.65, 0.05, 0.05), mats.metal),
                    box((1.15, 0.0, SIDEWALK_Z + 6.22), (0.25, 0.12, 0.08), mats.lamp),
                ]
                objs.add(f"street_light_{k}", "pole", (p[0], p[1], 0.0), geoms, None, yaw)
                head = p + 1.15 * np.array([math.cos(yaw), math.sin(yaw)])
                lamps.append((r4(head[0]), r4(head[1]), r4(SIDEWALK_Z + 6.05)))
                k += 1
    return lamps


def add_parked_cars(
    plan: RoadPlan, mats: TownMaterials, objs: ObjectList, rng: np.random.Generator, density: float
) -> list[shapely.Polygon]:
    """Cars in the parking strips (right of each direction), clear of the crossings."""
    out = []
    k = 0
    for edge in plan.edges:
        if edge.line.parking_m <= 0.0 or density <= 0.0 or len(edge.path) > 2:
            continue
        p, d, _, length, ea, eb = _frame(plan, edge)
        off = edge.line.lanes * LANE_W + edge.line.parking_m / 2
        for side in (1, -1):  # right of a->b, then right of b->a
            s = ea + 1.0
            while s + 2 * CAR_HALF[0] <= length - eb - 1.0:
                if rng.uniform() < density:
                    c = p + d * (s + CAR_HALF[0]) + np.array((d[1], -d[0])) * off * side
                    yaw = math.atan2(d[1], d[0]) + (0.0 if side > 0 else math.pi)
                    objs.add(
                        f"parked_car_{k}", "car", (c[0], c[1], 0.0), _car(mats, rng), None, yaw
                    )
                    hx = np.abs(d) * CAR_HALF[0] + np.abs(d[::-1]) * CAR_HALF[1]
                    out.append(shapely.box(c[0] - hx[0], c[1] - hx[1], c[0] + hx[0], c[1] + hx[1]))
                    k += 1
                s += 2 * CAR_HALF[0] + rng.uniform(1.0, 3.0)
    return out


def _car(mats: TownMaterials, rng: np.random.Generator) -> list[GeomSpec]:
    """A car along its local x: body, cabin and four wheels."""
    paint = mats.paints[int(rng.integers(len(mats.paints)))]
    hx, hy = CAR_HALF
    geoms = [
        box((0.0, 0.0, 0.62), (hx, hy, 0.3), paint),
        box((-0.2, 0.0, 1.17), (hx * 0.55, hy * 0.92, 0.25), mats.glass),
    ]
    for x in (-hx * 0.68, hx * 0.68):
        for y in (-hy + 0.12, hy - 0.12):
            geoms.append(
                GeomSpec(
                    type="cylinder",
                    size=(0.32, 0.11),
                    pos=(r4(x), r4(y), 0.32),
                    quat=_WHEEL_QUAT,
                    material=mats.tyre,
                )
            )
    return geoms


HILL_TREES_MAX = 150  # each tree is two geoms every camera and the LiDAR may test


def add_trees(
    plan: RoadPlan,
    mats: TownMaterials,
    objs: ObjectList,
    rng: np.random.Generator,
    density: float,
    blocked: list[shapely.Polygon],
) -> None:
    """Trees (trunk and crown) in each block's open land, `density` per 1000 m^2, clear of
    buildings and of the sidewalks."""
    taken = union_all(blocked) if blocked else shapely.Polygon()
    shapely.prepare(taken)
    k = 0
    s = plan.sidewalk_m
    for blk in plan.blocks:
        x0, y0, x1, y1 = blk.rect
        land = shapely.box(x0 + s + 1.5, y0 + s + 1.5, x1 - s - 1.5, y1 - s - 1.5)
        if land.is_empty:
            continue
        want = density * (2.0 if blk.kind == "park" else 1.0) * land.area / 1000.0
        n = int(want) + (rng.uniform() < want % 1.0)
        placed: list[tuple[float, float, float]] = []
        bx0, by0, bx1, by1 = land.bounds
        for _ in range(n * 4):
            if len(placed) >= n:
                break
            x, y = rng.uniform(bx0, bx1), rng.uniform(by0, by1)
            crown = float(rng.uniform(1.2, 3.0))
            if taken.distance(shapely.Point(x, y)) < crown + 0.3:
                continue
            if any(math.hypot(x - px, y - py) < crown + pc for px, py, pc in placed):
                continue
            placed.append((x, y, crown))
            objs.add(
                f"tree_{k}", "vegetation", (x, y, SIDEWALK_Z), tree_geoms(mats, rng, crown), None
            )
            k += 1


def tree_geoms(mats: TownMaterials, rng: np.random.Generator, crown: float) -> list[GeomSpec]:
    """A tree of crown radius `crown` in its own frame (trunk base at the origin): its trunk
    height and leaves drawn from `rng`."""
    h = float(rng.uniform(2.0, 5.0))
    leaves = mats.leaves[int(rng.integers(len(mats.leaves)))]
    return [
        GeomSpec(
            type="cylinder", size=(0.15, r4(h / 2)), pos=(0.0, 0.0, r4(h / 2)), material=mats.bark
        ),
        GeomSpec(
            type="sphere", size=(r4(crown),), pos=(0.0, 0.0, r4(h + crown * 0.8)), material=leaves
        ),
    ]


def add_hill_trees(
    terrain: TerrainSpec,
    mats: TownMaterials,
    objs: ObjectList,
    rng: np.random.Generator,
    density: float,
    most: int = HILL_TREES_MAX,
) -> None:
    """Trees over the hills (where they rise more than 1 m), `density` per 1000 m^2 of hill
    and at most `most`, one per grid cell, each trunk standing on the slope (sunk to its
    lowest side)."""
    h = heights(terrain)
    xs, ys = grid_axes(terrain)
    dx, dy = xs[1] - xs[0], ys[1] - ys[0]
    hill = np.flatnonzero(h.ravel() > 1.0)
    n = min(most, len(hill), int(density * len(hill) * dx * dy / 1000.0))
    for k, cell in enumerate(np.sort(rng.choice(hill, size=n, replace=False))):
        i, j = divmod(int(cell), terrain.cols)
        x = xs[j] + rng.uniform(-dx / 2, dx / 2)
        y = ys[i] + rng.uniform(-dy / 2, dy / 2)
        crown = float(rng.uniform(1.5, 3.5))
        around = np.array([(0, 0), (1, 0), (-1, 0), (0, 1), (0, -1)]) * 0.15
        z = float(surface_z(terrain, x + around[:, 0], y + around[:, 1]).min())
        objs.add(f"hill_tree_{k}", "vegetation", (x, y, z), tree_geoms(mats, rng, crown), None)
