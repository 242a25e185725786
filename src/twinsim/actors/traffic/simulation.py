"""Traffic on a town's road network: vehicles driving its lanes with the Intelligent Driver
Model, stopping at red lights, taking turns through intersections, giving way to people on
crossings and to the ego's planned drive; simulated once when the world is assembled, so
every vehicle's motion is a pure function of time in `scene.json` (keyframes of a
`FlyingObjectSpec`, as other moving objects).

The simulation steps `DT_S`. Each vehicle follows a seeded route along the lane graph (drawn
anew when it changes lanes, `twinsim.actors.traffic.lane_change`) at its own desired
speed (the lane's limit × a factor drawn from `speed_factor`, capped by its class); on a road
with one lane each way it overtakes through the oncoming lane (`twinsim.actors.traffic.overtake`).
Its IDM leader is the nearest of, along its route within the look-ahead:
- the rear of any vehicle (or of the ego, where its planned path lies on a lane) ahead, on
  its lane, on the lane it is changing from, or on a connector leaving the same lane; while
  it overtakes, whoever is ahead on the oncoming lane, but not the vehicle it passes;
- a stop line whose light is red, or yellow while it can still stop comfortably;
- the end of the lane before an intersection it may not enter yet. A vehicle enters a
  connector (a lane through an intersection) only holding a reservation: no other vehicle
  holds one on a connector that crosses or merges with it, the ego's path keeps off those
  connectors, and no person is on a crossing it passes, while it would be inside (its length
  at its speed, plus `CLEAR_MARGIN_S`).
A vehicle that still comes within reach of the ego or of a person (the model keeps them apart
by these rules, the check is the guarantee) is taken out of the scene; removing one never
brings two others together, since each kept vehicle already kept clear of all. The numbers
requested, placed and removed are reported.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from shapely.geometry import LineString

from twinsim.actors.traffic import lane_change, overtake
from twinsim.actors.traffic.clear import CrossingTrack, EgoTrack, keep_clear
from twinsim.actors.traffic.lane_paths import connector_conflicts, lane_paths, random_route
from twinsim.actors.traffic.state import Occupancy, SimVehicle
from twinsim.actors.traffic.vehicles import CLASSES, VehicleClass
from twinsim.model.roads import RoadNetworkSpec

log = logging.getLogger(__name__)

DT_S = 0.2  # traffic simulation step
KEY_EVERY = 2  # a keyframe every this many steps (0.4 s)
LOOK_AHEAD_M = 80.0
IDM_DELTA = 4.0
CLEAR_MARGIN_S = 2.0  # a reservation also covers this long after the vehicle would be through
RESERVE_REACH_M = 25.0  # a vehicle asks for its connector this far before the stop line
SPAWN_GAP_M = 8.0  # at least this much free lane between spawned vehicles
EGO_START_CLEAR_M = 30.0  # no vehicle starts this near the ego's start
LATERAL_MPS2 = 2.0  # comfortable lateral acceleration: a lane's curve caps its speed
STOP_SHORT_M = 1.5  # a waiting front stays this far before its lane's end (or its stop line)


@dataclass(frozen=True)
class TrafficResult:
    """Each kept vehicle's class and its pose samples (times, x, y, z, yaw), and the counts."""

    classes: tuple[str, ...]
    times: np.ndarray  # (K,)
    poses: np.ndarray  # (V, K, 4): x, y, z, yaw of the vehicle's centre on the ground
    requested: int
    placed: int
    removed: int


def _clock(total_s: float) -> np.ndarray:
    return np.arange(math.ceil(total_s / DT_S) + 1) * DT_S


