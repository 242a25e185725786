"""The arm robot kind: a Panda-class arm on a pedestal beside a table of the world, scanning
its top with a wrist RGB-D camera along IK-planned viewpoints, on joint torque control."""

from __future__ import annotations

import math

import numpy as np

from twinsim.model.body import BodySpec
from twinsim.robots.arm.controller import SETPOINT_COLUMNS, ArmController
from twinsim.robots.arm.live import TOOL, ToolJoints
from twinsim.robots.arm.scan import plan_scan
from twinsim.robots.arm.spec import (
    DEFAULT_CAMERA_POS,
    JOINT_NAMES,
    PEDESTAL_HALF_M,
    ArmConfig,
    ArmSpec,
    arm_body,
)
from twinsim.robots.base import Robot, StartFilter
from twinsim.robots.common.commands import CommandMode, CommandSpace
from twinsim.robots.common.live_reference import LiveController


class Arm(Robot):
    """A fixed-base manipulator: its base placed beside a table, its camera's scan planned by
    IK at resolve time, followed by computed-torque joint control; it records the wrist's
    (mount link's) pose and the camera's."""

    kind = "arm"
    config_model = ArmConfig
    spec_model = ArmSpec

    def resolve(
        self,
        cfg: ArmConfig,
        world,
        duration_s: float,
        rng: np.random.Generator,
        start_allowed: StartFilter | None = None,
    ) -> ArmSpec:
        plan = plan_scan(cfg, world, duration_s, rng, start_allowed)
        return ArmSpec(
            model=cfg.model,
            start_pos=plan.base_pos,
            start_yaw=plan.base_yaw,
            pedestal_height_m=plan.pedestal_height_m,
            target_instance_id=plan.target.instance_id,
            target_point=plan.target_point,
            max_joint_speed_dps=cfg.max_joint_speed_dps,
            waypoint_t_s=tuple(float(t) for t in plan.t_s),
            joint_waypoints=tuple(tuple(float(v) for v in q) for q in plan.q),
            camera_waypoints=tuple(tuple(float(v) for v in c) for c in plan.camera),
        )

    def default_sensors(self) -> dict[str, dict]:
        """An RGB-D camera on the hand looking along its approach axis (near plane 5 cm: the
        table is close), an IMU at the flange."""
        return {
            "cam0": {"kind": "camera", "pos": list(DEFAULT_CAMERA_POS), "near_m": 0.05},
            "imu0": {"kind": "imu"},
        }

    def planned_footprint(self, spec: ArmSpec, t_s: np.ndarray) -> tuple[np.ndarray, float]:
        """The fixed base's x, y at all times and its pedestal's half diagonal (the arm reaches
        over the table it scans, away from the floor people walk on)."""
        xy, _ = super().planned_footprint(spec, t_s)
        return xy, math.sqrt(2.0) * PEDESTAL_HALF_M

    def body(self, spec: ArmSpec) -> BodySpec:
        return arm_body(spec)

    def joint_names(self, spec: ArmSpec) -> tuple[str, ...]:
        return JOINT_NAMES

    def initial_state(self, spec: ArmSpec) -> tuple[np.ndarray, np.ndarray]:
        q = np.array(spec.joint_waypoints[0], dtype=float)
        return q, np.zeros_like(q)

    def setpoint_columns(self, spec: ArmSpec) -> tuple[str, ...]:
        return SETPOINT_COLUMNS

    def controller(self, spec: ArmSpec, physics_hz: int) -> ArmController:
        return ArmController(spec)

    def command_space(self, spec: ArmSpec) -> CommandSpace:
        """Joint targets by joint name (rad), or a hand pose in the world reached by IK; both at
        the arm's joint speed limit."""
        mode = CommandMode(JOINT_NAMES, "joint angle targets (rad); unset = held")
        return CommandSpace({"joints": mode, "tool": TOOL})

    def live_controller(self, spec: ArmSpec, physics_hz: int) -> LiveController:
        """Computed-torque control of live joint (or IK'd hand pose) targets, from the scan's
        first pose."""
        q0, _ = self.initial_state(spec)
        joints = ToolJoints(spec, JOINT_NAMES, q0, np.deg2rad(spec.max_joint_speed_dps))
        return LiveController(ArmController(spec, joints), joints)
