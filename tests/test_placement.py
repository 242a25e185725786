"""People placement (GRADE): whole-animation traces clear of the world and of each other.

Placed people are checked independently of the placement code: every body part's surface points
at every 1/120 s of the run are tested against the exact primitives of the scene (numpy
point-in-primitive math, shapely for the floor plan), and people's traces against each other
with a k-d tree.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
import shapely
from scipy.spatial import cKDTree

from twinsim.actors.motion import motion_for
from twinsim.actors.placement import (
    FLAT_HEIGHT_M,
    FLOOR_TOLERANCE_M,
    SURFACE_POINTS_PER_PART,
    clear_of_traces,
    motion_origin,
    moved_person,
    place_people,
)
from twinsim.actors.population import PopulationResult, generate_people
from twinsim.actors.surface import sample_surface_points
from twinsim.config import load_config
from twinsim.errors import ConfigError
from twinsim.geometry import quat_wxyz_to_matrix
from twinsim.model.people import PersonSpec
from twinsim.model.scene import GeomSpec, ObjectSpec, RoomSpec
from twinsim.model.sections import PeopleConfig
from twinsim.scene.free_space import FloorRegion
from twinsim.scene.seats import SEATING_CLASSES, find_seats
from twinsim.scene.worlds.apartment.generator import generate_apartment

DURATION = 6.0
TEST_DT = 1.0 / 120.0
WALL_H = 2.5
T = 0.05  # half a wall


# ------------------------------------------------------------------------ a hand-built world


def _obj(iid: int, cls: str, pos, geoms, yaw: float = 0.0) -> ObjectSpec:
    quat = (math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2))
    return ObjectSpec(
        instance_id=iid, name=f"{cls}_{iid}", semantic_class=cls, pos=pos, quat=quat, geoms=geoms
    )


def _box(half, pos=(0.0, 0.0, 0.0), quat=(1.0, 0.0, 0.0, 0.0)) -> GeomSpec:
    return GeomSpec(type="box", size=half, pos=pos, quat=quat, material="m")


def two_rooms() -> tuple[tuple[RoomSpec, ...], tuple[ObjectSpec, ...]]:
    """Rooms [0, 4] × [0, 3] and [4, 7] × [0, 3] joined by a door, with every primitive kind."""
    rooms = (
        RoomSpec(room_id=0, type="living_room", name="a", polygon=((0, 0), (4, 0), (4, 3), (0, 3))),
        RoomSpec(room_id=1, type="office", name="b", polygon=((4, 0), (7, 0), (7, 3), (4, 3))),
    )
    h = WALL_H / 2
    objs = [
        _obj(1, "floor", (3.5, 1.5, 0.0), (_box((3.5, 1.5, 0.025), (0, 0, -0.025)),)),
        _obj(2, "ceiling", (3.5, 1.5, WALL_H), (_box((3.5, 1.5, 0.025), (0, 0, 0.025)),)),
        _obj(3, "wall", (3.5, 0.0, 0.0), (_box((3.5 + T, T, h), (0, 0, h)),)),
        _obj(4, "wall", (3.5, 3.0, 0.0), (_box((3.5 + T, T, h), (0, 0, h)),)),
        _obj(5, "wall", (0.0, 1.5, 0.0), (_box((T, 1.5, h), (0, 0, h)),)),
        _obj(6, "wall", (7.0, 1.5, 0.0), (_box((T, 1.5, h), (0, 0, h)),)),
        # the shared wall, a door y in [1.0, 1.9] up to 2.05 m
        _obj(
            7,
            "wall",
            (4.0, 0.0, 0.0),
            (
                _box((T, 0.5, h), (0, 0.5, h)),
                _box((T, 0.55, h), (0, 2.45, h)),
                _box((T, 0.45, (WALL_H - 2.05) / 2), (0, 1.45, (WALL_H + 2.05) / 2)),
            ),
        ),
        # a table: top and four cylinder legs
        _obj(
            8,
            "table",
            (1.2, 2.2, 0.0),
            (
                _box((0.6, 0.4, 0.02), (0, 0, 0.74)),
                *(
                    GeomSpec(type="cylinder", size=(0.025, 0.36), pos=(x, y, 0.36), material="m")
                    for x in (-0.55, 0.55)
                    for y in (-0.35, 0.35)
                ),
            ),
        ),
        _obj(9, "cabinet", (2.6, 0.5, 0.0), (_box((0.3, 0.25, 0.5), (0, 0, 0.5)),), yaw=0.5),
        _obj(10, "rug", (2.0, 1.5, 0.0), (_box((1.0, 0.7, 0.005), (0, 0, 0.005)),)),
        _obj(
            11,
            "plant",
            (5.5, 1.5, 0.0),
            (GeomSpec(type="cylinder", size=(0.2, h), pos=(0, 0, h), material="m"),),
        ),
        _obj(
            12,
            "lamp",
            (5.5, 2.5, WALL_H),
            (GeomSpec(type="sphere", size=(0.15,), pos=(0, 0, -0.4), material="m"),),
        ),
        _obj(
            13,
            "lamp",
            (6.6, 0.4, 0.0),
            (
                GeomSpec(
                    type="capsule",
                    size=(0.03, 0.6),
                    pos=(0, 0, 0.8),
                    quat=(math.cos(0.2), math.sin(0.2), 0.0, 0.0),
                    material="m",
                ),
            ),
        ),
        _obj(
            14,
            "armchair",
            (4.8, 0.6, 0.0),
            (GeomSpec(type="ellipsoid", size=(0.35, 0.3, 0.25), pos=(0, 0, 0.25), material="m"),),
        ),
    ]
    return rooms, tuple(objs)


# -------------------------------------------------------------------- independent geometry


def _world_geoms(objects):
    for obj in objects:
        if obj.semantic_class in ("floor", "ceiling"):
            continue
        r_obj = quat_wxyz_to_matrix(obj.quat)
        for g in obj.geoms:
            yield g, r_obj @ quat_wxyz_to_matrix(g.quat), np.asarray(obj.pos) + r_obj @ g.pos


def _inside_primitive(g: GeomSpec, p: np.ndarray) -> np.ndarray:
    s = np.asarray(g.size)
    if g.type == "box":
        return np.all(np.abs(p) <= s, axis=1)
    if g.type == "sphere":
        return np.einsum("ij,ij->i", p, p) <= s[0] ** 2
    if g.type == "ellipsoid":
        return np.sum((p / s) ** 2, axis=1) <= 1.0
    rho2 = p[:, 0] ** 2 + p[:, 1] ** 2
    if g.type == "cylinder":
        return (rho2 <= s[0] ** 2) & (np.abs(p[:, 2]) <= s[1])
    dz = np.abs(p[:, 2]) - np.minimum(np.abs(p[:, 2]), s[1])
    return rho2 + dz**2 <= s[0] ** 2  # capsule


def inside_world(pts: np.ndarray, rooms, objects, wall_height: float) -> np.ndarray:
    """Whether each point is inside a static primitive, below the floor, above the ceiling or
    outside the rooms (exact; floor coverings lower than FLAT_HEIGHT_M are walked on)."""
    plan = shapely.union_all([shapely.Polygon(r.polygon) for r in rooms])
    hit = (pts[:, 2] < -FLOOR_TOLERANCE_M) | (pts[:, 2] > wall_height)
    hit |= ~shapely.intersects_xy(plan, pts[:, 0], pts[:, 1])
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    for g, rot, c in _world_geoms(objects):
        corners = np.array(np.meshgrid(*[[-1, 1]] * 3)).reshape(3, -1).T * _half(g)
        ext = np.abs(corners @ rot.T).max(axis=0)
        if c[2] + ext[2] <= FLAT_HEIGHT_M or np.any(c + ext < lo) or np.any(c - ext > hi):
            continue
        near = np.all((pts >= c - ext) & (pts <= c + ext), axis=1)
        idx = np.flatnonzero(near)
        hit[idx] |= _inside_primitive(g, (pts[idx] - c) @ rot)
    return hit


def _half(g: GeomSpec) -> np.ndarray:
    s = g.size
    if g.type in ("box", "ellipsoid"):
        return np.array(s[:3])
    if g.type == "sphere":
        return np.full(3, s[0])
    return np.array([s[0], s[0], s[1] + (s[0] if g.type == "capsule" else 0.0)])


def frames(person: PersonSpec) -> np.ndarray:
    """Surface points (N, K, 3) of the placed person at every TEST_DT of the run."""
    motion = motion_for(person)
    local = sample_surface_points(motion.model, SURFACE_POINTS_PER_PART)
    poses = motion.part_poses(np.arange(0.0, DURATION + 1e-9, TEST_DT))
    return np.concatenate(
        [poses[:, k, :3, :3] @ p.T + poses[:, k, :3, 3:] for k, p in enumerate(local)], axis=2
    ).transpose(0, 2, 1)


def _thin(pts: np.ndarray, cell: float) -> np.ndarray:
    """One point (the cell centre) per occupied cube of side `cell`."""
    ijk = np.floor(pts / cell).astype(np.int64)
    lo = ijk.min(axis=0)
    dims = ijk.max(axis=0) - lo + 1
    keys = np.unique(np.ravel_multi_index((ijk - lo).T, dims))
    return (np.array(np.unravel_index(keys, dims)).T + lo + 0.5) * cell


def _populate(rooms, objects, wall_height, seed: int, cfg: PeopleConfig, max_hits: int):
    rng = np.random.default_rng(seed)
    floor = FloorRegion.of(rooms, (), objects, wall_height)
    fn = functools.partial(
        place_people,
        static_objects=objects,
        floor=floor,
        duration_s=DURATION,
        rng=rng,
        attempts=cfg.placement_attempts,
        max_intersections=max_hits,
    )
    return generate_people(cfg, floor, objects, rng, 100, fn)


def _check(result: PopulationResult, rooms, objects, wall_height: float, max_hits: int) -> None:
    """Every placed trace is clear of the world at every frame, and of the others' traces."""
    traces = []
    for person in result.people:
        pts = frames(person)
        seat = person.motion.seat_instance_id  # sitting on one's seat is no collision
        around = [o for o in objects if o.instance_id != seat]
        hits = inside_world(pts.reshape(-1, 3), rooms, around, wall_height).reshape(pts.shape[:2])
        per_frame = hits.sum(axis=1)
        assert per_frame.max() <= max_hits, (person.name, person.motion.kind, per_frame.max())
        traces.append(_thin(pts.reshape(-1, 3), 0.01))
    for i, a in enumerate(traces):
        tree = cKDTree(a)
        for j in range(i + 1, len(traces)):
            b = traces[j]
            if np.any(a.max(axis=0) < b.min(axis=0)) or np.any(b.max(axis=0) < a.min(axis=0)):
                continue
            d, _ = tree.query(b, distance_upper_bound=0.015)
            assert np.count_nonzero(np.isfinite(d)) <= max_hits, (i, j)


