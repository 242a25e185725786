"""Registers the built-in robot kinds (imported by the registry on its first look-up)."""

from twinsim.robots.drone_robot import Drone
from twinsim.robots.registry import ROBOTS

ROBOTS.register(Drone.kind, Drone())
