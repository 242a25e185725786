"""The drone robot kind: plans a multi-room flight, builds GRADE's UAV, flies it by PID."""

from __future__ import annotations

import math

import numpy as np

from twinsim.model.body import BodySpec
from twinsim.robots.base import Robot, StartFilter
from twinsim.robots.common.live_reference import BaseLimits
from twinsim.robots.common.planner import plan_flight
from twinsim.robots.drone.controller import SETPOINT_COLUMNS, FlightController
from twinsim.robots.drone.spec import (
    HALF_SIZE,
    DroneConfig,
    DroneSpec,
    box_inertia,
    drone_body,
    pose_to_qpos,
)

LIVE_ACCEL_MPS2 = 0.5  # a live command's acceleration: the planned tours' (MotionLimits)


class Drone(Robot):
    """GRADE's drone: a planned, collision-free tour at flight height, PID on each joint."""

    kind = "drone"
    config_model = DroneConfig
    spec_model = DroneSpec

    def resolve(
        self,
        cfg: DroneConfig,
        world,
        duration_s: float,
        rng: np.random.Generator,
        start_allowed: StartFilter | None = None,
    ) -> DroneSpec:
        plan = plan_flight(
            rooms=world.rooms,
            doors=world.doors,
            objects=world.objects,
            wall_height=world.wall_height,
            robot_cfg=cfg,
            duration_s=duration_s,
            rng=rng,
            start_allowed=start_allowed,
        )
        return DroneSpec(
            mass_kg=cfg.mass_kg,
            inertia=box_inertia(cfg.mass_kg, HALF_SIZE),
            half_size=HALF_SIZE,
            start_pos=tuple(plan.start_pos),
            start_yaw=plan.start_yaw,
            horizontal=cfg.horizontal,
            max_speed_mps=cfg.max_speed_mps,
            max_roll_pitch_rate_dps=cfg.max_roll_pitch_rate_dps,
            max_yaw_rate_dps=cfg.max_yaw_rate_dps,
            max_roll_pitch_deg=cfg.max_roll_pitch_deg,
            path=plan.path,
            rooms_visited=tuple(plan.rooms_visited),
        )

    def default_sensors(self) -> dict[str, dict]:
        """GRADE's: an RGB-D camera looking forward from the frame's front, an IMU at its centre."""
        return {"cam0": {"kind": "camera"}, "imu0": {"kind": "imu"}}

    def planned_footprint(self, spec: DroneSpec, t_s: np.ndarray) -> tuple[np.ndarray, float]:
        """The planned path's x, y and the frame's half diagonal: the drone flies at the height
        of people's heads, so they keep clear of it as of a ground robot."""
        xy, _ = super().planned_footprint(spec, t_s)
        return xy, math.hypot(spec.half_size[0], spec.half_size[1])

    def body(self, spec: DroneSpec) -> BodySpec:
        return drone_body(spec)

    def initial_state(self, spec: DroneSpec) -> tuple[np.ndarray, np.ndarray]:
        return pose_to_qpos(spec.start_pos, spec.start_yaw), np.zeros(6)

    def setpoint_columns(self, spec: DroneSpec) -> tuple[str, ...]:
        return SETPOINT_COLUMNS

    def follower(self, spec: DroneSpec, reference, physics_hz: int) -> FlightController:
        return FlightController(spec, reference, physics_hz)

    def base_limits(self, spec: DroneSpec) -> BaseLimits:
        return BaseLimits.of(spec, LIVE_ACCEL_MPS2, vertical=True)
