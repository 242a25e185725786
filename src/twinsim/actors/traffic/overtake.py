"""Overtaking through the oncoming lane on roads with one lane each way (small_town, rural, the
highway's town roads), where MOBIL (`twinsim.actors.traffic.lane_change`) has no lane to change to.

A lane's oncoming twin is not linked in the road network: it is derived here, as the same
road's lane running the other way (within `TWIN_ANGLE_DEG`) about a lane width to the left,
both alone in their direction (`oncoming_lanes`).

Every `lane_change.DECIDE_EVERY_S` a vehicle stuck behind a slower one weighs a pass: the
leader is a traffic vehicle (never a robot) moving at least `MIN_TARGET_MPS` and at most
`REACH_M` ahead, and the follower's desired speed exceeds the leader's (at least its speed)
by `SPEED_GAIN_MPS` or more. The pass is planned as the simulation drives it: out onto the
oncoming lane at its speed, then on at its free IDM acceleration until its rear is the
leader's minimum gap plus `RETURN_HEADWAY_S` of the leader's speed ahead of the leader (taken
at that desired speed), then back.
It starts only if all of it holds:
- it lasts at most `MAX_PASS_S` and ends `lane_change.END_MARGIN_M` before the stop line (or
  the lane's end), and it starts past the oncoming lane's stop line;
- there is room to return: the gap ahead of the leader fits the follower, the return gap and
  its IDM following distance at its desired speed;
- nobody is alongside on the oncoming lane; whoever comes towards it there (or on the lanes
  leading onto it, if routed onto it) is further away than the pass's length plus what it
  covers at its speed, at least the lane's limit, in the pass's time plus `ONCOMING_MARGIN_S`;
  whoever overtakes behind it there is `lane_change.EGO_BEHIND_M` plus
  `lane_change.EGO_HEADWAY_S` of its speed away;
- no robot's planned drive comes onto that stretch of either lane (from
  `lane_change.EGO_BEHIND_M` behind it to the pass's end) while the pass lasts plus
  `ONCOMING_MARGIN_S`: a robot does not brake for traffic.

Both moves reuse the lane change's shape (`state.Shift`, `lane_change.CHANGE_TIME_S`
of the speed, at least `lane_change.MIN_CHANGE_M`), and while one is under way the vehicle's
desired speed is capped at the move's length over `CHANGE_TIME_S` (it holds its speed), so the
lateral acceleration stays ≤ 1.3 m/s². Once the vehicle is `SIDE_MARGIN_M` clear
of the leader's side it stops following it; it still follows anyone ahead of the leader and,
while its body reaches over the line between the lanes, whoever is ahead on the oncoming lane
(at their speed towards it), whose traffic then sees it coming at its speed; wholly out there
it leaves its own lane to those behind. It moves back once out there, when its own lane is
free from the return gap behind it to its minimum gap ahead, and it has passed the leader, or
its lane runs out, or someone on the oncoming lane is nearer than `ABORT_GAP_M` plus what they
close in `ABORT_S` (it then drops in behind the leader: a fallback the clearance rules make
rare, and which can still end with both stopped face to face). Its lane running out with no
room to move back, it stops for the stop line whatever the light: no overtake runs into a
junction.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import shapely

from twinsim.actors.traffic import lane_change as lc
from twinsim.actors.traffic.clear import EGO_CLEAR_M, EgoTrack
from twinsim.actors.traffic.lane_paths import LanePath
from twinsim.actors.traffic.state import Occupancy, Overtake, Shift, SimVehicle
from twinsim.actors.traffic.vehicles import VehicleClass
from twinsim.model.roads import LaneSpec, RoadNetworkSpec

TWIN_ANGLE_DEG = 20.0
TWIN_SAMPLE_M = 5.0  # the twin's arc length is looked up every this many metres of the lane
SPEED_GAIN_MPS = 4.0
REACH_M = 25.0
MIN_TARGET_MPS = 1.0  # nobody pulls out past a queue or a vehicle waiting at a light
RETURN_HEADWAY_S = 1.0
MAX_PASS_S = 25.0
ONCOMING_MARGIN_S = 3.0
SIDE_MARGIN_M = 0.5
ABORT_S = 4.0
ABORT_GAP_M = 10.0
SEARCH_SPEEDUP = 1.5  # oncoming traffic is looked for as far as this × the limit could bring it


class OvertakeView(Protocol):
    """What an overtake reads of the traffic simulation."""

    net: RoadNetworkSpec
    paths: Sequence[LanePath]
    predecessors: dict[int, tuple[int, ...]]
    oncoming: dict[int, Oncoming]
    egos: Sequence[EgoTrack]
    t: np.ndarray
    dt: float

    def desired(self, cls: VehicleClass, factor: float, lane_id: int) -> float: ...


# ---------------------------------------------------------------------- the oncoming lanes
@dataclass(frozen=True)
class Oncoming:
    """A lane's oncoming twin `twin`, its centre `offset_m` to the left; `s` samples the
    lane's arc length and `twin_s` holds the twin's arc length beside each sample."""

    twin: int
    offset_m: float
    s: np.ndarray
    twin_s: np.ndarray

    def at(self, s: float) -> float:
        """The twin's arc length beside arc length `s` of the lane."""
        return float(np.interp(s, self.s, self.twin_s))


