"""The town's road plan (`roads.py`) as `RoadNetworkSpec` data: an intersection square at
every grid node, lanes between the squares, connectors across them (straight, left, right; a
U-turn at a dead end; arcs round a mini roundabout), traffic lights at signalised nodes whose
crossing directions alternate, crosswalks across every approach, sidewalks ringing each block.

Right-hand traffic. Every point is in world metres with the ground at z = 0 (lanes lie on the
road's top).
"""

from __future__ import annotations

import math

import numpy as np

from twinsim.model.roads import (
    BlockSpec,
    CrosswalkSpec,
    IntersectionSpec,
    LaneSpec,
    RoadNetworkSpec,
    SidewalkSpec,
    TrafficLightSpec,
)
from twinsim.scene.parts import r3, r4
from twinsim.scene.worlds.town.paths import bezier, offset_path, trim_path
from twinsim.scene.worlds.town.roads import LANE_W, Block, GridParams, Node, RoadPlan

CROSSWALK_W = 3.0  # along the road, just outside a node's square
STOP_GAP = 0.5  # stop line this far before the crosswalk
DEAD_END_INSET = 6.0  # lanes of a dead end stop this far before the road's end (U-turn room)
HEAD_Z = 3.6  # height of a signal head's centre above the ground
YELLOW_S = 3.0
ALL_RED_S = 2.0
RING_R = 3.2  # centre line radius of a mini roundabout's ring
RING_ISLAND_R = 1.2
RING_PORT_DEG = 35  # entries and exits lie this far round the ring from their arm
RING_SPEED_MPS = 6.0


def _v3(pts: list[np.ndarray]) -> tuple[tuple[float, float, float], ...]:
    """Ground points (z = 0) on the 0.1 mm grid, points closer than 1 cm to the last dropped
    (the last point is kept)."""
    out = [pts[0]]
    for p in pts[1:]:
        if float(np.linalg.norm(p - out[-1])) >= 0.01:
            out.append(p)
        elif p is pts[-1]:
            out[-1] = p
    return tuple((r4(p[0]), r4(p[1]), 0.0) for p in out)


def approach_inset(node: Node, d: tuple[int, int]) -> float:
    """Distance from a node's centre to where lanes along direction d meet its square."""
    if node.dead_end or node.ramp:
        return DEAD_END_INSET
    return node.half[0] if d[0] else node.half[1]


