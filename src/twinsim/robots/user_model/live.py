"""A user's robot file driven live: its base by `velocity`/`waypoint` commands (a planar or
free base, on the kind's follower), its scripted joints by `joints` commands, each joint
leaving its script for its target when a command first names it."""

from __future__ import annotations

import numpy as np

from twinsim.robots.common.commands import CommandError, CommandMode, CommandSpace
from twinsim.robots.common.live_reference import LiveController, LiveReference
from twinsim.robots.user_model.controller import UserModelController
from twinsim.robots.user_model.spec import UserModelSpec


def joints_mode(spec: UserModelSpec) -> CommandMode | None:
    """The `joints` mode of a file with scripted joints (None without any)."""
    names = tuple(t.name for t in spec.targets)
    if not names:
        return None
    return CommandMode(
        names,
        "joint targets (rad or m, kept in range) at 1 unit/s; a joint never named keeps its script",
    )


class UserModelLive:
    """What a live user model's commands steer: the base's `LiveReference` (None for a fixed
    base) and the controller's live joint targets."""

    def __init__(self, base: LiveReference | None, controller: UserModelController) -> None:
        self.base, self.controller = base, controller

    def command(self, mode: str, fields: dict[str, float]) -> None:
        if mode == "joints":
            self.controller.command_joints(fields)
        elif self.base is not None:
            self.base.command(mode, fields)
        else:
            raise CommandError(f"{mode}: this robot's base is fixed")

    @property
    def arrived(self) -> bool:
        """The base at its waypoint (where it has one) and the joints at their targets."""
        base = self.base.arrived if self.base is not None else True
        return base and self.controller.live.arrived

    def advance(self, dt: float, body_pos: np.ndarray) -> None:
        if self.base is not None:
            self.base.advance(dt, body_pos)
        self.controller.live.advance(dt)


def user_model_live(
    command_space: CommandSpace, spec: UserModelSpec, limits, follower, physics_hz: int
) -> LiveController:
    """The live controller of a user model: its follower on a `LiveReference` for a moving base
    (`follower(spec, reference, hz)`), its own controller for a fixed one."""
    if not command_space.modes:
        raise CommandError(f"robot {spec.name!r}: a fixed base without scripted joints")
    base = None
    if limits is not None:
        base = LiveReference(spec.start_pos, spec.start_yaw, limits)
        controller = follower(spec, base, physics_hz)
    else:
        controller = UserModelController(spec, physics_hz)
    return LiveController(controller, UserModelLive(base, controller))
