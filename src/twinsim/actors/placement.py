"""Collision-aware placement of animated people, GRADE's way, and the map of their traces.

For each person in order, up to `attempts` tries. The first try keeps the person where the
generator proposed it (walks are routed over free floor there); every other try is GRADE's: a
position uniform over the floor plan (the union of the room rectangles, or of the floor
objects' footprints in a world without rooms: `twinsim.scene.free_space.FloorRegion`) and a
uniform yaw. The whole animation moves rigidly (waypoints turned by the yaw about the centre of
their bounding box, which goes to the new position; heading turned too), and its 3D trace —
surface points of every body part at every sampled instant of one playback period, or of the
run if that is shorter — is tested against the static world and the traces of people placed
before. More than `max_intersections` trace points inside ⇒ the try is rejected; after
`attempts` rejections the person is dropped (the result says how many were placed).

What counts as inside: static geoms (walls, furniture, lamps, door frames; floors, ceilings and
floor coverings lower than 3 cm are ignored), anything below z = -0.02 m or above the ceiling
(or above GRID_TOP_M, higher than anyone reaches), anything outside the floor plan, and the
earlier people's traces (5 cm voxels grown by two voxels, so any point within 10 cm of an
earlier trace along every axis counts).

People who keep their place (`STATIONARY_MOTIONS`) are obstacles robots plan around
(`twinsim.assemble`), so such a person never stands within `STATIONARY_PERSON_HALF_M` plus a
margin of a doorway (`FloorRegion.doorways`, the floor furniture keeps clear either side of a
door): one standing in a door would cut the rooms behind it off every tour.

The test is conservative. The trace is computed once per person, sampled finely enough that a
surface point moves at most 2·TIME_SLACK_M between samples, and thinned to one point per
TRACE_QUANTUM_M cube; the static world is a voxel grid where every voxel whose centre lies
within `_reach()` of a geom, of the outside or of the ceiling is solid. So every sampled trace
point within TIME_SLACK_M of geometry falls in a solid voxel and is counted.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import shapely
from scipy import ndimage

from twinsim.actors.motion import motion_for
from twinsim.actors.playback import HumanMotion
from twinsim.actors.surface import sample_surface_points
from twinsim.geometry import primitive_half_extents
from twinsim.model.people import PersonSpec
from twinsim.model.scene import GeomSpec, ObjectSpec
from twinsim.scene.free_space import FloorRegion, rotation_of
from twinsim.scene.overlay import union_all

SURFACE_POINTS_PER_PART = 40  # trace points per body part and instant
BASE_DT_S = 1.0 / 30.0  # first trace sampling, refined where points move faster
TIME_SLACK_M = 0.02  # half the largest step of a trace point between two samples
TRACE_QUANTUM_M = 0.015  # trace points are thinned to one per cube of this size
STATIC_CELL_M = 0.03  # voxel size of the static world
PEOPLE_CELL_M = 0.05  # voxel size of the placed people's traces
PEOPLE_GROW = 2  # placed traces grow by this many voxels: others keep ~0.1 m away
FLOOR_TOLERANCE_M = 0.02  # trace points may dip this far below the floor
FLAT_HEIGHT_M = 0.03  # geoms whose top is this low (rugs) are walked on, not into
IGNORED_CLASSES = ("floor", "ceiling")
PROBE_POINTS = 4000  # trace points tested first, to reject a bad try early
GRID_TOP_M = 4.0  # the static voxels end here (under any apartment ceiling, above any reach)
#: people who keep their place (standing, waving, sitting): obstacles to robots' planning
STATIONARY_MOTIONS = frozenset({"idle", "wave", "sit"})
STATIONARY_PERSON_HALF_M = 0.3  # half the side of the square a person keeping its place blocks
DOORWAY_MARGIN_M = 0.05  # and that square keeps this far outside every doorway

MotionFactory = Callable[[PersonSpec], HumanMotion]


def _reach() -> float:
    """How far from a geom a static voxel centre counts as solid (see the module docstring)."""
    return TIME_SLACK_M + (STATIC_CELL_M + TRACE_QUANTUM_M) * math.sqrt(3.0) / 2


@dataclass(frozen=True)
class VoxelGrid:
    """A regular grid of cubic voxels: voxel (i, j, k) spans origin + [i, i+1)·cell, …"""

    origin: np.ndarray
    cell: float
    shape: tuple[int, int, int]

    @classmethod
    def spanning(cls, lo: np.ndarray, hi: np.ndarray, cell: float) -> VoxelGrid:
        """The grid with corner `lo` that covers the box [lo, hi]."""
        n = np.maximum(np.ceil((np.asarray(hi) - lo) / cell).astype(int), 1)
        return cls(np.asarray(lo, dtype=float), cell, (int(n[0]), int(n[1]), int(n[2])))

    def index(self, pts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Flat voxel index of every point (N, 3) and whether the point lies in the grid."""
        ijk = np.floor((pts - self.origin) * (1.0 / self.cell)).astype(np.int64)
        shape = np.array(self.shape)
        inside = np.all(ijk.view(np.uint64) < shape.astype(np.uint64), axis=1)  # negatives wrap
        ijk = np.minimum(np.maximum(ijk, 0), shape - 1)
        return (ijk[:, 0] * shape[1] + ijk[:, 1]) * shape[2] + ijk[:, 2], inside

    def axes(self, lo: np.ndarray, hi: np.ndarray) -> tuple[tuple[slice, ...], list[np.ndarray]]:
        """Slices of the voxels overlapping the box [lo, hi] and their centres along each axis."""
        i0 = np.clip(np.floor((lo - self.origin) / self.cell).astype(int), 0, self.shape)
        i1 = np.clip(np.ceil((hi - self.origin) / self.cell).astype(int), 0, self.shape)
        axes = [self.origin[a] + (np.arange(i0[a], i1[a]) + 0.5) * self.cell for a in range(3)]
        return tuple(slice(a, b) for a, b in zip(i0, i1, strict=True)), axes


