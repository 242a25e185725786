"""The room layer of a scene graph, for any world: the floor plan's rooms where a world has
them, else one room per connected region of its free space.

A world without rooms (the warehouse hall) gets one `open_area` room per connected region of
the cells where an agent keeps the places' clearance (at least `MIN_ROOM_AREA_M2`): the parts
an agent can move between without squeezing through, which no place edge crosses either. The
floor (`twinsim.scene.free_space.floor_region`) is shared among them by nearest region, so a
room's outline covers the obstacles standing in it (racks, pallets) and lies on the floor's
edge, the walls' centre lines, like a floor plan's rooms. Aisles between rack rows are not
rooms of their own: nothing closes them off (see docs/scene-graphs.md).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np
import shapely
import shapely.affinity
from scipy import ndimage

from twinsim.dsg.errors import DsgError
from twinsim.dsg.places import FreeGrid
from twinsim.model.scene import SceneSpec
from twinsim.scene.free_space import floor_region

FLOOR_PLAN = "floor_plan"
FREE_SPACE = "free_space"
OPEN_AREA = "open_area"  # the room type of a free-space room
MIN_ROOM_AREA_M2 = 1.0  # smaller free pockets join the nearest room

Ring = tuple[tuple[float, float], ...]


@dataclass(frozen=True)
class RoomRegion:
    """A room node's region: id, name, type, outline (x, y) points and holes."""

    room_id: int
    name: str
    type: str
    outline: Ring
    holes: tuple[Ring, ...] = ()

    @property
    def polygon(self) -> shapely.Polygon:
        return shapely.Polygon(self.outline, self.holes)


@dataclass(frozen=True)
class RegionLink:
    """A room–room edge: the two room ids, its length (centroid distance) and what joins them
    (`doors`, or in a town `via`: junction, border or crosswalk ids)."""

    a: int
    b: int
    weight: float
    metadata: dict = field(default_factory=dict)


def door_links(scene: SceneSpec, polys: dict[int, shapely.Polygon]) -> list[RegionLink]:
    """One edge per pair of rooms that doors join, listing those doors."""
    pairs: dict[tuple[int, int], list[int]] = {}
    for door in scene.doors:
        pairs.setdefault(tuple(sorted(door.rooms)), []).append(door.door_id)
    return [
        RegionLink(a, b, float(polys[a].centroid.distance(polys[b].centroid)), {"doors": doors})
        for (a, b), doors in sorted(pairs.items())
    ]


@dataclass(frozen=True)
class RoomLayer:
    """The rooms of a world, where they come from (FLOOR_PLAN or FREE_SPACE), and the
    clearance grid whose `room_id` names them."""

    source: str
    rooms: tuple[RoomRegion, ...]
    grid: FreeGrid


def room_layer(scene: SceneSpec, grid: FreeGrid, min_clearance_m: float) -> RoomLayer:
    """The floor plan's rooms, or for a world without rooms its free-space rooms."""
    if scene.rooms:
        rooms = tuple(RoomRegion(r.room_id, r.name, r.type, tuple(r.polygon)) for r in scene.rooms)
        return RoomLayer(FLOOR_PLAN, rooms, grid)
    return _free_space_rooms(scene, grid, min_clearance_m)


def _ring(coords) -> Ring:
    return tuple((float(x), float(y)) for x, y in list(coords)[:-1])


def _cells_polygon(grid: FreeGrid, mask: np.ndarray) -> shapely.Geometry:
    """The union of the grid cells in `mask` (one box per run of cells along x, joined in
    whole cells so that neighbouring rows meet exactly), in world coordinates."""
    iy, ix = np.nonzero(mask)
    cut = np.flatnonzero((np.diff(ix) != 1) | (np.diff(iy) != 0)) + 1
    first, last = np.r_[0, cut], np.r_[cut, len(ix)] - 1
    cells = shapely.union_all(shapely.box(ix[first], iy[first], ix[last] + 1, iy[first] + 1))
    c, (x0, y0) = grid.cell_m, grid.origin
    return shapely.simplify(shapely.affinity.affine_transform(cells, [c, 0, 0, c, x0, y0]), 0.0)


def _free_space_rooms(scene: SceneSpec, grid: FreeGrid, min_clearance_m: float) -> RoomLayer:
    """One room per connected region of cells keeping `min_clearance_m`, largest first."""
    if min_clearance_m <= 0:
        raise DsgError(f"min_clearance_m={min_clearance_m} must be > 0 to find free-space rooms")
    cores = grid.clearance_m >= min_clearance_m
    label, n = ndimage.label(cores, structure=np.ones((3, 3), bool))
    area = ndimage.sum(cores, label, np.arange(1, n + 1)) * grid.cell_m**2
    kept = [k + 1 for k in np.argsort(-area, kind="stable") if area[k] >= MIN_ROOM_AREA_M2]
    if not kept:
        raise DsgError(
            f"no free region of at least {MIN_ROOM_AREA_M2} m² keeps {min_clearance_m} m "
            "clearance: the world has no room for agents"
        )
    index = np.zeros(n + 1, int)
    index[kept] = np.arange(1, len(kept) + 1)
    core = index[label]  # room + 1 on the cells of kept regions, else 0
    _, (ny, nx) = ndimage.distance_transform_edt(core == 0, return_indices=True)
    nearest = core[ny, nx] - 1  # every cell's nearest room
    seeds = [
        grid.centres(*np.unravel_index(np.argmax(core == r + 1), core.shape))
        for r in range(len(kept))
    ]
    regions: dict[int, shapely.Polygon] = {}
    for piece in shapely.get_parts(floor_region(scene).plan):
        inside = [r for r, xy in enumerate(seeds) if piece.contains(shapely.Point(xy))]
        for r in inside:
            share = piece if len(inside) == 1 else piece & _cells_polygon(grid, nearest == r)
            seed = shapely.Point(seeds[r])
            regions[r] = next(p for p in shapely.get_parts(share) if p.covers(seed))
    rooms = tuple(
        RoomRegion(
            r,
            f"{OPEN_AREA}_{r}",
            OPEN_AREA,
            _ring(poly.exterior.coords),
            tuple(_ring(h.coords) for h in poly.interiors),
        )
        for r, poly in sorted(regions.items())
    )
    iy, ix = np.indices(grid.clearance_m.shape)
    xy = grid.centres(iy, ix)
    room_id = np.full(grid.clearance_m.shape, -1)
    for r, poly in sorted(regions.items()):
        hit = shapely.contains_xy(poly, xy[..., 0], xy[..., 1]) & (room_id < 0)
        room_id[hit] = r
    return RoomLayer(FREE_SPACE, rooms, dataclasses.replace(grid, room_id=room_id))
