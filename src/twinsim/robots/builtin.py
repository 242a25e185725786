"""Registers the built-in robot kinds (imported by the registry on its first look-up)."""

from twinsim.robots.diff_drive_robot import DiffDrive
from twinsim.robots.drone_robot import Drone
from twinsim.robots.omni_robot import Omni
from twinsim.robots.registry import ROBOTS

for robot in (Drone(), Omni(), DiffDrive()):
    ROBOTS.register(robot.kind, robot)
