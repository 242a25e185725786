"""The omni robot kind: plans a ground tour, builds GRADE's omnidirectional base, drives it by
PID on its x, y and yaw joints."""

from __future__ import annotations

import numpy as np

from twinsim.model.body import BodySpec
from twinsim.robots.base import Robot, StartFilter
from twinsim.robots.common.ground_tour import plan_ground_tour, tour_fields
from twinsim.robots.common.live_reference import BaseLimits
from twinsim.robots.omni.controller import SETPOINT_COLUMNS, OmniController
from twinsim.robots.omni.spec import (
    CAMERA_POS,
    CHASSIS_Z_M,
    FOOTPRINT_RADIUS_M,
    SHAPE,
    OmniConfig,
    OmniSpec,
    cylinder_inertia,
    omni_body,
    pose_to_qpos,
)


class Omni(Robot):
    """GRADE's omnidirectional ground robot: a planned, collision-free ground tour, PID on
    x, y and yaw, an RGB-D camera on its mast."""

    kind = "omni"
    config_model = OmniConfig
    spec_model = OmniSpec

    def resolve(
        self,
        cfg: OmniConfig,
        world,
        duration_s: float,
        rng: np.random.Generator,
        start_allowed: StartFilter | None = None,
    ) -> OmniSpec:
        plan = plan_ground_tour(cfg, SHAPE, world, duration_s, rng, start_allowed)
        bottom, top = CHASSIS_Z_M
        return OmniSpec(
            mass_kg=cfg.mass_kg,
            inertia=cylinder_inertia(cfg.mass_kg, FOOTPRINT_RADIUS_M, top - bottom),
            footprint_radius_m=FOOTPRINT_RADIUS_M,
            **tour_fields(cfg, plan),
        )

    def default_sensors(self) -> dict[str, dict]:
        """An RGB-D camera looking forward from the mast head, an IMU in the chassis."""
        return {"cam0": {"kind": "camera", "pos": list(CAMERA_POS)}, "imu0": {"kind": "imu"}}

    def body(self, spec: OmniSpec) -> BodySpec:
        return omni_body(spec)

    def initial_state(self, spec: OmniSpec) -> tuple[np.ndarray, np.ndarray]:
        return pose_to_qpos(spec.start_pos, spec.start_yaw), np.zeros(3)

    def setpoint_columns(self, spec: OmniSpec) -> tuple[str, ...]:
        return SETPOINT_COLUMNS

    def follower(self, spec: OmniSpec, reference, physics_hz: int) -> OmniController:
        return OmniController(spec, reference, physics_hz)

    def base_limits(self, spec: OmniSpec) -> BaseLimits:
        return BaseLimits.of(spec)