def _solid_distance(geom: GeomSpec, local: np.ndarray) -> np.ndarray:
    """A lower bound of the distance from points (…, 3) in the geom frame to the solid."""
    s = np.asarray(geom.size, dtype=float)
    if geom.type == "box":
        return np.linalg.norm(np.maximum(np.abs(local) - s[:3], 0.0), axis=-1)
    if geom.type == "sphere":
        return np.linalg.norm(local, axis=-1) - s[0]
    if geom.type == "capsule":
        axis = np.zeros_like(local)
        axis[..., 2] = np.clip(local[..., 2], -s[1], s[1])
        return np.linalg.norm(local - axis, axis=-1) - s[0]
    if geom.type == "cylinder":
        radial = np.maximum(np.hypot(local[..., 0], local[..., 1]) - s[0], 0.0)
        return np.hypot(radial, np.maximum(np.abs(local[..., 2]) - s[1], 0.0))
    # ellipsoid: scaling by min radius / radius contracts space and maps it onto a ball
    return s[:3].min() * (np.linalg.norm(local / s[:3], axis=-1) - 1.0)


def _floor_rects(floor: FloorRegion) -> np.ndarray:
    """The floor's rectangles (R, 4: x0, y0, x1, y1)."""
    return np.array([[r.x0, r.y0, r.x1, r.y1] for r in floor.rects], dtype=float).reshape(-1, 4)