def build_network(plan: RoadPlan, p: GridParams, rng: np.random.Generator) -> RoadNetworkSpec:
    """Lanes, connectors, intersections, lights, crosswalks, sidewalks and blocks as data."""
    lanes: list[dict] = []
    by_src: dict[tuple[int, tuple[int, int]], list[int]] = {}  # (road, from node) -> lanes
    for edge in plan.edges:
        na, nb = plan.nodes[edge.a], plan.nodes[edge.b]
        path = np.array(edge.path, dtype=float)
        ends = [(na, nb, path, edge.key_a, edge.key_b)]
        if not edge.one_way:
            ends.append((nb, na, path[::-1], edge.key_b, edge.key_a))
        n = edge.line.lanes
        for src, dst, pts, k_src, k_dst in ends:
            s0, s1 = approach_inset(src, k_src), approach_inset(dst, k_dst)
            ids = []
            for i in range(n):
                off = (i + 0.5 - (n / 2 if edge.one_way else 0.0)) * LANE_W
                line = trim_path(offset_path(pts, off), s0, s1)
                length = float(np.linalg.norm(np.diff(line, axis=0), axis=1).sum())
                stop = None
                if not (dst.dead_end or dst.ramp):
                    stop = r3(length - CROSSWALK_W - STOP_GAP)
                ids.append(len(lanes))
                lanes.append(
                    dict(
                        lane_id=len(lanes),
                        road_id=edge.road_id,
                        kind="ramp" if edge.kind == "ramp" else "driving",
                        centerline=_v3(list(line)),
                        width_m=LANE_W,
                        speed_limit_mps=edge.line.speed_mps,
                        successors=[],
                        stop_line_s_m=stop,
                    )
                )
            for i, lid in enumerate(ids):
                lanes[lid]["left_neighbor"] = ids[i - 1] if i > 0 else None
                lanes[lid]["right_neighbor"] = ids[i + 1] if i + 1 < len(ids) else None
            by_src[(edge.road_id, src.key)] = ids
    intersections, lights, crosswalks = [], [], []
    cycle_rng_offsets = rng.uniform(0.0, 1.0, len(plan.nodes))
    for n_idx, key in enumerate(sorted(plan.nodes)):
        node = plan.nodes[key]
        incoming, outgoing = {}, {}  # by direction of travel into / out of the node
        for k, e in node.edges.items():
            other = e.b if e.a == key else e.a
            if by_src.get((e.road_id, other)):
                incoming[(-k[0], -k[1])] = by_src[(e.road_id, other)]
            if by_src.get((e.road_id, key)):
                outgoing[k] = by_src[(e.road_id, key)]
        jid = len(intersections)
        if node.dead_end or node.ramp:
            first = len(lanes)
            if node.dead_end:
                ((d_in, ins),) = incoming.items()
                outs = next(iter(outgoing.values()))
                for i, lid in enumerate(ins):  # U-turns, lane i into lane i
                    _connect(lanes, lid, outs[min(i, len(outs) - 1)], jid)
            else:
                for a, b in _junction_moves(incoming, outgoing):
                    _connect(lanes, a, b, jid)
            pts = np.array([p[:2] for ln in lanes[first:] for p in ln["centerline"]])
            (x0, y0), (x1, y1) = pts.min(axis=0) - 1.0, pts.max(axis=0) + 1.0
            intersections.append(
                IntersectionSpec(
                    intersection_id=jid,
                    kind="ramp" if node.ramp else "priority",
                    center=node.xy,
                    polygon=(
                        (r4(x0), r4(y0)),
                        (r4(x1), r4(y0)),
                        (r4(x1), r4(y1)),
                        (r4(x0), r4(y1)),
                    ),
                )
            )
            continue
        signalised = len(node.edges) >= 3 and rng.uniform() < p.signal_share
        signalised = signalised and not node.roundabout
        hx, hy = node.half
        c = node.xy
        poly = (
            (c[0] - hx, c[1] - hy),
            (c[0] + hx, c[1] - hy),
            (c[0] + hx, c[1] + hy),
            (c[0] - hx, c[1] + hy),
        )
        intersections.append(
            IntersectionSpec(
                intersection_id=jid,
                kind="roundabout"
                if node.roundabout
                else "signalised"
                if signalised
                else "priority",
                center=c,
                polygon=tuple((r4(x), r4(y)) for x, y in poly),
            )
        )
        if node.roundabout:
            _roundabout_moves(lanes, node, incoming, outgoing, jid)
        else:
            for a, b in _junction_moves(incoming, outgoing):
                _connect(lanes, a, b, jid)
        green = r3(rng.uniform(18.0, 30.0))
        period = 2 * (green + YELLOW_S + ALL_RED_S)
        base = r3(cycle_rng_offsets[n_idx] * period)
        for k_out, edge in sorted(node.edges.items()):
            d_in = (-k_out[0], -k_out[1])
            ins = incoming.get(d_in, [])
            road_half = edge.line.half_width
            inset = approach_inset(node, (-d_in[0], -d_in[1]))
            dv, rv = np.array(d_in, float), np.array((d_in[1], -d_in[0]), float)
            mid = np.array(c) - (inset + CROSSWALK_W / 2) * dv
            a, b = mid - road_half * rv, mid + road_half * rv
            crosswalks.append(
                CrosswalkSpec(
                    crosswalk_id=len(crosswalks),
                    start=(r4(a[0]), r4(a[1])),
                    end=(r4(b[0]), r4(b[1])),
                    width_m=CROSSWALK_W,
                    intersection_id=jid,
                )
            )
            if not signalised or not ins:
                continue
            lid = len(lights)
            head = np.array(c) - (inset + CROSSWALK_W + STOP_GAP + 0.3) * dv
            head = head + (road_half + 0.6) * rv
            along_x = d_in[0] != 0
            lights.append(
                TrafficLightSpec(
                    light_id=lid,
                    intersection_id=jid,
                    pos=(r4(head[0]), r4(head[1]), HEAD_Z),
                    yaw=r4(math.atan2(-d_in[1], -d_in[0])),
                    lanes=tuple(ins),
                    green_s=green,
                    yellow_s=YELLOW_S,
                    red_s=r3(period - green - YELLOW_S),
                    offset_s=r3(base if along_x else base + green + YELLOW_S + ALL_RED_S),
                )
            )
            for i in ins:
                lanes[i]["stop_light_id"] = lid
    sidewalks, blocks = [], []
    w = plan.sidewalk_m
    for blk in plan.blocks:
        x0, y0, x1, y1 = blk.rect
        h = w / 2
        ring = ((x0 + h, y0 + h), (x1 - h, y0 + h), (x1 - h, y1 - h), (x0 + h, y1 - h))
        sidewalks.append(
            SidewalkSpec(
                sidewalk_id=blk.block_id,
                centerline=tuple((r4(x), r4(y)) for x, y in ring),
                width_m=w,
                closed=True,
                block_id=blk.block_id,
            )
        )
        outline = ((x0, y0), (x1, y0), (x1, y1), (x0, y1))
        blocks.append(BlockSpec(block_id=blk.block_id, kind=blk.kind, polygon=outline))
    crosswalks = [_join_sidewalks(cw, plan.blocks) for cw in crosswalks]
    specs = [LaneSpec(**{k: v for k, v in ln.items() if not k.startswith("_")}) for ln in lanes]
    return RoadNetworkSpec(
        preset=p.preset,
        lanes=tuple(specs),
        intersections=tuple(intersections),
        traffic_lights=tuple(lights),
        sidewalks=tuple(sidewalks),
        crosswalks=tuple(crosswalks),
        blocks=tuple(blocks),
    )


