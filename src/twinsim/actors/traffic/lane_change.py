"""Lane changes and overtaking on roads with several lanes each way: MOBIL (Kesting, Treiber &
Helbing 2007, "General lane-changing model MOBIL for car-following models") on the traffic's
IDM, and the smooth sideways move that carries a vehicle across.

A vehicle on a driving lane with a neighbour in its direction weighs the change every
`DECIDE_EVERY_S`: its own IDM acceleration behind the leader there against here, plus
`POLITENESS` × what the change gains or costs the follower it leaves and the one it pulls in
front of (the one it leaves counts only when it moves right, out of the way: a slow vehicle
never pulls left to let one by). It changes when that exceeds `THRESHOLD_MPS2`, less
`KEEP_RIGHT_MPS2` towards the right and more towards the left (traffic keeps right and
overtakes on the left, MOBIL's asymmetric rules), and only if
it is safe: nobody alongside, the new follower brakes no harder than `SAFE_DECEL_MPS2` (the
ego, which never brakes for traffic, must be `EGO_BEHIND_M` plus `EGO_HEADWAY_S` of its speed
behind), the whole body is on the lane and the move ends `END_MARGIN_M` before the stop line.
It holds no reservation then, and its route is drawn anew from the new lane on.

The move takes `CHANGE_TIME_S` at the speed it starts with (at least `MIN_CHANGE_M`): the
centre's offset from the new lane's centre line falls from the old lane's offset to 0 as a
quintic smoothstep of the distance driven (zero sideways speed and acceleration at both ends,
at most 1.3 m/s² across a 3.5 m lane), so position, heading and lateral acceleration stay
smooth even if the vehicle slows down in between. Until it is over the vehicle occupies both lanes:
followers in either stay behind it and it stays behind leaders in either.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from twinsim.actors.traffic.lane_paths import LanePath, random_route
from twinsim.actors.traffic.state import LaneChange, Occupancy, SimVehicle
from twinsim.model.roads import RoadNetworkSpec

DECIDE_EVERY_S = 1.0
POLITENESS = 0.3
THRESHOLD_MPS2 = 0.2
KEEP_RIGHT_MPS2 = 0.3
SAFE_DECEL_MPS2 = 4.0
EGO_BEHIND_M = 10.0
EGO_HEADWAY_S = 2.0
CHANGE_TIME_S = 4.0  # a typical lane change's duration (drivers take 3 to 6 s)
MIN_CHANGE_M = 12.0
START_MARGIN_M = 3.0  # the rear at least this far into the lane
END_MARGIN_M = 8.0  # the move over this far before the stop line (or the lane's end)
MIN_SPEED_MPS = 3.0
COOLDOWN_S = 6.0  # between two changes of one vehicle


class TrafficView(Protocol):
    """What a lane change reads of the traffic simulation."""

    net: RoadNetworkSpec
    paths: Sequence[LanePath]
    predecessors: dict[int, tuple[int, ...]]
    rng: np.random.Generator
    t: np.ndarray
    dt: float

    def idm(self, veh: SimVehicle, gap: float, v_lead: float) -> float: ...


@dataclass(frozen=True)
class _Near:
    gap: float  # bumper to bumper (m)
    v: float
    who: int


def _around(
    sim: TrafficView, occ: Occupancy, lane: int, front: float, length: float, me: int
) -> tuple[_Near | None, _Near | None, bool]:
    """The nearest occupant ahead on `lane`, the nearest behind (on it or the lanes leading
    into it) of a body from `front − length` to `front`, and whether anyone is alongside."""
    rear, leader, follower = front - length, None, None
    for r, v, who, n in occ.get(lane, ()):
        if who == me:
            continue
        if r < front and r + n > rear:
            return None, None, True
        if r >= front and (leader is None or r - front < leader.gap):
            leader = _Near(r - front, v, who)
        if r + n <= rear and (follower is None or rear - r - n < follower.gap):
            follower = _Near(rear - r - n, v, who)
    if follower is None:
        for pred in sim.predecessors[lane]:
            back = sim.paths[pred].length
            for r, v, who, n in occ.get(pred, ()):
                gap = rear + back - r - n
                if who != me and gap >= 0.0 and (follower is None or gap < follower.gap):
                    follower = _Near(gap, v, who)
    return leader, follower, False


def _accel(sim: TrafficView, veh: SimVehicle, ahead: _Near | None) -> float:
    return sim.idm(veh, math.inf, 0.0) if ahead is None else sim.idm(veh, ahead.gap, ahead.v)


def _follower_gain(
    sim: TrafficView, vehicles: list[SimVehicle], fol: _Near | None, now: _Near | None, then
) -> float | None:
    """How much a follower's acceleration changes from leader `now` to leader `then` (None:
    unsafe, 0 for none or an ego)."""
    if fol is None or fol.who < 0:
        return 0.0
    f = vehicles[fol.who]
    after = _accel(sim, f, then)
    if after < -SAFE_DECEL_MPS2:
        return None
    return after - _accel(sim, f, now)


def consider(sim: TrafficView, vehicles: list[SimVehicle], i: int, occ: Occupancy, k: int) -> bool:
    """Start vehicle `i`'s lane change now if MOBIL says so (see the module); True if it did.
    `occ` gains the vehicle on its new lane."""
    veh = vehicles[i]
    lane_id, cls = veh.route[veh.index], veh.cls
    lane, path = sim.net.lanes[lane_id], sim.paths[lane_id]
    cooldown = round(COOLDOWN_S / sim.dt)
    if (
        veh.change is not None
        or veh.overtake is not None
        or veh.reserved
        or k - veh.changed_at < cooldown
        or veh.v < MIN_SPEED_MPS
        or lane.kind != "driving"
        or veh.s - cls.length_m < START_MARGIN_M
    ):
        return False
    move = max(veh.v * CHANGE_TIME_S, MIN_CHANGE_M)
    stop = path.length if lane.stop_line_s_m is None else lane.stop_line_s_m
    if veh.s + move + END_MARGIN_M > stop:
        return False
    here, behind, _ = _around(sim, occ, lane_id, veh.s, cls.length_m, i)
    a_here = _accel(sim, veh, here)
    best, best_gain = None, THRESHOLD_MPS2
    sides = ((lane.left_neighbor, -KEEP_RIGHT_MPS2), (lane.right_neighbor, KEEP_RIGHT_MPS2))
    for target, bias in sides:
        if target is None or sim.net.lanes[target].kind != "driving":
            continue
        s_there = veh.s * sim.paths[target].length / path.length
        there, fol, alongside = _around(sim, occ, target, s_there, cls.length_m, i)
        if alongside or (there is not None and there.gap < cls.min_gap_m):
            continue
        a_there = _accel(sim, veh, there)
        if a_there < -SAFE_DECEL_MPS2:
            continue
        if fol is not None and fol.who < 0 and fol.gap < EGO_BEHIND_M + EGO_HEADWAY_S * fol.v:
            continue
        own = _Near(fol.gap, veh.v, i) if fol is not None else None
        new_gain = _follower_gain(sim, vehicles, fol, _joined(fol, cls.length_m, there), own)
        if new_gain is None:
            continue
        old_gain = 0.0
        if bias > 0.0:  # making way counts only to the right: nobody slow moves left for it
            me = _Near(behind.gap, veh.v, i) if behind is not None else None
            ahead = _joined(behind, cls.length_m, here)
            old_gain = _follower_gain(sim, vehicles, behind, me, ahead) or 0.0
        gain = a_there - a_here + POLITENESS * (new_gain + old_gain) + bias
        if gain > best_gain:
            best, best_gain = (target, s_there), gain
    if best is None:
        return False
    _begin(sim, veh, lane_id, *best, move, k)
    occ.setdefault(best[0], []).append((best[1] - cls.length_m, veh.v, i, cls.length_m))
    return True


def _joined(fol: _Near | None, length: float, ahead: _Near | None) -> _Near | None:
    """The follower's leader without the vehicle between them: the one ahead of it."""
    if fol is None or ahead is None:
        return None
    return _Near(fol.gap + length + ahead.gap, ahead.v, ahead.who)


def _begin(
    sim: TrafficView, veh: SimVehicle, old: int, new: int, s_new: float, move: float, k: int
):
    """Put the vehicle on lane `new` at front arc `s_new`, moving across from `old`."""
    half = veh.cls.length_m / 2
    centre_old = sim.paths[old].at(veh.s - half)
    centre_new = sim.paths[new].at(s_new - half)
    heading = float(sim.paths[new].heading(s_new - half))
    normal = np.array([-math.sin(heading), math.cos(heading)])
    offset = float((centre_old - centre_new)[:2] @ normal)
    veh.change = LaneChange(old, offset, s_new - half, move)
    veh.changed_at = k
    remaining = max(veh.cls.top_speed_mps, 30.0) * veh.factor * (sim.t[-1] - sim.t[k]) + 200.0
    veh.route = random_route(sim.net, new, remaining, sim.rng, sim.paths)
    veh.starts = np.concatenate([[0.0], np.cumsum([sim.paths[r].length for r in veh.route])])
    veh.starts = veh.starts.tolist()
    veh.index, veh.s = 0, s_new