def _alone(lane: LaneSpec) -> bool:
    """Whether a lane is a driving lane with no other lane in its direction."""
    return lane.kind == "driving" and lane.left_neighbor is None and lane.right_neighbor is None


def _twin(path: LanePath, other: LanePath) -> Oncoming | None:
    """`other` as `path`'s oncoming twin, if it runs the other way about a lane width to the
    left of `path`'s middle."""
    mid = path.length / 2
    p, heading = path.at(mid)[:2], float(path.heading(mid))
    line = other.line()
    s_other = float(shapely.line_locate_point(line, shapely.Point(p)))
    offset = float((other.at(s_other)[:2] - p) @ np.array([-math.sin(heading), math.cos(heading)]))
    turn = math.cos(float(other.heading(s_other)) - heading)
    width = path.lane.width_m
    if turn > -math.cos(math.radians(TWIN_ANGLE_DEG)) or not 0.5 * width <= offset <= 1.5 * width:
        return None
    s = np.unique(np.r_[path.cumulative, np.arange(0.0, path.length, TWIN_SAMPLE_M)])
    twin_s = shapely.line_locate_point(line, shapely.points(path.at(s)[:, :2]))
    return Oncoming(other.lane.lane_id, offset, s, np.asarray(twin_s, float))


def oncoming_lanes(network: RoadNetworkSpec, paths: Sequence[LanePath]) -> dict[int, Oncoming]:
    """Each driving lane alone in its direction → its oncoming twin (see the module), where
    its road has one."""
    by_road: dict[int, list[int]] = {}
    for lane in network.lanes:
        if _alone(lane):
            by_road.setdefault(lane.road_id, []).append(lane.lane_id)
    out: dict[int, Oncoming] = {}
    for ids in by_road.values():
        for a in ids:
            found = [t for t in (_twin(paths[a], paths[b]) for b in ids if b != a) if t]
            if found:
                out[a] = min(found, key=lambda t: t.offset_m)
    return out


# ---------------------------------------------------------------------- deciding
@dataclass(frozen=True)
class _Ahead:
    gap: float  # bumper to bumper (m)
    v: float
    who: int


@dataclass(frozen=True)
class _Plan:
    time_s: float  # from pulling out to being back on its lane
    length_m: float  # the distance driven meanwhile
    out_m: float  # the pull-out's length


def _ahead(occ: Occupancy, lane: int, front: float, skip: Sequence[int]) -> _Ahead | None:
    """The nearest occupant of `lane` whose rear is ahead of arc length `front`."""
    near = [(r - front, v, who) for r, v, who, _ in occ.get(lane, ()) if who not in skip]
    ahead = [n for n in near if n[0] >= 0.0]
    return _Ahead(*min(ahead)) if ahead else None


def _return_gap(other: SimVehicle) -> float:
    """How far behind the overtaker the overtaken vehicle is when it moves back in."""
    return other.cls.min_gap_m + RETURN_HEADWAY_S * other.v


def _stop(lane: LaneSpec, path: LanePath) -> float:
    """Where a move must be over by: the lane's stop line, or its end if it has none."""
    return path.length if lane.stop_line_s_m is None else lane.stop_line_s_m


def _plan(veh: SimVehicle, v_des: float, gain_m: float, v_target: float, dt: float) -> _Plan | None:
    """The pass in time and length: out at its speed, on at the free IDM acceleration
    towards its desired speed until it has gained `gain_m` on a leader at `v_target`, then
    back at the speed reached; None beyond `MAX_PASS_S`."""
    out_m = max(lc.CHANGE_TIME_S * veh.v, lc.MIN_CHANGE_M)
    t, x, gained = out_m / veh.v, out_m, out_m * (1.0 - v_target / veh.v)
    v = veh.v
    while gained < gain_m:
        if t > MAX_PASS_S:
            return None
        v_new = v + veh.cls.accel_mps2 * (1.0 - (v / v_des) ** 4) * dt
        x += 0.5 * (v + v_new) * dt
        gained += (0.5 * (v + v_new) - v_target) * dt
        v, t = v_new, t + dt
    back_m = max(lc.CHANGE_TIME_S * v, lc.MIN_CHANGE_M)
    return _Plan(t + back_m / v, x + back_m, out_m)


