"""Pedestrians of an outdoor world: people walking a town's sidewalks and crossing its roads at
the crosswalks, only while the traffic they cross has red and the ego's planned drive keeps
off the crossing; every motion a pure function of time (a walk with waits).

A walker's route starts at a seeded point of a sidewalk, follows it (each walker keeps its
own side of the sidewalk's centre line) and at a crosswalk it reaches takes it with
probability `CROSS_PROBABILITY`, onward on the sidewalk at its other end, until the route is
long enough; playback walks it forward and back (GRADE's ping-pong). A crossing may begin
when, for the whole time it takes plus `CROSS_MARGIN_S` either side, every light guarding a
lane it crosses is red and the ego stays `EGO_CLEAR_M` from it; else the walker waits at the
kerb (a `HumanMotionSpec` pause) until the next such moment. Crossings without lights are
taken at once; vehicles give way there (`twinsim.actors.traffic.simulation`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import shapely
from shapely.geometry import LineString, Point

from twinsim.actors.motion import motion_for
from twinsim.actors.playback import own_time
from twinsim.actors.population import random_person, walking_gait_hz
from twinsim.model.people import HumanMotionSpec, PersonSpec
from twinsim.model.roads import RoadNetworkSpec
from twinsim.model.scene import MaterialSpec, TextureSpec

WALKER_PREFIX = "walker_"  # walkers are named walker_<k>
CROSS_PROBABILITY = 0.5
CROSS_MARGIN_S = 1.0
EGO_CLEAR_M = 6.0  # a crossing keeps the ego's centre this far (a car is ~5 m long)
ATTACH_M = 4.0  # a crosswalk end joins the sidewalk within this distance
ROUTE_M = (60.0, 160.0)  # wanted length of a walker's route
LEG_M = (15.0, 60.0)  # how far a walker follows a sidewalk before it looks for a crossing
SPEED_MPS = (1.0, 1.6)
CLOCK_HZ = 10.0  # the clock crossings are checked on
MAX_WAITS = 200  # crossings waited for, at most, per walker


@dataclass(frozen=True)
class Pedestrians:
    """The walkers made for a town, their materials and textures, and how many were asked."""

    people: tuple[PersonSpec, ...]
    materials: tuple[MaterialSpec, ...]
    textures: tuple[TextureSpec, ...]
    requested: int


class _Walks:
    """The sidewalks as lines and the crosswalks joining them (ends attached to sidewalks)."""

    def __init__(self, network: RoadNetworkSpec) -> None:
        self.net = network
        self.lines = []
        for walk in network.sidewalks:
            pts = list(walk.centerline)
            if walk.closed and pts[0] != pts[-1]:
                pts.append(pts[0])
            self.lines.append(LineString(pts))
        self.widths = [w.width_m for w in network.sidewalks]
        # per sidewalk: (arc, crosswalk id, which end) of each crosswalk end on it
        self.ends: list[list[tuple[float, int, int]]] = [[] for _ in self.lines]
        self.crossings = {}
        for c in network.crosswalks:
            attached = []
            for end in (c.start, c.end):
                p = Point(end)
                d = [line.distance(p) for line in self.lines]
                k = int(np.argmin(d)) if d else -1
                if k < 0 or d[k] > ATTACH_M:
                    break
                attached.append((k, float(self.lines[k].project(p))))
            if len(attached) == 2 and attached[0][0] != attached[1][0]:
                self.crossings[c.crosswalk_id] = (c, attached)
                for which, (k, arc) in enumerate(attached):
                    self.ends[k].append((arc, c.crosswalk_id, which))

    def route(self, rng: np.random.Generator) -> tuple[np.ndarray, list[tuple[int, int]]] | None:
        """A seeded route (points (N, 2)) and, for each crossing on it, the indices of the
        points where it steps onto and off the crosswalk."""
        if not self.lines:
            return None
        lengths = np.array([line.length for line in self.lines])
        k = int(rng.choice(len(self.lines), p=lengths / lengths.sum()))
        arc = float(rng.uniform(0.0, lengths[k]))
        direction = 1.0 if rng.uniform() < 0.5 else -1.0
        side = float(rng.uniform(-0.3, 0.3))
        want = float(rng.uniform(*ROUTE_M))
        points: list[np.ndarray] = []
        crossings: list[tuple[int, int]] = []
        total = 0.0
        while total < want:
            leg = float(rng.uniform(*LEG_M))
            line, closed = self.lines[k], self.net.sidewalks[k].closed
            target, crossing = self._next_crossing(k, arc, direction, leg, closed, rng)
            piece = _walk_along(line, arc, target, direction, closed, side * self.widths[k])
            points.extend(piece)
            total += _length(piece)
            if crossing is None:
                arc = target
                if not closed and (target <= 0.0 or target >= line.length):
                    direction = -direction  # the end of an open sidewalk: turn round
                continue
            _, attached = self.crossings[crossing[0]]
            other = attached[1 - crossing[1]]
            far = np.asarray(self.lines[other[0]].interpolate(other[1]).coords[0])
            crossings.append((len(points) - 1, len(points)))
            points.append(far)
            total += float(np.linalg.norm(far - points[-2]))
            k, arc = other
            direction = 1.0 if rng.uniform() < 0.5 else -1.0
        pts = np.round(np.array(points, float), 4)
        return pts, crossings

    def _next_crossing(self, k, arc, direction, leg, closed, rng):
        """Where a leg from `arc` ends: at the first crosswalk within `leg` that the walker
        takes (and that crossing), or `leg` along."""
        length = self.lines[k].length
        ahead = []
        for end_arc, cid, which in self.ends[k]:
            d = (end_arc - arc) * direction
            if closed:
                d %= length
            if 0.5 < d <= leg:
                ahead.append((d, end_arc, cid, which))
        for _, end_arc, cid, which in sorted(ahead):
            if rng.uniform() < CROSS_PROBABILITY:
                return end_arc, (cid, which)
        target = arc + direction * leg
        if closed:
            return target % length, None
        return float(np.clip(target, 0.0, length)), None


def _walk_along(line: LineString, a: float, b: float, direction: float, closed: bool, offset):
    """Points along `line` from arc `a` to `b` going `direction` (wrapping round a closed
    line), `offset` metres to the walker's left."""
    length = line.length
    span = ((b - a) * direction) % length if closed else abs(b - a)
    n = max(2, math.ceil(span / 2.0) + 1)
    arcs = a + direction * np.linspace(0.0, span, n)
    arcs = arcs % length if closed else np.clip(arcs, 0.0, length)
    pts = np.array([line.interpolate(float(s)).coords[0] for s in arcs])
    nudged = (arcs + direction * 0.5) % length
    ahead = np.array([line.interpolate(float(s)).coords[0] for s in nudged])
    d = ahead - pts
    norm = np.linalg.norm(d, axis=1, keepdims=True)
    d = np.where(norm > 1e-9, d / np.maximum(norm, 1e-9), 0.0)
    left = np.stack([-d[:, 1], d[:, 0]], axis=1)
    return list(pts + offset * left)