class TrafficSim:
    """One simulation of `count` vehicles on `network` (see the module)."""

    def __init__(
        self,
        network: RoadNetworkSpec,
        rng: np.random.Generator,
        total_s: float,
        egos: Sequence[EgoTrack],
        crossings: CrossingTrack | None,
    ) -> None:
        self.net, self.rng, self.egos, self.crossings = network, rng, tuple(egos), crossings
        self.dt = DT_S
        self.paths = lane_paths(network)
        self.predecessors = network.predecessors()
        self.conflicts = connector_conflicts(network, self.paths)
        self.t = _clock(total_s)
        self.crossed = self._crossed_by_connectors()
        self.holders: dict[int, int] = {}  # connector → how many vehicles hold it
        self.ego_connectors = self._ego_connector_steps()
        self.curve_cap = [_curve_speed(path.points) for path in self.paths]
        self.oncoming = overtake.oncoming_lanes(network, self.paths)
        #: connectors leaving the same lane: whoever is ahead on one is ahead on the others
        #: too until their ways part
        self.siblings = {
            lid: {o for src in self.predecessors[lid] for o in network.lanes[src].successors}
            - {lid}
            for lid in self.conflicts
        }

    # ------------------------------------------------------------------ set-up
    def _crossed_by_connectors(self) -> dict[int, list[int]]:
        """The crosswalks each connector (or any lane) passes over."""
        out: dict[int, list[int]] = {}
        if self.crossings is None:
            return out
        walks = {
            c.crosswalk_id: LineString([c.start, c.end]).buffer(c.width_m / 2 + 0.5)
            for c in self.net.crosswalks
        }
        for lane, path in zip(self.net.lanes, self.paths, strict=True):
            strip = path.line().buffer(lane.width_m / 2)
            out[lane.lane_id] = [cid for cid, poly in walks.items() if strip.intersects(poly)]
        return out

    def _ego_connector_steps(self) -> dict[int, np.ndarray]:
        """For each connector, the steps at which an ego is on it (or on one in conflict)."""
        on = {lid: np.zeros(len(self.t), bool) for lid in self.conflicts}
        for ego in self.egos:
            for k, here in enumerate(ego.lanes[: len(self.t)]):
                for lid, _ in here:
                    if lid in on:
                        on[lid][k] = True
                        for other in self.conflicts[lid]:
                            on[other][k] = True
        return on

    def spawn(self, count: int, speed_factor: tuple[float, float], weights: dict[str, float]):
        """Place up to `count` vehicles on driving lanes, apart and away from the egos' starts."""
        lanes = [lane for lane in self.net.lanes if lane.kind != "connector"]
        names = list(weights)
        p = np.array([weights[n] for n in names], float)
        p /= p.sum()
        taken: dict[int, list[tuple[float, float]]] = {}
        vehicles: list[SimVehicle] = []
        ego_starts = np.array([ego.xy[0] for ego in self.egos]).reshape(-1, 2)
        lengths = np.array([self.paths[lane.lane_id].length for lane in lanes])
        for _ in range(count * 6):
            if len(vehicles) == count:
                break
            cls = CLASSES[names[int(self.rng.choice(len(names), p=p))]]
            lane = lanes[int(self.rng.choice(len(lanes), p=lengths / lengths.sum()))]
            path = self.paths[lane.lane_id]
            if path.length < cls.length_m + 2 * SPAWN_GAP_M:
                continue
            s = float(self.rng.uniform(cls.length_m + SPAWN_GAP_M, path.length - SPAWN_GAP_M))
            span = (s - cls.length_m - SPAWN_GAP_M, s + SPAWN_GAP_M)
            if any(a < span[1] and span[0] < b for a, b in taken.get(lane.lane_id, [])):
                continue
            if (np.linalg.norm(ego_starts - path.at(s)[:2], axis=1) < EGO_START_CLEAR_M).any():
                continue
            factor = float(self.rng.uniform(*speed_factor))
            reach = max(cls.top_speed_mps, lane.speed_limit_mps) * factor * self.t[-1] + 200.0
            route = random_route(self.net, lane.lane_id, reach, self.rng, self.paths)
            taken.setdefault(lane.lane_id, []).append((s - cls.length_m, s))
            v0 = self.desired(cls, factor, lane.lane_id)
            starts = np.concatenate([[0.0], np.cumsum([self.paths[r].length for r in route])])
            vehicles.append(SimVehicle(cls, route, starts.tolist(), factor, 0, s, 0.5 * v0))
        return vehicles

    def desired(self, cls: VehicleClass, factor: float, lane_id: int) -> float:
        """The speed a vehicle wants on a lane: its limit × the vehicle's factor, capped by
        its class and by the lane's curve."""
        limit = self.net.lanes[lane_id].speed_limit_mps * factor
        return min(limit, cls.top_speed_mps, self.curve_cap[lane_id])

    def _target(self, veh: SimVehicle) -> float:
        """The speed to aim for now: the desired speed of each lane ahead within the look-
        ahead, reachable from here by braking at the comfortable deceleration."""
        b, ahead, target = veh.cls.decel_mps2, -veh.s, math.inf
        for j in range(veh.index, len(veh.route)):
            lane_id = veh.route[j]
            v = self.desired(veh.cls, veh.factor, lane_id)
            target = min(target, math.sqrt(v * v + 2.0 * b * max(ahead, 0.0)))
            ahead += self.paths[lane_id].length
            if ahead > LOOK_AHEAD_M:
                break
        return target

    # ------------------------------------------------------------------ stepping
    def run(self, vehicles: list[SimVehicle]) -> np.ndarray:
        """Simulate; each vehicle's (x, y, z, yaw) of its centre at every step (V, N, 4)."""
        shape = (len(vehicles), len(self.t))
        lane, arc, offset, slope = (
            np.zeros(shape, int),
            np.zeros(shape),
            np.zeros(shape),
            np.zeros(shape),
        )
        for k in range(len(self.t)):
            for i, veh in enumerate(vehicles):
                lane[i, k], arc[i, k] = self._centre(veh)
                offset[i, k], slope[i, k] = veh.sideways(arc[i, k])
            if k + 1 < len(self.t):
                self._step(vehicles, k)
        out = np.zeros((len(vehicles), len(self.t), 4))
        for lid in np.unique(lane):
            on = lane == lid
            path = self.paths[int(lid)]
            out[on, :3] = path.at(arc[on])
            out[on, 3] = path.heading(arc[on])
        yaw = out[..., 3]
        out[..., 0] -= np.sin(yaw) * offset  # sideways, onto the lane's left normal
        out[..., 1] += np.cos(yaw) * offset
        out[..., 3] = yaw + np.arctan(slope)
        return out

    def _centre(self, veh: SimVehicle) -> tuple[int, float]:
        """The lane and arc length of the vehicle's centre (half a length behind its front)."""
        index, s = veh.index, veh.s - veh.cls.length_m / 2
        while s < 0.0 and index > 0:  # the centre is still on the lane before
            index -= 1
            s += self.paths[veh.route[index]].length
        return veh.route[index], s

    def _occupancy(self, vehicles: list[SimVehicle], k: int) -> Occupancy:
        """Per lane, (rear s, speed, vehicle index or −1 for an ego, length) of whoever is on
        it; a vehicle changing lanes is on both; one overtaking is on the oncoming lane too
        while it reaches onto it, and off its own lane while wholly out there."""
        occ: Occupancy = {}
        for i, veh in enumerate(vehicles):
            if overtake.occupy(self, veh, i, occ):
                continue
            length = veh.cls.length_m
            rear, index = veh.s - length, veh.index
            occ.setdefault(veh.route[index], []).append((rear, veh.v, i, length))
            while rear < 0.0 and index > 0:  # its tail still on the lanes behind
                index -= 1
                rear += self.paths[veh.route[index]].length
                occ.setdefault(veh.route[index], []).append((rear, veh.v, i, length))
            if veh.change is not None:
                old = veh.change.from_lane
                entry = (self._on_old_lane(veh) - length, veh.v, i, length)
                occ.setdefault(old, []).append(entry)
        for ego in self.egos:
            if k >= len(ego.lanes):
                continue
            speed = 0.0
            if k + 1 < len(ego.xy):
                speed = float(np.linalg.norm(ego.xy[k + 1] - ego.xy[k]) / DT_S)
            for lid, s in ego.lanes[k]:
                entry = (s - ego.half_length_m, speed, -1, 2.0 * ego.half_length_m)
                occ.setdefault(lid, []).append(entry)
        return occ

    def _on_old_lane(self, veh: SimVehicle) -> float:
        """Where the front of a vehicle changing lanes is on the lane it leaves (the two run
        side by side)."""
        old = veh.change.from_lane
        return veh.s * self.paths[old].length / self.paths[veh.route[veh.index]].length

    def _step(self, vehicles: list[SimVehicle], k: int) -> None:
        occ = self._occupancy(vehicles, k)
        t = float(self.t[k])
        every = round(lane_change.DECIDE_EVERY_S / DT_S)
        for i, veh in enumerate(vehicles):
            if veh.overtake is not None:
                overtake.update(self, vehicles, i, occ, k)
            elif (k + i) % every == 0 and not lane_change.consider(self, vehicles, i, occ, k):
                overtake.consider(self, vehicles, i, occ, k)
        accel = []
        for i, veh in enumerate(vehicles):
            gap, v_lead = self._leader(i, veh, occ, k, t)
            accel.append(self.idm(veh, gap, v_lead))
        for veh, a in zip(vehicles, accel, strict=True):
            v_new = max(veh.v + a * DT_S, 0.0)
            veh.s += 0.5 * (veh.v + v_new) * DT_S
            veh.v = v_new
            self._advance(veh)
            if veh.change is not None and veh.change.over(veh.s - veh.cls.length_m / 2):
                veh.change = None

    def idm(self, veh: SimVehicle, gap: float, v_lead: float) -> float:
        """The Intelligent Driver Model's acceleration behind a leader `gap` m ahead at
        `v_lead` (no leader: `gap` infinite)."""
        cls = veh.cls
        v0 = max(min(self._target(veh), overtake.speed_cap(veh)), 0.1)
        a, b = cls.accel_mps2, cls.decel_mps2
        free = 1.0 - (veh.v / v0) ** IDM_DELTA
        if not math.isfinite(gap):
            return a * free
        s_star = cls.min_gap_m + max(
            0.0, veh.v * cls.headway_s + veh.v * (veh.v - v_lead) / (2 * math.sqrt(a * b))
        )
        return max(a * (free - (s_star / max(gap, 0.1)) ** 2), -3.0 * b)

    def _leader(self, i: int, veh: SimVehicle, occ, k: int, t: float) -> tuple[float, float]:
        """Gap (m) to whatever the vehicle must stay behind along its route, and its speed."""
        ahead = -veh.s  # distance from the front bumper to the start of route[j]
        skip = overtake.ignored(veh, i)
        for j in range(veh.index, len(veh.route)):
            lane_id = veh.route[j]
            gaps = [
                (ahead + rear, v)
                for lid in (lane_id, *self.siblings.get(lane_id, ()))
                for rear, v, who, _ in occ.get(lid, ())
                if who not in skip and (j > veh.index or rear > veh.s)
            ]
            if j == veh.index:
                gaps += overtake.leaders(self, veh, i, occ)
            if j == veh.index and veh.change is not None:  # also behind those on the old lane
                front = self._on_old_lane(veh)
                gaps += [
                    (rear - front, v)
                    for rear, v, who, _ in occ.get(veh.change.from_lane, ())
                    if who != i and rear > front
                ]
            if gaps:
                gap, v = min(gaps)
                return max(gap, 0.0), v
            end = ahead + self.paths[lane_id].length  # distance to this lane's end
            if end > LOOK_AHEAD_M:
                return math.inf, 0.0
            if j + 1 == len(veh.route):
                return max(end - 0.5, 0.0), 0.0  # a dead end: stop there
            if not self._may_leave(veh, lane_id, veh.route[j + 1], end, k, t):
                stop = self.net.lanes[lane_id].stop_line_s_m
                short = STOP_SHORT_M if stop is None else self.paths[lane_id].length - stop
                return max(end - max(short, STOP_SHORT_M), 0.0), 0.0
            ahead = end
        return math.inf, 0.0

    def _may_leave(
        self, veh: SimVehicle, lane_id: int, nxt: int, end: float, k: int, t: float
    ) -> bool:
        """Whether the vehicle may drive past the end of `lane_id` into `nxt` (its light and,
        for a connector, its reservation); a connector beyond braking reach counts as free
        for now (the vehicle asks again as it comes nearer)."""
        lane = self.net.lanes[lane_id]
        if lane.stop_light_id is not None:
            state = self.net.light(lane.stop_light_id).state_at(t)
            stop = state == "red" or (
                state == "yellow" and end > veh.v * veh.v / (2 * veh.cls.decel_mps2)
            )
            if stop:
                self._release_ahead(veh)  # waiting at a red light holds no junction
                return False
        if nxt not in self.conflicts or nxt in veh.reserved:
            return True
        cls = veh.cls
        reach = RESERVE_REACH_M + veh.v * cls.headway_s + veh.v * veh.v / (2 * cls.decel_mps2)
        if end > reach:
            return True
        return self._reserve(veh, nxt, end, k)

    def _chain(self, veh: SimVehicle, j: int) -> list[int]:
        """Route positions of the connectors from `j` on through the same intersection."""
        junction = self.net.lanes[veh.route[j]].intersection_id
        chain = [j]
        while (
            chain[-1] + 1 < len(veh.route)
            and self.net.lanes[veh.route[chain[-1] + 1]].intersection_id == junction
        ):
            chain.append(chain[-1] + 1)
        return chain

    def _reserve(self, veh: SimVehicle, connector: int, end: float, k: int) -> bool:
        """Take every connector of the vehicle's way through the intersection at once (so no
        vehicle ever waits holding one: no deadlock) if nobody holds one in conflict with
        them, the ego keeps off them and no person is on their crossings while the vehicle
        would be inside."""
        chain = self._chain(veh, veh.route.index(connector, veh.index))
        lanes = [veh.route[j] for j in chain]
        own = set(lanes)
        if any(self.holders.get(c, 0) for lid in lanes for c in self.conflicts[lid] - own):
            return False
        v = max(veh.v, 2.0)
        through = sum(self.paths[lid].length for lid in lanes)
        inside_s = (end + through + veh.cls.length_m) / v + CLEAR_MARGIN_S
        window = slice(k, min(len(self.t), k + math.ceil(inside_s / DT_S) + 1))
        for lid in lanes:
            on = self.ego_connectors.get(lid)
            if on is not None and on[window].any():
                return False
            if self.crossings is not None:
                for cid in self.crossed.get(lid, []):
                    if self.crossings.occupied[cid][window].any():
                        return False
        for j, lid in zip(chain, lanes, strict=True):
            self.holders[lid] = self.holders.get(lid, 0) + 1
            veh.reserved[lid] = (veh.starts[j], veh.starts[j + 1])
        return True

    def _release_ahead(self, veh: SimVehicle) -> None:
        """Give back the connectors the vehicle holds but has not entered yet."""
        front = veh.starts[veh.index] + veh.s
        for lid, (start, _) in list(veh.reserved.items()):
            if start > front:
                del veh.reserved[lid]
                self.holders[lid] -= 1

    def _advance(self, veh: SimVehicle) -> None:
        """Move on to the next lane(s) of the route; release the connectors its tail has left."""
        while veh.index + 1 < len(veh.route) and veh.s > self.paths[veh.route[veh.index]].length:
            veh.s -= self.paths[veh.route[veh.index]].length
            veh.index += 1
        if veh.index + 1 == len(veh.route):
            veh.s = min(veh.s, self.paths[veh.route[veh.index]].length)
        rear = veh.starts[veh.index] + veh.s - veh.cls.length_m
        for connector, (_, end) in list(veh.reserved.items()):
            if rear > end:
                del veh.reserved[connector]
                self.holders[connector] -= 1


