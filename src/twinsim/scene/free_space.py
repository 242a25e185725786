"""Generic free space: a world's walkable floor, the clear height above it, and the free region
at a height band with its clearance grid (what planners, people and flying objects use).

`FloorRegion` is built from any world (a generator's layout or a `SceneSpec`): from its rooms
and door openings where it has them, else from the footprints of its floor objects, so a
world without rooms (a warehouse hall) needs no floor plan. `build_free_space` subtracts the
footprints of the static obstacles in a height band; `FreeSpace` answers exact clearance
queries (an STRtree of the free region's boundary) and holds a conservative per-cell clearance
grid (distance transform) for graph searches.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Sequence
from dataclasses import astuple, dataclass

import numpy as np
import shapely
from scipy import ndimage

from twinsim.errors import TwinsimError
from twinsim.geometry import primitive_half_extents, quat_wxyz_to_matrix
from twinsim.model.scene import DoorSpec, GeomSpec, ObjectSpec, RoomSpec
from twinsim.scene.furniture.furnish import door_keepout
from twinsim.scene.layout import Rect, room_rect
from twinsim.scene.overlay import difference, union_all

_ROUND_TYPES = ("cylinder", "capsule", "sphere", "ellipsoid")
_N_POLY = 16
_UNIT_POLY = np.stack(
    [
        np.cos(np.arange(_N_POLY) * 2 * np.pi / _N_POLY),
        np.sin(np.arange(_N_POLY) * 2 * np.pi / _N_POLY),
    ],
    axis=1,
) / math.cos(math.pi / _N_POLY)  # circumscribes the unit circle
_BOX_CORNERS = np.array(list(itertools.product((-1.0, 1.0), repeat=3)))
FLOOR_CLASS = "floor"
# outdoors, what people and vehicles move over is floor too (and never an obstacle)
FLOOR_CLASSES = (FLOOR_CLASS, "road", "sidewalk", "crosswalk", "road_marking")
IGNORED_CLASSES = (*FLOOR_CLASSES, "ceiling")  # never obstacles at a band above the floor
OPEN_AREA_ID = 0  # the one area of a world without rooms


class FreeSpaceError(TwinsimError):
    """A world leaves no free space where it is needed (no floor, or every place blocked)."""


@functools.lru_cache(maxsize=4096)
def rotation_of(quat: tuple[float, ...]) -> np.ndarray:
    """`quat_wxyz_to_matrix` of a (w, x, y, z) quaternion, once per distinct one (a world's
    thousands of geoms share a few), read-only."""
    rot = quat_wxyz_to_matrix(quat)
    rot.flags.writeable = False
    return rot


def geom_footprint(obj: ObjectSpec, geom: GeomSpec) -> tuple[shapely.Polygon, float, float]:
    """World xy footprint of a geom (exact for upright boxes, else conservative) and z range."""
    rot_obj = rotation_of(obj.quat)
    rot = rot_obj @ rotation_of(geom.quat)
    centre = np.asarray(obj.pos, dtype=float) + rot_obj @ np.asarray(geom.pos, dtype=float)
    half = primitive_half_extents(geom.type, geom.size)
    if geom.type == "sphere":
        z_half, outline = half[0], _UNIT_POLY * half[0]
    else:
        z_half = float(np.abs(rot[2]) @ half)
        if geom.type in _ROUND_TYPES and abs(rot[2, 2]) > 1.0 - 1e-9:
            outline = (_UNIT_POLY * half[:2]) @ rot[:2, :2].T
        else:
            outline = (_BOX_CORNERS * half) @ rot[:2, :].T
    poly = shapely.convex_hull(shapely.multipoints(outline + centre[:2]))
    return poly, centre[2] - z_half, centre[2] + z_half


def door_normal(door: DoorSpec) -> np.ndarray:
    """Unit xy normal of the wall a door is in."""
    return np.array([0.0, 1.0]) if door.axis == "x" else np.array([1.0, 0.0])


def door_gap(door: DoorSpec, depth_m: float = 0.5) -> shapely.Polygon:
    """The opening of a door as a rectangle across the wall (bridges wall gaps between rooms)."""
    along = np.array([1.0, 0.0]) if door.axis == "x" else np.array([0.0, 1.0])
    half = along * door.width / 2 + door_normal(door) * depth_m / 2
    lo = np.asarray(door.center) - np.abs(half)
    hi = np.asarray(door.center) + np.abs(half)
    return shapely.box(lo[0], lo[1], hi[0], hi[1])


@dataclass(frozen=True, eq=False)
class FloorRegion:
    """The walkable floor of a world and the clear height above it.

    `areas` are the parts searched separately (a room each, or the whole floor as area
    OPEN_AREA_ID in a world without rooms), `openings` the door openings joining them, `rects`
    axis-aligned rectangles covering the floor (to draw places from), `plan` their union,
    `doorways` the floor kept clear either side of each door (furniture's `door_keepout`: robots
    cross doors there, so nothing that stays put may stand in it).
    """

    areas: tuple[tuple[int, shapely.Geometry], ...]
    openings: tuple[shapely.Polygon, ...]
    rects: tuple[Rect, ...]
    plan: shapely.Geometry
    height_m: float
    has_rooms: bool
    doorways: tuple[shapely.Polygon, ...] = ()

    @classmethod
    def of(
        cls,
        rooms: Sequence[RoomSpec] = (),
        doors: Sequence[DoorSpec] = (),
        objects: Sequence[ObjectSpec] = (),
        height_m: float = math.inf,
    ) -> FloorRegion:
        """The floor of rooms (rectangles on wall centre lines) and doors, or, with no rooms,
        of the floor objects' footprints."""
        if rooms:
            room_ids = {r.room_id for r in rooms}
            rects = tuple(room_rect(r) for r in rooms)
            return cls(
                areas=tuple((r.room_id, shapely.Polygon(r.polygon)) for r in rooms),
                openings=tuple(door_gap(d) for d in doors if set(d.rooms) <= room_ids),
                rects=rects,
                plan=union_all([shapely.box(r.x0, r.y0, r.x1, r.y1) for r in rects]),
                height_m=height_m,
                has_rooms=True,
                doorways=tuple(
                    shapely.box(*astuple(door_keepout(d)))
                    for d in doors
                    if set(d.rooms) <= room_ids
                ),
            )
        pieces = [
            geom_footprint(obj, geom)[0]
            for obj in objects
            if obj.semantic_class in FLOOR_CLASSES and not obj.dynamic
            for geom in obj.geoms
        ]
        plan = union_all(pieces)
        return cls(
            areas=((OPEN_AREA_ID, plan),) if pieces else (),
            openings=(),
            rects=tuple(Rect(*p.bounds) for p in pieces),
            plan=plan,
            height_m=height_m,
            has_rooms=False,
        )