def _coming(
    sim: OvertakeView, vehicles: list[SimVehicle], occ: Occupancy, twin: int, front: float
) -> Iterator[tuple[float, float, int]]:
    """(distance from arc `front` of the oncoming lane, speed, who) of everyone ahead there
    or on the lanes leading onto it (within `SEARCH_SPEEDUP` × the limit of a maximum pass;
    a vehicle there only if routed onto it)."""
    for r, v, who, n in occ.get(twin, ()):
        if r + n <= front:
            yield front - r - n, v, who
    reach = sim.net.lanes[twin].speed_limit_mps * SEARCH_SPEEDUP * (MAX_PASS_S + ONCOMING_MARGIN_S)
    todo, seen = [(front, twin)], {twin}
    while todo:
        base, lane = todo.pop(0)
        for pred in sim.predecessors[lane]:
            end = sim.paths[pred].length
            for r, v, who, n in occ.get(pred, ()):
                onto = who < 0 or twin in vehicles[who].route[vehicles[who].index :]
                if onto and r + n <= end:
                    yield base + end - r - n, v, who
            if pred not in seen and base + end < reach:
                seen.add(pred)
                todo.append((base + end, pred))


def _oncoming_clear(
    sim: OvertakeView,
    vehicles: list[SimVehicle],
    occ: Occupancy,
    i: int,
    onc: Oncoming,
    plan: _Plan,
) -> bool:
    """Nobody alongside on the oncoming lane, nobody overtaking close behind there, and
    whoever comes towards it further than the pass's length plus what they cover meanwhile
    (at their speed, at least the lane's limit) in its time plus `ONCOMING_MARGIN_S`."""
    veh = vehicles[i]
    front, rear = onc.at(veh.s), onc.at(veh.s - veh.cls.length_m)
    for r, v, who, n in occ.get(onc.twin, ()):
        behind = r >= rear and r - rear < lc.EGO_BEHIND_M + lc.EGO_HEADWAY_S * max(-v, 0.0)
        if who != i and (behind or (front < r + n and r < rear)):
            return False
    limit = sim.net.lanes[onc.twin].speed_limit_mps
    within = plan.time_s + ONCOMING_MARGIN_S
    coming = _coming(sim, vehicles, occ, onc.twin, front)
    return all(d > plan.length_m + max(v, limit) * within for d, v, who in coming if who != i)


def _leftwards(path: LanePath, s: np.ndarray, xy: np.ndarray) -> np.ndarray:
    """How far points `xy` lie to the left of `path` at their arc lengths `s` (m)."""
    d, heading = xy - path.at(s)[:, :2], path.heading(s)
    return -d[:, 0] * np.sin(heading) + d[:, 1] * np.cos(heading)


def _robots_clear(sim: OvertakeView, veh: SimVehicle, onc: Oncoming, plan: _Plan, k: int) -> bool:
    """No robot's planned drive comes onto either lane from `lane_change.EGO_BEHIND_M` behind
    the vehicle to the pass's end while the pass lasts plus `ONCOMING_MARGIN_S`."""
    path = sim.paths[veh.route[veh.index]]
    line = path.line()
    steps = slice(k, k + math.ceil((plan.time_s + ONCOMING_MARGIN_S) / sim.dt) + 1)
    half_w = path.lane.width_m / 2
    for ego in sim.egos:
        xy = ego.xy[steps]
        if not len(xy):
            continue
        s = np.asarray(shapely.line_locate_point(line, shapely.points(xy)), float)
        side = _leftwards(path, s, xy)
        lon, lat = ego.half_length_m + EGO_CLEAR_M, ego.half_width_m + EGO_CLEAR_M
        lo, hi = veh.s - veh.cls.length_m - lc.EGO_BEHIND_M - lon, veh.s + plan.length_m + lon
        inside = (
            (s >= lo) & (s <= hi) & (side >= -half_w - lat) & (side <= onc.offset_m + half_w + lat)
        )
        if inside.any():
            return False
    return True


