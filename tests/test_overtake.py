"""Overtaking through the oncoming lane on a road with one lane each way: the lane's oncoming
twin is found from the geometry; a car passes a bicycle and returns ahead of it, smoothly and
never near it; it waits while oncoming traffic or a robot comes towards it; the same set-up
gives the same bytes; in a town with long blocks vehicles overtake and still keep apart.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from conftest import path_smoothness
from twinsim.actors.traffic import overtake
from twinsim.actors.traffic.clear import EgoTrack, _footprint
from twinsim.actors.traffic.lane_paths import lane_paths, lanes_along
from twinsim.actors.traffic.simulation import DT_S, TrafficSim, simulate_traffic
from twinsim.actors.traffic.state import SimVehicle
from twinsim.actors.traffic.vehicles import CLASSES
from twinsim.model.roads import LaneSpec, RoadNetworkSpec
from twinsim.scene.worlds.town.generator import TownConfig, generate_town

LANE_W = 3.5
LENGTH = 400.0
EAST, WEST = 0, 1  # lane 0 runs along +x on the right (y < 0), lane 1 back along −x


def _road() -> RoadNetworkSpec:
    """A straight road along x with one lane each way and nothing linking the two."""
    ends = {EAST: ((0.0, -LANE_W / 2), (LENGTH, -LANE_W / 2)), WEST: ((LENGTH, LANE_W / 2),)}
    ends[WEST] += ((0.0, LANE_W / 2),)
    lanes = [
        LaneSpec(
            lane_id=i,
            road_id=0,
            centerline=tuple((x, y, 0.0) for x, y in ends[i]),
            width_m=LANE_W,
            speed_limit_mps=13.9,
        )
        for i in (EAST, WEST)
    ]
    return RoadNetworkSpec(preset="test", lanes=tuple(lanes))


def _vehicle(sim: TrafficSim, name: str, lane: int, s: float) -> SimVehicle:
    cls = CLASSES[name]
    v0 = sim.desired(cls, 1.0, lane)
    return SimVehicle(cls, [lane], [0.0, sim.paths[lane].length], 1.0, 0, s, v0)


def _run(oncoming_s=(), egos=(), total_s: float = 30.0) -> np.ndarray:
    """Poses of a bicycle 40 m ahead of a car going east, then of cars going west from arc
    lengths `oncoming_s` of their lane."""
    sim = TrafficSim(_road(), np.random.default_rng(0), total_s, egos, None)
    vehicles = [_vehicle(sim, "bicycle", EAST, 60.0), _vehicle(sim, "car", EAST, 20.0)]
    vehicles += [_vehicle(sim, "car", WEST, s) for s in oncoming_s]
    return sim.run(vehicles)


def _out(car: np.ndarray) -> np.ndarray:
    """The steps at which the car is off its lane towards the oncoming one."""
    return np.flatnonzero(car[:, 1] > -LANE_W / 2 + 0.05)


def _min_distance(poses: np.ndarray, i: int) -> float:
    """The least distance between vehicle `i`'s oriented box and any other's over the run."""
    names = ["bicycle", "car", *["car"] * (len(poses) - 2)]
    boxes = [[CLASSES[n].length_m / 2, CLASSES[n].width_m / 2] for n in names]
    return min(
        _footprint(poses[i, k], *boxes[i]).distance(_footprint(poses[j, k], *boxes[j]))
        for k in range(poses.shape[1])
        for j in range(len(poses))
        if j != i
    )


def test_the_oncoming_twin_is_the_same_roads_lane_running_the_other_way():
    net = generate_town(TownConfig(preset="small_town", texture_size=16), np.random.default_rng(2))
    roads = net.roads
    paths = lane_paths(roads)
    twins = overtake.oncoming_lanes(roads, paths)
    assert len(twins) >= 20
    for lane, onc in twins.items():
        assert twins[onc.twin].twin == lane
        assert roads.lanes[onc.twin].road_id == roads.lanes[lane].road_id
        assert onc.offset_m == pytest.approx(roads.lanes[lane].width_m, abs=0.05)
        mid = paths[lane].length / 2
        turn = float(paths[lane].heading(mid) - paths[onc.twin].heading(onc.at(mid)))
        assert math.cos(turn) < -0.99
    straight = overtake.oncoming_lanes(_road(), lane_paths(_road()))
    assert straight[EAST].twin == WEST and straight[EAST].at(100.0) == pytest.approx(300.0)


def test_a_car_overtakes_a_bicycle_through_the_oncoming_lane_and_returns_ahead_of_it():
    poses = _run()
    bike, car = poses
    assert np.allclose(bike[:, 1], -LANE_W / 2)  # the bicycle keeps its lane
    out = _out(car)
    assert len(out), "the car never overtook"
    assert car[:, 1].max() == pytest.approx(LANE_W / 2, abs=0.05)  # on the oncoming lane
    turn = np.flatnonzero(car[:, 1] > LANE_W / 2 - 1e-6)[-1]  # where it starts moving back
    assert (np.diff(car[turn:, 1]) <= 1e-9).all()  # in one move
    assert car[-1, 1] == pytest.approx(-LANE_W / 2, abs=1e-6)  # back on its lane
    car_rear = car[turn, 0] - CLASSES["car"].length_m / 2
    assert car_rear > bike[turn, 0] + CLASSES["bicycle"].length_m / 2 + 5.0  # ahead, a gap
    assert car[-1, 0] > bike[-1, 0] + 10.0
    assert _min_distance(poses, 1) > 0.5


def test_the_overtake_is_smooth():
    """The car's heading follows its path within 1°, and its lateral acceleration stays under
    the comfortable 1.5 m/s²."""
    car = _run()[1]
    heading_error, lateral = path_smoothness(car, DT_S)
    assert heading_error < math.radians(1.0)
    assert len(_out(car)) and lateral < 1.5


def _passed(car: np.ndarray, other_x: np.ndarray) -> int:
    """The first step at which whatever comes west along `other_x` is behind the car."""
    behind = np.flatnonzero(other_x < car[:, 0] - 5.0)
    return int(behind[0]) if len(behind) else len(car)


def test_it_waits_while_oncoming_traffic_is_close():
    """Two cars come west 40 m apart: the car stays behind the bicycle until both are past,
    then overtakes, keeping clear of all."""
    poses = _run(oncoming_s=(100.0, 140.0), total_s=40.0)
    car = poses[1]
    out = _out(car)
    assert len(out), "the car never overtook"
    assert out[0] > _passed(car, poses[2, :, 0]) and out[0] > _passed(car, poses[3, :, 0])
    assert _min_distance(poses, 1) > 0.5


def test_it_does_not_pull_out_in_front_of_a_robot_coming_the_other_way():
    """A robot drives the oncoming lane west at 12 m/s: the car pulls out only once it is
    past, and never comes within the robots' clearance of it."""
    net = _road()
    t = np.arange(0.0, 40.0 + DT_S / 2, DT_S)
    xy = np.stack([320.0 - 12.0 * t, np.full_like(t, LANE_W / 2)], axis=1)
    yaw = np.full_like(t, math.pi)
    ego = EgoTrack(xy, yaw, lanes_along(net, lane_paths(net), xy, yaw), 2.3, 0.95)
    car = _run(egos=[ego], total_s=40.0)[1]
    out = _out(car)
    assert len(out), "the car never overtook"
    assert out[0] > _passed(car, xy[:, 0])
    box = CLASSES["car"].length_m / 2, CLASSES["car"].width_m / 2
    gaps = [
        _footprint(car[k], *box).distance(_footprint(np.r_[xy[k], 0.0, yaw[k]], 2.3, 0.95))
        for k in range(len(t))
    ]
    assert min(gaps) > 1.0


