"""World assembly: a config resolved into a complete `SceneSpec` (layout, people, robot, flying
objects, sensors), every random choice drawn from the config's seed.

`make_actors` is the one place people and flying objects are made for a world (their ids,
names, materials and textures): `build_scene` uses it for a generated world, and
`twinsim.replay.populate` for a twin that adds actors to a recorded one. Both find their way
on the world's generic free space (`twinsim.scene.free_space.floor_region`), so any
generator's layout works, with or without rooms.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from twinsim.actors.flying import (
    generate_flying_objects,
    pass_in_front_object,
    pass_times,
    planned_camera_pose,
)
from twinsim.actors.placement import (
    STATIONARY_MOTIONS,
    STATIONARY_PERSON_HALF_M,
    TraceMap,
    clear_of_traces,
    place_people,
)
from twinsim.actors.population import generate_people
from twinsim.actors.traffic.in_town import PlannedBox, make_town_traffic
from twinsim.actors.yielding import RobotTrack, yield_times, yield_to_robots
from twinsim.adversity import relight
from twinsim.config import TwinsimConfig
from twinsim.errors import ConfigError, PlanningError
from twinsim.model.people import PersonSpec
from twinsim.model.scene import (
    FlyingObjectSpec,
    GeomSpec,
    MaterialSpec,
    ObjectSpec,
    RedrawSpec,
    RobotSpec,
    SceneSpec,
    TextureSpec,
)
from twinsim.model.sections import FlyingObjectsConfig, PeopleConfig
from twinsim.model.sensors import SensorSpec
from twinsim.registries import GENERATORS, ROBOTS
from twinsim.robots.arm.scan import ArmPlanError
from twinsim.scene.free_space import FreeSpaceError, floor_region
from twinsim.scene.generators import Layout
from twinsim.sensors.rig import resolve_sensors

START_CLEARANCE_M = 1.0  # the robot starts at least this far from any person's walking trace
ROBOT_START_GAP_M = 1.5  # robots start at least this far apart (centre to centre, in x, y)


@dataclass(frozen=True)
class Actors:
    """People and flying objects made for a world, the materials and textures they bring, how
    many people were placed (and their traces, if any), and the next free instance id."""

    people: tuple[PersonSpec, ...]
    flying_objects: tuple[FlyingObjectSpec, ...]
    people_materials: tuple[MaterialSpec, ...]
    flying_materials: tuple[MaterialSpec, ...]
    textures: tuple[TextureSpec, ...]
    placed: int
    traces: TraceMap | None
    next_id: int

    def with_flying(self, obj: FlyingObjectSpec, materials: Sequence[MaterialSpec]) -> Actors:
        """These actors and one more flying object (its id must be `next_id`)."""
        return replace(
            self,
            flying_objects=(*self.flying_objects, obj),
            flying_materials=(*self.flying_materials, *materials),
            next_id=max(self.next_id, obj.instance_id + 1),
        )

    def into(self, scene: SceneSpec) -> SceneSpec:
        """The scene with these actors added after those it has."""
        return scene.model_copy(
            update={
                "people": (*scene.people, *self.people),
                "flying_objects": (*scene.flying_objects, *self.flying_objects),
                "materials": (*scene.materials, *self.people_materials, *self.flying_materials),
                "textures": (*scene.textures, *self.textures),
            }
        )


def make_actors(
    world,
    people_cfg: PeopleConfig,
    flying_cfg: FlyingObjectsConfig,
    total_s: float,
    people_rng: np.random.Generator,
    objects_rng: np.random.Generator,
    first_id: int,
    *,
    obstacles: Sequence[ObjectSpec] | None = None,
    occupied: Sequence[PersonSpec] = (),
    first_person_id: int = 0,
    name_prefix: str = "flying",
) -> Actors:
    """People (GRADE's placement) and flying objects for `world` (a layout or a `SceneSpec`).

    Instance ids start at `first_id`: two per placed person (body, clothing), then one per
    flying object. People are placed clear of `obstacles` (default: the world's objects) and
    of the `occupied` people already there, and numbered from `first_person_id`; flying
    objects are named `<name_prefix>_<k>_<class>`. People draw from `people_rng`, flying
    objects from `objects_rng` (the same generator is fine).
    """
    floor = floor_region(world)
    people: tuple[PersonSpec, ...] = ()
    people_materials: tuple[MaterialSpec, ...] = ()
    textures: tuple[TextureSpec, ...] = ()
    placed, traces, next_id = 0, None, first_id
    if people_cfg.count:
        static = world.objects if obstacles is None else obstacles
        population = generate_people(
            people_cfg,
            floor,
            world.objects,
            people_rng,
            next_id,
            placement_fn=lambda candidates: place_people(
                candidates,
                static,
                floor,
                total_s,
                people_rng,
                people_cfg.placement_attempts,
                people_cfg.max_trace_intersections,
                occupied=occupied,
            ),
            first_person_id=first_person_id,
        )
        people, people_materials = population.people, population.materials
        textures, placed = population.textures, population.placed
        traces = population.traces if population.people else None
        next_id += 2 * placed
    flying: tuple[FlyingObjectSpec, ...] = ()
    flying_materials: tuple[MaterialSpec, ...] = ()
    if flying_cfg.count:
        flying, flying_materials = generate_flying_objects(
            flying_cfg,
            world.bounds_min,
            world.bounds_max,
            floor,
            total_s,
            objects_rng,
            next_id,
            name_prefix=name_prefix,
        )
    return Actors(
        people=people,
        flying_objects=flying,
        people_materials=people_materials,
        flying_materials=flying_materials,
        textures=textures,
        placed=placed,
        traces=traces,
        next_id=next_id + len(flying),
    )


LIVE_PLAN_S = 20.0  # the tour a live robot is placed by (its path is then dropped)
LIVE_ROOMS = 2  # rooms that tour enters (fewer where the world has fewer)
#: further draws of the people and robot starts with the whole crowd, before it shrinks
PLACEMENT_REDRAWS = 3
_REDRAW_KEY = 0x5EED  # spawn key of a world's redrawn streams, apart from the seed's own
#: what a draw of people and robot starts may leave: no start, tour or scan for a robot
MISFITS = (PlanningError, FreeSpaceError, ArmPlanError)


def build_scene(cfg: TwinsimConfig, live: bool = False) -> SceneSpec:
    """Resolve a config into a complete world: layout, people, robot paths, flying objects,
    sensors.

    The layout comes from the generator `cfg.scene.generator` names. Each stage draws from its
    own stream of the seed, so adding people or flying objects to a config keeps the same world;
    the first robot plans from the flight stream, each further robot from a stream of its own.
    Once every robot is planned, walkers wait for them to pass (`walkers_yield`). `live`: the
    robots are driven from outside (`twinsim.closedloop`): they keep their start pose and no
    planned path, and walkers keep clear of where they start.

    Every seed builds a world. Where the seed's own draw of people leaves a robot no start or
    no tour (`MISFITS`) but the layout without people would, the people and robot starts are
    drawn again from streams derived from the seed (`crowd_draws`: the whole crowd
    `PLACEMENT_REDRAWS` times, then smaller crowds until one fits), and as a last resort the
    seed's own draw without anyone; `SceneSpec.redraw` says which draw built it and why the
    others failed. A world that does not fit its robots even without people raises the seed's
    own error.
    """
    streams = np.random.SeedSequence(cfg.seed).spawn(4 + len(cfg.robots))
    layout = GENERATORS.get(cfg.scene.generator).generate(
        cfg.scene, np.random.default_rng(streams[0])
    )
    wanted = cfg.people.count
    try:
        return _draw_world(cfg, live, layout, streams, wanted)
    except MISFITS as first:
        if not wanted:
            raise
        failures = [f"draw 0 with {wanted} people: {first}"]
        try:
            nobody = _draw_world(cfg, live, layout, streams, 0)
        except MISFITS:
            raise first from None
    for draw, count in crowd_draws(wanted):
        try:
            scene = _draw_world(cfg, live, layout, _redrawn(cfg.seed, draw, len(streams)), count)
        except MISFITS as exc:
            failures.append(f"draw {draw} with {count} people: {exc}")
            continue
        return _redrawn_scene(scene, draw, count, failures)
    return _redrawn_scene(nobody, 0, 0, failures)


def _redrawn_scene(scene: SceneSpec, draw: int, people: int, failures: list[str]) -> SceneSpec:
    """The scene with the record of the redraw that built it."""
    redraw = RedrawSpec(draw=draw, people_requested=people, failures=tuple(failures))
    return scene.model_copy(update={"redraw": redraw})


def crowd_draws(people: int) -> list[tuple[int, int]]:
    """The (draw, people asked for) `build_scene` tries after the seed's own draw of `people`
    failed: the whole crowd redrawn `PLACEMENT_REDRAWS` times, then cut by a quarter at a time
    down to one person (20: 15, 11, 8, 6, 4, 3, 2, 1)."""
    draws = [(k, people) for k in range(1, PLACEMENT_REDRAWS + 1)]
    count = people * 3 // 4
    while count:
        draws.append((len(draws) + 1, count))
        count = count * 3 // 4
    return draws


def _redrawn(seed: int, draw: int, n: int) -> list[np.random.SeedSequence]:
    """The `n` streams of a redraw of `seed`'s world, apart from its own and from each other's."""
    return np.random.SeedSequence(seed, spawn_key=(_REDRAW_KEY, draw)).spawn(n)


def _draw_world(
    cfg: TwinsimConfig,
    live: bool,
    layout: Layout,
    streams: Sequence[np.random.SeedSequence],
    people: int,
) -> SceneSpec:
    """The world on `layout` with `people` asked for, every other random choice from `streams`
    (the layout's first, then people, flight, objects, each further robot, traffic)."""
    people_rng, flight_rng, objects_rng = (np.random.default_rng(s) for s in streams[1:4])
    total_s = cfg.sim.bootstrap_s + cfg.sim.duration_s
    first_id = max(o.instance_id for o in layout.objects) + 1
    people_cfg = cfg.people.model_copy(update={"count": people})
    actors = make_actors(
        layout, people_cfg, cfg.flying_objects, total_s, people_rng, objects_rng, first_id
    )
    robots: list[RobotSpec] = []
    sensors: list[SensorSpec] = []
    robot_rngs = [flight_rng, *(np.random.default_rng(s) for s in streams[4:-1])]
    planning = keep_out_of_stationary_people(layout, actors.people)
    for (name, robot_cfg), rng in zip(cfg.robots.items(), robot_rngs, strict=True):
        start_allowed = _start_filter(actors.traces, [r.start_pos for r in robots])
        plan_cfg, plan_s = (_placing_only(robot_cfg), LIVE_PLAN_S) if live else (robot_cfg, total_s)
        robot = ROBOTS.get(robot_cfg.kind).resolve(
            plan_cfg, planning, plan_s, rng, start_allowed=start_allowed
        )
        robots.append(robot.model_copy(update={"name": name}))
        sensors += resolve_sensors(robot_cfg.sensors, name)
    if live:
        robots = [r.model_copy(update={"path": ()}) for r in robots]
    actors = replace(actors, people=walkers_yield(actors.people, robots, total_s))
    actors = _with_traffic(actors, cfg, layout, robots, total_s, np.random.default_rng(streams[-1]))
    if cfg.flying_objects.pass_in_front and live:
        raise ConfigError(
            "flying_objects.pass_in_front: needs the robot's planned path; robots driven live "
            "have none (set it to false)"
        )
    if cfg.flying_objects.pass_in_front:
        occluder, materials = _occluder(
            robots[0], sensors, layout, total_s, objects_rng, actors.next_id
        )
        actors = actors.with_flying(occluder, materials)
    if len(robots) > 1:  # each is an instance the others' cameras see, numbered after the rest
        first_robot_id = actors.next_id
        robots = [
            r.model_copy(update={"instance_id": first_robot_id + i}) for i, r in enumerate(robots)
        ]
    scene = actors.into(layout.to_scene(cfg.seed, tuple(robots), tuple(sensors)))
    return relight(scene, cfg.light)  # the `light:` section, as a twin relights (no change: same)


def _with_traffic(
    actors: Actors,
    cfg: TwinsimConfig,
    layout: Layout,
    robots: Sequence[RobotSpec],
    total_s: float,
    rng: np.random.Generator,
) -> Actors:
    """The actors and the town's traffic (`cfg.traffic`), which keeps clear of the robots'
    planned drives and of the people already there."""
    traffic = cfg.traffic
    if not (traffic.vehicles or traffic.walkers):
        return actors
    if layout.roads is None:
        raise ConfigError(
            f"traffic: vehicles={traffic.vehicles}, walkers={traffic.walkers} need a world with "
            f"roads; scene.generator {cfg.scene.generator!r} has none (use scene.generator: town)"
        )
    made = make_town_traffic(
        traffic.vehicles,
        traffic.walkers,
        traffic.speed_factor,
        dict(traffic.classes),
        layout.roads,
        [_planned_box(r) for r in robots],
        actors.people,
        total_s,
        rng,
        actors.next_id,
        len(actors.people),
    )
    return replace(
        actors,
        people=(*actors.people, *made.walkers),
        flying_objects=(*actors.flying_objects, *made.vehicles),
        flying_materials=(*actors.flying_materials, *made.materials),
        textures=(*actors.textures, *made.textures),
        next_id=made.next_id,
    )


def _planned_box(robot: RobotSpec) -> PlannedBox:
    """A robot's planned footprint box, for traffic to keep clear of."""
    kind = ROBOTS.get(robot.kind)
    half_length, half_width = kind.planned_extent(robot)
    return PlannedBox(lambda t: kind.planned_footprint(robot, t)[0], half_length, half_width)


def _placing_only(robot_cfg):
    """A live robot's config as it is resolved: its tour only places it, so it need enter two
    rooms only (for the kinds whose tours enter rooms): enough to start where it can reach
    another room, never in a pocket between furniture and a wall."""
    if "min_rooms_visited" in type(robot_cfg).model_fields:
        return robot_cfg.model_copy(update={"min_rooms_visited": LIVE_ROOMS})
    return robot_cfg


def walkers_yield(
    people: Sequence[PersonSpec], robots: Sequence[RobotSpec], total_s: float
) -> tuple[PersonSpec, ...]:
    """The people with waits put into every walker's motion so that it keeps clear of each
    robot's planned position over the run (`twinsim.actors.yielding`): people are kinematic
    and would push a robot over with unbounded force; the tours are planned first, so the
    walkers give way to them."""
    t = yield_times(total_s)
    tracks = [RobotTrack(*ROBOTS.get(r.kind).planned_footprint(r, t)) for r in robots]
    return tuple(yield_to_robots(person, tracks, t) for person in people)


def keep_out_of_stationary_people(layout: Layout, people: Sequence[PersonSpec]) -> Layout:
    """The layout robots plan in: people who stay where they are (standing, waving, sitting)
    are obstacles there, a box of `STATIONARY_PERSON_HALF_M` around them as tall as they are,
    so no tour runs through them; walkers cross tours, as in GRADE, and wait for the robots
    to pass (`walkers_yield`)."""
    keep_outs = []
    for person in people:
        if person.motion.kind not in STATIONARY_MOTIONS or not person.motion.waypoints:
            continue
        x, y = person.motion.waypoints[0]
        h = person.body.height_m
        half = STATIONARY_PERSON_HALF_M
        box = GeomSpec(type="box", size=(half, half, 0.5 * h), pos=(0.0, 0.0, 0.5 * h), material="")
        keep_outs.append(
            ObjectSpec(
                instance_id=person.body_instance_id,
                name=f"keep_out_{person.name}",
                semantic_class="person",
                pos=(x, y, 0.0),
                geoms=(box,),
            )
        )
    if not keep_outs:
        return layout
    return replace(layout, objects=(*layout.objects, *keep_outs))


def _start_filter(traces: TraceMap | None, others: Sequence[Sequence[float]]):
    """Where a robot may start: clear of people's traces and of the robots placed before it."""
    if traces is None and not others:
        return None
    taken = np.array([p[:2] for p in others], dtype=float).reshape(-1, 2)

    def allowed(xy: np.ndarray) -> np.ndarray:
        ok = np.ones(len(xy), dtype=bool)
        if traces is not None:
            ok &= clear_of_traces(xy, traces, START_CLEARANCE_M)
        if len(taken):
            gaps = np.linalg.norm(xy[:, None, :] - taken[None], axis=2)
            ok &= gaps.min(axis=1) >= ROBOT_START_GAP_M
        return ok

    return allowed


def _occluder(robot: RobotSpec, sensors, layout, total_s: float, rng, instance_id: int):
    """GRADE's WO: an object passing right in front of the first camera's lens now and then."""
    camera = next(s for s in sensors if s.type == "camera")
    return pass_in_front_object(
        planned_camera_pose(robot, camera),
        pass_times(1.0, total_s, rng),
        total_s,
        layout.bounds_min,
        layout.bounds_max,
        rng,
        instance_id,
    )