def _may_start(sim: OvertakeView, veh: SimVehicle, onc: Oncoming, k: int) -> bool:
    """Free to pull out now: no move under way nor just made, no junction held, moving, and
    its whole body on its lane past the oncoming lane's stop line."""
    twin, path = sim.net.lanes[onc.twin], sim.paths[onc.twin]
    rear = veh.s - veh.cls.length_m
    return (
        veh.change is None
        and veh.overtake is None
        and not veh.reserved
        and k - veh.changed_at >= round(lc.COOLDOWN_S / sim.dt)
        and veh.v >= lc.MIN_SPEED_MPS
        and rear >= lc.START_MARGIN_M
        and onc.at(rear) + lc.START_MARGIN_M <= _stop(twin, path)
    )


def consider(sim: OvertakeView, vehicles: list[SimVehicle], i: int, occ: Occupancy, k: int) -> bool:
    """Start vehicle `i`'s overtake now if the module's rules allow; True if it did. `occ`
    gains it on the oncoming lane."""
    veh = vehicles[i]
    lane_id = veh.route[veh.index]
    onc = sim.oncoming.get(lane_id)
    if onc is None or not _may_start(sim, veh, onc, k):
        return False
    v_des = sim.desired(veh.cls, veh.factor, lane_id)
    lead = _slower(sim, vehicles, occ, i, v_des)
    if lead is None:
        return False
    other = vehicles[lead.who]
    back = other.cls.min_gap_m + RETURN_HEADWAY_S * lead.v
    gain = lead.gap + other.cls.length_m + back + veh.cls.length_m
    plan = _plan(veh, v_des, gain, lead.v, sim.dt)
    lane, path = sim.net.lanes[lane_id], sim.paths[lane_id]
    if plan is None or veh.s + plan.length_m + lc.END_MARGIN_M > _stop(lane, path):
        return False
    beyond = _ahead(occ, lane_id, other.s, (i, lead.who))
    room = veh.cls.length_m + back + veh.cls.min_gap_m + veh.cls.headway_s * v_des
    if beyond is not None and beyond.gap < room:
        return False
    if not (
        _oncoming_clear(sim, vehicles, occ, i, onc, plan) and _robots_clear(sim, veh, onc, plan, k)
    ):
        return False
    _begin(veh, i, onc, lead.who, other, plan, occ, k)
    return True


def _slower(
    sim: OvertakeView, vehicles: list[SimVehicle], occ: Occupancy, i: int, v_des: float
) -> _Ahead | None:
    """The vehicle `i` would overtake, with its gap and the speed it is planned at (its
    desired speed, at least its speed): a traffic vehicle at most `REACH_M` ahead, moving at
    least `MIN_TARGET_MPS`, `SPEED_GAIN_MPS` slower than `v_des`, making no move itself."""
    veh = vehicles[i]
    lane_id = veh.route[veh.index]
    lead = _ahead(occ, lane_id, veh.s, (i,))
    if lead is None or lead.who < 0 or lead.gap > REACH_M or lead.v < MIN_TARGET_MPS:
        return None
    other = vehicles[lead.who]
    v = max(lead.v, sim.desired(other.cls, other.factor, lane_id))
    if v_des - v < SPEED_GAIN_MPS or other.change is not None or other.overtake is not None:
        return None
    return _Ahead(lead.gap, v, lead.who)


def _begin(
    veh: SimVehicle, i: int, onc: Oncoming, target: int, other: SimVehicle, plan: _Plan, occ, k
) -> None:
    """Set the overtake of `target` (`other`) going: the move out starts at the centre."""
    centre = veh.s - veh.cls.length_m / 2
    clear = (veh.cls.width_m + other.cls.width_m) / 2 + SIDE_MARGIN_M
    shift = Shift(centre, plan.out_m, 0.0, onc.offset_m)
    veh.overtake = Overtake(veh.route[veh.index], onc.twin, target, clear, shift)
    veh.changed_at = k
    occ.setdefault(onc.twin, []).append((onc.at(veh.s), -veh.v, i, veh.cls.length_m))


# ---------------------------------------------------------------------- under way
def _towards(
    sim: OvertakeView, veh: SimVehicle, i: int, occ: Occupancy
) -> list[tuple[float, float]]:
    """(gap, speed along its way) of whoever is ahead of the overtaking vehicle on the
    oncoming lane: coming towards it (speed < 0) or overtaking ahead of it."""
    ov = veh.overtake
    front = sim.oncoming[ov.lane].at(veh.s)
    return [
        (max(front - r - n, 0.0), -v)
        for r, v, who, n in occ.get(ov.twin, ())
        if who != i and r < front
    ]


def _holds(veh: SimVehicle) -> bool:
    """Whether the vehicle overtakes with its body over the line onto the oncoming lane."""
    ov = veh.overtake
    return ov is not None and ov.holds_oncoming(veh.s - veh.cls.length_m / 2, veh.cls.width_m / 2)


