"""Registers the built-in sensor kinds (imported by the registry on its first look-up)."""

from twinsim.registries import SENSORS
from twinsim.sensors.kinds.camera import Camera
from twinsim.sensors.kinds.event_camera import EventCamera
from twinsim.sensors.kinds.gnss import Gnss
from twinsim.sensors.kinds.imu import Imu
from twinsim.sensors.kinds.lidar import Lidar
from twinsim.sensors.kinds.radar import Radar
from twinsim.sensors.kinds.wheel_odometry import WheelOdometry

for kind in (Camera(), Imu(), Lidar(), EventCamera(), WheelOdometry(), Gnss(), Radar()):
    SENSORS.register(kind.type, kind)