def static_occupancy(
    objects: Sequence[ObjectSpec], floor: FloorRegion
) -> tuple[VoxelGrid, np.ndarray]:
    """The static world as solid voxels (grid, bool array), grown by `_reach()`."""
    reach = _reach()
    rects, plan, wall_height = _floor_rects(floor), floor.plan, floor.height_m
    if not len(rects):
        raise ValueError("the world has no floor to place people on")
    lo = np.array([*(rects[:, :2].min(axis=0) - 0.2), -FLOOR_TOLERANCE_M])
    hi = np.array([*(rects[:, 2:].max(axis=0) + 0.2), min(wall_height, GRID_TOP_M)])
    grid = VoxelGrid.spanning(lo, hi, STATIC_CELL_M)
    solid = np.zeros(grid.shape, dtype=bool)
    _, (xs, ys, zs) = grid.axes(lo, hi)
    inner = plan.buffer(-reach, join_style="mitre")
    solid[~shapely.contains_xy(inner, xs[:, None], ys[None, :])] = True
    solid[:, :, zs > wall_height - reach] = True
    for obj in objects:
        if not (obj.dynamic or obj.semantic_class in IGNORED_CLASSES):
            _mark_object(solid, grid, obj, reach)
    return grid, solid


def _mark_object(solid: np.ndarray, grid: VoxelGrid, obj: ObjectSpec, reach: float) -> None:
    """Set the voxels within `reach` of an object's parts (those above the flat height)."""
    r_obj = rotation_of(obj.quat)
    for geom in obj.geoms:
        rot = r_obj @ rotation_of(geom.quat)
        centre = np.asarray(obj.pos) + r_obj @ np.asarray(geom.pos)
        ext = np.abs(rot) @ primitive_half_extents(geom.type, geom.size)
        if centre[2] + ext[2] <= FLAT_HEIGHT_M:
            continue
        where, axes = grid.axes(centre - ext - reach, centre + ext + reach)
        if min(len(a) for a in axes) == 0:
            continue
        if geom.type == "box" and np.all(np.isclose(np.abs(rot), 0) | np.isclose(np.abs(rot), 1)):
            # axis-aligned box (walls, most furniture): distance per axis, broadcast
            gap = [
                np.maximum(np.abs(a - c) - e, 0.0) ** 2
                for a, c, e in zip(axes, centre, ext, strict=True)
            ]
            near = gap[0][:, None, None] + gap[1][None, :, None] + gap[2][None, None, :]
            solid[where] |= near <= reach**2
        else:
            pts = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1)
            solid[where] |= _solid_distance(geom, (pts - centre) @ rot) <= reach


@dataclass(frozen=True)
class TraceMap:
    """Placed people's traces: grown 3D voxels and the 2D clearance around their footprint."""

    grid: VoxelGrid
    voxels: np.ndarray
    clearance: np.ndarray  # (nx, ny) metres from each column centre to the nearest trace column

    @classmethod
    def build(cls, grid: VoxelGrid, voxels: np.ndarray) -> TraceMap:
        """The map of `voxels`, with the 2D clearance of their footprint."""
        footprint = voxels.any(axis=2)
        if footprint.any():
            clearance = ndimage.distance_transform_edt(~footprint) * grid.cell
        else:
            clearance = np.full(footprint.shape, np.inf)
        return cls(grid, voxels, clearance)


def clear_of_traces(xy: np.ndarray, traces: TraceMap, radius: float) -> bool | np.ndarray:
    """Whether points (…, 2) are at least `radius` (xy) from every placed person's trace."""
    pts = np.asarray(xy, dtype=float)
    flat = pts.reshape(-1, 2)
    g = traces.grid
    ij = np.floor((flat - g.origin[:2]) / g.cell).astype(int)
    inside = np.all((ij >= 0) & (ij < np.array(g.shape[:2])), axis=1)
    ij = np.clip(ij, 0, np.array(g.shape[:2]) - 1)
    # a column's clearance is measured between column centres: subtract a column's diagonal
    dist = traces.clearance[ij[:, 0], ij[:, 1]] - g.cell * math.sqrt(2.0)
    out = (~inside | (dist >= radius)).reshape(pts.shape[:-1])
    return bool(out) if out.ndim == 0 else out


def trace_times(motion: HumanMotion, duration_s: float, dt: float) -> np.ndarray:
    """Times that show every pose the motion takes during [0, duration_s], `dt` apart.

    Ping-pong playback repeats its forward pass backwards, so when the run lasts a whole period
    one forward pass (clip time 0 → cycle_s) shows them all.
    """
    if duration_s >= motion.period_s:
        start, span = -motion.spec.phase_s, motion.cycle_s
    else:
        start, span = 0.0, duration_s
    n = max(2, math.ceil(span / dt) + 1)
    return start + np.linspace(0.0, span, n)


