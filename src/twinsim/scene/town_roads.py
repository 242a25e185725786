"""The town's road network as a plan and as `RoadNetworkSpec` data: a jittered grid of
two-way roads (some interior road pieces dropped so that neighbouring blocks merge), an
intersection square at every grid node, lanes between the squares, connectors across them
(straight, left, right; a U-turn at a dead end), traffic lights at signalised nodes whose
crossing directions alternate, crosswalks across every approach, sidewalks ringing each block.

Right-hand traffic. A grid line is one road: all its pieces have the same lanes per direction,
parking strip and speed limit, so a node's square is as wide as the road crossing it. Every
point is in world metres with the ground at z = 0 (lanes lie on the road's top).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from twinsim.scene.parts import r3, r4
from twinsim.scene.roads import (
    BlockSpec,
    CrosswalkSpec,
    IntersectionSpec,
    LaneSpec,
    RoadNetworkSpec,
    SidewalkSpec,
    TrafficLightSpec,
)
from twinsim.scene.town_paths import (
    as_path,
    bezier,
    highway_layout,
    offset_path,
    trim_path,
    winding_path,
)

LANE_W = 3.2  # width of a driving lane
CROSSWALK_W = 3.0  # along the road, just outside a node's square
STOP_GAP = 0.5  # stop line this far before the crosswalk
DEAD_END_INSET = 6.0  # lanes of a dead end stop this far before the road's end (U-turn room)
HEAD_Z = 3.6  # height of a signal head's centre above the ground
YELLOW_S = 3.0
ALL_RED_S = 2.0
HIGHWAY_SPEED_MPS = 27.8
RING_R = 3.2  # centre line radius of a mini roundabout's ring
RING_ISLAND_R = 1.2
RING_PORT_DEG = 35  # entries and exits lie this far round the ring from their arm
RING_SPEED_MPS = 6.0
RAMP_SPEED_MPS = 16.7


@dataclass(frozen=True)
class Line:
    """One grid line: a road along x (`axis` 0, at y = `at`) or along y (`axis` 1, at x)."""

    axis: int
    at: float
    lanes: int
    parking_m: float  # strip for parked cars between the outer lane and the kerb
    speed_mps: float

    @property
    def half_width(self) -> float:
        """Centre line to kerb."""
        return self.lanes * LANE_W + self.parking_m


@dataclass
class Node:
    """A grid node (or a dead end): where it is and its square's half sizes (x, y)."""

    key: tuple[int, int]
    xy: tuple[float, float]
    half: tuple[float, float]
    dead_end: bool = False
    ramp: bool = False  # where a ramp leaves or joins the highway (no square)
    roundabout: bool = False  # a mini roundabout fills its square
    edges: dict[tuple[int, int], Edge] = field(default_factory=dict)  # by direction out


@dataclass(frozen=True)
class Edge:
    """A road piece between two nodes on one line."""

    a: tuple[int, int]
    b: tuple[int, int]
    line: Line
    road_id: int
    path: tuple[tuple[float, float], ...]  # centre line from a to b
    key_a: tuple[int, int]  # the edge's direction out of a (its key in a's edges)
    key_b: tuple[int, int]
    one_way: bool = False  # lanes only from a to b, centred on the path
    kind: str = "driving"


@dataclass(frozen=True)
class Block:
    """The land between roads: its outer rectangle (kerb line) and its kind."""

    block_id: int
    rect: tuple[float, float, float, float]  # x0, y0, x1, y1
    kind: str


@dataclass
class RoadPlan:
    """Everything the geometry needs: nodes, edges, blocks and the network's data."""

    nodes: dict[tuple[int, int], Node]
    edges: list[Edge]
    blocks: list[Block]
    sidewalk_m: float