def leaders(
    sim: OvertakeView, veh: SimVehicle, i: int, occ: Occupancy
) -> list[tuple[float, float]]:
    """What an overtaking vehicle also stays behind: while it reaches onto the oncoming lane,
    those ahead there, and its lane's stop line once it should move back but cannot (no
    overtake runs into a junction)."""
    ov = veh.overtake
    if ov is None:
        return []
    out = _towards(sim, veh, i, occ) if _holds(veh) else []
    if not ov.back and _runs_out(sim, veh):
        out.append((_stop(sim.net.lanes[ov.lane], sim.paths[ov.lane]) - veh.s, 0.0))
    return out


def ignored(veh: SimVehicle, i: int) -> tuple[int, ...]:
    """The occupants a vehicle does not follow: itself, and the vehicle it overtakes once it
    is clear of its side."""
    ov = veh.overtake
    if ov is not None and ov.passing(veh.s - veh.cls.length_m / 2):
        return i, ov.target
    return (i,)


def speed_cap(veh: SimVehicle) -> float:
    """The most an overtaking vehicle may drive while it moves sideways (so its lateral
    acceleration stays bounded as it speeds up): the move's length over its time."""
    ov = veh.overtake
    if ov is None or ov.shift.over(veh.s - veh.cls.length_m / 2):
        return math.inf
    return ov.shift.length_m / lc.CHANGE_TIME_S


def occupy(sim: OvertakeView, veh: SimVehicle, i: int, occ: Occupancy) -> bool:
    """Put an overtaking vehicle reaching onto the oncoming lane there, at its speed towards
    that lane's traffic; True while it is wholly out there (it leaves its own lane to those
    behind)."""
    ov = veh.overtake
    if not _holds(veh):
        return False
    entry = (sim.oncoming[ov.lane].at(veh.s), -veh.v, i, veh.cls.length_m)
    occ.setdefault(ov.twin, []).append(entry)
    return ov.beside(veh.s - veh.cls.length_m / 2)


def _must_return(sim: OvertakeView, vehicles: list[SimVehicle], i: int, occ: Occupancy) -> bool:
    """Whether it has passed its target, its lane runs out, or someone ahead on the oncoming
    lane is nearer than `ABORT_GAP_M` plus what they close in `ABORT_S`."""
    veh = vehicles[i]
    ov = veh.overtake
    other = vehicles[ov.target]
    rear = veh.s - veh.cls.length_m
    passed = other.route[other.index] != ov.lane or other.s + _return_gap(other) <= rear
    meets = any(gap < ABORT_GAP_M + (veh.v - v) * ABORT_S for gap, v in _towards(sim, veh, i, occ))
    return passed or _runs_out(sim, veh) or meets


def _runs_out(sim: OvertakeView, veh: SimVehicle) -> bool:
    """Whether moving back now would end less than `lane_change.END_MARGIN_M` before the
    stop line."""
    lane, path = sim.net.lanes[veh.overtake.lane], sim.paths[veh.overtake.lane]
    return veh.s + _back_m(veh) + lc.END_MARGIN_M >= _stop(lane, path)


def _back_m(veh: SimVehicle) -> float:
    """The length of the move back, begun now."""
    return max(lc.CHANGE_TIME_S * veh.v, lc.MIN_CHANGE_M)


def _room(vehicles: list[SimVehicle], i: int, occ: Occupancy) -> bool:
    """Whether the own lane is free from the return gap behind the vehicle to its minimum
    gap ahead."""
    veh = vehicles[i]
    ov = veh.overtake
    lo = veh.s - veh.cls.length_m - _return_gap(vehicles[ov.target])
    hi = veh.s + veh.cls.min_gap_m
    return not any(who != i and r < hi and r + n > lo for r, _, who, n in occ.get(ov.lane, ()))


def update(sim: OvertakeView, vehicles: list[SimVehicle], i: int, occ: Occupancy, k: int) -> None:
    """Step vehicle `i`'s overtake: move back once out there, with room, when it must (see
    `_must_return`); end it once back on its lane."""
    veh = vehicles[i]
    ov = veh.overtake
    centre = veh.s - veh.cls.length_m / 2
    if ov.back:
        if ov.shift.over(centre):
            veh.overtake, veh.changed_at = None, k
        return
    if ov.beside(centre) and _room(vehicles, i, occ) and _must_return(sim, vehicles, i, occ):
        ov.shift = Shift(centre, _back_m(veh), ov.shift.to_m, 0.0)
        ov.back = True
