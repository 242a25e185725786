"""Asset catalogues: files read in metres and z up, collision parts from CoACD computed once and
cached (the hull where CoACD fails), copies placed clear of the generators' furniture for a
seed, and every bad input refused in one line (exit code 2, nothing written)."""

from __future__ import annotations

import json
import os
import re

import numpy as np
import pytest
import shapely
import trimesh
from typer.testing import CliRunner

from mesh_catalogue import CHAIR_RGB, HULLS_YAML, write_catalogue, write_meshes
from twinsim.cli import app
from twinsim.config import load_config
from twinsim.errors import ConfigError
from twinsim.meshdata import MeshData
from twinsim.scene.assets import collision
from twinsim.scene.assets.catalogue import CollisionConfig
from twinsim.scene.assets.collision import CACHE_ENV, collision_parts
from twinsim.scene.assets.placement import load_assets
from twinsim.scene.furniture.kit import object_footprint
from twinsim.scene.worlds.apartment.config import ApartmentConfig
from twinsim.scene.worlds.apartment.generator import generate_apartment
from twinsim.scene.worlds.warehouse.generator import (
    KEEP_CLEAR_M,
    WarehouseConfig,
    generate_warehouse,
)

runner = CliRunner()
STANDING = ("floor", "ceiling", "wall", "door_frame", "lamp", "rug")  # not furniture to clear
SMALL_HALL = {
    "length_m": (14.0, 15.0),
    "width_m": (16.0, 17.0),
    "height_m": (5.0, 5.5),
    "levels": (2, 3),
    "lights": 4,
    "texture_size": 16,
}


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv(CACHE_ENV, str(folder))
    return folder


@pytest.fixture
def counted(monkeypatch):
    """Calls of CoACD's decomposition, counted."""
    calls = []
    decompose = collision.decompose

    def counting(mesh, cfg):
        calls.append(cfg)
        return decompose(mesh, cfg)

    monkeypatch.setattr(collision, "decompose", counting)
    return calls


def _apartment(folder=None, seed: int = 3):
    assets = () if folder is None else (str(folder),)
    cfg = ApartmentConfig(min_rooms=3, max_rooms=3, texture_size=16, assets=assets)
    return generate_apartment(cfg, np.random.default_rng(seed))


def test_meshes_are_read_in_metres_z_up_standing_on_their_footprint(tmp_path):
    assets = {a.item.entry.file: a for a in load_assets([write_catalogue(tmp_path / "c")])}
    expected = {  # (min, max) after units, up axis and recentring
        "chair.obj": ([-0.225, -0.225, 0.0], [0.225, 0.225, 0.925]),
        "crate.glb": ([-0.3, -0.2, 0.0], [0.3, 0.2, 0.5]),
        "ell.stl": ([-0.3, -0.15, 0.0], [0.3, 0.15, 0.9]),
    }
    for file, bounds in expected.items():
        np.testing.assert_allclose(assets[file].data.bounds(), bounds, atol=1e-6)
    chair, crate, ell = (assets[f] for f in expected)
    assert chair.colouring == "vertex"
    assert chair.mean_rgba[:3] == pytest.approx(np.array(CHAIR_RGB) / 255, abs=1e-3)
    assert crate.colouring == "texture" and crate.data.texture.shape == (64, 64, 3)
    assert crate.data.uv.shape == (len(crate.data.vertices), 2)
    assert ell.colouring == "material" and ell.data.colors is None


def test_coacd_runs_once_and_the_second_world_reads_its_cache(tmp_path, cache, counted):
    folder = write_catalogue(tmp_path / "c")  # CoACD cuts the crate and the L
    first = _apartment(folder)
    assert len(counted) == 2
    assert len(list((cache / "coacd").glob("*.npz"))) == 2
    second = _apartment(folder)
    assert len(counted) == 2  # both read back
    assert second.mesh_assets == first.mesh_assets
    assert dict(second.asset_bytes) == dict(first.asset_bytes)
    ell = next(a for a in first.mesh_assets if a.name == "ell")
    assert ell.collision == "coacd" and ell.collision_parts >= 2 and ell.collision_note is None


def test_a_failing_coacd_leaves_the_hull_and_says_so(tmp_path, cache, monkeypatch):
    def fails(mesh, cfg):
        raise RuntimeError("it cannot cut this")

    monkeypatch.setattr(collision, "decompose", fails)
    layout = _apartment(write_catalogue(tmp_path / "c"))
    ell = next(a for a in layout.mesh_assets if a.name == "ell")
    assert ell.collision == "hull" and ell.collision_parts == 1
    assert ell.collision_note == "coacd failed: it cannot cut this; collides as its convex hull"
    assert not (cache / "coacd").exists()  # a failure is not cached