def floor_region(world) -> FloorRegion:
    """The floor of a world: anything with rooms, doors, objects and wall_height (a generator's
    layout or a `SceneSpec`)."""
    return FloorRegion.of(world.rooms, world.doors, world.objects, world.wall_height)


class FreeSpace:
    """Where a body's centre can be in a height band.

    `region` is the free area (floor areas and door openings minus obstacle footprints, not
    inflated); exact clearances come from an STRtree of its boundary. `grid_clearance` is a
    conservative per-cell lower bound of the clearance (distance transform), used for graph
    search; `room_of_cell` the area (room) of each cell, -1 outside every area.
    """

    def __init__(
        self,
        region: shapely.Geometry,
        areas: Sequence[tuple[int, shapely.Geometry]],
        clearance_m: float,
        cell_m: float,
    ) -> None:
        if region.is_empty:
            raise FreeSpaceError("no free space at flight height: the whole floor is blocked")
        self.region = region
        self.clearance_m = clearance_m
        self.cell_m = cell_m
        shapely.prepare(region)
        rings = shapely.get_rings(shapely.get_parts(region))
        segs = [
            np.stack([c[:-1], c[1:]], axis=1) for c in (shapely.get_coordinates(r) for r in rings)
        ]
        self._segments = shapely.linestrings(np.concatenate(segs))
        self._tree = shapely.STRtree(self._segments)

        polys = [poly for _, poly in areas]
        bounds = np.array([p.bounds for p in polys])
        self.origin = bounds[:, :2].min(axis=0) - 2 * cell_m
        size = bounds[:, 2:].max(axis=0) + 2 * cell_m - self.origin
        self.shape = (math.ceil(size[1] / cell_m), math.ceil(size[0] / cell_m))  # (ny, nx)
        xs = self.origin[0] + (np.arange(self.shape[1]) + 0.5) * cell_m
        ys = self.origin[1] + (np.arange(self.shape[0]) + 0.5) * cell_m
        gx, gy = np.meshgrid(xs, ys)
        # a cell is blocked if any part of it is outside the free region: test its centre
        # against the region eroded by half a cell diagonal; EDT then under-estimates by <= that.
        half_diag = cell_m / math.sqrt(2.0)
        inside = shapely.contains_xy(region.buffer(-half_diag), gx, gy)
        self.grid_clearance = ndimage.distance_transform_edt(inside) * cell_m - half_diag
        self.room_of_cell = np.full(self.shape, -1, dtype=int)
        for (area_id, _), poly in zip(areas, polys, strict=True):
            hit = shapely.contains_xy(poly, gx, gy) & (self.room_of_cell < 0)
            self.room_of_cell[hit] = area_id

    def cell_index(self, xy: np.ndarray) -> int:
        """Flat index of the grid cell containing xy."""
        ix, iy = np.floor((np.asarray(xy) - self.origin) / self.cell_m).astype(int)
        return int(np.ravel_multi_index((iy, ix), self.shape))

    def cell_xy(self, flat: np.ndarray) -> np.ndarray:
        """Centres (N, 2) of grid cells given by flat indices."""
        iy, ix = np.unravel_index(np.asarray(flat), self.shape)
        return self.origin + (np.stack([ix, iy], axis=-1) + 0.5) * self.cell_m

    def clearance_at(self, xy: np.ndarray) -> float | np.ndarray:
        """Exact distance to the nearest obstacle or floor boundary; negative inside obstacles."""
        pts = np.asarray(xy, dtype=float)
        flat = pts.reshape(-1, 2)
        _, dist = self._tree.query_nearest(
            shapely.points(flat), return_distance=True, all_matches=False
        )
        inside = shapely.contains_xy(self.region, flat[:, 0], flat[:, 1])
        out = np.where(inside, dist, -dist).reshape(pts.shape[:-1])
        return float(out) if out.ndim == 0 else out

    def points_clear(self, xy: np.ndarray, min_clearance: float) -> np.ndarray:
        """Exactly whether each point (N, 2) has clearance >= `min_clearance`, as `clearance_at`
        says; a point at a grid cell's centre is queried only where the grid cannot tell: its
        clearance lies within [g, g + a cell diagonal] of the cell's bound g (the nearest
        blocked cell centre is within half a diagonal of the boundary; 2 % more for the
        polygonal erosion)."""
        xy = np.asarray(xy, dtype=float).reshape(-1, 2)
        idx = np.floor((xy - self.origin) / self.cell_m).astype(int)
        ny, nx = self.shape
        in_grid = (idx >= 0).all(axis=1) & (idx[:, 0] < nx) & (idx[:, 1] < ny)
        flat = np.where(in_grid, idx[:, 1] * nx + idx[:, 0], 0)
        centre = in_grid & (self.cell_xy(flat) == xy).all(axis=1)
        bound = np.where(centre, self.grid_clearance.ravel()[flat], -np.inf)
        diagonal = 1.02 * self.cell_m * math.sqrt(2.0)
        sure = bound >= min_clearance + 1e-9
        unsure = np.flatnonzero(~sure & (~centre | (bound + diagonal + 1e-9 >= min_clearance)))
        if len(unsure):
            sure[unsure] = np.atleast_1d(self.clearance_at(xy[unsure])) >= min_clearance
        return sure

    def is_free(self, xy: np.ndarray) -> bool | np.ndarray:
        """Whether the centre may be at xy (clearance >= the body's clearance_m)."""
        return np.asarray(self.clearance_at(xy)) >= self.clearance_m

    def segments_clear(
        self, a: np.ndarray, b: np.ndarray, min_clearance: float | np.ndarray
    ) -> np.ndarray:
        """Exactly whether each segment a->b[i] keeps at least `min_clearance` everywhere."""
        b = np.atleast_2d(np.asarray(b, dtype=float))
        a = np.broadcast_to(np.asarray(a, dtype=float), b.shape)
        lines = shapely.linestrings(np.stack([a, b], axis=1))
        dist = np.broadcast_to(np.asarray(min_clearance, dtype=float), (len(lines),))
        hit = self._tree.query(lines, predicate="dwithin", distance=dist)[0]
        ok = shapely.contains_xy(self.region, a[:, 0], a[:, 1])
        ok[hit] = False
        return ok

    def ray_lengths(self, xy: np.ndarray, yaws: np.ndarray, max_m: float = 10.0) -> np.ndarray:
        """Free length of rays from xy along each heading, up to the first obstacle (<= max_m)."""
        yaws = np.asarray(yaws, dtype=float)
        ends = np.asarray(xy) + max_m * np.stack([np.cos(yaws), np.sin(yaws)], axis=1)
        rays = shapely.linestrings(np.stack([np.broadcast_to(xy, ends.shape), ends], axis=1))
        ray_idx, seg_idx = self._tree.query(rays, predicate="intersects")
        hits = shapely.intersection(rays[ray_idx], self._segments[seg_idx])
        out = np.full(len(yaws), max_m)
        np.minimum.at(out, ray_idx, shapely.distance(shapely.points(xy), hits))
        return out


