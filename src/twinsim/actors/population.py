"""People for a scene: random bodies, clothes and motions, placed GRADE's way.

`generate_people` draws every requested person — body proportions, a motion kind by the config's
weights, speed, gait frequency, and a proposed place: for walks a route of 2–5 waypoints over
free floor, for sitting a free seat of a chair, armchair or sofa (standing idle when none is
left), for motion capture (`bvh_files`) a clip played from a free spot, for other stationary
motions a free spot and a random heading. A placement function
(normally `twinsim.actors.placement.place_people`) then checks each proposal against the static
world and the people before it, moves the person elsewhere, or drops it. Only the placed people
get skin, hair and clothing materials (fabric textures for many shirts and trousers), and their
ids and names are numbered consecutively, so a scene never holds an unused material.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from twinsim.actors.bvh import BvhClip, load_bvh
from twinsim.actors.gait import walk_path_length
from twinsim.actors.human import SEGMENT_NAMES
from twinsim.actors.placement import PlacementResult, TraceMap
from twinsim.actors.wardrobe import Wardrobe, round3
from twinsim.model.people import HumanBodySpec, HumanMotionSpec, PersonSpec
from twinsim.model.scene import MaterialSpec, ObjectSpec, TextureSpec
from twinsim.model.sections import PeopleConfig
from twinsim.scene.free_space import FloorRegion, FreeSpace, build_free_space
from twinsim.scene.seats import Seat, find_seats

HEIGHT_M = (1.5, 1.95)
SEGMENT_SPREAD = 0.08
GIRTH = (0.85, 1.2)
GAIT_HZ = (1.3, 2.2)  # step rates people use
STEP_PER_HEIGHT = (0.36, 0.42)  # step length as a share of body height
STATIONARY_CYCLE_S = (4.0, 10.0)
MIN_WALK_CYCLE_S = 4.0
ROUTE_LENGTH_M = (2.0, 5.0)  # wanted length of a walking route
LEG_M = (1.0, 3.0)  # length of one straight leg of a route
ROUTE_CLEARANCE_M = 0.3  # free floor around a route (half a body width and arm swing)
ROUTE_TRIES = 20
MAX_TURN_RAD = math.radians(120.0)  # sharpest corner of a route
# how far a motion's trace reaches from its route or spot (a raised arm, legs ahead when seated)
REACH_M = {"walk": 0.4, "idle": 0.35, "wave": 0.95, "sit": 0.75, "bvh": 0.6}
SEAT_FEET_M = 0.55  # how far in front of a seat's middle a sitter's feet rest
CLAIM_MARGIN_M = 0.3  # a proposal claims its reach plus this (part of a neighbour's reach)
PENDING = "pending"  # material name of a candidate before it is placed

PlacementFn = Callable[[Sequence[PersonSpec]], PlacementResult]


@dataclass(frozen=True)
class PopulationResult:
    """Placed people with their new materials and textures, and requested vs placed counts."""

    people: tuple[PersonSpec, ...]
    materials: tuple[MaterialSpec, ...]
    textures: tuple[TextureSpec, ...]
    requested: int
    placed: int
    traces: TraceMap


def _body(rng: np.random.Generator) -> HumanBodySpec:
    """Random proportions; materials are filled in once the person is placed."""
    return HumanBodySpec(
        height_m=round3(rng.uniform(*HEIGHT_M)),
        segment_scale={
            s: round3(rng.uniform(1 - SEGMENT_SPREAD, 1 + SEGMENT_SPREAD)) for s in SEGMENT_NAMES
        },
        girth_scale=round3(rng.uniform(*GIRTH)),
        skin_material=PENDING,
        shirt_material=PENDING,
        pants_material=PENDING,
        shoes_material=PENDING,
    )


class _Floor:
    """Free floor for proposals; each proposal claims the floor near it, so later ones avoid it.

    A proposal claims the floor within its reach plus CLAIM_MARGIN_M, so traces of later
    proposals rarely overlap it; this only makes GRADE's placement (which still checks every
    trace) more likely to accept them.
    """

    def __init__(self, free: FreeSpace, seats: Sequence[Seat] = ()) -> None:
        self.free = free
        self.seats = list(seats)
        self.claimed = np.zeros(free.shape, dtype=bool)
        cells = np.flatnonzero(free.grid_clearance.ravel() >= ROUTE_CLEARANCE_M)
        self.spots = free.cell_xy(cells)
        self.clearance = free.grid_clearance.ravel()[cells]

    def _cells(self, xy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        ij = np.floor((xy - self.free.origin) / self.free.cell_m).astype(int)
        return np.clip(ij[..., 1], 0, self.free.shape[0] - 1), np.clip(
            ij[..., 0], 0, self.free.shape[1] - 1
        )

    def spot(
        self, rng: np.random.Generator, claims: bool = True, clearance: float = ROUTE_CLEARANCE_M
    ) -> np.ndarray:
        """A random free spot with `clearance`, unclaimed if any is left (and `claims`)."""
        pool = self.spots[self.clearance >= clearance]
        if not len(pool):
            pool = self.spots[self.clearance >= self.clearance.max()]
        if claims:
            open_ = pool[~self.claimed[self._cells(pool)]]
            pool = open_ if len(open_) else pool
        return pool[int(rng.integers(len(pool)))]

    def seat(self, rng: np.random.Generator) -> Seat | None:
        """A random seat with no claim on it or where the sitter's feet go, or None."""
        open_ = []
        for seat in self.seats:
            fwd = np.array([math.cos(seat.heading), math.sin(seat.heading)])
            feet = np.asarray(seat.xy) + SEAT_FEET_M * fwd
            i, j = self._cells(np.stack([np.asarray(seat.xy), feet]))
            if self.claimed[i, j].any():  # feet may go under a table: placement checks them
                continue
            open_.append(seat)
        return open_[int(rng.integers(len(open_)))] if open_ else None

    def legs_clear(self, start: np.ndarray, ends: np.ndarray, claims: bool) -> np.ndarray:
        """Whether each leg start → ends[i] keeps its clearance (and crosses no claim)."""
        ok = self.free.segments_clear(start, ends, ROUTE_CLEARANCE_M)
        if not claims:
            return ok
        u = np.linspace(0.0, 1.0, 40)[None, :, None]
        samples = start + u * (ends[:, None, :] - start)
        return ok & ~self.claimed[self._cells(samples)].any(axis=1)

    def claim(self, route: np.ndarray, radius: float) -> None:
        """Claim the floor within `radius` of a route (or of a single spot)."""
        lo = self._cells(route.min(axis=0) - radius)
        hi = self._cells(route.max(axis=0) + radius)
        iy, ix = np.mgrid[lo[0] : hi[0] + 1, lo[1] : hi[1] + 1]
        xy = self.free.origin + (np.stack([ix, iy], axis=-1) + 0.5) * self.free.cell_m
        a = route[:-1] if len(route) > 1 else route
        d = route[1:] - a if len(route) > 1 else np.zeros_like(a)
        t = np.clip(
            np.einsum("...kj,kj->...k", xy[..., None, :] - a, d)
            / np.maximum(np.einsum("kj,kj->k", d, d), 1e-12),
            0.0,
            1.0,
        )
        near = np.linalg.norm(xy[..., None, :] - (a + t[..., None] * d), axis=-1).min(axis=-1)
        self.claimed[iy, ix] |= near <= radius

    def route(self, rng: np.random.Generator) -> np.ndarray | None:
        """A route of 2–5 waypoints of straight legs over free floor, or None if none was found.

        It starts on a random free spot; each leg turns by at most MAX_TURN_RAD, is LEG_M long,
        keeps ROUTE_CLEARANCE_M from obstacles and crosses no claim (claims are ignored by the
        second half of the tries: a walk stays a walk); the route ends once it is about as long
        as wanted.
        """
        n_points = int(rng.integers(2, 6))
        wanted = rng.uniform(*ROUTE_LENGTH_M)
        for attempt in range(ROUTE_TRIES):
            claims = attempt < ROUTE_TRIES // 2
            route = [self.spot(rng, claims)]
            length, heading, turn = 0.0, rng.uniform(-math.pi, math.pi), math.pi
            while len(route) < n_points and length < wanted:
                ang = heading + rng.uniform(-turn, turn, 12)
                legs = np.minimum(rng.uniform(*LEG_M, 12), max(wanted - length, LEG_M[0]))
                ends = route[-1] + legs[:, None] * np.stack([np.cos(ang), np.sin(ang)], axis=1)
                ok = np.flatnonzero(self.legs_clear(route[-1], ends, claims))
                if not len(ok):
                    break
                route.append(ends[ok[0]])
                length += float(legs[ok[0]])
                heading, turn = ang[ok[0]], MAX_TURN_RAD
            if len(route) >= 2 and length >= ROUTE_LENGTH_M[0]:
                return np.array(route)
        return None