def test_a_flat_mesh_collides_as_a_thin_box():
    quad = MeshData(
        np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]], float),
        np.array([[0, 1, 2], [0, 2, 3]], np.int32),
        np.ones(4),
        (),
    )
    found = collision_parts(quad, CollisionConfig(method="hull"))
    assert found.method == "box" and "flat" in found.note
    vertices, _ = found.parts[0]
    np.testing.assert_allclose(np.ptp(vertices, axis=0), [1.0, 1.0, 0.001])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_apartment_places_copies_clear_of_the_furniture(tmp_path, seed):
    folder = write_catalogue(tmp_path / "c", HULLS_YAML)
    layout = _apartment(folder, seed)
    plain = _apartment(None, seed)
    n = len(plain.objects)
    assert layout.objects[:n] == plain.objects  # the assets' draws come after all others
    copies = layout.objects[n:]
    assert all(o.mesh is not None for o in copies)
    counts = {
        name: sum(o.name.split("_")[-2] == name for o in copies)
        for name in ("chair", "crate", "ell")
    }
    assert 1 <= counts["chair"] <= 2 and counts["crate"] == counts["ell"] == 1
    rooms = {r.room_id: shapely.Polygon(r.polygon) for r in layout.rooms}
    for copy in copies:
        spot = object_footprint(copy)
        assert rooms[copy.room_id].buffer(1e-6).contains(spot)
        for other in layout.objects:
            if other is copy or other.room_id != copy.room_id or other.semantic_class in STANDING:
                continue
            assert spot.intersection(object_footprint(other)).area < 1e-9, (copy.name, other.name)


def test_the_same_seed_places_the_same_copies(tmp_path):
    folder = write_catalogue(tmp_path / "c", HULLS_YAML)
    first, second = _apartment(folder, 4), _apartment(folder, 4)
    assert first.objects == second.objects and first.mesh_assets == second.mesh_assets
    assert dict(first.asset_bytes) == dict(second.asset_bytes)


@pytest.mark.parametrize("seed", [0, 1])
def test_warehouse_stands_copies_at_the_walls_clear_of_the_aisles(tmp_path, seed):
    folder = write_catalogue(tmp_path / "c", HULLS_YAML)
    cfg = WarehouseConfig(**SMALL_HALL, assets=(str(folder),))
    layout = generate_warehouse(cfg, np.random.default_rng(seed))
    copies = [o for o in layout.objects if o.mesh is not None]
    assert len(copies) >= 3
    floor = next(o for o in layout.objects if o.semantic_class == "floor")
    walls = [o for o in layout.objects if o.semantic_class == "wall"]
    hall = object_footprint(floor).difference(
        shapely.union_all([object_footprint(w) for w in walls])
    )
    goods = shapely.union_all(
        [
            object_footprint(o)
            for o in layout.objects
            if o.mesh is None and o.semantic_class in ("rack", "pallet", "box")
        ]
    )
    spots = [object_footprint(o) for o in copies]
    for i, spot in enumerate(spots):
        assert hall.buffer(1e-6).contains(spot)
        assert spot.distance(goods) >= KEEP_CLEAR_M - 1e-6  # the aisle beside it stays free
        assert all(spot.distance(other) > 0.0 for other in spots[i + 1 :])


def test_config_names_catalogues_without_reading_them():
    """A recorded config replays without its catalogues: only generating a world reads them."""
    cfg = load_config("tiny", ["scene.assets=[/no/such/catalogue]"])
    assert cfg.scene.assets == ("/no/such/catalogue",)


def _yaml_entry(**changes) -> str:
    entry = {"file": "chair.obj", "class": "chair", "units": "cm"} | changes
    return "assets:\n  - " + "\n    ".join(f"{k}: {v}" for k, v in entry.items()) + "\n"


def _replace(name: str, content: bytes):
    return lambda folder: (folder / name).write_bytes(content)


def _link_out(folder):
    outside = folder.parent / "outside.obj"
    outside.write_bytes((folder / "chair.obj").read_bytes())
    (folder / "chair.obj").unlink()
    os.symlink(outside, folder / "chair.obj")


def _gltf_buffer_outside(folder):
    """crate.gltf whose binary buffers lie outside the catalogue folder."""
    from mesh_catalogue import crate

    files = trimesh.exchange.gltf.export_gltf(trimesh.Scene(crate()))
    gltf = json.loads(files.pop("model.gltf"))
    for name, blob in files.items():
        (folder.parent / name).write_bytes(blob)
    for buffer in gltf["buffers"]:
        buffer["uri"] = f"../{buffer['uri']}"
    (folder / "crate.gltf").write_text(json.dumps(gltf))


