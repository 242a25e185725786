"""The car: routes over the lane graph (shortest, drawn, unreachable goal as a one-line error),
the bicycle model's steady turn radius against the kinematic L / tan δ, a drive through a
small town that follows its route within decimetres at human-like acceleration and jerk,
traffic kept clear of its box, and replays byte-identical (teleport) and exact (control).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from conftest import digest_folder
from twinsim.config import load_config
from twinsim.errors import PlanningError
from twinsim.model.roads import LaneSpec, RoadNetworkSpec
from twinsim.replay import replay
from twinsim.robots.car.controller import CarController
from twinsim.robots.car.route import drawn_route, route_curve, shortest_route
from twinsim.robots.car.spec import CarConfig, CarSpec, car_spec
from twinsim.sequence import open_sequence, validate_sequence

#: a variant of a capability the everyday tier checks elsewhere (`make test` runs it)
pytestmark = pytest.mark.slow

DRIVE_S = 12.0


def _network() -> RoadNetworkSpec:
    """A loop of lanes 0 → 1 → 2 → 3 → 0 round a 40 m square, lane 1 bulging out to 56.6 m,
    a straight 40 m lane 4 from lane 0's end to lane 2's start, and an isolated lane 5."""
    corners = [(0.0, 0.0), (40.0, 0.0), (40.0, 40.0), (0.0, 40.0)]
    lanes = []
    for i in range(4):
        a, b = corners[i], corners[(i + 1) % 4]
        successors = (i + 1) % 4, *((4,) if i == 0 else ())
        bulge = ((60.0, 20.0, 0.0),) if i == 1 else ()
        lanes.append(
            LaneSpec(
                lane_id=i,
                road_id=i,
                centerline=((*a, 0.0), *bulge, (*b, 0.0)),
                width_m=3.5,
                speed_limit_mps=10.0,
                successors=successors,
            )
        )
    lanes.append(
        LaneSpec(
            lane_id=4,
            road_id=4,
            kind="connector",
            centerline=((40.0, 0.0, 0.0), (40.0, 40.0, 0.0)),
            width_m=3.5,
            speed_limit_mps=10.0,
            successors=(2,),
        )
    )
    lanes.append(
        LaneSpec(
            lane_id=5,
            road_id=5,
            centerline=((100.0, 0.0, 0.0), (140.0, 0.0, 0.0)),
            width_m=3.5,
            speed_limit_mps=10.0,
        )
    )
    return RoadNetworkSpec(preset="test", lanes=tuple(lanes))


def test_routes_over_the_lane_graph():
    net = _network()
    assert shortest_route(net, 0, 2) == [0, 4, 2]  # not round the bulge of lane 1
    assert shortest_route(net, 3, 1) == [3, 0, 1]
    with pytest.raises(PlanningError, match=r"goal_lane=5 is unreachable from start lane 0"):
        shortest_route(net, 0, 5)
    with pytest.raises(PlanningError, match=r"goal_lane=9: the town has lanes 0..5"):
        shortest_route(net, 0, 9)
    route = drawn_route(net, 0, 150.0, np.random.default_rng(0))
    assert sum(net.lanes[i].length_m() for i in route) >= 150.0
    assert all(b in net.lanes[a].successors for a, b in itertools.pairwise(route))
    curve = route_curve(net, [0, 4, 2])
    assert abs(curve.length_m - 114.0) < 4.0  # 120 m less the 4 m start and the rounded corners
    assert np.abs(np.diff(curve.s) - np.diff(curve.s).mean()).max() < 1e-9


def _spec(**over) -> CarSpec:
    cfg = CarConfig(**over)
    limits = {k: getattr(cfg, k) for k in ("max_speed_mps", "max_yaw_rate_dps", "max_accel_mps2")}
    return car_spec(cfg, start_pos=(0.0, 0.0, 0.35), start_yaw=0.0, **limits)


def test_a_steady_slow_turn_has_the_kinematic_radius():
    """At 2 m/s with the wheels at 15°, the bicycle model settles on R ≈ L / tan δ (10 %):
    integrate its forces on the planar state with a fixed steer."""
    spec = _spec()
    ctrl = CarController(spec, None, 200)
    delta = math.radians(15.0)
    ctrl.steer = lambda *args: delta  # hold the wheel; the tyres and drive stay the model's
    q, qd, dt = np.zeros(3), np.array([2.0, 0.0, 0.0]), 1.0 / 200
    m, iz = spec.mass_kg, spec.inertia[2]
    for _ in range(4000):
        yaw = q[2]
        v_body = math.cos(yaw) * qd[0] + math.sin(yaw) * qd[1]
        setpoint = np.array([q[0], q[1], yaw, 2.0, 0.0, 0.0])
        f = ctrl.effort(setpoint, q, qd)
        qd = qd + dt * np.array([f[0] / m, f[1] / m, f[2] / iz])
        q = q + dt * qd
        assert v_body > 0.0
    speed = math.hypot(qd[0], qd[1])
    radius = speed / abs(qd[2])
    kinematic = spec.wheelbase_m / math.tan(delta)
    assert abs(speed - 2.0) < 0.1
    assert abs(radius - kinematic) / kinematic < 0.1


@pytest.fixture(scope="module")
def drive(gl_backend, tmp_path_factory):
    from twinsim.sim import run

    cfg = load_config("town", ("robot.kind=car", "traffic.vehicles=8"), 3, DRIVE_S)
    return run(cfg, tmp_path_factory.mktemp("car") / "seq")


def test_the_car_drives_its_route_smoothly(drive):
    """Within 0.3 m RMS of the route, speeds and accelerations within the comfort limits, a
    smooth IMU (95 % of the jerk under 5 m/s³), gravity only on z (a flat town)."""
    assert validate_sequence(drive).ok
    seq = open_sequence(drive)
    spec = seq.scene.robots[0]
    assert spec.kind == "car" and len(spec.route_lanes) >= 2
    state = seq.table("robot_state")
    ex, ey = state["qpos_x"] - state["x_ref"], state["qpos_y"] - state["y_ref"]
    cross = -np.sin(state["yaw_ref"]) * ex + np.cos(state["yaw_ref"]) * ey
    assert np.sqrt(np.mean(cross**2)) < 0.3 and np.abs(cross).max() < 0.8
    speed = np.hypot(state["qvel_x"], state["qvel_y"])
    assert speed.max() <= spec.max_speed_mps + 0.3 and speed.max() > 2.0
    imu = seq.table("imu0")
    accel = np.stack([imu["accel_x"], imu["accel_y"]], axis=1)
    assert np.abs(accel[:, 0]).max() < 2.5 and np.abs(accel[:, 1]).max() < 3.0
    jerk = np.linalg.norm(np.diff(accel, axis=0), axis=1) / np.diff(imu["t_ns"] * 1e-9)
    assert np.percentile(jerk, 95) < 5.0
    assert np.allclose(imu["accel_z"], 9.81, atol=1e-6)


def test_traffic_keeps_clear_of_the_car_box(drive):
    """Every vehicle's footprint stays 0.5 m from the car's box as driven (its planned box is
    what traffic avoided; the drive tracks it within decimetres)."""
    import shapely

    from twinsim.actors.flying import FlyingMotion
    from twinsim.actors.traffic.vehicles import CLASSES

    seq = open_sequence(drive)
    spec = seq.scene.robots[0]
    vehicles = [f for f in seq.scene.flying_objects if f.name.startswith("vehicle_")]
    assert vehicles
    t_ns, T = seq.groundtruth()

    def box(x, y, yaw, half_l, half_w):
        c, s = math.cos(yaw), math.sin(yaw)
        pts = [(a * half_l, b * half_w) for a, b in ((1, 1), (-1, 1), (-1, -1), (1, -1))]
        return shapely.Polygon([(x + c * u - s * v, y + s * u + c * v) for u, v in pts])

    for k in range(0, len(t_ns), 12):
        yaw = math.atan2(T[k, 1, 0], T[k, 0, 0])
        car = box(T[k, 0, 3], T[k, 1, 3], yaw, spec.length_m / 2, spec.width_m / 2)
        for obj in vehicles:
            cls = CLASSES[obj.semantic_class]
            pos, rot, _ = FlyingMotion(obj).pose(float(t_ns[k]) * 1e-9)
            other = box(
                pos[0], pos[1], math.atan2(rot[1, 0], rot[0, 0]), cls.length_m / 2, cls.width_m / 2
            )
            assert car.distance(other) > 0.5, (obj.name, t_ns[k])


@pytest.mark.slow
def test_replays_of_a_drive(drive, tmp_path):
    twin = replay(drive, tmp_path / "twin", rerender=True)
    a, b = digest_folder(drive), digest_folder(twin)
    assert {p for p in a if a[p] != b.get(p)} == {"metadata.json"}
    controlled = replay(drive, tmp_path / "control", mode="control")
    _, T0 = open_sequence(drive).groundtruth()
    _, T1 = open_sequence(controlled).groundtruth()
    assert np.abs(T0[:, :3, 3] - T1[:, :3, 3]).max() < 1e-9


def test_the_carla_loc_preset_is_carla_locs_suite():
    """`--config carla_loc`: a car in a mid-sized city with traffic, stereo 1280×720 cameras
    0.4 m apart at 20 Hz, stereo event cameras, the 20 Hz HDL-32E, IMU 200 Hz, GNSS 10 Hz."""
    cfg = load_config("carla_loc")
    assert cfg.scene.generator == "town" and cfg.scene.preset == "mid_city"
    assert cfg.traffic.vehicles >= 100 and cfg.traffic.walkers >= 30
    robot = cfg.robots["robot"]
    assert robot.kind == "car"
    sensors = robot.sensors
    left, right = sensors["cam_left"], sensors["cam_right"]
    assert (left.width, left.height, left.rate_hz, left.hfov_deg) == (1280, 720, 20, 90.0)
    assert abs(left.pos[1] - right.pos[1]) == pytest.approx(0.4)
    assert {s.kind for s in sensors.values()} == {"camera", "event_camera", "lidar", "imu", "gnss"}
    assert sensors["lidar0"].model == "carla-hdl-32e" and sensors["lidar0"].rate_hz == 20
    assert sensors["imu0"].rate_hz == 200 and sensors["gnss0"].rate_hz == 10
    assert cfg.sim.physics_hz % 200 == 0


def test_the_car_waits_at_red_lights_and_crosses_stop_lines_on_green():
    """A drive through a signalised town: wherever the car's front crosses a stop line on its
    route, that light is not red; and it did stop for at least one red light."""
    from twinsim.robots.car.route import route_curve
    from twinsim.robots.car.stops import route_stops
    from twinsim.sim import build_scene

    overrides = ["robot.kind=car", "scene.preset=mid_city", "scene.block_size_m=[30.0,36.0]"]
    scene = build_scene(load_config("town", overrides, seed=4, duration_s=60.0))
    car, roads = scene.robot, scene.roads
    t = np.array([p.t_s for p in car.path])
    xy = np.array([p.pos[:2] for p in car.path])
    curve = route_curve(roads, car.route_lanes)
    lines = route_stops(roads, car.route_lanes, curve, 0.0)  # where the front is at the line
    assert len(lines) >= 3
    along = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(xy, axis=0), axis=1))])
    crossed, waited = 0, 0
    for s_line, light in lines:
        centre = s_line - car.length_m / 2
        if along[-1] < centre:
            break
        k = int(np.searchsorted(along, centre))
        assert light.state_at(float(t[k])) != "red", (s_line, t[k])
        crossed += 1
        before = (along > centre - 3.0) & (along <= centre)
        speed = np.diff(along) / np.diff(t)
        waited += bool((speed[before[1:]] < 1e-3).sum() * (t[1] - t[0]) >= 1.0)
    assert crossed >= 2 and waited >= 1
