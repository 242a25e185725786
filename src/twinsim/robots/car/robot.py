"""The car robot kind: plans a drive over the town's lanes (or a ground tour where the world
has no roads), times it with a comfortable, jerk-limited speed profile, and drives it through
a dynamic bicycle model."""

from __future__ import annotations

import numpy as np

from twinsim.errors import PlanningError
from twinsim.model.body import BodySpec
from twinsim.model.roads import RoadNetworkSpec
from twinsim.model.trajectory import MotionLimits
from twinsim.robots.base import Robot, StartFilter
from twinsim.robots.car.controller import SETPOINT_COLUMNS, CarController
from twinsim.robots.car.route import (
    START_S_M,
    drawn_route,
    route_curve,
    shortest_route,
    start_lanes,
)
from twinsim.robots.car.spec import (
    BODY_Z_M,
    CAMERA_POS,
    CarConfig,
    CarSpec,
    car_body,
    car_spec,
    shape_of,
)
from twinsim.robots.car.stops import route_stops, time_through_lights
from twinsim.robots.common.ground_tour import plan_ground_tour, tour_fields
from twinsim.robots.common.live_reference import BaseLimits
from twinsim.robots.omni.spec import pose_to_qpos

ROUTE_SLACK_M = 60.0  # a drawn route is this much longer than the run needs
STOP_LINE_GAP_M = 1.0  # the car's front stops this far before a stop line


def _pick_start(
    cfg: CarConfig, network: RoadNetworkSpec, rng, start_allowed: StartFilter | None
) -> int:
    """The start lane: the configured one, else a drawn driving lane whose start point
    `start_allowed` accepts."""
    if cfg.start_lane is not None:
        if cfg.start_lane >= len(network.lanes):
            raise PlanningError(
                f"robot.start_lane={cfg.start_lane}: the town has lanes 0..{len(network.lanes) - 1}"
            )
        return cfg.start_lane
    lanes = start_lanes(network)
    if not lanes:
        raise PlanningError("the town has no driving lane long enough to start a car on")
    order = [lanes[i] for i in rng.permutation(len(lanes))]
    for lane in order:
        point, _ = network.lanes[lane].point_at(START_S_M)
        if start_allowed is None or bool(start_allowed(point[None, :2])[0]):
            return lane
    raise PlanningError("no driving lane's start is clear of the people's walking traces")


def plan_route_drive(
    cfg: CarConfig,
    network: RoadNetworkSpec,
    duration_s: float,
    rng: np.random.Generator,
    start_allowed: StartFilter | None = None,
) -> tuple[tuple[int, ...], tuple]:
    """The lanes of the car's route and its timed path: from rest, within the speed,
    acceleration, lateral acceleration and yaw-rate limits, jerk-limited by the
    `smoothing_s` window, stopping at red lights, to rest at the goal or soon after
    `duration_s`."""
    start = _pick_start(cfg, network, rng, start_allowed)
    if cfg.goal_lane is not None:
        route = shortest_route(network, start, cfg.goal_lane)
    else:
        route = drawn_route(network, start, duration_s * cfg.max_speed_mps + ROUTE_SLACK_M, rng)
    curve = route_curve(network, route)
    limits = MotionLimits(
        max_speed_mps=cfg.max_speed_mps,
        max_yaw_rate_dps=cfg.max_yaw_rate_dps,
        max_accel_mps2=cfg.max_accel_mps2,
        max_lateral_accel_mps2=cfg.max_lateral_accel_mps2,
        smoothing_window_s=cfg.smoothing_s,
    )
    stop = None if cfg.goal_lane is not None else duration_s
    stops = route_stops(network, route, curve, cfg.length_m / 2 + STOP_LINE_GAP_M)
    return tuple(route), time_through_lights(curve, stops, limits, BODY_Z_M, stop)


class Car(Robot):
    """A car (Ackermann steering, dynamic bicycle model) driven along a planned route over
    the town's lanes by a smooth driver model; a stereo-ready camera on the roof."""

    kind = "car"
    config_model = CarConfig
    spec_model = CarSpec

    def resolve(
        self,
        cfg: CarConfig,
        world,
        duration_s: float,
        rng: np.random.Generator,
        start_allowed: StartFilter | None = None,
    ) -> CarSpec:
        network = getattr(world, "roads", None)
        if network is not None:
            route, path = plan_route_drive(cfg, network, duration_s, rng, start_allowed)
            fields = {
                "start_pos": tuple(path[0].pos),
                "start_yaw": path[0].yaw,
                "max_speed_mps": cfg.max_speed_mps,
                "max_yaw_rate_dps": cfg.max_yaw_rate_dps,
                "max_accel_mps2": cfg.max_accel_mps2,
                "path": path,
                "route_lanes": route,
            }
        else:
            fields = tour_fields(
                cfg, plan_ground_tour(cfg, shape_of(cfg), world, duration_s, rng, start_allowed)
            )
        return car_spec(cfg, **fields)

    def default_sensors(self) -> dict[str, dict]:
        """A forward camera on the roof and an IMU in the body."""
        return {"cam0": {"kind": "camera", "pos": list(CAMERA_POS)}, "imu0": {"kind": "imu"}}

    def body(self, spec: CarSpec) -> BodySpec:
        return car_body(spec)

    def initial_state(self, spec: CarSpec) -> tuple[np.ndarray, np.ndarray]:
        return pose_to_qpos(spec.start_pos, spec.start_yaw), np.zeros(3)

    def setpoint_columns(self, spec: CarSpec) -> tuple[str, ...]:
        return SETPOINT_COLUMNS

    def follower(self, spec: CarSpec, reference, physics_hz: int) -> CarController:
        return CarController(spec, reference, physics_hz)

    def base_limits(self, spec: CarSpec) -> BaseLimits:
        return BaseLimits.of(spec, holonomic=False)

    def planned_extent(self, spec: CarSpec) -> tuple[float, float]:
        """Half the car's length and width: traffic keeps clear of its box."""
        return 0.5 * spec.length_m, 0.5 * spec.width_m
