"""The live commands a robot kind accepts (closed loop: `twinsim.closedloop`, `serve`, ROS).

A command is one mode and its fields, e.g. `{"velocity": {"vx": 0.3, "wz": 0.2}}` or
`{"waypoint": {"x": 2.0, "y": 1.5}}`; a kind's `CommandSpace` lists the modes it takes and
their fields, so a wrong field or mode is refused with what that kind accepts. Values are SI:
m, m/s, rad, rad/s; velocities in the robot's heading frame (x forward, y left, z up).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from twinsim.errors import TwinsimError


class CommandError(TwinsimError):
    """A live command names a mode or field its robot does not take, or holds a bad value."""


@dataclass(frozen=True)
class CommandMode:
    """One way to command a robot: its fields (any subset of them; unset fields default as
    `summary` says) and those a command must give."""

    fields: tuple[str, ...]
    summary: str
    required: tuple[str, ...] = ()


#: body-frame velocity fields by what the base can do
PLANAR_VELOCITY = CommandMode(("vx", "vy", "wz"), "velocity in the heading frame; unset = 0")
UNICYCLE_VELOCITY = CommandMode(("vx", "wz"), "forward speed and yaw rate; unset = 0")
SPATIAL_VELOCITY = CommandMode(("vx", "vy", "vz", "wz"), "velocity in the heading frame; unset = 0")
PLANAR_WAYPOINT = CommandMode(
    ("x", "y", "yaw"), "go to world x, y (m), then turn to yaw (rad) if given", ("x", "y")
)
SPATIAL_WAYPOINT = CommandMode(
    ("x", "y", "z", "yaw"), "go to world x, y, z (m; z unset = hold), then yaw if given", ("x", "y")
)


@dataclass(frozen=True)
class CommandSpace:
    """The modes (by name) a robot takes; empty for a robot that cannot be driven live."""

    modes: Mapping[str, CommandMode]

    def describe(self) -> str:
        """The modes and their fields, for error messages and `serve`'s hello."""
        if not self.modes:
            return "no live commands"
        return "; ".join(f"{name} ({', '.join(m.fields)})" for name, m in self.modes.items())

    def parse(self, robot: str, command: object) -> tuple[str, dict[str, float]]:
        """(mode, fields) of one robot's command, checked: exactly one known mode, known fields
        with finite numbers, the required ones present."""
        if not isinstance(command, Mapping) or len(command) != 1:
            raise CommandError(
                f"command for robot {robot!r}: one mode with its fields, e.g. "
                f'{{"velocity": {{"vx": 0.2}}}}; this robot takes {self.describe()}'
            )
        ((mode, fields),) = command.items()
        if mode not in self.modes:
            raise CommandError(
                f"command for robot {robot!r}: unknown mode {mode!r}; "
                f"this robot takes {self.describe()}"
            )
        spec = self.modes[mode]
        if not isinstance(fields, Mapping):
            raise CommandError(f"{robot}.{mode}: fields as a mapping of {', '.join(spec.fields)}")
        values: dict[str, float] = {}
        for name, value in fields.items():
            if name not in spec.fields:
                raise CommandError(
                    f"{robot}.{mode}: unknown field {name!r}; allowed: {', '.join(spec.fields)}"
                )
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise CommandError(f"{robot}.{mode}.{name}: a number, got {value!r}")
            if not math.isfinite(value):
                raise CommandError(f"{robot}.{mode}.{name}: a finite number, got {value!r}")
            values[name] = float(value)
        missing = [name for name in spec.required if name not in values]
        if missing:
            raise CommandError(f"{robot}.{mode}: missing field {missing[0]!r}")
        return mode, values