def walking_gait_hz(speed_mps: float, height_m: float, step_per_height: float) -> float:
    """Step rate that gives a step of `step_per_height` × height at this speed, kept human."""
    step_m = step_per_height * height_m
    return round3(min(max(speed_mps / step_m, GAIT_HZ[0]), GAIT_HZ[1]))


def _clip_motion(
    clip: BvhClip, floor: _Floor, rng: np.random.Generator, gait_hz: float
) -> HumanMotionSpec:
    """A motion-capture clip played from a free spot with a random heading (placement then
    checks where the clip's own root motion takes the person)."""
    spot = floor.spot(rng, clearance=REACH_M["bvh"])
    floor.claim(spot[None], REACH_M["bvh"] + CLAIM_MARGIN_M)
    cycle = clip.n_frames * clip.frame_time_s
    return HumanMotionSpec(
        kind="bvh",
        waypoints=((round(float(spot[0]), 4), round(float(spot[1]), 4)),),
        heading=round(rng.uniform(-math.pi, math.pi), 6),
        speed_mps=0.0,
        cycle_s=round(cycle, 6),
        phase_s=round3(rng.uniform(0.0, 2 * cycle)),
        gait_frequency_hz=gait_hz,
        bvh_path=clip.path,
        bvh_sha256=clip.sha256,
    )


