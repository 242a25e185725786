"""Catalogue assets into a generated world: copies drawn, placed, and made objects.

A generator reads its catalogues (`load_assets`), lets `place_assets` draw each entry's count
and ask the generator's own `spot` function where each copy may stand (collision-free beside
its procedural furniture; None where none fits), then `add_mesh_objects` makes the copies
objects of its `ObjectList` showing their asset, with the assets (collision parts computed,
`collision.py`), their materials and their bytes for the layout. The draws come after every
other draw of the generator, and none is made without catalogues, so worlds without assets
keep their bytes.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from twinsim.errors import ConfigError
from twinsim.meshdata import encode_mesh_data
from twinsim.model.layout import ASSETS
from twinsim.model.scene import GeomSpec, MaterialSpec, MeshAssetSpec
from twinsim.scene.assets.catalogue import load_catalogues
from twinsim.scene.assets.collision import collision_parts
from twinsim.scene.assets.meshes import VisualMesh, load_visual_mesh
from twinsim.scene.parts import ObjectList


@dataclass(frozen=True)
class Spot:
    """Where one copy stands: its origin on the floor at (x, y), turned by `yaw`, in the room
    `room_id` (None without rooms) whose name starts the object's name."""

    x: float
    y: float
    yaw: float
    room_id: int | None = None
    room_name: str | None = None


#: a generator's placement of one copy: (the asset, the generator state) → a spot, or None
SpotFinder = Callable[[VisualMesh, np.random.Generator], Spot | None]


@dataclass(frozen=True)
class PlacedAssets:
    """What placed copies add to a layout: their assets, materials and assets' NPZ bytes."""

    specs: tuple[MeshAssetSpec, ...] = ()
    materials: tuple[MaterialSpec, ...] = ()
    blobs: Mapping[str, bytes] = field(default_factory=dict)


def load_assets(folders: Sequence[str | Path]) -> list[VisualMesh]:
    """Every entry of the catalogue folders, its mesh read and checked (`ConfigError`)."""
    return [load_visual_mesh(item) for item in load_catalogues(folders)]


def place_assets(
    assets: Sequence[VisualMesh], rng: np.random.Generator, spot: SpotFinder
) -> list[tuple[VisualMesh, Spot]]:
    """Each entry's copies (its count drawn from `rng`), in catalogue order, where `spot`
    finds room; `ConfigError` naming the entry where fewer than its `count.min` fit."""
    placed = []
    for asset in assets:
        counts = asset.item.entry.count
        wanted = int(rng.integers(counts.min, counts.max + 1))
        found = [s for s in (spot(asset, rng) for _ in range(wanted)) if s is not None]
        if len(found) < counts.min:
            hx, hy, _ = asset.footprint()
            raise ConfigError(
                f"{asset.item.where}.count: {len(found)} of at least {counts.min} copies of "
                f"{asset.item.entry.file!r} found room (footprint {2 * hx:.2f} × {2 * hy:.2f} m)"
            )
        placed += [(asset, s) for s in found]
    return placed


def add_mesh_objects(placed: Sequence[tuple[VisualMesh, Spot]], objs: ObjectList) -> PlacedAssets:
    """Add each placed copy to `objs` (named `<room>_<asset>_<k>`, geoms the boxes of its
    collision parts), computing each asset used once; the assets, materials and bytes."""
    built: dict[str, tuple[MeshAssetSpec, MaterialSpec, tuple[GeomSpec, ...], bytes]] = {}
    counts: dict[str, int] = {}
    for asset, spot in placed:
        where = asset.item.where
        if where not in built:
            built[where] = _build(asset)
        spec, _, geoms, _ = built[where]
        prefix = f"{spot.room_name}_{spec.name}" if spot.room_name else spec.name
        k = counts[prefix] = counts.get(prefix, -1) + 1
        cls = asset.item.entry.semantic_class
        objs.add(
            f"{prefix}_{k}", cls, (spot.x, spot.y, 0.0), geoms, spot.room_id, spot.yaw, spec.sha256
        )
    unique = {spec.sha256: (spec, mat, blob) for spec, mat, _, blob in built.values()}
    return PlacedAssets(
        tuple(spec for spec, _, _ in unique.values()),
        tuple(mat for _, mat, _ in unique.values()),
        {sha: blob for sha, (_, _, blob) in unique.items()},
    )


def _build(asset: VisualMesh) -> tuple[MeshAssetSpec, MaterialSpec, tuple[GeomSpec, ...], bytes]:
    """An asset's spec, material, part boxes and NPZ bytes, its collision parts computed."""
    entry = asset.item.entry
    collision = collision_parts(asset.data, entry.collision)
    data = replace(asset.data, parts=collision.parts)
    blob = encode_mesh_data(data)
    sha = hashlib.sha256(blob).hexdigest()
    material = MaterialSpec(name=f"mat_mesh_{sha[:12]}", rgba=asset.mean_rgba)
    geoms = tuple(_part_box(vertices, material.name) for vertices, _ in collision.parts)
    spec = MeshAssetSpec(
        sha256=sha,
        file=f"{ASSETS}/{sha}.npz",
        name=re.sub(r"[^A-Za-z0-9_]", "_", Path(entry.file).stem) or "mesh",
        material=material.name,
        source=entry.file,
        source_sha256=asset.source_sha256,
        scale=entry.scale_m,
        up_axis=entry.up,
        colouring=asset.colouring,
        vertices=len(data.vertices),
        faces=len(data.faces),
        collision=collision.method,
        collision_parts=len(collision.parts),
        coacd_threshold=entry.collision.threshold if entry.collision.method == "coacd" else None,
        collision_note=collision.note,
    )
    return spec, material, geoms, blob


def _part_box(vertices: np.ndarray, material: str) -> GeomSpec:
    """The box around a convex part, its faces on a 0.1 mm grid outside the part."""
    lo = np.floor(vertices.min(axis=0) * 1e4) / 1e4
    hi = np.ceil(vertices.max(axis=0) * 1e4) / 1e4
    mid, half = (lo + hi) / 2, np.maximum((hi - lo) / 2, 5e-5)
    return GeomSpec(
        type="box",
        size=tuple(round(float(h), 5) for h in half),
        pos=tuple(round(float(m), 5) for m in mid),
        material=material,
    )


def tall_box(asset: VisualMesh, above_m: float) -> tuple[float, float, float, float] | None:
    """The footprint (x0, y0, x1, y1) of what of `asset` rises above `above_m` (the bounds of
    every triangle reaching there), None if nothing does."""
    v = asset.data.vertices
    high = (v[asset.data.faces, 2] > above_m).any(axis=1)
    if not high.any():
        return None
    corners = v[asset.data.faces[high]].reshape(-1, 3)
    lo, hi = corners.min(axis=0), corners.max(axis=0)
    return (float(lo[0]), float(lo[1]), float(hi[0]), float(hi[1]))
