"""What every scene spec module shares: the frozen pydantic base and the geometric aliases.

Kept apart so the world's specs (`spec.py`) and the robot bodies' (`body_spec.py`) build on one
base without importing each other. Conventions as in `spec.py`: SI units, world z up,
quaternions in MuJoCo order (w, x, y, z).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

Vec2 = tuple[float, float]
Vec3 = tuple[float, float, float]
Quat = tuple[float, float, float, float]
RGB = tuple[float, float, float]
RGBA = tuple[float, float, float, float]

IDENTITY_QUAT: Quat = (1.0, 0.0, 0.0, 0.0)

GeomType = Literal["box", "cylinder", "sphere", "capsule", "ellipsoid"]

ROBOT_GEOM_GROUP = 3  # MuJoCo geom group of robot parts: they collide, on-board cameras skip them


class FrozenSpec(BaseModel):
    """A spec is immutable data: unknown fields are an error, instances cannot change."""

    model_config = ConfigDict(extra="forbid", frozen=True)
