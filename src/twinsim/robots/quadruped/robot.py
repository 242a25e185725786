"""The quadruped robot kind: plans a ground tour, builds a Go1-class trunk on four legs that
stand on real foot–floor contacts, and trots along the tour with `(vx, vy, ω)` commands."""

from __future__ import annotations

import numpy as np

from twinsim.model.body import BodySpec
from twinsim.robots.base import Robot, StartFilter
from twinsim.robots.common.ground_tour import plan_ground_tour, tour_fields
from twinsim.robots.common.live_reference import BaseLimits
from twinsim.robots.quadruped.controller import SETPOINT_COLUMNS, QuadrupedController
from twinsim.robots.quadruped.legs import SHOULDER_POS, leg_ik
from twinsim.robots.quadruped.spec import (
    CAMERA_POS,
    FOOT_RADIUS_M,
    FOOTPRINT_RADIUS_M,
    MASS_KG,
    QuadrupedConfig,
    QuadrupedSpec,
    quadruped_body,
    shape,
)


def standing_qpos(spec: QuadrupedSpec) -> np.ndarray:
    """The trunk at its start pose and standing height, level, each foot on the floor below
    its thigh."""
    x, y, _ = spec.start_pos
    feet = SHOULDER_POS - np.array([0.0, 0.0, spec.stand_height_m - FOOT_RADIUS_M])
    legs = leg_ik(feet).ravel()
    return np.array([x, y, spec.stand_height_m, spec.start_yaw, 0.0, 0.0, *legs])


class Quadruped(Robot):
    """A Go1-class quadruped: a planned, collision-free ground tour walked at a trot on its
    four feet, an RGB-D camera at its face and an IMU in its trunk."""

    kind = "quadruped"
    config_model = QuadrupedConfig
    spec_model = QuadrupedSpec

    def resolve(
        self,
        cfg: QuadrupedConfig,
        world,
        duration_s: float,
        rng: np.random.Generator,
        start_allowed: StartFilter | None = None,
    ) -> QuadrupedSpec:
        plan = plan_ground_tour(
            cfg, shape(cfg.stand_height_m), world, duration_s, rng, start_allowed
        )
        return QuadrupedSpec(
            mass_kg=MASS_KG,
            stand_height_m=cfg.stand_height_m,
            gait_period_s=cfg.gait_period_s,
            duty_factor=cfg.duty_factor,
            swing_height_m=cfg.swing_height_m,
            foot_friction=cfg.foot_friction,
            footprint_radius_m=FOOTPRINT_RADIUS_M,
            **tour_fields(cfg, plan),
        )

    def default_sensors(self) -> dict[str, dict]:
        """An RGB-D camera at the face (Go1's front stereo camera), an IMU at the trunk's
        centre."""
        return {"cam0": {"kind": "camera", "pos": list(CAMERA_POS)}, "imu0": {"kind": "imu"}}

    def body(self, spec: QuadrupedSpec) -> BodySpec:
        return quadruped_body(spec)

    def initial_state(self, spec: QuadrupedSpec) -> tuple[np.ndarray, np.ndarray]:
        qpos = standing_qpos(spec)
        return qpos, np.zeros_like(qpos)

    def setpoint_columns(self, spec: QuadrupedSpec) -> tuple[str, ...]:
        return SETPOINT_COLUMNS

    def follower(self, spec: QuadrupedSpec, reference, physics_hz: int) -> QuadrupedController:
        return QuadrupedController(spec, reference, physics_hz)

    def base_limits(self, spec: QuadrupedSpec) -> BaseLimits:
        return BaseLimits.of(spec)
