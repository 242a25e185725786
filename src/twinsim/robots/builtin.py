"""Registers the built-in robot kinds (imported by the registry on its first look-up): one
import and one line per kind."""

from twinsim.registries import ROBOTS
from twinsim.robots.arm.robot import Arm
from twinsim.robots.car.robot import Car
from twinsim.robots.diff_drive.robot import DiffDrive
from twinsim.robots.drone.robot import Drone
from twinsim.robots.omni.robot import Omni
from twinsim.robots.quadruped.robot import Quadruped
from twinsim.robots.user_model.robot import Mjcf, Urdf

ROBOTS.register(Drone.kind, Drone())
ROBOTS.register(Omni.kind, Omni())
ROBOTS.register(DiffDrive.kind, DiffDrive())
ROBOTS.register(Quadruped.kind, Quadruped())
ROBOTS.register(Mjcf.kind, Mjcf())
ROBOTS.register(Urdf.kind, Urdf())
ROBOTS.register(Arm.kind, Arm())
ROBOTS.register(Car.kind, Car())