# ------------------------------------------------------------------------------------ tests


@pytest.fixture(scope="module")
def small_world():
    return two_rooms()


@pytest.fixture(scope="module")
def strict_small(small_world):
    rooms, objects = small_world
    cfg = PeopleConfig(count=8, placement_attempts=10)
    return _populate(rooms, objects, WALL_H, 4, cfg, max_hits=0)


def test_placed_people_never_touch_the_world_or_each_other(small_world, strict_small):
    rooms, objects = small_world
    assert strict_small.requested == 8 and 1 <= strict_small.placed <= 8
    assert strict_small.placed == len(strict_small.people)
    assert {"walk", "idle"} <= {p.motion.kind for p in strict_small.people}
    _check(strict_small, rooms, objects, WALL_H, max_hits=0)


def test_moving_a_person_moves_its_whole_animation_rigidly(strict_small):
    """Placement tests a rigidly moved trace: the moved spec must animate exactly like that."""
    for person in strict_small.people[:3]:
        yaw, xy = 2.1, np.array([1.5, -0.7])
        before, after = frames(person), frames(moved_person(person, xy, yaw))
        c, s = math.cos(yaw), math.sin(yaw)
        rot = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
        origin = np.array([*motion_origin(person), 0.0])
        expect = (before - origin) @ rot.T + np.array([*xy, 0.0])
        np.testing.assert_allclose(after, expect, atol=5e-4)  # waypoints rounded to 0.1 mm