BAD = {
    "unreadable": (
        _yaml_entry(file="crate.glb", **{"class": "box"}, units="m"),
        _replace("crate.glb", b"glTF this is not"),
        r"crate\.glb: cannot be read as a mesh \(.+\)$",
    ),
    "no_faces": (
        _yaml_entry(),
        _replace("chair.obj", b"v 0 0 0\nv 1 0 0\nv 0 1 0\n"),
        r"chair\.obj: has no faces",
    ),
    "nan": (
        _yaml_entry(),
        _replace("chair.obj", b"v 0 0 0\nv 1 0 nan\nv 0 1 0\nf 1 2 3\n"),
        r"chair\.obj: has NaN or infinite vertex coordinates",
    ),
    "too_big": (
        _yaml_entry(file="ell.stl", **{"class": "shelf"}, units="m"),
        None,
        r"ell\.stl: is 600 × 300 × 900 m after scale 1: more than 200 m across .*assets\.0",
    ),
    "missing_file": (
        _yaml_entry(file="sofa.obj"),
        None,
        r"assets\.0\.file: 'sofa\.obj' is not a file",
    ),
    "unknown_key": (
        _yaml_entry(colour="red"),
        None,
        r"assets\.yaml: unknown asset field 'assets\.0\.colour'; allowed here: file, class",
    ),
    "dot_dot": (_yaml_entry(file="../chair.obj"), None, r"must not leave the catalogue folder"),
    "absolute": (_yaml_entry(file="/tmp/chair.obj"), None, r"must be a path relative to"),
    "link_out": (_yaml_entry(), _link_out, r"assets\.0\.file: .*leads out of the catalogue"),
    "unknown_class": (
        _yaml_entry(**{"class": "spaceship"}),
        None,
        r"assets\.0\.class: unknown semantic class 'spaceship'",
    ),
    "gltf_reference_out": (
        _yaml_entry(file="crate.gltf", **{"class": "box"}, units="m"),
        _gltf_buffer_outside,
        r"crate\.gltf: cannot be read as a mesh \(.*escapes",
    ),
    "negative_count": (
        _yaml_entry(count=-1),
        None,
        r"assets\.0\.count\.min: Input should be greater than or equal to 0",
    ),
    "units_and_scale": (_yaml_entry(scale=0.01), None, r"give units or scale, not both"),
    "placement": (
        _yaml_entry(placement="shelf"),
        None,
        r"assets\.0\.placement: Input should be 'floor'",
    ),
    "format": (_yaml_entry(file="chair.fbx"), None, r"'chair\.fbx': format not read"),
}


def _bad_catalogue(tmp_path, case: str):
    yaml_text, spoil, _ = BAD[case]
    folder = tmp_path / "bad"
    write_meshes(folder)
    (folder / "assets.yaml").write_text(yaml_text, encoding="utf-8")
    if spoil is not None:
        spoil(folder)
    return folder


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_catalogue_is_refused_in_one_line(tmp_path, case):
    folder = _bad_catalogue(tmp_path, case)
    with pytest.raises(ConfigError) as caught:
        load_assets([folder])
    message = str(caught.value)
    assert "\n" not in message
    assert re.search(BAD[case][2], message), message


def test_missing_catalogue_folder_is_refused(tmp_path):
    with pytest.raises(ConfigError, match=r"scene\.assets: .*: no such catalogue folder"):
        load_assets([tmp_path / "nowhere"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match=r"scene\.assets: .*empty: has no assets\.yaml"):
        load_assets([tmp_path / "empty"])


@pytest.mark.parametrize("case", ["unreadable", "link_out"])
def test_run_with_a_bad_catalogue_exits_2_writing_nothing(tmp_path, case):
    folder = _bad_catalogue(tmp_path, case)
    out = tmp_path / "seq"
    args = ["run", "--config", "tiny", "--set", f"scene.assets=[{folder}]", "--out", str(out)]
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    text = result.output.strip()
    assert len(text.splitlines()) == 1 and "Traceback" not in text, text
    assert re.search(BAD[case][2], text), text
    assert not out.exists()


def test_a_copy_that_finds_no_room_is_an_error_naming_its_entry(tmp_path):
    yaml_text = (
        "assets:\n  - {file: ell.stl, class: shelf, scale: 0.05, collision: {method: hull}}\n"
    )
    folder = write_catalogue(tmp_path / "c", yaml_text)  # a block 30 m long
    with pytest.raises(
        ConfigError, match=r"assets\.0\.count: 0 of at least 1 copies of 'ell\.stl'"
    ):
        _apartment(folder)
