"""Tour planning: free space in a robot's height band, a tour of rooms through door centres (or
of via points spread over the free floor of a world without rooms), a shortcut and smoothed
path, an open-view start pose, and its timing (`plan_tour`; the drone's `plan_flight`).

Geometry is checked exactly against obstacle footprints (shapely); a 2D grid with a distance
transform gives a conservative clearance field for the graph search
(`twinsim.scene.free_space`). The tour is built on that grid (`tour`), pruned by
exact line-of-sight and smoothed by G2 cubic Bezier corner blends that are shrunk until they
keep the clearance.
"""

from __future__ import annotations

import dataclasses
import logging
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from twinsim.errors import PlanningError
from twinsim.model.scene import DoorSpec, ObjectSpec, PathPoint, RoomSpec
from twinsim.model.trajectory import Curve, MotionLimits, Trajectory, parametrize
from twinsim.robots.common.tour import (
    Anchor,
    PlannerOptions,
    RouteTooLongError,
    TourPlanner,
    TourRequest,
    TourState,
    split_at_cusps,
    turn_angles,
)
from twinsim.robots.drone.spec import DroneConfig
from twinsim.scene.free_space import (
    FloorRegion,
    FreeSpace,
    FreeSpaceError,
    build_free_space,
)

__all__ = [
    "FlightPlan",
    "PlannerOptions",
    "PlanningError",
    "StartPose",
    "TourRequest",
    "choose_start",
    "drone_request",
    "open_heading",
    "plan_flight",
    "plan_tour",
    "smooth_path",
]

_CURVE_DS_M = 0.005

log = logging.getLogger(__name__)

StartFilter = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class StartPose:
    """Start position (x, y) and heading (rad) of the robot."""

    xy: np.ndarray
    yaw: float


@dataclass(frozen=True)
class FlightPlan:
    """The planned tour (a drone's flight): start pose, timed path (for RobotSpec.path) and what
    it passes.

    `rooms_visited` lists the rooms entered within the requested duration, in order, the start
    room first (revisits repeat); `door_ids` the doors crossed to enter them. The path itself
    ends at rest a few seconds after the requested duration (`duration_s`).
    """

    start_pos: tuple[float, float, float]
    start_yaw: float
    path: tuple[PathPoint, ...]
    rooms_visited: list[int]
    door_ids: list[int]
    duration_s: float


# ------------------------------------------------------------------------------- start pose


def open_heading(
    free_space: FreeSpace, xy: np.ndarray, preferred_yaw: float, min_view_m: float = 1.5
) -> float | None:
    """The heading closest to `preferred_yaw` whose free ray is at least min_view_m long."""
    offsets = np.radians(np.arange(0, 181, 5))
    yaws = preferred_yaw + np.stack([offsets, -offsets], axis=1).ravel()
    ok = free_space.ray_lengths(xy, yaws) >= min_view_m
    return float(math.remainder(yaws[np.argmax(ok)], 2 * math.pi)) if ok.any() else None


def choose_start(
    free_space: FreeSpace,
    rng: np.random.Generator,
    *,
    candidates: np.ndarray | None = None,
    preferred_yaw: float | None = None,
    margin_m: float = 0.15,
    min_view_m: float = 1.5,
    max_tries: int = 200,
) -> StartPose:
    """A random start with clearance >= clearance_m + margin_m whose view ray is >= min_view_m.

    `candidates` (N, 2) restricts the positions (default: every grid cell in a room); the yaw is
    the open heading closest to `preferred_yaw`, or a random open heading.
    """
    need = free_space.clearance_m + margin_m
    if candidates is None:
        candidates = free_space.cell_xy(np.flatnonzero(free_space.room_of_cell >= 0))
    clear = free_space.points_clear(candidates, need)
    pool = candidates[clear]
    for i in rng.permutation(len(pool))[:max_tries]:
        wish = float(rng.uniform(-math.pi, math.pi)) if preferred_yaw is None else preferred_yaw
        yaw = open_heading(free_space, pool[i], wish, min_view_m)
        if yaw is not None:
            return StartPose(xy=pool[i].copy(), yaw=yaw)
    raise PlanningError(
        f"no start position with clearance >= {need:.2f} m and a "
        f"{min_view_m} m open view ({len(pool)} of {len(candidates)} candidates are clear)"
    )


# ------------------------------------------------------------------------------ smoothing