def animation_trace(motion: HumanMotion, duration_s: float) -> np.ndarray:
    """The 3D trace of a person's animation: thinned surface points (K, 3) over all poses."""
    local = sample_surface_points(motion.model, SURFACE_POINTS_PER_PART)

    def points(t: np.ndarray) -> np.ndarray:
        T = motion.part_poses(t)
        return np.concatenate(
            [T[:, k, :3, :3] @ p.T + T[:, k, :3, 3:] for k, p in enumerate(local)], axis=2
        )

    pts = points(trace_times(motion, duration_s, BASE_DT_S))
    step = float(np.linalg.norm(np.diff(pts, axis=0), axis=1).max(initial=0.0))
    refine = math.ceil(step / (2 * TIME_SLACK_M))
    if refine > 1:
        pts = points(trace_times(motion, duration_s, BASE_DT_S / refine))
    ijk = np.floor(pts.transpose(0, 2, 1).reshape(-1, 3) / TRACE_QUANTUM_M).astype(np.int64)
    lo = ijk.min(axis=0)
    shape = tuple(ijk.max(axis=0) - lo + 1)
    seen = np.zeros(np.prod(shape), dtype=bool)
    seen[np.ravel_multi_index((ijk - lo).T, shape)] = True
    keys = np.array(np.unravel_index(np.flatnonzero(seen), shape)).T + lo
    return (keys + 0.5) * TRACE_QUANTUM_M


def _yaw_matrix(yaw: float) -> np.ndarray:
    c, s = math.cos(yaw), math.sin(yaw)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def motion_origin(person: PersonSpec) -> np.ndarray:
    """The point a placement moves and turns a person about: the centre of its waypoints."""
    pts = np.asarray(person.motion.waypoints, dtype=float)
    return (pts.min(axis=0) + pts.max(axis=0)) / 2


def moved_person(person: PersonSpec, xy: np.ndarray, yaw: float) -> PersonSpec:
    """The person turned by `yaw` about its motion origin, which is then moved to `xy`."""
    origin = motion_origin(person)
    rot = _yaw_matrix(yaw)[:2, :2]
    pts = (np.asarray(person.motion.waypoints, dtype=float) - origin) @ rot.T + xy
    heading = math.remainder(person.motion.heading + yaw, 2 * math.pi)
    motion = person.motion.model_copy(
        update={
            "waypoints": tuple((round(float(x), 4), round(float(y), 4)) for x, y in pts),
            "heading": round(heading, 6),
        }
    )
    return person.model_copy(update={"motion": motion})


@dataclass(frozen=True)
class PlacementResult:
    """The placed people (in request order), how many were asked for and placed, their traces."""

    people: tuple[PersonSpec, ...]
    requested: int
    placed: int
    traces: TraceMap


