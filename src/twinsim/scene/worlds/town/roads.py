"""The town's road grid as a plan: a jittered grid of two-way roads (some interior road pieces
dropped so that neighbouring blocks merge), its nodes and road pieces, the blocks between them,
and a highway with its ramps or a winding road beyond where the preset has one.
`network.py` turns the plan into `RoadNetworkSpec` data.

A grid line is one road: all its pieces have the same lanes per direction, parking strip and
speed limit, so a node's square is as wide as the road crossing it. Every point is in world
metres with the ground at z = 0.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from twinsim.scene.parts import r4
from twinsim.scene.worlds.town.paths import as_path, highway_layout, winding_path

LANE_W = 3.2  # width of a driving lane
HIGHWAY_SPEED_MPS = 27.8
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
