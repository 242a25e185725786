"""Geometry on a road network for traffic: lanes as arc-length paths, seeded routes along the
lane graph, which connectors of an intersection cross or merge, and where a planned path
(the ego's) lies on the lanes over time."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import shapely
from shapely.geometry import LineString

from twinsim.model.roads import LaneSpec, RoadNetworkSpec

HEADING_CHORD_M = 1.0  # a heading is the chord over this much of the path on either side
ON_LANE_ANGLE_RAD = math.radians(40.0)  # a body heads along a lane within this


class LanePath:
    """A lane's centre line parametrised by arc length s (m from its start)."""

    def __init__(self, lane: LaneSpec) -> None:
        self.lane = lane
        self.points = np.asarray(lane.centerline, dtype=float)
        seg = np.linalg.norm(np.diff(self.points, axis=0), axis=1)
        self.cumulative = np.concatenate([[0.0], np.cumsum(seg)])
        self.length = float(self.cumulative[-1])

    def at(self, s: np.ndarray | float) -> np.ndarray:
        """The point(s) (…, 3) at arc length `s`, clamped to the lane."""
        s = np.clip(np.asarray(s, dtype=float), 0.0, self.length)
        return np.stack([np.interp(s, self.cumulative, self.points[:, k]) for k in range(3)], -1)

    def heading(self, s: np.ndarray | float) -> np.ndarray:
        """The direction of travel (rad) at `s`: the chord over ±`HEADING_CHORD_M`."""
        s = np.asarray(s, dtype=float)
        ahead, behind = self.at(s + HEADING_CHORD_M), self.at(s - HEADING_CHORD_M)
        d = ahead - behind
        return np.arctan2(d[..., 1], d[..., 0])

    def line(self) -> LineString:
        return LineString(self.points[:, :2])


def lane_paths(network: RoadNetworkSpec) -> list[LanePath]:
    """Every lane's path, by lane id."""
    return [LanePath(lane) for lane in network.lanes]


def connector_conflicts(network: RoadNetworkSpec, paths: Sequence[LanePath]) -> dict[int, set[int]]:
    """For each connector, the connectors of its intersection that cross it or merge into
    the same lane (their swept strips overlap away from a shared start): two vehicles on
    conflicting connectors at once could meet."""
    by_junction: dict[int, list[int]] = {}
    for lane in network.lanes:
        if lane.intersection_id is not None:
            by_junction.setdefault(lane.intersection_id, []).append(lane.lane_id)
    sources: dict[int, set[int]] = {}
    for lane in network.lanes:
        for nxt in lane.successors:
            sources.setdefault(nxt, set()).add(lane.lane_id)
    out: dict[int, set[int]] = {lid: set() for ids in by_junction.values() for lid in ids}
    for ids in by_junction.values():
        strips = {i: paths[i].line().buffer(network.lanes[i].width_m * 0.5 + 0.5) for i in ids}
        for a in ids:
            for b in ids:
                if b <= a:
                    continue
                same_start = sources.get(a, set()) & sources.get(b, set())
                if same_start and set(network.lanes[a].successors).isdisjoint(
                    network.lanes[b].successors
                ):
                    continue  # one lane splits into two ways: the lane's own queue orders them
                if strips[a].intersects(strips[b]):
                    out[a].add(b)
                    out[b].add(a)
    return out


def random_route(
    network: RoadNetworkSpec,
    start: int,
    length_m: float,
    rng: np.random.Generator,
    paths: Sequence[LanePath],
) -> list[int]:
    """Lane ids from `start` on, taking a seeded successor at each end, until the route is at
    least `length_m` long or reaches a lane that leads nowhere."""
    route, total = [start], paths[start].length
    while total < length_m:
        successors = network.lanes[route[-1]].successors
        if not successors:
            break
        nxt = int(successors[int(rng.integers(len(successors)))])
        route.append(nxt)
        total += paths[nxt].length
    return route


def lanes_along(
    network: RoadNetworkSpec, paths: Sequence[LanePath], xy: np.ndarray, yaw: np.ndarray
) -> list[list[tuple[int, float]]]:
    """For each sample of a planned path (positions (N, 2), headings (N,)), the lanes it is on
    (its point within half the lane's width of the centre line, heading along it) with the
    arc length there."""
    lines = np.array([p.line() for p in paths], dtype=object)
    half = np.array([0.5 * lane.width_m for lane in network.lanes])
    points = shapely.points(np.asarray(xy, float))
    near = shapely.distance(lines[None, :], points[:, None]) <= half[None, :]
    out: list[list[tuple[int, float]]] = [[] for _ in range(len(points))]
    for k, lane in zip(*np.nonzero(near), strict=True):
        s = float(shapely.line_locate_point(lines[lane], points[k]))
        heading = float(paths[lane].heading(s))
        turn = abs((heading - float(yaw[k]) + math.pi) % (2 * math.pi) - math.pi)
        if turn <= ON_LANE_ANGLE_RAD:
            out[k].append((network.lanes[lane].lane_id, s))
    return out
