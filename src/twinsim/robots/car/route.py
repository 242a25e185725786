"""The car's route over a town's lanes: from a start lane (drawn, or named) either to a goal
lane by the shortest lane path (Dijkstra over the lane graph, written here: the graph is a few
hundred lanes and networkx is not a dependency) or on drawn successors until the route is long
enough for the run; then the lanes' centre lines joined into one smooth drivable `Curve`.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence

import numpy as np
from scipy.ndimage import gaussian_filter1d

from twinsim.errors import PlanningError
from twinsim.model.roads import RoadNetworkSpec
from twinsim.model.trajectory import Curve

STEP_M = 0.5  # the curve's arc-length spacing
SMOOTH_M = 2.0  # standard deviation of the smoothing along the joined centre lines
START_S_M = 4.0  # the car starts this far along its start lane
MIN_START_LANE_M = 25.0  # lanes shorter than this are not drawn as starts
ROUTE_TRIES = 50


def _lengths(network: RoadNetworkSpec) -> list[float]:
    return [lane.length_m() for lane in network.lanes]


def shortest_route(network: RoadNetworkSpec, start: int, goal: int) -> list[int]:
    """The lanes from `start` to `goal` (both included) of least total length; a one-line
    `PlanningError` naming both when the goal cannot be reached."""
    n = len(network.lanes)
    for name, lane in (("start_lane", start), ("goal_lane", goal)):
        if not 0 <= lane < n:
            raise PlanningError(f"robot.{name}={lane}: the town has lanes 0..{n - 1}")
    lengths = _lengths(network)
    best = {start: 0.0}
    came: dict[int, int] = {}
    queue = [(0.0, start)]
    while queue:
        d, lane = heapq.heappop(queue)
        if lane == goal:
            route = [goal]
            while route[-1] != start:
                route.append(came[route[-1]])
            return route[::-1]
        if d > best.get(lane, math.inf):
            continue
        for nxt in network.lanes[lane].successors:
            nd = d + lengths[lane]
            if nd < best.get(nxt, math.inf):
                best[nxt], came[nxt] = nd, lane
                heapq.heappush(queue, (nd, nxt))
    raise PlanningError(
        f"robot.goal_lane={goal} is unreachable from start lane {start}: no lane path leads "
        f"there ({len(best)} lanes reachable)"
    )


def drawn_route(
    network: RoadNetworkSpec, start: int, length_m: float, rng: np.random.Generator
) -> list[int]:
    """Lanes from `start` on drawn successors until `length_m` is covered; of the drawn
    routes the first long enough, else the longest (a town whose lanes end early)."""
    lengths = _lengths(network)
    best: list[int] = [start]
    for _ in range(ROUTE_TRIES):
        route, total = [start], lengths[start] - START_S_M
        while total < length_m:
            successors = network.lanes[route[-1]].successors
            if not successors:
                break
            route.append(int(successors[int(rng.integers(len(successors)))]))
            total += lengths[route[-1]]
        if total >= length_m:
            return route
        if sum(lengths[i] for i in route) > sum(lengths[i] for i in best):
            best = route
    return best


def start_lanes(network: RoadNetworkSpec) -> list[int]:
    """Lanes a drawn start may be on: driving lanes long enough to start on."""
    return [
        lane.lane_id
        for lane in network.lanes
        if lane.kind == "driving" and lane.length_m() >= MIN_START_LANE_M
    ]


def route_curve(network: RoadNetworkSpec, route: Sequence[int]) -> Curve:
    """The route's centre lines joined from `START_S_M` along its first lane, resampled every
    `STEP_M` and smoothed (lanes meet at corners of their polylines), with heading and
    curvature."""
    pts = [np.asarray(network.lanes[route[0]].centerline, float)[:, :2]]
    for lane in route[1:]:
        pts.append(np.asarray(network.lanes[lane].centerline, float)[1:, :2])
    xy = np.concatenate(pts)
    seg = np.linalg.norm(np.diff(xy, axis=0), axis=1)
    keep = np.concatenate([[True], seg > 1e-6])
    xy = xy[keep]
    s = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(xy, axis=0), axis=1))])
    grid = np.arange(START_S_M, s[-1], STEP_M)
    if len(grid) < 8:
        raise PlanningError(f"the route over lanes {list(route)} is too short to drive")
    xy = np.stack([np.interp(grid, s, xy[:, k]) for k in range(2)], axis=1)
    sigma = SMOOTH_M / STEP_M
    xy = np.stack([gaussian_filter1d(xy[:, k], sigma, mode="nearest") for k in range(2)], axis=1)
    arc = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(xy, axis=0), axis=1))])
    even = np.linspace(0.0, arc[-1], max(int(arc[-1] / STEP_M), 8) + 1)
    xy = np.stack([np.interp(even, arc, xy[:, k]) for k in range(2)], axis=1)
    d = np.gradient(xy, axis=0)
    heading = np.unwrap(np.arctan2(d[:, 1], d[:, 0]))
    curvature = np.gradient(heading, even)
    return Curve(s=even, xy=xy, heading=heading, curvature=curvature)
