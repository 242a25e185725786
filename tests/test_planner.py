"""Flight planner and trajectory: clearance, limits, rooms and doors, start view, exact replay.

The scenes are built here from boxes and cylinders, and clearances are re-computed with shapely
independently of the planner's own geometry code.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest
import shapely

from twinsim.errors import TwinsimError
from twinsim.model.scene import DoorSpec, GeomSpec, ObjectSpec, PathPoint, RoomSpec
from twinsim.model.trajectory import Curve, MotionLimits, Trajectory, parametrize
from twinsim.robots.common.planner import (
    FlightPlan,
    PlannerOptions,
    PlanningError,
    choose_start,
    plan_flight,
    smooth_path,
)
from twinsim.robots.drone.spec import DroneConfig
from twinsim.scene.free_space import FloorRegion, build_free_space

WALL_H = 2.7
WALL_T = 0.1
DOOR_H = 2.05
JAMB = 0.04  # door frame jambs narrow the opening by this much on each side


# ------------------------------------------------------------------------------ scene builders


@dataclass
class Scene:
    rooms: tuple[RoomSpec, ...]
    doors: tuple[DoorSpec, ...]
    objects: tuple[ObjectSpec, ...]
    wall_height: float = WALL_H

    def plan(self, cfg: DroneConfig, duration_s: float, seed: int, **opt) -> FlightPlan:
        return plan_flight(
            rooms=self.rooms,
            doors=self.doors,
            objects=self.objects,
            wall_height=self.wall_height,
            robot_cfg=cfg,
            duration_s=duration_s,
            rng=np.random.default_rng(seed),
            options=PlannerOptions(**opt),
        )


class Builder:
    """Collects rooms (rectangles on wall centre lines), doors, walls and furniture."""

    def __init__(self) -> None:
        self.rooms: list[RoomSpec] = []
        self.doors: list[DoorSpec] = []
        self.objects: list[ObjectSpec] = []

    def _add(self, name: str, cls: str, pos, geoms, yaw: float = 0.0) -> None:
        quat = (math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2))
        self.objects.append(
            ObjectSpec(
                instance_id=len(self.objects) + 1,
                name=name,
                semantic_class=cls,
                pos=pos,
                quat=quat,
                geoms=tuple(geoms),
            )
        )

    def room(self, x0: float, y0: float, x1: float, y1: float) -> None:
        i = len(self.rooms)
        poly = ((x0, y0), (x1, y0), (x1, y1), (x0, y1))
        self.rooms.append(RoomSpec(room_id=i, type="office", name=f"room_{i}", polygon=poly))

    def door(self, a: int, b: int, center: tuple[float, float], axis: str, width: float) -> None:
        self.doors.append(
            DoorSpec(
                door_id=len(self.doors),
                rooms=(a, b),
                center=center,
                width=width,
                height=DOOR_H,
                axis=axis,
            )
        )

    def box(self, name: str, cls: str, center, half, yaw: float = 0.0) -> None:
        geom = GeomSpec(type="box", size=tuple(half), material="m")
        self._add(name, cls, tuple(center), [geom], yaw)

    def cylinder(self, name: str, cls: str, center, radius: float, half_h: float) -> None:
        geom = GeomSpec(type="cylinder", size=(radius, half_h), material="m")
        self._add(name, cls, tuple(center), [geom])

    def wall(self, p0: tuple[float, float], p1: tuple[float, float]) -> None:
        """A wall along x or y from p0 to p1, cut at the doors on it (lintels above, jambs)."""
        axis = "x" if p0[1] == p1[1] else "y"
        k = 0 if axis == "x" else 1
        line = p0[1 - k]
        lo, hi = sorted((p0[k], p1[k]))
        cuts = sorted(
            (d.center[k] - d.width / 2, d.center[k] + d.width / 2)
            for d in self.doors
            if d.axis == axis and abs(d.center[1 - k] - line) < 1e-9 and lo < d.center[k] < hi
        )
        runs, s = [], lo - WALL_T / 2
        for c0, c1 in cuts:
            runs += [(s, c0, 0.0, WALL_H), (c0, c1, DOOR_H, WALL_H)]
            runs += [(c0, c0 + 2 * JAMB, 0.0, DOOR_H), (c1 - 2 * JAMB, c1, 0.0, DOOR_H)]
            s = c1
        runs.append((s, hi + WALL_T / 2, 0.0, WALL_H))
        geoms = []
        for s0, s1, z0, z1 in runs:
            along, half_along = (s0 + s1) / 2, (s1 - s0) / 2
            pos = (along, line, (z0 + z1) / 2) if axis == "x" else (line, along, (z0 + z1) / 2)
            size = (half_along, WALL_T / 2, (z1 - z0) / 2)
            size = size if axis == "x" else (size[1], size[0], size[2])
            geoms.append(GeomSpec(type="box", size=size, pos=pos, material="m"))
        self._add(f"wall_{len(self.objects)}", "wall", (0.0, 0.0, 0.0), geoms)

    def shell(self, walls: list[tuple[tuple[float, float], tuple[float, float]]]) -> Scene:
        """Walls (after all doors are known), floor and ceiling slabs, and the scene."""
        for p0, p1 in walls:
            self.wall(p0, p1)
        xs = [p[0] for r in self.rooms for p in r.polygon]
        ys = [p[1] for r in self.rooms for p in r.polygon]
        c = ((min(xs) + max(xs)) / 2, (min(ys) + max(ys)) / 2)
        half = ((max(xs) - min(xs)) / 2 + 0.1, (max(ys) - min(ys)) / 2 + 0.1)
        self.box("floor", "floor", (*c, -0.025), (*half, 0.025))
        self.box("ceiling", "ceiling", (*c, WALL_H + 0.025), (*half, 0.025))
        return Scene(tuple(self.rooms), tuple(self.doors), tuple(self.objects))


def four_rooms(door_width: float = 1.2, clutter_room3: bool = False) -> Scene:
    """2x2 rooms on an 8 x 6 m footprint, doors 0-1, 0-2, 1-3 (2 and 3 are not connected)."""
    b = Builder()
    b.room(0, 0, 4, 3)
    b.room(4, 0, 8, 3)
    b.room(0, 3, 4, 6)
    b.room(4, 3, 8, 6)
    b.door(0, 1, (4.0, 1.5), "y", door_width)
    b.door(0, 2, (2.0, 3.0), "x", door_width)
    b.door(1, 3, (6.0, 3.0), "x", door_width)
    b.box("wardrobe", "wardrobe", (0.4, 2.2, 1.0), (0.3, 0.6, 1.0))
    b.box("shelf", "shelf", (6.6, 1.0, 0.9), (0.5, 0.2, 0.9), yaw=math.radians(30))
    b.cylinder("lamp", "lamp", (7.5, 2.5, 0.8), 0.15, 0.8)
    b.box("table", "table", (2.0, 4.5, 0.375), (0.6, 0.4, 0.375))  # below the flight band
    b.box("cabinet", "cabinet", (7.5, 5.5, 1.0), (0.3, 0.3, 1.0))
    b.cylinder("pendant", "lamp", (2.0, 4.5, 2.35), 0.2, 0.15)  # above the flight band
    if clutter_room3:
        b.box("junk", "box", (6.0, 4.5, 1.0), (1.8, 1.3, 1.0))
    outer = [((0, 0), (8, 0)), ((0, 6), (8, 6)), ((0, 0), (0, 6)), ((8, 0), (8, 6))]
    return b.shell([*outer, ((4, 0), (4, 6)), ((0, 3), (8, 3))])


def apartment(door_width: float = 0.9) -> Scene:
    """7 rooms on 12 x 10 m: a 1.4 m corridor with three rooms on each side, furnished."""
    b = Builder()
    b.room(0, 4.3, 12, 5.7)  # corridor: room 0
    for k, (x0, x1) in enumerate(((0, 4), (4, 8), (8, 12))):
        b.room(x0, 0, x1, 4.3)
        b.room(x0, 5.7, x1, 10)
        b.door(0, 2 * k + 1, (x0 + 2.0, 4.3), "x", door_width)
        b.door(0, 2 * k + 2, (x0 + 2.0, 5.7), "x", door_width)
        b.box(f"wardrobe_{k}", "wardrobe", (x0 + 0.4, 1.2, 1.0), (0.3, 0.8, 1.0))
        b.box(f"shelf_{k}", "shelf", (x1 - 0.9, 8.4, 0.9), (0.6, 0.2, 0.9), yaw=0.4)
        b.box(f"bed_{k}", "bed", (x0 + 2.0, 8.8, 0.3), (1.0, 0.9, 0.3))
        b.cylinder(f"lamp_{k}", "lamp", (x1 - 0.4, 0.5, 0.8), 0.12, 0.8)
        b.box(f"desk_{k}", "desk", (x1 - 1.0, 3.5, 0.75), (0.7, 0.35, 0.75), yaw=-0.2)
    outer = [((0, 0), (12, 0)), ((0, 10), (12, 10)), ((0, 0), (0, 10)), ((12, 0), (12, 10))]
    corridor = [((0, 4.3), (12, 4.3)), ((0, 5.7), (12, 5.7))]
    inner = [((4, 0), (4, 4.3)), ((8, 0), (8, 4.3)), ((4, 5.7), (4, 10)), ((8, 5.7), (8, 10))]
    return b.shell([*outer, *corridor, *inner])


# ------------------------------------------------------------------- independent geometry checks


def _footprint(obj: ObjectSpec, geom: GeomSpec) -> tuple[shapely.Geometry, float, float]:
    """Footprint and z range for the yaw-only boxes and upright cylinders the builders make."""
    yaw = 2 * math.atan2(obj.quat[3], obj.quat[0])
    c, s = math.cos(yaw), math.sin(yaw)
    gx, gy, gz = geom.pos
    cx, cy, cz = obj.pos[0] + c * gx - s * gy, obj.pos[1] + s * gx + c * gy, obj.pos[2] + gz
    if geom.type == "cylinder":
        r, hz = geom.size
        return shapely.Point(cx, cy).buffer(r, quad_segs=64), cz - hz, cz + hz
    hx, hy, hz = geom.size
    corners = [
        (cx + c * u - s * v, cy + s * u + c * v)
        for u, v in ((-hx, -hy), (hx, -hy), (hx, hy), (-hx, hy))
    ]
    return shapely.Polygon(corners), cz - hz, cz + hz


def obstacles(scene: Scene, z: float, band: float = 0.3) -> shapely.Geometry:
    polys = []
    for obj in scene.objects:
        if obj.semantic_class in ("floor", "ceiling"):
            continue
        for geom in obj.geoms:
            poly, z0, z1 = _footprint(obj, geom)
            if z1 > z - band and z0 < z + band:
                polys.append(poly)
    return shapely.union_all(polys)


def inside_area(scene: Scene) -> shapely.Geometry:
    gaps = [shapely.Point(d.center).buffer(d.width / 2 + 0.1) for d in scene.doors]
    return shapely.union_all([shapely.Polygon(r.polygon) for r in scene.rooms] + gaps)


def samples(plan: FlightPlan, dt: float = 0.02):
    traj = Trajectory.from_path_points(plan.path)
    t = np.arange(0.0, traj.duration_s + dt, dt)
    return t, traj.sample(t)


CFG = DroneConfig(min_rooms_visited=3)


@pytest.fixture(scope="module")
def four_room_plan() -> tuple[Scene, FlightPlan]:
    scene = four_rooms()
    return scene, scene.plan(CFG, duration_s=40.0, seed=3)


# ------------------------------------------------------------------------------------- tests


def test_free_space_is_exact_for_boxes_and_ignores_things_outside_the_band() -> None:
    scene = four_rooms()
    fs = build_free_space(
        FloorRegion.of(scene.rooms, scene.doors),
        scene.objects,
        flight_height_m=1.3,
        clearance_m=0.45,
    )
    # 1 m from the south wall's face, far from anything else
    assert fs.clearance_at(np.array([2.5, 1.05])) == pytest.approx(1.0, abs=1e-9)
    # above the low table (below the band) and under the pendant (above it)
    assert fs.clearance_at(np.array([2.0, 4.5])) > 1.0
    # next to the rotated shelf: distance to its oriented rectangle, as shapely sees it
    p = np.array([6.6, 1.9])
    shelf = next(o for o in scene.objects if o.name == "shelf")
    expected = _footprint(shelf, shelf.geoms[0])[0].distance(shapely.Point(p))
    assert fs.clearance_at(p) == pytest.approx(expected, abs=1e-9)
    # inside the wardrobe and outside the rooms: not free
    assert fs.clearance_at(np.array([0.4, 2.2])) < 0
    assert not fs.is_free(np.array([9.0, 1.0]))
    # the grid clearance is a lower bound of the exact one
    flat = np.flatnonzero(fs.grid_clearance > 0)
    exact = fs.clearance_at(fs.cell_xy(flat))
    assert np.all(fs.grid_clearance.ravel()[flat] <= exact + 1e-9)


def test_flight_keeps_clearance_and_stays_inside(four_room_plan) -> None:
    scene, plan = four_room_plan
    _, ref = samples(plan)
    pts = shapely.points(ref.pos[:, :2])
    dist = shapely.distance(obstacles(scene, CFG.flight_height_m), pts)
    assert dist.min() >= CFG.clearance_m
    assert shapely.contains(inside_area(scene), pts).all()
    assert np.allclose(ref.pos[:, 2], CFG.flight_height_m)


def test_flight_respects_speed_yaw_rate_and_acceleration(four_room_plan) -> None:
    _, plan = four_room_plan
    _, ref = samples(plan, dt=0.01)
    speed = np.linalg.norm(ref.vel, axis=1)
    assert speed.max() <= CFG.max_speed_mps + 1e-6
    assert np.abs(ref.yaw_rate).max() <= math.radians(CFG.max_yaw_rate_dps) + 1e-6
    assert np.linalg.norm(ref.acc, axis=1).max() <= 0.75  # 0.5 along and 0.5 across the path
    moving = speed > 0.05  # the camera looks where the drone goes
    travel = np.arctan2(ref.vel[moving, 1], ref.vel[moving, 0])
    assert np.abs(np.angle(np.exp(1j * (ref.yaw[moving] - travel)))).max() < 0.05


def test_flight_visits_rooms_through_door_centres(four_room_plan) -> None:
    scene, plan = four_room_plan
    assert plan.duration_s >= 40.0
    assert len(set(plan.rooms_visited)) >= 3
    _, ref = samples(plan)
    for k, door_id in enumerate(plan.door_ids):
        door = scene.doors[door_id]
        assert set(door.rooms) == {plan.rooms_visited[k], plan.rooms_visited[k + 1]}
        assert np.linalg.norm(ref.pos[:, :2] - door.center, axis=1).min() < 0.01


def test_start_is_free_and_faces_open_space(four_room_plan) -> None:
    scene, plan = four_room_plan
    start = np.array(plan.start_pos[:2])
    assert plan.start_pos == plan.path[0].pos and plan.start_yaw == plan.path[0].yaw
    walls = obstacles(scene, CFG.flight_height_m).union(
        shapely.Polygon([(-1, -1), (9, -1), (9, 7), (-1, 7)]).difference(inside_area(scene))
    )
    assert walls.distance(shapely.Point(start)) >= CFG.clearance_m + 0.15
    direction = np.array([math.cos(plan.start_yaw), math.sin(plan.start_yaw)])
    ray = shapely.LineString([start, start + 1.5 * direction])
    assert not ray.intersects(walls)
    ref = Trajectory.from_path_points(plan.path).reference(0.0)
    assert np.array_equal(ref.vel, np.zeros(3))


def test_reference_holds_end_pose_and_is_continuous(four_room_plan) -> None:
    _, plan = four_room_plan
    traj = Trajectory.from_path_points(plan.path)
    end = traj.reference(traj.duration_s)
    after = traj.reference(traj.duration_s + 5.0)
    assert np.array_equal(after.pos, end.pos) and after.yaw == end.yaw
    assert np.array_equal(after.vel, np.zeros(3)) and after.yaw_rate == 0.0
    assert np.linalg.norm(end.vel) < 1e-9
    t = np.linspace(0.0, traj.duration_s, 2001)
    a, b = traj.sample(t), traj.sample(t + 1e-7)
    assert np.abs(a.pos - b.pos).max() < 1e-6 and np.abs(a.vel - b.vel).max() < 1e-5


def test_path_points_round_trip_gives_identical_references(four_room_plan) -> None:
    _, plan = four_room_plan
    stored = tuple(PathPoint.model_validate_json(p.model_dump_json()) for p in plan.path)
    assert stored == plan.path
    a, b = Trajectory.from_path_points(plan.path), Trajectory.from_path_points(stored)
    assert b.to_path_points() == plan.path
    for t in np.random.default_rng(0).uniform(-1.0, a.duration_s + 1.0, 200):
        ra, rb = a.reference(float(t)), b.reference(float(t))
        assert np.array_equal(ra.pos, rb.pos) and np.array_equal(ra.vel, rb.vel)
        assert np.array_equal(ra.acc, rb.acc)
        assert ra.yaw == rb.yaw and ra.yaw_rate == rb.yaw_rate


def test_same_seed_same_plan_other_seed_other_plan(four_room_plan) -> None:
    scene, plan = four_room_plan
    assert scene.plan(CFG, duration_s=40.0, seed=3) == plan
    assert scene.plan(CFG, duration_s=40.0, seed=4).path != plan.path


def test_apartment_with_real_doors_for_a_full_run() -> None:
    """7 rooms, 0.9 m doors with jambs (narrower than 2 x 0.45 m): crossings use door clearance."""
    scene = apartment()
    cfg = DroneConfig(min_rooms_visited=4)
    plan = scene.plan(cfg, duration_s=61.0, seed=0)
    assert plan.duration_s >= 61.0
    assert len(set(plan.rooms_visited)) >= 4
    _, ref = samples(plan)
    xy = ref.pos[:, :2]
    dist = shapely.distance(obstacles(scene, cfg.flight_height_m), shapely.points(xy))
    centres = np.array([d.center for d in scene.doors])
    at_door = np.linalg.norm(xy[:, None] - centres[None], axis=2).min(axis=1) <= 0.71
    assert dist[~at_door].min() >= cfg.clearance_m
    assert dist[at_door].min() >= PlannerOptions().door_clearance_m - 0.005
    speed = np.linalg.norm(ref.vel, axis=1)
    assert speed.max() <= cfg.max_speed_mps + 1e-6


def _line_curve(a, b) -> Curve:
    s = np.linspace(0.0, float(np.linalg.norm(np.subtract(b, a))), 401)
    xy = np.asarray(a) + s[:, None] / s[-1] * np.subtract(b, a)
    heading = np.full_like(s, math.atan2(b[1] - a[1], b[0] - a[0]))
    return Curve(s=s, xy=xy, heading=heading, curvature=np.zeros_like(s))


LIMITS = MotionLimits(max_speed_mps=0.5, max_yaw_rate_dps=30.0)


def test_parametrize_turns_on_the_spot_then_accelerates_smoothly() -> None:
    scene = four_rooms()
    fs = build_free_space(
        FloorRegion.of(scene.rooms, scene.doors),
        scene.objects,
        flight_height_m=1.3,
        clearance_m=0.0,
    )
    curve = smooth_path(fs, np.array([[0.5, 0.3], [3.5, 0.3], [3.5, 2.5]]), 0.0, 0.0)
    assert 4.5 < curve.length_m < 5.2  # the corner is rounded (shorter than 3 + 2.2 m)
    traj = Trajectory(parametrize([curve], LIMITS, z_m=1.0, start_yaw=math.pi / 2))
    t = np.arange(0.0, traj.duration_s, 0.005)
    ref = traj.sample(t)
    assert ref.yaw[0] == math.pi / 2 and ref.yaw[-1] == pytest.approx(math.pi / 2, abs=1e-6)
    k = int(np.argmax(np.abs(ref.yaw) < 1e-3))  # faces along the path (east) from here on
    assert t[k] > 3.0 and np.abs(ref.pos[:k] - ref.pos[0]).max() < 1e-3  # turned on the spot
    assert np.abs(ref.yaw_rate).max() <= math.radians(30.0)
    moving = (t > t[k]) & (t < traj.duration_s - 1.0)
    jerk = np.linalg.norm(np.diff(ref.acc[moving], axis=0), axis=1) / 0.005
    assert jerk.max() < 3.0  # acceleration changes smoothly (tilt rate ~ jerk / g)


def test_parametrize_stops_and_turns_around_between_curves() -> None:
    out, back = _line_curve((0.0, 0.0), (2.0, 0.0)), _line_curve((2.0, 0.0), (0.0, 0.0))
    traj = Trajectory(parametrize([out, back], LIMITS, z_m=1.0))
    t = np.arange(0.0, traj.duration_s, 0.01)
    ref = traj.sample(t)
    at_far_end = np.abs(ref.pos[:, 0] - 2.0) < 1e-4
    assert np.ptp(ref.yaw[at_far_end]) == pytest.approx(math.pi, abs=1e-3)  # turned on the spot
    assert np.abs(ref.yaw_rate).max() <= math.radians(30.0)
    assert np.linalg.norm(ref.vel, axis=1).max() <= 0.5
    assert ref.pos[-1, 0] == pytest.approx(0.0, abs=1e-6) and ref.yaw[-1] == pytest.approx(math.pi)
    cut = Trajectory(parametrize([out, back], LIMITS, z_m=1.0, stop_after_s=4.0))
    assert 4.0 <= cut.duration_s < 6.0 and cut.reference(1e3).pos[0] == pytest.approx(2.0)
    cut = Trajectory(parametrize([out, back], LIMITS, z_m=1.0, stop_after_s=14.0))
    assert 14.0 <= cut.duration_s < 17.0 and 0.5 < cut.reference(1e3).pos[0] < 1.5


def test_choose_start_is_seeded_and_open() -> None:
    scene = four_rooms()
    fs = build_free_space(
        FloorRegion.of(scene.rooms, scene.doors),
        scene.objects,
        flight_height_m=1.3,
        clearance_m=0.45,
    )
    a = choose_start(fs, np.random.default_rng(1))
    b = choose_start(fs, np.random.default_rng(1))
    assert np.array_equal(a.xy, b.xy) and a.yaw == b.yaw
    assert fs.clearance_at(a.xy) >= 0.6
    assert fs.ray_lengths(a.xy, np.array([a.yaw]))[0] >= 1.5


def test_narrow_door_is_reported() -> None:
    scene = four_rooms(door_width=0.6)
    with pytest.raises(PlanningError, match=r"door \d between rooms \d and \d is too narrow"):
        scene.plan(DroneConfig(min_rooms_visited=2), duration_s=10.0, seed=0)


def test_cluttered_room_is_reported() -> None:
    scene = four_rooms(clutter_room3=True)
    with pytest.raises(TwinsimError, match=r"cannot visit 4 rooms.*room 3 has no free space"):
        scene.plan(DroneConfig(min_rooms_visited=4), duration_s=10.0, seed=0)


def test_flight_band_above_doors_is_reported() -> None:
    with pytest.raises(PlanningError, match="flight band"):
        four_rooms().plan(DroneConfig(flight_height_m=1.9), duration_s=10.0, seed=0)


def test_a_tour_too_long_for_its_legs_says_the_longest_duration_that_plans(monkeypatch) -> None:
    """The bound of a tour is its legs (MAX_LEGS, 8 here to keep the test short): the error
    gives the longest duration they allow, and 90 % of it plans."""
    import re

    import twinsim.robots.common.tour as tour

    monkeypatch.setattr(tour, "MAX_LEGS", 8)
    scene = four_rooms()
    with pytest.raises(PlanningError, match=r"sim\.duration_s=1e\+09 s is longer") as err:
        scene.plan(DroneConfig(), duration_s=1e9, seed=0)
    longest_s = float(re.search(r"allowed: at most ~(\d+) s$", str(err.value)).group(1))
    for seed in range(3):
        plan = scene.plan(DroneConfig(), duration_s=0.9 * longest_s, seed=seed)
        assert plan.path[-1].t_s >= 0.9 * longest_s


def test_a_route_that_runs_out_of_legs_before_its_rooms_says_so(monkeypatch) -> None:
    """Long enough but short of rooms: the duration is not blamed."""
    import twinsim.robots.common.tour as tour

    monkeypatch.setattr(tour, "MAX_LEGS", 1)
    with pytest.raises(PlanningError, match=r"enters [12] of the 4 rooms it must visit in 1 legs"):
        four_rooms().plan(DroneConfig(min_rooms_visited=4), duration_s=1.0, seed=0)