def _curve_speed(points: np.ndarray) -> float:
    """The speed at which a lane's mean curvature (its turning over its length) gives
    `LATERAL_MPS2` of lateral acceleration (inf for a straight lane)."""
    d = np.diff(points[:, :2], axis=0)
    d = d[np.linalg.norm(d, axis=1) > 1e-6]
    if len(d) < 2:
        return math.inf
    heading = np.unwrap(np.arctan2(d[:, 1], d[:, 0]))
    turning = float(np.abs(np.diff(heading)).sum())
    length = float(np.linalg.norm(d, axis=1).sum())
    return math.inf if turning < 1e-3 else math.sqrt(LATERAL_MPS2 * length / turning)


def simulate_traffic(
    network: RoadNetworkSpec,
    count: int,
    speed_factor: tuple[float, float],
    weights: dict[str, float],
    total_s: float,
    rng: np.random.Generator,
    egos: Sequence[EgoTrack] = (),
    crossings: CrossingTrack | None = None,
) -> TrafficResult:
    """`count` vehicles on `network` over `total_s` (see the module); fewer if the town has no
    room for them, or if some had to be taken out to keep clear of the ego and people."""
    sim = TrafficSim(network, rng, total_s, egos, crossings)
    vehicles = sim.spawn(count, speed_factor, weights)
    poses = sim.run(vehicles) if vehicles else np.zeros((0, len(sim.t), 4))
    classes = [v.cls for v in vehicles]
    keep = keep_clear(poses, classes, egos, None if crossings is None else crossings.people_xy)
    placed, removed = len(vehicles), int((~keep).sum())
    if placed < count or removed:
        log.warning(
            "traffic: %d of %d vehicles placed, %d taken out to keep clear of each other, the ego "
            "and people",
            placed,
            count,
            removed,
        )
    kept = np.flatnonzero(keep)
    keys = slice(None, None, KEY_EVERY)
    return TrafficResult(
        classes=tuple(classes[i].name for i in kept),
        times=sim.t[keys],
        poses=poses[kept][:, keys],
        requested=count,
        placed=placed,
        removed=removed,
    )
