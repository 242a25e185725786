"""Where a sensor sits on a robot, as data the engine builds: a MuJoCo camera or a site carrying
MuJoCo sensors, each on the robot's mount link."""

from __future__ import annotations

from dataclasses import dataclass

from twinsim.model.base import Quat, Vec3


@dataclass(frozen=True)
class CameraMount:
    """A MuJoCo camera on the robot's mount link; `quat` is MuJoCo's camera frame."""

    name: str
    pos: Vec3
    quat: Quat
    fovy_deg: float
    width: int
    height: int
    near_m: float
    far_m: float


@dataclass(frozen=True)
class SiteMount:
    """A site on the mount link carrying MuJoCo sensors: (MuJoCo sensor type, name suffix)."""

    name: str
    pos: Vec3
    quat: Quat
    sensors: tuple[tuple[str, str], ...] = ()


Mount = CameraMount | SiteMount