def place_people(
    candidates: Sequence[PersonSpec],
    static_objects: Sequence[ObjectSpec],
    floor: FloorRegion,
    duration_s: float,
    rng: np.random.Generator,
    attempts: int,
    max_intersections: int,
    motion_factory: MotionFactory = motion_for,
    occupied: Sequence[PersonSpec] = (),
) -> PlacementResult:
    """GRADE's placement: pose tries per person, rejected when the trace collides.

    Candidates come at their proposed world pose; `duration_s` is the whole simulated time
    (bootstrap included), so only the poses that will be played count. `occupied`: people
    already in the world (a twin adding people), whose traces count as those placed before.
    """
    grid, solid = static_occupancy(static_objects, floor)
    solid_all = solid.ravel()
    people_grid = VoxelGrid.spanning(
        grid.origin, grid.origin + np.array(grid.shape) * grid.cell, PEOPLE_CELL_M
    )
    taken = np.zeros(people_grid.shape, dtype=bool)
    for person in occupied:
        _mark(taken, people_grid, animation_trace(motion_factory(person), duration_s))
    rects = _floor_rects(floor)
    area = np.prod(rects[:, 2:] - rects[:, :2], axis=1)
    in_doorway = _doorway_test(floor)
    placed = []
    seats = {obj.instance_id: obj for obj in static_objects}
    for person in candidates:
        origin = np.array([*motion_origin(person), 0.0])
        trace = animation_trace(motion_factory(person), duration_s) - origin
        probe = trace[:: max(1, len(trace) // PROBE_POINTS)]
        seat_id, solid_flat = person.motion.seat_instance_id, solid_all
        stays = person.motion.kind in STATIONARY_MOTIONS
        if seat_id is not None:  # sitting on it is no collision; moving off it makes no sense
            seat_solid = np.zeros_like(solid)
            _mark_object(seat_solid, grid, seats[seat_id], _reach())
            solid_flat = (solid & ~seat_solid).ravel()
        for attempt in range(1 if seat_id is not None else attempts):
            if attempt == 0:  # where the generator proposed
                xy, yaw = origin[:2], 0.0
            else:
                r = rects[rng.choice(len(rects), p=area / area.sum())]
                xy, yaw = rng.uniform(r[:2], r[2:]), float(rng.uniform(-math.pi, math.pi))
            if stays and in_doorway(xy):
                continue
            move = (_yaw_matrix(yaw), np.array([xy[0], xy[1], 0.0]))
            # a sample of the trace rejects most bad tries cheaply (its hits are a lower bound)
            if _static_hits(probe @ move[0].T + move[1], grid, solid_flat) > max_intersections:
                continue
            pts = trace @ move[0].T + move[1]
            hits = _static_hits(pts, grid, solid_flat)
            if hits > max_intersections:
                continue
            p_idx, p_inside = people_grid.index(pts)
            hits += np.count_nonzero(p_inside & taken.ravel()[p_idx])
            if hits > max_intersections:
                continue
            placed.append(person if attempt == 0 else moved_person(person, xy, yaw))
            _mark(taken, people_grid, pts)
            break
    return PlacementResult(
        people=tuple(placed),
        requested=len(candidates),
        placed=len(placed),
        traces=TraceMap.build(people_grid, taken),
    )


def _doorway_test(floor: FloorRegion) -> Callable[[np.ndarray], bool]:
    """Whether a person keeping its place at xy would block a doorway of `floor`."""
    reach = STATIONARY_PERSON_HALF_M + DOORWAY_MARGIN_M
    blocked = union_all(shapely.buffer(floor.doorways, reach, join_style="mitre"))
    shapely.prepare(blocked)
    return lambda xy: bool(shapely.contains_xy(blocked, xy[0], xy[1]))


def _static_hits(pts: np.ndarray, grid: VoxelGrid, solid_flat: np.ndarray) -> int:
    """How many points are in solid voxels or outside the grid."""
    idx, inside = grid.index(pts)
    return int(np.count_nonzero(~inside | solid_flat[idx]))


def _mark(taken: np.ndarray, grid: VoxelGrid, pts: np.ndarray) -> None:
    """Set the voxels of `pts` and those up to PEOPLE_GROW voxels from them."""
    idx, inside = grid.index(pts)
    ijk = np.array(np.unravel_index(np.unique(idx[inside]), grid.shape)).T
    if not len(ijk):
        return
    lo = np.maximum(ijk.min(axis=0) - PEOPLE_GROW, 0)
    hi = np.minimum(ijk.max(axis=0) + PEOPLE_GROW + 1, grid.shape)
    core = np.zeros(hi - lo, dtype=bool)
    core[tuple((ijk - lo).T)] = True
    box = tuple(slice(a, b) for a, b in zip(lo, hi, strict=True))
    size = 2 * PEOPLE_GROW + 1
    taken[box] |= ndimage.binary_dilation(core, structure=np.ones((size,) * 3, dtype=bool))
