"""The town: a seeded procedural outdoor world of blocks, roads, sidewalks, buildings and street
furniture, with its road network as data (`Layout.roads`); `scene.generator: town`.

`generate_town` is a pure function of (config, generator state). The road top is the ground at
z = 0 (road slabs below it, as the apartment's floor); sidewalks, kerbs and the blocks' land
are raised to 0.15 m; the land around the town lies 2 cm below the road. Walkers, robots and
planners move over the roads, sidewalks and crosswalks (`free_space.floor_region` counts them
as floor). A preset picks the defaults of every size; each field set in the config wins.
The one light is the sun (directional, with an ambient term).
"""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np
from pydantic import Field, model_validator

from twinsim.model.roads import VEHICLE_LAMP_MATERIALS
from twinsim.model.scene import LightSpec
from twinsim.scene.free_space import geom_footprint
from twinsim.scene.generators import Layout, SceneConfig, WorldGenerator
from twinsim.scene.parts import ObjectList, box, r3, r4
from twinsim.scene.terrain import make_terrain
from twinsim.scene.worlds.town.buildings import GROUND_Z, add_blocks, add_roads
from twinsim.scene.worlds.town.materials import TownMaterials
from twinsim.scene.worlds.town.network import build_network
from twinsim.scene.worlds.town.props import (
    add_crosswalks,
    add_hill_trees,
    add_islands,
    add_markings,
    add_parked_cars,
    add_signals,
    add_stop_signs,
    add_street_lights,
    add_trees,
)
from twinsim.scene.worlds.town.roads import GridParams, plan_grid

Preset = Literal["small_town", "mid_city", "highway", "skyscraper_city", "rural"]

#: each preset's defaults for the fields a config leaves unset
PRESETS: dict[str, dict] = {
    "small_town": dict(
        blocks_x=3,
        blocks_y=3,
        block_size_m=(35.0, 55.0),
        lanes_per_direction=1,
        building_height_m=(4.0, 12.0),
        tree_density=4.0,
        parked_car_density=0.35,
        merge_share=0.3,
        signal_share=0.5,
        sidewalk_m=2.5,
        speed_limit_mps=13.9,
        block_kinds=("residential",),
        park_share=0.15,
        arterial_lanes=1,
        highway_lanes=0,
        highway_extend_m=0.0,
        winding_m=0.0,
        roundabout=True,
        hills_m=0.0,
    ),
    "mid_city": dict(
        blocks_x=4,
        blocks_y=3,
        block_size_m=(50.0, 80.0),
        lanes_per_direction=2,
        building_height_m=(10.0, 35.0),
        tree_density=1.5,
        parked_car_density=0.5,
        merge_share=0.2,
        signal_share=1.0,
        sidewalk_m=3.5,
        speed_limit_mps=13.9,
        block_kinds=("commercial", "downtown"),
        park_share=0.1,
        arterial_lanes=2,
        highway_lanes=0,
        highway_extend_m=0.0,
        winding_m=0.0,
        roundabout=False,
        hills_m=0.0,
    ),
    "highway": dict(
        blocks_x=2,
        blocks_y=1,
        block_size_m=(40.0, 60.0),
        lanes_per_direction=1,
        building_height_m=(4.0, 10.0),
        tree_density=3.0,
        parked_car_density=0.25,
        merge_share=0.0,
        signal_share=1.0,
        sidewalk_m=2.5,
        speed_limit_mps=13.9,
        block_kinds=("commercial", "residential"),
        park_share=0.0,
        arterial_lanes=1,
        highway_lanes=3,
        highway_extend_m=500.0,
        winding_m=0.0,
        roundabout=False,
        hills_m=12.0,
    ),
    "skyscraper_city": dict(
        blocks_x=3,
        blocks_y=3,
        block_size_m=(60.0, 90.0),
        lanes_per_direction=2,
        building_height_m=(40.0, 150.0),
        tree_density=1.0,
        parked_car_density=0.3,
        merge_share=0.15,
        signal_share=1.0,
        sidewalk_m=4.0,
        speed_limit_mps=13.9,
        block_kinds=("downtown",),
        park_share=0.1,
        arterial_lanes=2,
        highway_lanes=0,
        highway_extend_m=0.0,
        winding_m=0.0,
        roundabout=False,
        hills_m=0.0,
    ),
    "rural": dict(
        blocks_x=2,
        blocks_y=1,
        block_size_m=(120.0, 180.0),
        lanes_per_direction=1,
        building_height_m=(4.0, 8.0),
        tree_density=0.6,
        parked_car_density=0.0,
        merge_share=0.0,
        signal_share=0.0,
        sidewalk_m=1.5,
        speed_limit_mps=22.2,
        block_kinds=("rural",),
        park_share=0.0,
        arterial_lanes=1,
        highway_lanes=0,
        highway_extend_m=0.0,
        winding_m=600.0,
        roundabout=True,
        hills_m=20.0,
    ),
}
PARKING_M = 2.2
STREET_LIGHT_SPACING_M = 25.0
HILLS_MARGIN_M = 150.0  # land beyond the town of a hilly preset, for its hills to rise on