def _bezier(t1: np.ndarray, v: np.ndarray, t2: np.ndarray, n: int) -> tuple[np.ndarray, ...]:
    """Samples of the cubic Bezier (t1, v, v, t2): points, first and second derivatives."""
    u = np.linspace(0.0, 1.0, n)[:, None]
    p = (1 - u) ** 3 * t1 + 3 * (1 - u) * u * v + u**3 * t2
    d1 = 3 * (1 - u) ** 2 * (v - t1) + 3 * u**2 * (t2 - v)
    d2 = 6 * (1 - u) * (t1 - v) + 6 * u * (t2 - v)
    return p, d1, d2


def smooth_path(fs: FreeSpace, poly: np.ndarray, min_clear: float, guaranteed: float) -> Curve:
    """G2 curve: each polyline corner replaced by a cubic Bezier blend keeping >= min_clear.

    The blend (T1, V, V, T2) is tangent to both legs with zero end curvature and stays within
    its tangent length L of the corner V, so L <= `guaranteed` (corner clearance minus
    min_clear) always passes; longer blends are checked exactly and halved until they pass.
    """
    poly = poly[np.concatenate([[True], np.linalg.norm(np.diff(poly, axis=0), axis=1) > 1e-9])]
    seg_len = np.linalg.norm(np.diff(poly, axis=0), axis=1)
    unit = np.diff(poly, axis=0) / seg_len[:, None]
    corners = np.flatnonzero(turn_angles(poly) > 1e-6) + 1
    tangent = np.minimum(np.minimum(seg_len[corners - 1], seg_len[corners]) * 0.5, 1.5)
    pieces = [(poly[:1], unit[:1], np.zeros(1))]
    for k, c in enumerate(corners):
        while True:
            t_len = tangent[k]
            n = int(300 * t_len) + 16
            p, d1, d2 = _bezier(
                poly[c] - t_len * unit[c - 1], poly[c], poly[c] + t_len * unit[c], n
            )
            if t_len <= guaranteed or np.min(fs.clearance_at(p)) >= min_clear:
                break
            tangent[k] = max(guaranteed, 0.5 * t_len)
        cross = d1[:, 0] * d2[:, 1] - d1[:, 1] * d2[:, 0]
        pieces.append((p, d1, cross / np.linalg.norm(d1, axis=1) ** 3))
    pieces.append((poly[-1:], unit[-1:], np.zeros(1)))
    xy, tan, curv = (np.concatenate(parts) for parts in zip(*pieces, strict=True))
    sel = np.concatenate([[True], np.linalg.norm(np.diff(xy, axis=0), axis=1) > 1e-12])
    xy, tan, curv = xy[sel], tan[sel], curv[sel]
    s = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(xy, axis=0), axis=1))])
    heading = np.unwrap(np.arctan2(tan[:, 1], tan[:, 0]))
    s_u = np.linspace(0.0, s[-1], max(2, math.ceil(s[-1] / _CURVE_DS_M) + 1))
    return Curve(
        s=s_u,
        xy=np.stack([np.interp(s_u, s, xy[:, 0]), np.interp(s_u, s, xy[:, 1])], axis=1),
        heading=np.interp(s_u, s, heading),
        curvature=np.interp(s_u, s, curv),
    )


# ------------------------------------------------------------------------------ top level


def drone_request(cfg: DroneConfig, options: PlannerOptions | None = None) -> TourRequest:
    """The tour a drone flies: the band flight height ± `clearance_z_m`, its clearance and
    limits, its path at flight height."""
    opt = options or PlannerOptions()
    return TourRequest(
        band_centre_m=cfg.flight_height_m,
        band_half_m=opt.clearance_z_m,
        clearance_m=cfg.clearance_m,
        max_speed_mps=cfg.max_speed_mps,
        max_yaw_rate_dps=cfg.max_yaw_rate_dps,
        path_z_m=cfg.flight_height_m,
        min_rooms_visited=cfg.min_rooms_visited,
    )


def plan_flight(
    *,
    rooms: Sequence[RoomSpec],
    doors: Sequence[DoorSpec],
    objects: Sequence[ObjectSpec],
    wall_height: float,
    robot_cfg: DroneConfig,
    duration_s: float,
    rng: np.random.Generator,
    options: PlannerOptions | None = None,
    start_allowed: StartFilter | None = None,
) -> FlightPlan:
    """A drone's tour (`plan_tour` for `drone_request(robot_cfg)`)."""
    return plan_tour(
        rooms=rooms,
        doors=doors,
        objects=objects,
        wall_height=wall_height,
        request=drone_request(robot_cfg, options),
        duration_s=duration_s,
        rng=rng,
        options=options,
        start_allowed=start_allowed,
    )