def test_overtaking_is_deterministic():
    assert _run(oncoming_s=(100.0,)).tobytes() == _run(oncoming_s=(100.0,)).tobytes()


def test_town_traffic_overtakes_on_long_blocks_and_keeps_apart(monkeypatch):
    """A small town with long blocks and many bicycles: vehicles overtake through the
    oncoming lane, always onto their lane's twin, and the clearance check takes out no more
    than 2 of 60."""
    begun = []
    start = overtake._begin

    def counted(veh, i, onc, *args):
        begun.append((veh.route[veh.index], onc.twin))
        return start(veh, i, onc, *args)

    monkeypatch.setattr(overtake, "_begin", counted)
    cfg = TownConfig(preset="small_town", block_size_m=(200.0, 300.0), texture_size=16)
    net = generate_town(cfg, np.random.default_rng(2)).roads
    twins = overtake.oncoming_lanes(net, lane_paths(net))
    weights = {"car": 0.5, "van": 0.1, "truck": 0.1, "bus": 0.1, "bicycle": 0.2}
    result = simulate_traffic(net, 60, (0.8, 1.2), weights, 60.0, np.random.default_rng(4))
    assert len(begun) >= 2
    assert all(twins[lane].twin == twin for lane, twin in begun)
    assert result.placed == 60 and result.removed <= 2