def _length(points: Sequence[np.ndarray]) -> float:
    if len(points) < 2:
        return 0.0
    return float(np.linalg.norm(np.diff(np.asarray(points), axis=0), axis=1).sum())


def _guarding_lights(network: RoadNetworkSpec, crosswalk) -> list[int]:
    """The lights at the stop lines of the lanes a crosswalk crosses."""
    strip = LineString([crosswalk.start, crosswalk.end]).buffer(crosswalk.width_m / 2)
    lights = set()
    for lane in network.lanes:
        if lane.stop_light_id is None or lane.kind == "connector":
            continue
        if LineString([p[:2] for p in lane.centerline]).intersects(strip):
            lights.add(lane.stop_light_id)
    return sorted(lights)


class _Crossings:
    """When each crosswalk may be crossed, on a clock: its lights red, the ego away."""

    def __init__(self, network: RoadNetworkSpec, t: np.ndarray, egos_xy: Sequence[np.ndarray]):
        self.t = t
        self.allowed: dict[int, np.ndarray] = {}
        for c in network.crosswalks:
            ok = np.ones(len(t), bool)
            for lid in _guarding_lights(network, c):
                light = network.light(lid)
                ok &= np.array([light.state_at(float(x)) == "red" for x in t])
            line = LineString([c.start, c.end])
            for ego_xy in egos_xy:
                n = min(len(t), len(ego_xy))
                d = shapely.distance(line, shapely.points(ego_xy[:n]))
                near = np.zeros(len(t), bool)
                near[:n] = d < EGO_CLEAR_M + c.width_m / 2
                near[n:] = near[n - 1] if n else False
                ok &= ~near
            self.allowed[c.crosswalk_id] = ok

    def next_window(self, crosswalk: int, start: int, steps: int) -> int | None:
        """The first clock index ≥ `start` from which crossing is allowed for `steps` steps."""
        ok = self.allowed[crosswalk]
        run = 0
        for k in range(start, len(ok)):
            run = run + 1 if ok[k] else 0
            if run >= steps:
                return k - steps + 1
        return None


