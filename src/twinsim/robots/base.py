"""The robot interface: what a robot kind provides so the loop, recorder and replay need no
special cases.

A kind is one module with a `Robot` subclass and one line in `twinsim.robots.builtin` (or a
`ROBOTS.register` call anywhere). It owns its config model, its resolved spec (what
`scene.json` keeps of it), its body as data (built by `twinsim.engine`), the names of its
joint coordinates, its motion source and how a control-mode replay restarts that source.

The robot's joint coordinates are its slice of MuJoCo's qpos/qvel; every physics step the
loop asks the controller for a set-point (logged) and the actuator controls it gives.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar, Protocol

import numpy as np
from pydantic import Field, field_validator

from twinsim.configmodel import ConfigModel
from twinsim.model.body import BodySpec
from twinsim.model.scene import RobotSpec
from twinsim.model.trajectory import Trajectory, planned_reference
from twinsim.registries import SENSOR_CONFIG
from twinsim.robots.common.commands import (
    PLANAR_VELOCITY,
    PLANAR_WAYPOINT,
    SPATIAL_VELOCITY,
    SPATIAL_WAYPOINT,
    UNICYCLE_VELOCITY,
    CommandError,
    CommandSpace,
)
from twinsim.robots.common.live_reference import BaseLimits, LiveController, LiveReference

#: the streams every robot records besides its sensors'
ROBOT_STREAMS = ("groundtruth_body", "odometry", "joint_states", "robot_state", "contacts")
SENSOR_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")
#: (N, 2) world x, y → (N,) bool: where a robot may start (e.g. clear of people's traces)
StartFilter = Callable[[np.ndarray], np.ndarray]


class RobotConfig(ConfigModel):
    """Base of every robot kind's config: `kind` picks the registered robot kind; `sensors`
    are the robot's sensors by name, each with its `kind` (`twinsim.sensors`)."""

    kind: str
    sensors: dict[str, SENSOR_CONFIG] = Field(default_factory=dict)  # type: ignore[valid-type]

    @field_validator("sensors")
    @classmethod
    def _plain_names(cls, sensors: dict) -> dict:
        """A sensor's name is its stream's (a folder): plain, and not one the robot's own
        streams use."""
        for name in sensors:
            if not SENSOR_NAME.fullmatch(name):
                raise ValueError(
                    f"sensor name {name!r}: a letter or digit, then letters, digits, '_' or '-'"
                )
            if name in ROBOT_STREAMS or name.startswith("groundtruth_"):
                raise ValueError(
                    f"sensor name {name!r} is taken by the robot's own streams "
                    f"({', '.join(ROBOT_STREAMS)}, groundtruth_<camera>)"
                )
        return sensors


class Controller(Protocol):
    """A robot's motion source: set-points from time and state, actuator controls from those.

    `setpoint` may keep internal state (rate limits, integrators); `effort` turns a logged or a
    fresh set-point into controls, so a control-mode replay drives the same controller again.
    """

    def setpoint(self, t_s: float, q: np.ndarray, qd: np.ndarray) -> np.ndarray: ...

    def effort(self, setpoint: np.ndarray, q: np.ndarray, qd: np.ndarray) -> np.ndarray: ...


@dataclass(frozen=True)
class RobotLog:
    """A robot's recorded `robot_state` rows: the physics state before each recorded step, the
    set-point and the controls (columns named by `Robot.state_columns`)."""

    t_ns: np.ndarray  # (N,) int64
    qpos: np.ndarray  # (N, nq)
    qvel: np.ndarray  # (N, nv)
    qacc_warmstart: np.ndarray  # (N, nv)
    setpoint: np.ndarray  # (N, len(setpoint_columns))
    ctrl: np.ndarray  # (N, nu)