def test_ids_names_and_materials(strict_small):
    people = strict_small.people
    n = len(people)
    assert [p.person_id for p in people] == list(range(n))
    ids = [i for p in people for i in (p.body_instance_id, p.clothing_instance_id)]
    assert ids == list(range(100, 100 + 2 * n))
    names = {m.name for m in strict_small.materials}
    assert len(names) == len(strict_small.materials)
    used = set()
    for p in people:
        b = p.body
        assert 1.5 <= b.height_m <= 1.95 and 0.85 <= b.girth_scale <= 1.2
        assert all(0.92 <= v <= 1.08 for v in b.segment_scale.values())
        used |= {b.skin_material, b.shirt_material, b.pants_material, b.shoes_material}
        used |= {b.hair_material} - {None}
        m = p.motion
        assert 1.3 <= m.gait_frequency_hz <= 2.2
        if m.kind == "walk":  # steps of 0.36–0.42 × height unless the rate hit its limits
            step = m.speed_mps / m.gait_frequency_hz
            clipped = m.gait_frequency_hz in (1.3, 2.2)
            assert clipped or 0.36 * b.height_m - 0.005 <= step <= 0.42 * b.height_m + 0.005
            assert 2 <= len(m.waypoints) <= 5 and m.cycle_s >= 4.0
        else:
            assert len(m.waypoints) == 1 and 4.0 <= m.cycle_s <= 10.0
    assert used == names  # every material is worn, none is missing
    textures = {t.name for t in strict_small.textures}
    assert {m.texture for m in strict_small.materials} - {None} == textures


