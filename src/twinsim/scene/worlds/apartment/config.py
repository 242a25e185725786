"""The apartment as a registered world generator: its config section and its entry point."""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field, model_validator

from twinsim.scene.assets.catalogue import CatalogueFolders
from twinsim.scene.generators import SceneConfig, WorldGenerator


class ApartmentConfig(SceneConfig):
    """The procedural apartment: rooms, furniture density, lights, texture resolution, and
    mesh asset catalogues to furnish it from too."""

    generator: Literal["apartment"] = "apartment"
    min_rooms: int = Field(4, ge=3, le=12)
    max_rooms: int = Field(7, ge=3, le=12)
    wall_height_m: float = Field(2.7, ge=2.2, le=4.0)
    furniture_density: float = Field(1.0, ge=0.0, le=2.0)
    min_lights: int = Field(2, ge=1)
    max_lights: int = Field(6, ge=1)
    texture_size: int = Field(256, ge=16, le=2048)
    assets: CatalogueFolders = ()

    @model_validator(mode="after")
    def _ranges(self) -> ApartmentConfig:
        if self.min_rooms > self.max_rooms:
            raise ValueError(f"min_rooms={self.min_rooms} must be <= max_rooms={self.max_rooms}")
        if self.min_lights > self.max_lights:
            raise ValueError(
                f"min_lights={self.min_lights} must be <= max_lights={self.max_lights}"
            )
        return self


class Apartment(WorldGenerator):
    """GRADE-style apartments: 3-12 furnished rooms joined by doors (`generator.py`)."""

    name = "apartment"
    config_model = ApartmentConfig

    def generate(self, cfg: ApartmentConfig, rng: np.random.Generator):
        from twinsim.scene.worlds.apartment.generator import generate_apartment

        return generate_apartment(cfg, rng)