@dataclass(frozen=True)
class GridParams:
    """What the preset and overrides decided about the grid."""

    preset: str
    blocks: tuple[int, int]
    block_m: tuple[float, float]
    lanes: int
    arterial_lanes: int  # lanes per direction of the first line along x
    highway_lanes: int  # 0: no highway; else lanes per direction of one north of the grid
    highway_extend_m: float  # how far the highway runs on beyond the grid at either side
    winding_m: float  # 0: none; else a winding two-lane road this long east of the grid
    roundabout: bool  # one inner crossing of one-lane roads becomes a mini roundabout
    parking_m: float
    sidewalk_m: float
    speed_mps: float
    merge_share: float
    signal_share: float
    block_kinds: tuple[str, ...]
    park_share: float


def _dirs(a: tuple[float, float], b: tuple[float, float]) -> tuple[int, int]:
    """Unit axis direction from a to b."""
    dx, dy = b[0] - a[0], b[1] - a[1]
    return (int(np.sign(dx)), 0) if abs(dx) > abs(dy) else (0, int(np.sign(dy)))


def plan_grid(p: GridParams, rng: np.random.Generator) -> RoadPlan:
    """Lay out the grid lines, nodes, road pieces and blocks (some merged in pairs)."""
    nx, ny = p.blocks
    sizes_x = rng.uniform(*p.block_m, nx)
    sizes_y = rng.uniform(*p.block_m, ny)
    lines_x = [  # roads along y, at x
        Line(1, 0.0, p.lanes, p.parking_m, p.speed_mps) for _ in range(nx + 1)
    ]
    lines_y = [
        Line(
            0,
            0.0,
            p.arterial_lanes if j == 0 else p.lanes,
            p.parking_m,
            p.speed_mps,
        )
        for j in range(ny + 1)
    ]

    def positions(lines: list[Line], sizes: np.ndarray) -> list[float]:
        at = [0.0]
        for k, s in enumerate(sizes):  # block size is kerb to kerb
            at.append(at[-1] + lines[k].half_width + s + lines[k + 1].half_width)
        mid = at[-1] / 2
        return [r4(v - mid) for v in at]

    xs, ys = positions(lines_x, sizes_x), positions(lines_y, sizes_y)
    lines_x = [
        Line(1, x, ln.lanes, ln.parking_m, ln.speed_mps) for x, ln in zip(xs, lines_x, strict=False)
    ]
    lines_y = [
        Line(0, y, ln.lanes, ln.parking_m, ln.speed_mps) for y, ln in zip(ys, lines_y, strict=False)
    ]
    nodes = {
        (i, j): Node((i, j), (xs[i], ys[j]), (lines_x[i].half_width, lines_y[j].half_width))
        for i in range(nx + 1)
        for j in range(ny + 1)
    }
    # merge pairs of neighbouring blocks by dropping the road piece between them
    owner = {(i, j): (i, j) for i in range(nx) for j in range(ny)}
    dropped: set[tuple[tuple[int, int], tuple[int, int]]] = set()
    degree = {k: 4 - (k[0] in (0, nx)) - (k[1] in (0, ny)) for k in nodes}
    interior = [((i, j), (i, j + 1)) for i in range(1, nx) for j in range(ny)]
    interior += [((i, j), (i + 1, j)) for i in range(nx) for j in range(1, ny)]
    for k in rng.permutation(len(interior)):
        if rng.uniform() >= p.merge_share:
            continue
        a, b = interior[k]
        if a[0] == b[0]:  # piece along y at x-line i: blocks (i-1, j) and (i, j)
            pair = ((a[0] - 1, a[1]), (a[0], a[1]))
        else:
            pair = ((a[0], a[1] - 1), (a[0], a[1]))
        if any(owner[c] != c for c in pair) or min(degree[a], degree[b]) <= 3:
            continue  # each block merges once; nodes keep >= 3 roads
        owner[pair[1]] = pair[0]
        owner[pair[0]] = (-1, -1)  # marks it merged
        dropped.add((a, b))
        degree[a] -= 1
        degree[b] -= 1
    edges: list[Edge] = []

    def connect(a: tuple[int, int], b: tuple[int, int], line: Line, path=None, **kw) -> None:
        path = path or (nodes[a].xy, nodes[b].xy)
        key_a = kw.pop("key_a", None) or _dirs(path[0], path[1])
        key_b = kw.pop("key_b", None) or _dirs(path[-1], path[-2])
        edge = Edge(a, b, line, len(edges), tuple(path), key_a, key_b, **kw)
        edges.append(edge)
        nodes[a].edges[key_a] = edge
        nodes[b].edges[key_b] = edge

    for j, line in enumerate(lines_y):
        for i in range(nx):
            if ((i, j), (i + 1, j)) not in dropped:
                connect((i, j), (i + 1, j), line)
    for i, line in enumerate(lines_x):
        for j in range(ny):
            if ((i, j), (i, j + 1)) not in dropped:
                connect((i, j), (i, j + 1), line)
    inner = [k for k, n in sorted(nodes.items()) if len(n.edges) == 4]
    inner = [k for k in inner if all(e.line.lanes == 1 for e in nodes[k].edges.values())]
    if p.roundabout and inner:
        nodes[inner[int(rng.integers(len(inner)))]].roundabout = True
    if p.highway_lanes:
        _add_highway(p, nodes, connect, (xs[0], ys[-1]), (xs[-1], ys[-1]), lines_y[-1])
    if p.winding_m > 0:
        start = (r4(xs[-1] + lines_x[-1].half_width), ys[0])
        path = as_path((nodes[(nx, 0)].xy, *winding_path(start, p.winding_m, rng)))
        nodes[(nx + 1, 0)] = Node((nx + 1, 0), path[-1], (0.0, 0.0), dead_end=True)
        connect((nx, 0), (nx + 1, 0), lines_y[0], path)
    blocks = []
    for i in range(nx):
        for j in range(ny):
            if owner[(i, j)] == (-1, -1):
                continue
            i1, j1 = i + 1, j + 1
            src = [c for c, o in owner.items() if o == (i, j) and c != (i, j)]
            if src:
                i1, j1 = src[0][0] + 1, src[0][1] + 1
            rect = (
                r4(xs[i] + lines_x[i].half_width),
                r4(ys[j] + lines_y[j].half_width),
                r4(xs[i1] - lines_x[i1].half_width),
                r4(ys[j1] - lines_y[j1].half_width),
            )
            kind = "park" if rng.uniform() < p.park_share else str(rng.choice(p.block_kinds))
            blocks.append(Block(len(blocks), rect, kind))
    return RoadPlan(nodes, edges, blocks, p.sidewalk_m)


