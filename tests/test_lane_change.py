"""Lane changes and overtaking (MOBIL on IDM): on a straight two-lane road a car overtakes a
slow bicycle on the left and returns to the right lane, smoothly (heading along its motion,
bounded lateral acceleration) and never touching it; it does not pull out in front of the ego
coming up fast on the left; in a generated mid_city vehicles change lanes and still keep apart.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from conftest import path_smoothness
from twinsim.actors.traffic import lane_change
from twinsim.actors.traffic.clear import EgoTrack, _footprint
from twinsim.actors.traffic.lane_paths import lane_paths, lanes_along
from twinsim.actors.traffic.simulation import DT_S, TrafficSim, simulate_traffic
from twinsim.actors.traffic.state import SimVehicle
from twinsim.actors.traffic.vehicles import CLASSES
from twinsim.model.roads import LaneSpec, RoadNetworkSpec
from twinsim.scene.worlds.town.generator import TownConfig, generate_town

LANE_W = 3.5
LENGTH = 400.0


def _two_lanes() -> RoadNetworkSpec:
    """A straight road along +x with two lanes in its direction: 0 on the left, 1 on the
    right (traffic keeps right)."""
    lanes = [
        LaneSpec(
            lane_id=i,
            road_id=0,
            centerline=((0.0, y, 0.0), (LENGTH, y, 0.0)),
            width_m=LANE_W,
            speed_limit_mps=13.9,
            left_neighbor=None if i == 0 else 0,
            right_neighbor=1 if i == 0 else None,
        )
        for i, y in ((0, LANE_W / 2), (1, -LANE_W / 2))
    ]
    return RoadNetworkSpec(preset="test", lanes=tuple(lanes))


def _vehicle(sim: TrafficSim, name: str, lane: int, s: float, factor: float) -> SimVehicle:
    cls = CLASSES[name]
    v0 = sim.desired(cls, factor, lane)
    return SimVehicle(cls, [lane], [0.0, sim.paths[lane].length], factor, 0, s, v0)


def _overtake(egos=()) -> tuple[np.ndarray, TrafficSim]:
    net = _two_lanes()
    sim = TrafficSim(net, np.random.default_rng(0), 24.0, egos, None)
    vehicles = [_vehicle(sim, "bicycle", 1, 60.0, 1.0), _vehicle(sim, "car", 1, 20.0, 1.0)]
    return sim.run(vehicles), sim


def test_a_car_overtakes_a_bicycle_on_the_left_and_keeps_right_again():
    poses, _ = _overtake()
    bike, car = poses
    assert np.allclose(bike[:, 1], -LANE_W / 2)  # the bicycle keeps its lane
    assert car[0, 0] < bike[0, 0] and car[-1, 0] > bike[-1, 0] + 10.0  # it passed
    assert car[:, 1].max() == pytest.approx(LANE_W / 2, abs=0.05)  # on the left lane
    assert car[-1, 1] == pytest.approx(-LANE_W / 2, abs=1e-6)  # back on the right
    for k in range(poses.shape[1]):
        a = _footprint(bike[k], CLASSES["bicycle"].length_m / 2, CLASSES["bicycle"].width_m / 2)
        b = _footprint(car[k], CLASSES["car"].length_m / 2, CLASSES["car"].width_m / 2)
        assert a.distance(b) > 0.5, f"t={k * DT_S:.1f}"


def test_a_lane_change_is_smooth():
    """The car's heading follows its path within 1°, and its lateral acceleration stays under
    the comfortable 1.5 m/s² (no jump sideways)."""
    car = _overtake()[0][1]
    heading_error, lateral = path_smoothness(car, DT_S)
    assert heading_error < math.radians(1.0)
    assert np.abs(car[:, 1]).max() > 0.0 and lateral < 1.5


def test_no_car_pulls_out_in_front_of_the_fast_ego():
    """The ego drives the left lane at 20 m/s from behind; the car waits behind the bicycle
    until the ego is past, then overtakes."""
    net = _two_lanes()
    paths = lane_paths(net)
    t = np.arange(0.0, 24.0 + DT_S / 2, DT_S)
    x = 5.0 + 20.0 * t
    xy = np.stack([x, np.full_like(x, LANE_W / 2)], axis=1)
    yaw = np.zeros_like(x)
    ego = EgoTrack(xy, yaw, lanes_along(net, paths, xy, yaw), 2.3, 0.95)
    poses, _ = _overtake([ego])
    car = poses[1]
    on_left = np.flatnonzero(car[:, 1] > -LANE_W / 2 + 0.1)
    assert len(on_left), "the car never overtook"
    first = on_left[0]
    assert car[first, 0] < xy[first, 0] - 10.0  # it pulled out only behind the ego
    n = min(len(car), len(xy))
    gap = np.abs(car[:n, 0] - xy[:n, 0])
    assert (gap[on_left[on_left < n]] > 4.5).all()


def test_city_traffic_changes_lanes_and_keeps_apart(monkeypatch):
    """A mid_city's two lanes each way: vehicles change lanes (dozens in a minute) and the
    clearance check takes out no more than 3 % of them."""
    begun = []
    start = lane_change._begin

    def counted(*args):
        begun.append(args[2:4])
        return start(*args)

    monkeypatch.setattr(lane_change, "_begin", counted)
    cfg = TownConfig(preset="mid_city", blocks_x=3, blocks_y=2, texture_size=16)
    net = generate_town(cfg, np.random.default_rng(2)).roads
    weights = {"car": 0.6, "van": 0.15, "truck": 0.1, "bus": 0.1, "bicycle": 0.05}
    result = simulate_traffic(net, 60, (0.8, 1.2), weights, 60.0, np.random.default_rng(4))
    assert len(begun) >= 20
    for old, new in begun:
        assert new in (net.lanes[old].left_neighbor, net.lanes[old].right_neighbor)
    assert result.placed == 60 and result.removed <= 2
