"""Registers the built-in robot kinds (imported by the registry on its first look-up): one
import and one line per kind."""

from twinsim.registries import ROBOTS
from twinsim.robots.arm_robot import Arm
from twinsim.robots.car_robot import Car
from twinsim.robots.diff_drive_robot import DiffDrive
from twinsim.robots.drone_robot import Drone
from twinsim.robots.omni_robot import Omni
from twinsim.robots.quadruped_robot import Quadruped
from twinsim.robots.user_model_robot import Mjcf, Urdf

ROBOTS.register(Drone.kind, Drone())
ROBOTS.register(Omni.kind, Omni())
ROBOTS.register(DiffDrive.kind, DiffDrive())
ROBOTS.register(Quadruped.kind, Quadruped())
ROBOTS.register(Mjcf.kind, Mjcf())
ROBOTS.register(Urdf.kind, Urdf())
ROBOTS.register(Arm.kind, Arm())
ROBOTS.register(Car.kind, Car())