def _add_highway(p: GridParams, nodes, connect, west, east, top: Line) -> None:
    """The highway north of the grid (dead ends at both far ends, a ramp junction at each
    ramp) and its off-ramp to the grid's north-west node, on-ramp from the north-east one."""
    nx, ny = p.blocks
    hw = Line(0, 0.0, p.highway_lanes, 0.0, HIGHWAY_SPEED_MPS)
    ramp = Line(1, 0.0, 1, LANE_W / 2, RAMP_SPEED_MPS)  # one lane, half a lane of shoulder
    at = highway_layout(
        west, east, west[1] + top.half_width, hw.half_width, LANE_W, p.highway_extend_m
    )
    y = r4(at["y"])
    keys = {"w": (-2, ny + 2), "off": (-1, ny + 2), "on": (nx + 1, ny + 2), "e": (nx + 2, ny + 2)}
    for name, x in (
        ("w", at["x_west"]),
        ("off", at["x_off"]),
        ("on", at["x_on"]),
        ("e", at["x_east"]),
    ):
        end = name in ("w", "e")
        nodes[keys[name]] = Node(keys[name], (r4(x), y), (0.0, 0.0), dead_end=end, ramp=not end)
    connect(keys["w"], keys["off"], hw)
    connect(keys["off"], keys["on"], hw)
    connect(keys["on"], keys["e"], hw)
    connect(keys["off"], (0, ny), ramp, at["off_ramp"], key_a=(1, -1), one_way=True, kind="ramp")
    connect((nx, ny), keys["on"], ramp, at["on_ramp"], key_b=(-1, -1), one_way=True, kind="ramp")


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