def test_apartment_with_default_tolerance():
    cfg = load_config("default", ["people.count=8"])
    layout = generate_apartment(cfg.scene, np.random.default_rng(21))
    max_hits = cfg.people.max_trace_intersections
    result = _populate(layout.rooms, layout.objects, layout.wall_height, 21, cfg.people, max_hits)
    assert result.requested == 8 and result.placed >= 4
    _check(result, layout.rooms, layout.objects, layout.wall_height, max_hits)
    kinds = {p.motion.kind for p in result.people}
    assert "walk" in kinds


def test_too_many_people_are_dropped_not_an_error(small_world):
    rooms, objects = small_world
    cfg = PeopleConfig(count=14, placement_attempts=3, motions={"walk": 1.0})
    result = _populate(rooms, objects, WALL_H, 9, cfg, max_hits=0)
    assert result.requested == 14
    assert 1 <= result.placed < 14 and len(result.people) == result.placed
    assert len({m.name for m in result.materials}) == len(result.materials)


def test_same_seed_same_people(small_world):
    rooms, objects = small_world
    cfg = PeopleConfig(count=3)
    a = _populate(rooms, objects, WALL_H, 5, cfg, max_hits=20)
    b = _populate(rooms, objects, WALL_H, 5, cfg, max_hits=20)
    assert (a.people, a.materials, a.textures) == (b.people, b.materials, b.textures)
    c = _populate(rooms, objects, WALL_H, 6, cfg, max_hits=20)
    assert a.people != c.people


def test_drone_start_is_checked_against_every_trace(strict_small):
    traces = strict_small.traces
    for person in strict_small.people:
        xy = np.asarray(person.motion.waypoints)
        assert not np.any(clear_of_traces(xy, traces, 0.3))
    far = np.array([[50.0, 50.0]])
    assert clear_of_traces(far, traces, 1.0).all()
    assert clear_of_traces((50.0, 50.0), traces, 1.0) is True


def test_negative_count_is_a_config_error():
    with pytest.raises(ConfigError, match="count"):
        load_config("default", ["people.count=-1"])


def test_people_sit_on_real_seats():
    """Sitters are placed on chairs, armchairs and sofas: over the seat, at its height, facing
    out, and clear of everything else; with no seat left they stand instead."""
    cfg = load_config("default", ["people.count=10"]).people.model_copy(
        update={"motions": {"sit": 1.0}}
    )
    layout = generate_apartment(load_config("default").scene, np.random.default_rng(5))
    seats = {(s.instance_id, s.xy): s for s in find_seats(layout.objects)}
    assert seats
    max_hits = cfg.max_trace_intersections
    result = _populate(layout.rooms, layout.objects, layout.wall_height, 5, cfg, max_hits)
    sitting = [p for p in result.people if p.motion.kind == "sit"]
    assert sitting and all(p.motion.seat_instance_id is not None for p in sitting)
    assert len(sitting) <= len(seats)
    assert {p.motion.kind for p in result.people} <= {"sit", "idle"}
    _check(result, layout.rooms, layout.objects, layout.wall_height, max_hits)
    for person in sitting:
        seat = seats[(person.motion.seat_instance_id, person.motion.waypoints[0])]
        assert person.motion.heading == pytest.approx(seat.heading)
        pelvis = motion_for(person).joints_world(np.arange(0.0, DURATION, 0.1))[:, 0]
        low = int(np.argmin(pelvis[:, 2]))
        assert np.linalg.norm(pelvis[low, :2] - seat.xy) < 0.1
        assert seat.height_m + 0.03 < pelvis[low, 2] < seat.height_m + 0.2


def test_seats_are_found_on_seating_furniture_only():
    layout = generate_apartment(load_config("default").scene, np.random.default_rng(5))
    by_id = {o.instance_id: o for o in layout.objects}
    seats = find_seats(layout.objects)
    assert {by_id[s.instance_id].semantic_class for s in seats} <= set(SEATING_CLASSES)
    for s in seats:
        obj = by_id[s.instance_id]
        assert 0.35 <= s.height_m <= 0.6
        assert np.hypot(s.xy[0] - obj.pos[0], s.xy[1] - obj.pos[1]) < 1.5