def _motion(
    cfg: PeopleConfig,
    floor: _Floor,
    rng: np.random.Generator,
    height_m: float,
    clips: Sequence[BvhClip] = (),
) -> HumanMotionSpec:
    """A proposed motion: kind by weight, gait, and a route over free floor or a free spot.

    The step rate follows speed and height (a fixed rate made short, fast walkers take
    over-long steps that drop the pelvis); stationary motions get the rate of a 1 m/s walk.
    """
    weights_by_kind = dict(cfg.motions)
    if clips and "bvh" not in weights_by_kind:
        weights_by_kind["bvh"] = sum(weights_by_kind.values())
    kinds = list(weights_by_kind)
    weights = np.array([weights_by_kind[k] for k in kinds], dtype=float)
    kind = kinds[int(rng.choice(len(kinds), p=weights / weights.sum()))]
    step_per_height = rng.uniform(*STEP_PER_HEIGHT)
    gait_hz = walking_gait_hz(1.0, height_m, step_per_height)
    if kind == "bvh":
        return _clip_motion(clips[int(rng.integers(len(clips)))], floor, rng, gait_hz)
    route = floor.route(rng) if kind == "walk" else None
    seat = floor.seat(rng) if kind == "sit" else None
    if seat is not None:
        fwd = np.array([math.cos(seat.heading), math.sin(seat.heading)])
        xy = np.asarray(seat.xy)
        floor.claim(np.stack([xy, xy + SEAT_FEET_M * fwd]), CLAIM_MARGIN_M)
        cycle = rng.uniform(*STATIONARY_CYCLE_S)
        return HumanMotionSpec(
            kind="sit",
            waypoints=(seat.xy,),
            heading=seat.heading,
            speed_mps=0.0,
            cycle_s=round3(cycle),
            phase_s=round3(rng.uniform(0.0, 2 * cycle)),
            gait_frequency_hz=gait_hz,
            seat_instance_id=seat.instance_id,
            seat_height_m=seat.height_m,
        )
    if kind == "sit":  # no free seat: stand instead of sitting on air
        kind = "idle"
    if route is None:  # stationary, or a walk with no room to walk: idle
        kind = "idle" if kind == "walk" else kind
        spot = floor.spot(rng, clearance=max(ROUTE_CLEARANCE_M, REACH_M[kind] - 0.05))
        floor.claim(spot[None], REACH_M[kind] + CLAIM_MARGIN_M)
        cycle = rng.uniform(*STATIONARY_CYCLE_S)
        return HumanMotionSpec(
            kind=kind,
            waypoints=((round(float(spot[0]), 4), round(float(spot[1]), 4)),),
            heading=round(rng.uniform(-math.pi, math.pi), 6),
            speed_mps=0.0,
            cycle_s=round3(cycle),
            phase_s=round3(rng.uniform(0.0, 2 * cycle)),
            gait_frequency_hz=gait_hz,
        )
    floor.claim(route, REACH_M["walk"] + CLAIM_MARGIN_M)
    waypoints = tuple((round(float(x), 4), round(float(y), 4)) for x, y in route)
    length = walk_path_length(waypoints)
    speed = math.floor(1000 * min(rng.uniform(*cfg.speed_mps), length / MIN_WALK_CYCLE_S)) / 1000
    cycle = length / speed
    gait_hz = walking_gait_hz(speed, height_m, step_per_height)
    return HumanMotionSpec(
        kind="walk",
        waypoints=waypoints,
        speed_mps=speed,
        cycle_s=round(cycle, 4),
        phase_s=round3(rng.uniform(0.0, 2 * cycle)),
        gait_frequency_hz=gait_hz,
    )