def _crossing_waits(
    person: PersonSpec, crossing_ids, route_crossings, crossings: _Crossings, total_s: float
) -> tuple[tuple[float, float], ...]:
    """The waits at the kerb that make every crossing of the walker's run happen while it
    is allowed (`_Crossings`); a crossing with no allowed moment left holds the walker at
    the kerb for the rest of the run."""
    t = crossings.t
    motion = motion_for(person)
    pts = np.asarray(person.motion.waypoints, float)
    zones = [
        (cid, LineString([pts[a], pts[b]]).buffer(0.6))
        for cid, (a, b) in zip(crossing_ids, route_crossings, strict=True)
    ]
    pauses: list[tuple[float, float]] = []
    margin = math.ceil(CROSS_MARGIN_S * CLOCK_HZ)
    for _ in range(MAX_WAITS):
        own = own_time(t, tuple(pauses))
        xy = motion.root_xy(np.asarray(own, float))
        first = None
        for cid, zone in zones:
            inside = shapely.contains_xy(zone, xy[:, 0], xy[:, 1])
            enter = np.flatnonzero(inside[1:] & ~inside[:-1]) + 1
            after = [int(e) for e in enter if not pauses or t[e] > pauses[-1][0] + pauses[-1][1]]
            for e in after:
                out = np.flatnonzero(~inside[e:])
                x = e + (int(out[0]) if len(out) else len(inside) - e)
                lo, steps = max(e - margin, 0), (x - e) + 2 * margin
                if crossings.allowed[cid][lo : lo + steps].all():
                    continue
                if first is None or e < first[0]:
                    first = (e, cid, steps)
                break
        if first is None:
            return tuple(pauses)
        e, cid, steps = first
        stop = max(e - 1, 0)
        start = crossings.next_window(cid, stop, steps)
        wait_from = float(t[stop])
        if start is None:
            return (*pauses, (round(wait_from, 3), round(total_s - wait_from + 1.0, 3)))
        duration = float(t[start] - t[stop]) + CROSS_MARGIN_S
        pauses.append((round(wait_from, 3), round(duration, 3)))
    return tuple(pauses)


def make_pedestrians(
    network: RoadNetworkSpec,
    count: int,
    total_s: float,
    rng: np.random.Generator,
    first_instance_id: int,
    first_person_id: int,
    egos_xy: Sequence[np.ndarray] = (),
) -> Pedestrians:
    """`count` walkers on the town's sidewalks (see the module), numbered from
    `first_person_id`, instance ids from `first_instance_id`; `egos_xy` are the robots' planned
    x, y (N, 2) on a `CLOCK_HZ` clock from 0."""
    walks = _Walks(network)
    t = np.arange(math.ceil(total_s * CLOCK_HZ) + 1) / CLOCK_HZ
    crossings = _Crossings(network, t, egos_xy)
    people, materials, textures = [], [], []
    for k in range(count):
        planned = walks.route(rng)
        if planned is None:
            break
        points, route_crossings = planned
        walk = _walk_of(points, round(float(rng.uniform(*SPEED_MPS)), 3), rng)
        iid = first_instance_id + 2 * len(people)
        person, mats, texs = random_person(
            rng, first_person_id + k, f"{WALKER_PREFIX}{k}", iid, walk
        )
        ids = [_crosswalk_at(walks, points, a, b) for a, b in route_crossings]
        waits = _crossing_waits(person, ids, route_crossings, crossings, total_s)
        if waits:
            motion = person.motion.model_copy(update={"pauses": waits})
            person = person.model_copy(update={"motion": motion})
        people.append(person)
        materials += mats
        textures += texs
    return Pedestrians(tuple(people), tuple(materials), tuple(textures), count)


def _walk_of(points: np.ndarray, speed: float, rng: np.random.Generator):
    """The motion of a walker along `points` at `speed`, given its height and step length
    (`random_person` asks for it once the body is drawn; the phase draws from `rng`)."""
    waypoints = tuple((float(x), float(y)) for x, y in points)
    length = float(np.linalg.norm(np.diff(points, axis=0), axis=1).sum())

    def walk(height_m: float, step_per_height: float) -> HumanMotionSpec:
        return HumanMotionSpec(
            kind="walk",
            waypoints=waypoints,
            speed_mps=speed,
            cycle_s=round(length / speed, 4),
            phase_s=round(float(rng.uniform(0.0, 2 * length / speed)), 3),
            gait_frequency_hz=walking_gait_hz(speed, height_m, step_per_height),
        )

    return walk


def _crosswalk_at(walks: _Walks, points: np.ndarray, a: int, b: int) -> int:
    """The crosswalk whose ends are nearest the route's crossing from point a to point b."""
    mid = (points[a] + points[b]) / 2
    best, best_d = -1, math.inf
    for cid, (c, _) in walks.crossings.items():
        d = float(np.linalg.norm((np.asarray(c.start) + np.asarray(c.end)) / 2 - mid))
        if d < best_d:
            best, best_d = cid, d
    return best


def people_on_crossings(
    network: RoadNetworkSpec, people: Sequence[PersonSpec], t: np.ndarray
) -> tuple[dict[int, np.ndarray], np.ndarray]:
    """For each crosswalk, whether a person is on it (within 1 m) at each time of `t`, and
    every person's root x, y there (P, N, 2)."""
    xy = np.zeros((0, len(t), 2))
    if people:
        xy = np.stack([motion_for(p).root_xy(t) for p in people])
    occupied = {}
    for c in network.crosswalks:
        zone = LineString([c.start, c.end]).buffer(c.width_m / 2 + 1.0)
        inside = np.zeros(len(t), bool)
        for p in range(len(people)):
            inside |= shapely.contains_xy(zone, xy[p, :, 0], xy[p, :, 1])
        occupied[c.crosswalk_id] = inside
    return occupied, xy