def _turn(d_in: tuple[int, int], d_out: tuple[int, int]) -> int:
    """+1 for a left turn from d_in to d_out, -1 for a right turn, 0 straight on."""
    return d_in[0] * d_out[1] - d_in[1] * d_out[0]


def _junction_moves(
    incoming: dict[tuple[int, int], list[int]], outgoing: dict[tuple[int, int], list[int]]
) -> list[tuple[int, int]]:
    """(in lane, out lane) pairs across a junction: straight on lane by lane, left from the
    inner lane into the inner lane, right from the outer into the outer; then every lane that
    would still lead nowhere (or that nothing would feed) gets the nearest move, straight first."""
    pairs = []
    for d_in, ins in incoming.items():
        for d_out, outs in outgoing.items():
            if d_out[0] * d_in[0] + d_out[1] * d_in[1] < 0:
                continue  # no U-turns (nor sharp turns across a ramp junction)
            turn = _turn(d_in, d_out)
            for i, lid in enumerate(ins):
                if (turn > 0 and i != 0) or (turn < 0 and i != len(ins) - 1):
                    continue
                j = min(i, len(outs) - 1) if turn == 0 else 0 if turn > 0 else len(outs) - 1
                pairs.append((lid, outs[j]))
    leaving, fed = {a for a, _ in pairs}, {b for _, b in pairs}
    for d_in, ins in incoming.items():
        options = sorted(
            (d for d in outgoing if d[0] * d_in[0] + d[1] * d_in[1] >= 0),
            key=lambda d: abs(_turn(d_in, d)),
        )
        for i, lid in enumerate(ins):
            if lid not in leaving and options:
                outs = outgoing[options[0]]
                pairs.append((lid, outs[min(i, len(outs) - 1)]))
    for d_out, outs in outgoing.items():
        sources = sorted(
            (d for d in incoming if d[0] * d_out[0] + d[1] * d_out[1] >= 0),
            key=lambda d: abs(_turn(d, d_out)),
        )
        for j, lid in enumerate(outs):
            if lid not in fed and sources:
                ins = incoming[sources[0]]
                pairs.append((ins[min(j, len(ins) - 1)], lid))
    return pairs