class TownConfig(SceneConfig):
    """A town of blocks between two-way roads; unset sizes take the preset's defaults."""

    generator: Literal["town"] = "town"
    preset: Preset = "small_town"
    blocks_x: int | None = Field(None, ge=1, le=12)
    blocks_y: int | None = Field(None, ge=1, le=12)
    block_size_m: tuple[float, float] | None = None  # kerb to kerb, drawn per grid column/row
    lanes_per_direction: int | None = Field(None, ge=1, le=3)
    building_height_m: tuple[float, float] | None = None
    tree_density: float | None = Field(None, ge=0.0, le=50.0)  # trees per 1000 m^2 of land
    parked_car_density: float | None = Field(None, ge=0.0, le=1.0)  # share of parking slots
    hills_m: float | None = Field(None, ge=0.0, le=200.0)  # highest hill beyond the town (0: flat)
    texture_size: int = Field(256, ge=16, le=2048)

    @model_validator(mode="after")
    def _ranges(self) -> TownConfig:
        for name, least in (("block_size_m", 20.0), ("building_height_m", 2.5)):
            value = getattr(self, name)
            if value is not None and not least <= value[0] <= value[1]:
                raise ValueError(f"{name}={list(value)} must be {least} <= low <= high")
        return self

    def setting(self, name: str) -> Any:
        """A field's value, or the preset's default where the config leaves it unset."""
        value = getattr(self, name, None)
        return PRESETS[self.preset][name] if value is None else value


def _grid_params(cfg: TownConfig) -> GridParams:
    """The grid's parameters from the config and its preset."""
    pre = PRESETS[cfg.preset]
    parking = PARKING_M if cfg.setting("parked_car_density") > 0 else 0.0
    lanes = cfg.setting("lanes_per_direction")
    return GridParams(
        preset=cfg.preset,
        blocks=(cfg.setting("blocks_x"), cfg.setting("blocks_y")),
        block_m=tuple(cfg.setting("block_size_m")),
        lanes=lanes,
        arterial_lanes=max(lanes, pre["arterial_lanes"]),
        highway_lanes=pre["highway_lanes"],
        highway_extend_m=pre["highway_extend_m"],
        winding_m=pre["winding_m"],
        roundabout=pre["roundabout"],
        parking_m=parking,
        sidewalk_m=pre["sidewalk_m"],
        speed_mps=pre["speed_limit_mps"],
        merge_share=pre["merge_share"],
        signal_share=pre["signal_share"],
        block_kinds=pre["block_kinds"],
        park_share=pre["park_share"],
    )


def _sun(rng: np.random.Generator) -> LightSpec:
    """The sun: a directional light from a random azimuth 30-65 degrees high, with ambient."""
    az, el = rng.uniform(0.0, 2 * math.pi), math.radians(rng.uniform(30.0, 65.0))
    d = (-math.cos(el) * math.cos(az), -math.cos(el) * math.sin(az), -math.sin(el))
    level = rng.uniform(0.75, 0.95)
    return LightSpec(
        name="sun",
        pos=(r3(-d[0] * 500.0), r3(-d[1] * 500.0), r3(-d[2] * 500.0)),
        dir=(r3(d[0]), r3(d[1]), r3(d[2])),
        diffuse=(r3(level), r3(level * 0.97), r3(level * 0.9)),
        specular=(0.2, 0.2, 0.2),
        ambient=(r3(rng.uniform(0.3, 0.4)),) * 3,
        directional=True,
        castshadow=True,
    )


