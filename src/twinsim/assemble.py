"""World assembly: a config resolved into a complete `SceneSpec` (layout, people, robot, flying
objects, sensors), every random choice drawn from the config's seed."""

from __future__ import annotations

import numpy as np

from twinsim.actors.flying import (
    generate_flying_objects,
    pass_in_front_object,
    pass_times,
    planned_camera_pose,
)
from twinsim.actors.population import generate_people
from twinsim.config import TwinsimConfig
from twinsim.robots.registry import ROBOTS
from twinsim.scene.apartment import generate_apartment
from twinsim.scene.placement import clear_of_traces, place_people
from twinsim.scene.spec import RobotSpec, SceneSpec
from twinsim.sensors.rig import resolve_sensors

START_CLEARANCE_M = 1.0  # the robot starts at least this far from any person's walking trace


def build_scene(cfg: TwinsimConfig) -> SceneSpec:
    """Resolve a config into a complete world: layout, people, robot path, flying objects, sensors.

    Each stage draws from its own stream of the seed, so adding people or flying objects to a
    config keeps the same apartment.
    """
    layout_rng, people_rng, flight_rng, objects_rng = (
        np.random.default_rng(s) for s in np.random.SeedSequence(cfg.seed).spawn(4)
    )
    total_s = cfg.sim.bootstrap_s + cfg.sim.duration_s
    layout = generate_apartment(cfg.scene, layout_rng)
    next_id = max(o.instance_id for o in layout.objects) + 1
    population = generate_people(
        cfg.people,
        layout.rooms,
        layout.objects,
        people_rng,
        next_id,
        placement_fn=lambda candidates: place_people(
            candidates,
            layout.objects,
            layout.rooms,
            layout.wall_height,
            total_s,
            people_rng,
            cfg.people.placement_attempts,
            cfg.people.max_trace_intersections,
        ),
    )
    next_id += 2 * population.placed
    robot = ROBOTS.get(cfg.robot.kind).resolve(
        cfg.robot,
        layout,
        total_s,
        flight_rng,
        start_allowed=(
            (lambda xy: clear_of_traces(xy, population.traces, START_CLEARANCE_M))
            if population.people
            else None
        ),
    )
    sensors = resolve_sensors(cfg)
    flying, flying_materials = generate_flying_objects(
        cfg.flying_objects,
        layout.bounds_min,
        layout.bounds_max,
        layout.rooms,
        total_s,
        objects_rng,
        next_id,
    )
    if cfg.flying_objects.pass_in_front:
        occluder, materials = _occluder(
            robot, sensors, layout, total_s, objects_rng, next_id + len(flying)
        )
        flying, flying_materials = (*flying, occluder), (*flying_materials, *materials)
    scene = layout.to_scene(cfg.seed, robot, sensors)
    return scene.model_copy(
        update={
            "people": population.people,
            "flying_objects": flying,
            "materials": (*scene.materials, *population.materials, *flying_materials),
            "textures": (*scene.textures, *population.textures),
        }
    )


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