def _roundabout_moves(
    lanes: list[dict], node: Node, incoming: dict, outgoing: dict, junction: int
) -> None:
    """A mini roundabout: arcs anticlockwise round the centre between the points where each
    arm's traffic enters (RING_PORT_DEG past the arm) and leaves (as far before it)."""
    c = np.array(node.xy)
    road = next(iter(node.edges.values())).road_id
    arms = [round(math.degrees(math.atan2(k[1], k[0]))) % 360 for k in node.edges]
    ports = sorted({(a + s * RING_PORT_DEG) % 360 for a in arms for s in (-1, 1)})
    arcs = {}
    for k, deg in enumerate(ports):
        nxt = ports[(k + 1) % len(ports)]
        t = np.radians(np.linspace(deg, deg + (nxt - deg) % 360, 5))
        pts = c + RING_R * np.stack([np.cos(t), np.sin(t)], axis=1)
        arcs[deg] = len(lanes)
        lanes.append(
            dict(
                lane_id=len(lanes),
                road_id=road,
                kind="connector",
                centerline=_v3(list(pts)),
                width_m=LANE_W,
                speed_limit_mps=RING_SPEED_MPS,
                successors=[],
                intersection_id=junction,
            )
        )
    for k, deg in enumerate(ports):
        lanes[arcs[deg]]["successors"].append(arcs[ports[(k + 1) % len(ports)]])
    for d_in, ins in incoming.items():  # from the arm opposite the travel direction
        arm = round(math.degrees(math.atan2(-d_in[1], -d_in[0]))) % 360
        for lid in ins:
            _connect(lanes, lid, arcs[(arm + RING_PORT_DEG) % 360], junction)
    for d_out, outs in outgoing.items():
        arm = round(math.degrees(math.atan2(d_out[1], d_out[0]))) % 360
        exit_deg = (arm - RING_PORT_DEG) % 360
        before = ports[(ports.index(exit_deg) - 1) % len(ports)]
        _connect(lanes, arcs[before], outs[0], junction)


def _connect(lanes: list[dict], a: int, b: int, junction: int | None) -> None:
    """Add a connector lane from the end of lane a to the start of lane b."""
    src, dst = lanes[a], lanes[b]
    p0, p1 = np.array(src["centerline"][-1][:2]), np.array(dst["centerline"][0][:2])
    d0 = p0 - np.array(src["centerline"][-2][:2])
    d1 = np.array(dst["centerline"][1][:2]) - p1
    d0, d1 = d0 / np.linalg.norm(d0), d1 / np.linalg.norm(d1)
    gap = p1 - p0
    straight = float(d0 @ d1) > 1 - 1e-9 and abs(gap[0] * d0[1] - gap[1] * d0[0]) < 1e-6
    pts = [p0, p1] if straight else list(bezier(p0, d0, p1, d1))
    cid = len(lanes)
    lanes.append(
        dict(
            lane_id=cid,
            road_id=src["road_id"],
            kind="connector",
            centerline=_v3(pts),
            width_m=LANE_W,
            speed_limit_mps=min(src["speed_limit_mps"], 8.0 if len(pts) > 2 else 99.0),
            successors=[b],
            intersection_id=junction,
        )
    )
    src["successors"].append(cid)


def _join_sidewalks(cw: CrosswalkSpec, blocks: list[Block]) -> CrosswalkSpec:
    """The crosswalk with the two sidewalks (blocks) its ends touch, where both exist."""
    found = []
    for end in (cw.start, cw.end):
        hit = [
            b.block_id
            for b in blocks
            if b.rect[0] - 0.01 <= end[0] <= b.rect[2] + 0.01
            and b.rect[1] - 0.01 <= end[1] <= b.rect[3] + 0.01
        ]
        found.append(hit[0] if hit else None)
    if None in found:
        return cw
    return cw.model_copy(update={"sidewalks": (found[0], found[1])})