def plan_tour(
    *,
    rooms: Sequence[RoomSpec],
    doors: Sequence[DoorSpec],
    objects: Sequence[ObjectSpec],
    wall_height: float,
    request: TourRequest,
    duration_s: float,
    rng: np.random.Generator,
    options: PlannerOptions | None = None,
    start_allowed: StartFilter | None = None,
) -> FlightPlan:
    """Plan a collision-free tour of at least duration_s through >= min_rooms_visited rooms.

    A tour too short to reach that many rooms enters as many as fit (a warning is logged;
    `FlightPlan.rooms_visited` says which). In a world without rooms (its floor is its floor
    objects) the tour goes through via points spread over the free floor, and
    `min_rooms_visited` does not apply (`rooms_visited` is empty). `start_allowed` (N, 2) →
    (N,) bool keeps the start away from places it must avoid, such as people's walking traces.

    The robot starts at rest facing open space (>= min_view_m), turns on the spot if that
    differs from the route's first direction (and at corners too sharp to go round), and goes
    through door centres facing where it goes. Obstacles count where they overlap the
    request's height band. All randomness is from `rng`.
    """
    opt = options or PlannerOptions()
    floor = FloorRegion.of(rooms, doors, objects, wall_height)
    if not floor.areas:
        raise PlanningError("the scene has no rooms and no floor to move over")
    h, cz = request.band_centre_m, request.band_half_m
    lowest_door = min((d.height for d in doors), default=wall_height)
    if h - cz <= 0.0 or h + cz >= min(wall_height, lowest_door):
        raise PlanningError(
            f"flight band {h - cz:.2f}..{h + cz:.2f} m must lie between the floor and "
            f"min(ceiling {wall_height:.2f} m, lowest door {lowest_door:.2f} m)"
        )
    try:
        fs = build_free_space(
            floor,
            objects,
            flight_height_m=h,
            clearance_m=request.clearance_m,
            clearance_z_m=cz,
            cell_m=opt.cell_m,
        )
    except FreeSpaceError as exc:
        raise PlanningError(str(exc)) from None
    planner = TourPlanner(fs, floor.areas, doors, request, opt, spread=not floor.has_rooms)
    if not floor.has_rooms:
        plan = _tour(fs, planner, request, opt, 0, duration_s, rng, start_allowed)
        return dataclasses.replace(plan, rooms_visited=[], door_ids=[])
    need = min(request.min_rooms_visited, len(rooms))
    best: FlightPlan | None = None
    for _ in range(opt.tour_attempts):
        plan = _tour(fs, planner, request, opt, need, duration_s, rng, start_allowed)
        if len(set(plan.rooms_visited)) >= need:
            return plan
        if best is None or len(set(plan.rooms_visited)) > len(set(best.rooms_visited)):
            best = plan
    # A tour too short for the requested rooms still goes: it enters as many rooms as fit.
    log.warning(
        "in %s s the tour enters %d of the %d rooms requested (each 90 deg turn takes >= %.0f s)",
        duration_s,
        len(set(best.rooms_visited)),
        need,
        90 / request.max_yaw_rate_dps,
    )
    return best


def _tour(
    fs: FreeSpace,
    planner: TourPlanner,
    req: TourRequest,
    opt: PlannerOptions,
    need: int,
    duration_s: float,
    rng: np.random.Generator,
    start_allowed: StartFilter | None,
) -> FlightPlan:
    """One random tour from a random start, timed and cut after duration_s; rooms entered."""
    state = _start_state(fs, planner, need, opt, rng, start_allowed)
    limits = MotionLimits(
        max_speed_mps=req.max_speed_mps,
        max_yaw_rate_dps=req.max_yaw_rate_dps,
        max_accel_mps2=opt.max_accel_mps2,
        max_lateral_accel_mps2=opt.max_lateral_accel_mps2,
    )
    pace_mps = 0.8 * req.max_speed_mps  # a tour's mean speed, counting turns and doors
    target_m = pace_mps * duration_s
    for _ in range(10):
        try:
            planner.extend(state, target_m, need, rng)
        except RouteTooLongError as exc:
            longest_s = exc.length_m / pace_mps
            raise PlanningError(
                f"sim.duration_s={duration_s:g} s is longer than a tour of this world can last: "
                f"a route has at most {exc.legs} legs ({exc.length_m:.0f} m here, "
                f"~{longest_s:.0f} s at {pace_mps:g} m/s); allowed: at most ~{longest_s:.0f} s"
            ) from None
        route = planner.finish(state, rng)
        curves = [
            smooth_path(fs, piece, req.clearance_m + opt.margin_m / 2, opt.margin_m / 2)
            for piece in split_at_cusps(route)
        ]
        first = route[1] - route[0]
        yaw = open_heading(fs, route[0], math.atan2(first[1], first[0]), opt.min_view_m)
        if yaw is None:  # the start was chosen with an open view, so this cannot be None
            raise PlanningError(f"start {route[0]} lost its open view")
        points = parametrize(
            curves,
            limits,
            z_m=req.path_z_m,
            start_yaw=yaw,
            dt_s=opt.dt_s,
            stop_after_s=duration_s,
        )
        if points[-1].t_s >= duration_s:
            break
        target_m = state.length_m + (duration_s - points[-1].t_s + 2.0) * req.max_speed_mps
    else:
        raise PlanningError(f"could not make a route lasting {duration_s} s")
    traj = Trajectory(points)
    t = np.arange(0.0, traj.duration_s, 0.02)
    xy = traj.sample(t).pos[:, :2]
    crossed = [planner.door_centres[d] for d in state.doors]
    _verify(fs, xy, req.clearance_m, planner.door_min, crossed, opt)
    n_doors = _doors_crossed(xy[t <= duration_s], crossed)
    return FlightPlan(
        start_pos=points[0].pos,
        start_yaw=points[0].yaw,
        path=points,
        rooms_visited=state.rooms[: n_doors + 1],
        door_ids=state.doors[:n_doors],
        duration_s=points[-1].t_s,
    )


