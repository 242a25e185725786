"""The diff_drive robot kind: plans a ground tour, builds a Kobuki-class differential drive on
real wheel–floor contacts, follows the tour with (v, ω) commands through its wheel motors."""

from __future__ import annotations

import numpy as np

from twinsim.model.body import BodySpec
from twinsim.robots.base import Robot, StartFilter
from twinsim.robots.common.ground_tour import plan_ground_tour, tour_fields
from twinsim.robots.common.live_reference import BaseLimits
from twinsim.robots.diff_drive.controller import SETPOINT_COLUMNS, DiffDriveController
from twinsim.robots.diff_drive.spec import (
    FOOTPRINT_RADIUS_M,
    DiffDriveConfig,
    DiffDriveSpec,
    camera_pos,
    chassis_inertia,
    diff_drive_body,
    initial_qpos,
    shape,
)

DEFAULT_WHEEL_RADIUS_M = DiffDriveConfig.model_fields["wheel_radius_m"].default


class DiffDrive(Robot):
    """A differential-drive wheeled robot: a planned, collision-free ground tour followed on
    its two driven wheels and two casters, an RGB-D camera, an IMU and wheel odometry."""

    kind = "diff_drive"
    config_model = DiffDriveConfig
    spec_model = DiffDriveSpec

    def resolve(
        self,
        cfg: DiffDriveConfig,
        world,
        duration_s: float,
        rng: np.random.Generator,
        start_allowed: StartFilter | None = None,
    ) -> DiffDriveSpec:
        plan = plan_ground_tour(
            cfg, shape(cfg.wheel_radius_m), world, duration_s, rng, start_allowed
        )
        return DiffDriveSpec(
            mass_kg=cfg.mass_kg,
            inertia=chassis_inertia(cfg.mass_kg),
            wheel_radius_m=cfg.wheel_radius_m,
            track_m=cfg.track_m,
            max_wheel_torque_nm=cfg.max_wheel_torque_nm,
            wheel_friction=cfg.wheel_friction,
            caster_friction=cfg.caster_friction,
            footprint_radius_m=FOOTPRINT_RADIUS_M,
            **tour_fields(cfg, plan),
        )

    def default_sensors(self) -> dict[str, dict]:
        """An RGB-D camera on the mast, an IMU at the axle, wheel odometry from the encoders."""
        return {
            "cam0": {"kind": "camera", "pos": list(camera_pos(DEFAULT_WHEEL_RADIUS_M))},
            "imu0": {"kind": "imu"},
            "wheel_odom": {"kind": "wheel_odometry"},
        }

    def body(self, spec: DiffDriveSpec) -> BodySpec:
        return diff_drive_body(spec)

    def initial_state(self, spec: DiffDriveSpec) -> tuple[np.ndarray, np.ndarray]:
        qpos = initial_qpos(spec)
        return qpos, np.zeros_like(qpos)

    def setpoint_columns(self, spec: DiffDriveSpec) -> tuple[str, ...]:
        return SETPOINT_COLUMNS

    def follower(self, spec: DiffDriveSpec, reference, physics_hz: int) -> DiffDriveController:
        return DiffDriveController(spec, reference, physics_hz)

    def base_limits(self, spec: DiffDriveSpec) -> BaseLimits:
        return BaseLimits.of(spec, holonomic=False)