class Robot(ABC):
    """A robot kind. Instances are stateless; everything a run decided is in its spec."""

    kind: ClassVar[str]
    config_model: ClassVar[type[RobotConfig]]
    spec_model: ClassVar[type[RobotSpec]]

    @abstractmethod
    def resolve(
        self,
        cfg: RobotConfig,
        world,
        duration_s: float,
        rng: np.random.Generator,
        start_allowed: StartFilter | None = None,
    ) -> RobotSpec:
        """The robot's spec for a run in `world` (a generator's layout): start pose, planned
        motion for `duration_s` and every parameter its body and controller need."""

    @abstractmethod
    def body(self, spec: RobotSpec) -> BodySpec:
        """The body as data: links, joints, actuators and the link sensors are mounted on."""

    @abstractmethod
    def initial_state(self, spec: RobotSpec) -> tuple[np.ndarray, np.ndarray]:
        """(qpos, qvel) of the robot's joints at step 0."""

    @abstractmethod
    def setpoint_columns(self, spec: RobotSpec) -> tuple[str, ...]:
        """Names of the set-point entries logged in `robot_state` (one per entry)."""

    def controller(self, spec: RobotSpec, physics_hz: int) -> Controller:
        """The motion source of a scripted run: by default the kind's `follower` on its
        planned path (`planned_reference`: the start pose held where it has none)."""
        return self.follower(spec, planned_reference(spec), physics_hz)

    def restarted_controller(self, spec: RobotSpec, log: RobotLog, physics_hz: int) -> Controller:
        """The controller as it was before the log's first row (for a control-mode replay): by
        default a fresh one, its integrators restored by its `recover_integral(log)` if it has
        one (a kind whose controller keeps other state overrides this)."""
        controller = self.controller(spec, physics_hz)
        recover = getattr(controller, "recover_integral", None)
        if recover is not None:
            recover(log)
        return controller

    def base_limits(self, spec: RobotSpec) -> BaseLimits | None:
        """What the robot's mobile base can do, for live velocity and waypoint commands; None
        for a robot without one (it then overrides `command_space` and `live_controller`)."""
        return None

    def follower(self, spec: RobotSpec, reference, physics_hz: int) -> Controller:
        """The kind's path follower tracking `reference` (anything with `reference(t)`, a
        `Trajectory` or a `LiveReference`); kinds with a `base_limits` provide it."""
        raise NotImplementedError(f"robot kind {self.kind!r} has no path follower")

    def command_space(self, spec: RobotSpec) -> CommandSpace:
        """The live commands this robot takes (`twinsim.robots.common.commands`): velocity and
        waypoint for a mobile base, by what the base can do; none by default."""
        limits = self.base_limits(spec)
        if limits is None:
            return CommandSpace({})
        if limits.vertical:
            return CommandSpace({"velocity": SPATIAL_VELOCITY, "waypoint": SPATIAL_WAYPOINT})
        velocity = PLANAR_VELOCITY if limits.holonomic else UNICYCLE_VELOCITY
        return CommandSpace({"velocity": velocity, "waypoint": PLANAR_WAYPOINT})

    def live_controller(self, spec: RobotSpec, physics_hz: int) -> LiveController:
        """The controller of a closed-loop run: the kind's follower on a `LiveReference`
        that starts at rest at the start pose and moves as commands say."""
        limits = self.base_limits(spec)
        if limits is None:
            raise CommandError(f"robot kind {self.kind!r} cannot be driven live")
        reference = LiveReference(spec.start_pos, spec.start_yaw, limits)
        return LiveController(self.follower(spec, reference, physics_hz), reference)

    def planned_footprint(self, spec: RobotSpec, t_s: np.ndarray) -> tuple[np.ndarray, float]:
        """Where the robot's body is planned to be at times `t_s` (N,): its x, y (N, 2) and
        the radius of a circle about that point holding its footprint, so people can keep
        clear of it (`twinsim.actors.yielding`). By default the planned `path` (its end held
        after it ends; the start position where there is none: a fixed base) and the spec's
        `footprint_radius()`."""
        t = np.asarray(t_s, dtype=float)
        if len(spec.path) >= 2:
            xy = Trajectory.from_path_points(spec.path).sample(t).pos[:, :2]
        else:
            xy = np.tile(np.asarray(spec.start_pos[:2], dtype=float), (len(t), 1))
        return xy, spec.footprint_radius()

    def planned_extent(self, spec: RobotSpec) -> tuple[float, float]:
        """Half the length and half the width of the robot's footprint about the point
        `planned_footprint` gives, along its direction of travel (traffic keeps clear of this
        box); by default the footprint circle's square."""
        radius = self.planned_footprint(spec, np.zeros(1))[1]
        return radius, radius

    def default_sensors(self) -> dict[str, dict]:
        """The sensors (settings by name, each with its `kind`) a config without any gets."""
        return {}

    def joint_names(self, spec: RobotSpec) -> tuple[str, ...]:
        """The robot's joint coordinates in qpos order (also the joint_states columns)."""
        return tuple(j.name for j in self.body(spec).joints)

    def part_names(self, spec: RobotSpec) -> tuple[str, ...]:
        """The robot's parts its `contacts` stream names: by default its links."""
        return tuple(link.name for link in self.body(spec).links)

    def actuator_names(self, spec: RobotSpec) -> tuple[str, ...]:
        """The actuators in control order; by default named after the joint each drives."""
        return tuple(a.joint for a in self.body(spec).actuators)

    def state_columns(self, spec: RobotSpec) -> tuple[str, ...]:
        """Columns of the physics-rate `robot_state` log a replay restarts from."""
        joints, acts = self.joint_names(spec), self.actuator_names(spec)
        return (
            *(f"qpos_{j}" for j in joints),
            *(f"qvel_{j}" for j in joints),
            *(f"qacc_warmstart_{j}" for j in joints),
            *self.setpoint_columns(spec),
            *(f"ctrl_{a}" for a in acts),
        )
