"""The robot kinds by name (`robot.kind`); `twinsim.robots.builtin` registers the built-in ones."""

from __future__ import annotations

from typing import TYPE_CHECKING

from twinsim.plugins import Registry

if TYPE_CHECKING:
    from twinsim.robots.base import Robot

ROBOTS: Registry[Robot] = Registry(
    "robot kind", "robot.kind", "twinsim.robots.builtin", "twinsim.robots"
)

#: the name of the robot of a one-robot config (`robot:`); its streams keep their plain names
DEFAULT_ROBOT = "robot"
#: the kind of a robot whose config names none (and of a sequence whose metadata names none)
DEFAULT_ROBOT_KIND = "drone"