def build_free_space(
    floor: FloorRegion,
    objects: Sequence[ObjectSpec],
    *,
    flight_height_m: float,
    clearance_m: float,
    clearance_z_m: float = 0.3,
    cell_m: float = 0.05,
    openings: bool = True,
) -> FreeSpace:
    """Free space in the band flight_height +- clearance_z: the floor's areas (and its door
    openings, with `openings`) minus the footprints of obstacles in the band.

    Obstacles are the geoms of every static object except floors and ceilings whose z range
    overlaps the band; dynamic objects (actors) are ignored.
    """
    if not floor.areas:
        raise FreeSpaceError("the world has no floor: no rooms and no floor objects")
    z_lo, z_hi = flight_height_m - clearance_z_m, flight_height_m + clearance_z_m
    areas = [poly for _, poly in floor.areas]
    if openings:
        areas += list(floor.openings)
    blocks = []
    for obj in objects:
        if obj.dynamic or obj.semantic_class in IGNORED_CLASSES:
            continue
        for geom in obj.geoms:
            poly, z_min, z_max = geom_footprint(obj, geom)
            if z_max > z_lo and z_min < z_hi:
                blocks.append(poly)
    region = difference(union_all(areas), union_all(blocks))
    return FreeSpace(region, floor.areas, clearance_m, cell_m)