def _candidates(
    cfg: PeopleConfig,
    floor: FloorRegion,
    objects: Sequence[ObjectSpec],
    rng: np.random.Generator,
    first_instance_id: int,
) -> list[PersonSpec]:
    """The requested people at their proposed places (none if no floor is free)."""
    if cfg.count == 0:
        return []
    # obstacles between 5 cm (above rugs) and 1.95 m; rooms meet on wall centre lines, so the
    # walls' own gaps are the doors
    free = build_free_space(
        floor,
        objects,
        flight_height_m=1.0,
        clearance_m=ROUTE_CLEARANCE_M,
        clearance_z_m=0.95,
        openings=False,
    )
    floor = _Floor(free, find_seats(objects))
    if not len(floor.spots):
        return []
    clips = [load_bvh(Path(f).resolve()) for f in cfg.bvh_files]
    people = []
    for k in range(cfg.count):
        body = _body(rng)
        people.append(
            PersonSpec(
                person_id=k,
                name=f"candidate_{k}",
                body_instance_id=first_instance_id + 2 * k,
                clothing_instance_id=first_instance_id + 2 * k + 1,
                body=body,
                motion=_motion(cfg, floor, rng, body.height_m, clips),
            )
        )
    return people


def generate_people(
    cfg: PeopleConfig,
    floor: FloorRegion,
    objects: Sequence[ObjectSpec],
    rng: np.random.Generator,
    first_instance_id: int,
    placement_fn: PlacementFn,
    first_person_id: int = 0,
) -> PopulationResult:
    """Draw `cfg.count` people on the free `floor`, place them with `placement_fn`, and dress
    the placed ones.

    Instance ids run body, clothing, body, clothing, … from `first_instance_id` over the
    placed people, who are numbered and named person_<first_person_id>, … in placement order.
    """
    candidates = _candidates(cfg, floor, objects, rng, first_instance_id)
    placement = placement_fn(candidates)
    people, materials, textures = [], [], []
    for j, person in enumerate(placement.people):
        name = f"person_{first_person_id + j}"
        wardrobe = Wardrobe(name, rng)
        people.append(
            person.model_copy(
                update={
                    "person_id": first_person_id + j,
                    "name": name,
                    "body_instance_id": first_instance_id + 2 * j,
                    "clothing_instance_id": first_instance_id + 2 * j + 1,
                    "body": wardrobe.dress(person.body),
                }
            )
        )
        materials += wardrobe.materials
        textures += wardrobe.textures
    return PopulationResult(
        people=tuple(people),
        materials=tuple(materials),
        textures=tuple(textures),
        requested=cfg.count,
        placed=placement.placed,
        traces=placement.traces,
    )


def random_person(
    rng: np.random.Generator,
    person_id: int,
    name: str,
    first_instance_id: int,
    motion_for_height: Callable[[float, float], HumanMotionSpec],
) -> tuple[PersonSpec, tuple[MaterialSpec, ...], tuple[TextureSpec, ...]]:
    """One person drawn and dressed as the placed people are, with the motion
    `motion_for_height(height_m, step_per_height)` gives (drawing from `rng` too), and the
    materials and textures their clothes bring (instances `first_instance_id` and the next)."""
    body = _body(rng)
    step_per_height = rng.uniform(*STEP_PER_HEIGHT)
    motion = motion_for_height(body.height_m, step_per_height)
    wardrobe = Wardrobe(name, rng)
    person = PersonSpec(
        person_id=person_id,
        name=name,
        body_instance_id=first_instance_id,
        clothing_instance_id=first_instance_id + 1,
        body=wardrobe.dress(body),
        motion=motion,
    )
    return person, tuple(wardrobe.materials), tuple(wardrobe.textures)