def generate_town(cfg: TownConfig, rng: np.random.Generator) -> Layout:
    """Generate a town with its road network from the config, drawing only from `rng`."""
    params = _grid_params(cfg)
    plan = plan_grid(params, rng)
    network = build_network(plan, params, rng)
    mats = TownMaterials(rng, cfg.texture_size, facades=4)
    objs = ObjectList()
    add_roads(plan, mats, objs)
    buildings = add_blocks(plan, mats, objs, rng, tuple(cfg.setting("building_height_m")))
    add_markings(plan, mats, objs)
    add_crosswalks(network, mats, objs)
    add_signals(network, mats, objs)
    add_islands(plan, mats, objs)
    add_stop_signs(plan, network, mats, objs)
    lamps = add_street_lights(plan, mats, objs, STREET_LIGHT_SPACING_M)
    glowing = (mats.lamp, *VEHICLE_LAMP_MATERIALS)
    network = network.model_copy(update={"street_lamps": tuple(lamps), "lamp_materials": glowing})
    add_parked_cars(plan, mats, objs, rng, cfg.setting("parked_car_density"))
    add_trees(plan, mats, objs, rng, cfg.setting("tree_density"), [p for p, _ in buildings])
    lo, hi = _extent(objs)
    hills = float(cfg.setting("hills_m"))
    margin = HILLS_MARGIN_M if hills > 0 else 20.0
    ground = box(
        (0.0, 0.0, GROUND_Z - 0.05),
        ((hi[0] - lo[0]) / 2 + margin, (hi[1] - lo[1]) / 2 + margin, 0.05),
        mats.grass,
    )
    centre = (r4((lo[0] + hi[0]) / 2), r4((lo[1] + hi[1]) / 2), 0.0)
    objs.add("ground", "terrain", centre, [ground], None)
    terrain = None
    if hills > 0:
        land_lo, land_hi = lo[:2] - margin, hi[:2] + margin
        terrain = make_terrain(
            objs.items[:-1], len(objs.items), mats.grass, land_lo, land_hi, GROUND_Z, hills, rng
        )
    if terrain is not None:
        add_hill_trees(terrain, mats, objs, rng, cfg.setting("tree_density"))
    lo, hi = _extent(objs)
    tallest = max((h for _, h in buildings), default=10.0)
    highest = tallest if terrain is None else max(tallest, terrain.base_z + terrain.top_m)
    return Layout(
        objects=tuple(objs.items),
        textures=tuple(mats.textures),
        materials=tuple(mats.materials),
        lights=(_sun(rng),),
        wall_height=r3(max(tallest, 10.0)),
        bounds_min=(r3(lo[0]), r3(lo[1]), r3(lo[2])),
        bounds_max=(r3(hi[0]), r3(hi[1]), r3(max(hi[2], highest))),
        roads=network,
        terrain=terrain,
    )


def _extent(objs: ObjectList) -> tuple[np.ndarray, np.ndarray]:
    """World box enclosing every geom of every object."""
    lo, hi = np.full(3, np.inf), np.full(3, -np.inf)
    for obj in objs.items:
        for geom in obj.geoms:
            poly, z0, z1 = geom_footprint(obj, geom)
            x0, y0, x1, y1 = poly.bounds
            lo = np.minimum(lo, (x0, y0, z0))
            hi = np.maximum(hi, (x1, y1, z1))
    return lo - 1e-3, hi + 1e-3


class Town(WorldGenerator):
    """A procedural town with roads, sidewalks, buildings and its road network (`generate_town`)."""

    name = "town"
    config_model = TownConfig

    def generate(self, cfg: TownConfig, rng: np.random.Generator) -> Layout:
        return generate_town(cfg, rng)
