"""The world-generator interface and registry, keyed by `scene.generator`.

A generator turns its config section and a seeded generator state into a *layout*: the static
world as data (objects, materials, textures, lights, bounds, wall height, and rooms and doors
where the world has them) with `to_scene(seed, robot, sensors)` to make the `SceneSpec`.
People, flying objects and the robot are added to the layout by `twinsim.assemble`; they find
their way on the world's generic free space (`twinsim.scene.free_space.floor_region`: rooms
where there are rooms, else the floor objects), so a layout needs no floor plan. `Layout` is
a ready-made layout class (the apartment's and the warehouse's).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from twinsim.configmodel import ConfigModel
from twinsim.model.base import Vec3
from twinsim.model.roads import RoadNetworkSpec
from twinsim.model.scene import (
    DoorSpec,
    LightSpec,
    MaterialSpec,
    MeshAssetSpec,
    ObjectSpec,
    RobotSpec,
    RoomSpec,
    SceneSpec,
    TerrainSpec,
    TextureSpec,
)
from twinsim.model.sensors import SensorSpec


class SceneConfig(ConfigModel):
    """Base of every generator's config section; `generator` picks the registered one."""

    generator: str


@dataclass(frozen=True)
class Layout:
    """What a generator decided about the static world, before anyone moves in it, as plain
    data; rooms and doors may be empty (a hall, a warehouse)."""

    objects: tuple[ObjectSpec, ...]
    textures: tuple[TextureSpec, ...]
    materials: tuple[MaterialSpec, ...]
    lights: tuple[LightSpec, ...]
    wall_height: float
    bounds_min: Vec3
    bounds_max: Vec3
    rooms: tuple[RoomSpec, ...] = ()
    doors: tuple[DoorSpec, ...] = ()
    roads: RoadNetworkSpec | None = None
    terrain: TerrainSpec | None = None
    #: the mesh assets objects show, and each one's NPZ bytes by sha256
    mesh_assets: tuple[MeshAssetSpec, ...] = ()
    asset_bytes: Mapping[str, bytes] = field(default_factory=dict)

    def to_scene(
        self, seed: int, robots: tuple[RobotSpec, ...], sensors: tuple[SensorSpec, ...] = ()
    ) -> SceneSpec:
        """The complete `SceneSpec` of this world with its robots and their sensors (and its
        mesh assets' bytes)."""
        scene = SceneSpec(
            seed=seed,
            wall_height=self.wall_height,
            bounds_min=self.bounds_min,
            bounds_max=self.bounds_max,
            rooms=self.rooms,
            doors=self.doors,
            objects=self.objects,
            textures=self.textures,
            materials=self.materials,
            lights=self.lights,
            robots=robots,
            sensors=sensors,
            roads=self.roads,
            terrain=self.terrain,
            mesh_assets=self.mesh_assets,
        )
        return scene.with_asset_bytes(self.asset_bytes) if self.mesh_assets else scene


class WorldGenerator(ABC):
    """A world generator: one module plus one `GENERATORS.register` line."""

    name: ClassVar[str]
    config_model: ClassVar[type[SceneConfig]]

    @abstractmethod
    def generate(self, cfg: SceneConfig, rng: np.random.Generator) -> Layout:
        """The layout for `cfg`; every random choice from `rng`."""
