"""World generators as plug-ins: the registry keyed by `scene.generator`, its errors, and the
generic free space every generator's world gets (rooms where there are rooms, else floors)."""

from __future__ import annotations

import numpy as np
import pytest
import shapely
from typer.testing import CliRunner

from twinsim.cli import app
from twinsim.config import TwinsimConfig, load_config
from twinsim.errors import ConfigError
from twinsim.model.scene import GeomSpec, ObjectSpec
from twinsim.registries import GENERATORS
from twinsim.scene.free_space import FloorRegion, FreeSpaceError, build_free_space, floor_region
from twinsim.scene.generators import WorldGenerator
from twinsim.scene.layout import room_rect
from twinsim.scene.worlds.apartment.config import ApartmentConfig
from twinsim.scene.worlds.apartment.generator import generate_apartment
from twinsim.scene.worlds.warehouse.generator import WarehouseConfig


def test_the_registry_holds_the_apartment_and_the_warehouse():
    assert GENERATORS.names()[:2] == ["apartment", "warehouse"]
    for name, model in (("apartment", ApartmentConfig), ("warehouse", WarehouseConfig)):
        generator = GENERATORS.get(name)
        assert isinstance(generator, WorldGenerator) and generator.name == name
        assert generator.config_model is model and model().generator == name


def test_scene_generator_picks_the_config_section_and_starts_it_afresh():
    cfg = load_config("tiny", ["scene.generator=warehouse", "scene.fill=0.5"])
    assert isinstance(cfg.scene, WarehouseConfig) and cfg.scene.fill == 0.5
    # the preset's apartment fields (min_rooms, ...) do not leak into the warehouse section
    assert cfg.scene == WarehouseConfig(fill=0.5)
    dumped = cfg.model_dump(mode="json")
    assert dumped["scene"]["generator"] == "warehouse"
    assert TwinsimConfig.model_validate(dumped) == cfg
    assert isinstance(TwinsimConfig().scene, ApartmentConfig)
    assert TwinsimConfig().scene.min_rooms == 4 and TwinsimConfig().scene.max_rooms == 7


def test_a_misspelt_generator_is_one_line_listing_the_registered_ones(tmp_path):
    want = "unknown world generator 'warehous'; registered: apartment, warehouse"
    with pytest.raises(ConfigError, match=want):
        load_config("tiny", ["scene.generator=warehous"])
    out = tmp_path / "o"
    result = CliRunner().invoke(
        app, ["run", "--config", "tiny", "--set", "scene.generator=warehous", "--out", str(out)]
    )
    assert result.exit_code == 2
    assert want in result.output and len(result.output.strip().splitlines()) == 1
    assert not out.exists()


def test_a_misspelt_field_lists_that_generators_fields():
    with pytest.raises(ConfigError, match=r"'scene\.lenght_m'; allowed here: generator, length_m"):
        load_config("tiny", ["scene.generator=warehouse", "scene.lenght_m=[20, 30]"])
    with pytest.raises(ConfigError, match=r"aisle_width_m must be >= 2\.0 m"):
        load_config("tiny", ["scene.generator=warehouse", "scene.aisle_width_m=[1.0, 3.0]"])
    with pytest.raises(ConfigError, match="width_m must be >= "):
        load_config("tiny", ["scene.generator=warehouse", "scene.width_m=[5, 30]"])


def test_the_floor_of_an_apartment_is_its_rooms_and_doors():
    layout = generate_apartment(ApartmentConfig(texture_size=16), np.random.default_rng(2))
    floor = floor_region(layout)
    assert floor.has_rooms and [a for a, _ in floor.areas] == [r.room_id for r in layout.rooms]
    assert floor.rects == tuple(room_rect(r) for r in layout.rooms)
    assert len(floor.openings) == len(layout.doors)
    footprint = shapely.union_all([shapely.Polygon(r.polygon) for r in layout.rooms])
    assert floor.plan.symmetric_difference(footprint).area < 1e-9
    assert floor.height_m == layout.wall_height


def _slab(iid: int, cls: str, x: float, y: float, hx: float, hy: float, z: float) -> ObjectSpec:
    geom = GeomSpec(type="box", size=(hx, hy, 0.025), pos=(0.0, 0.0, z), material="m")
    return ObjectSpec(
        instance_id=iid, name=f"{cls}{iid}", semantic_class=cls, pos=(x, y, 0.0), geoms=(geom,)
    )


def test_the_floor_of_a_world_without_rooms_is_its_floor_objects():
    objects = (
        _slab(1, "floor", 0.0, 0.0, 2.0, 1.0, -0.025),  # [-2, 2] x [-1, 1]
        _slab(2, "floor", 3.0, 0.0, 1.0, 2.0, -0.025),  # [2, 4] x [-2, 2]
        _slab(3, "ceiling", 0.0, 0.0, 9.0, 9.0, 3.0),
        _slab(4, "table", 0.0, 0.0, 0.5, 0.5, 1.0),  # at 0.975–1.025 m
    )
    floor = FloorRegion.of((), (), objects, 3.0)
    assert not floor.has_rooms and not floor.openings and len(floor.areas) == 1
    assert floor.plan.area == pytest.approx(8.0 + 8.0)
    assert sorted(r.area for r in floor.rects) == [8.0, 8.0]
    fs = build_free_space(floor, objects, flight_height_m=1.0, clearance_m=0.1, clearance_z_m=0.1)
    assert fs.clearance_at(np.array([3.0, 1.5])) == pytest.approx(0.5)  # the L's north edge
    assert fs.clearance_at(np.array([0.0, 0.0])) < 0  # under the table top: blocked
    assert fs.clearance_at(np.array([-1.0, 0.0])) == pytest.approx(0.5)  # its west edge
    assert not fs.is_free(np.array([0.0, 1.5]))  # off the floor
    assert set(np.unique(fs.room_of_cell)) == {-1, 0}
    with pytest.raises(FreeSpaceError, match="no floor"):
        build_free_space(FloorRegion.of(), objects, flight_height_m=1.0, clearance_m=0.1)