def _doors_crossed(xy: np.ndarray, centres: list[np.ndarray]) -> int:
    """How many of the route's door crossings, in order, the positions pass (within 2 cm)."""
    i = 0
    for k, centre in enumerate(centres):
        dist = np.linalg.norm(xy[i:] - centre, axis=1)
        hits = np.flatnonzero(dist <= 0.02)
        if len(hits) == 0:
            return k
        away = np.flatnonzero(dist[hits[0] :] > 0.3)  # leave the doorway before the next one
        i += int(hits[0] + (away[0] if len(away) else len(dist)))
    return len(centres)


def _start_state(
    fs: FreeSpace,
    planner: TourPlanner,
    need: int,
    opt: PlannerOptions,
    rng: np.random.Generator,
    start_allowed: StartFilter | None,
) -> TourState:
    """Pick the start among places from which `need` rooms are reachable; the tour's origin."""
    pool, best = [], set()
    for room_id, graph in planner.graphs.items():
        for comp in np.unique(graph.comp):
            reach = planner.reachable_rooms((room_id, int(comp)))
            best = max(best, reach, key=len)
            if len(reach) >= need:
                pool.append(graph.xy[graph.comp == comp])
    if not pool:
        raise PlanningError(
            f"cannot visit {need} rooms: at most {len(best)} are connected ({sorted(best)}); "
            + "; ".join(planner.problems)
        )
    pool_xy = np.concatenate(pool)
    doorways = np.array(list(planner.door_centres.values())).reshape(-1, 2)
    if len(doorways):  # keep the start out of doorways and their approach lines
        near = np.linalg.norm(pool_xy[:, None] - doorways[None], axis=2).min(axis=1) < 1.0
        pool_xy = pool_xy[~near] if not near.all() else pool_xy
    if start_allowed is not None:
        allowed = start_allowed(pool_xy)
        if not allowed.any():
            raise PlanningError("no start position is clear of the people's walking traces")
        pool_xy = pool_xy[allowed]
    start = choose_start(
        fs,
        rng,
        candidates=pool_xy,
        margin_m=opt.start_margin_m,
        min_view_m=opt.min_view_m,
    )
    room = int(fs.room_of_cell.ravel()[fs.cell_index(start.xy)])
    graph = planner.graphs[room]
    node = graph.node_at(fs, start.xy)
    return TourState(
        place=(room, int(graph.comp[node])),
        entry=Anchor(point=graph.xy[node], node=node),
        rooms=[room],
        visits={room: 1},
    )


def _verify(
    fs: FreeSpace,
    xy: np.ndarray,
    clearance_m: float,
    door_min: float,
    door_centres: list[np.ndarray],
    opt: PlannerOptions,
) -> None:
    """Check sampled reference positions keep their clearance; a failure is a planner bug."""
    need = np.full(len(xy), clearance_m)
    for centre in door_centres:  # door crossings may be narrower (5 mm for spline sampling)
        near = np.linalg.norm(xy - centre, axis=1) <= max(opt.approach_m) + 0.01
        need[near] = min(clearance_m, door_min - 0.005)
    clear = fs.clearance_at(xy)
    if np.any(clear < need):
        k = int(np.argmin(clear - need))
        raise PlanningError(
            f"planned path passes {clear[k]:.3f} m from an obstacle at {xy[k]} "
            f"(needs {need[k]:.3f} m)"
        )
