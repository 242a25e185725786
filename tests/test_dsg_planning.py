"""Hierarchical planning on the scene graph against flat A* on the same clearance grid."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import make_robot
from twinsim.dsg import HierarchicalPlanner, NoPathError, build_scene_graph, free_grid, plan_flat
from twinsim.scene.worlds.apartment.config import ApartmentConfig
from twinsim.scene.worlds.apartment.generator import generate_apartment

CLEAR = 0.25


@pytest.fixture(scope="module")
def world():
    layout = generate_apartment(
        ApartmentConfig(min_rooms=10, max_rooms=10, texture_size=16), np.random.default_rng(5)
    )
    scene = layout.to_scene(5, (make_robot(),))
    grid = free_grid(scene)
    return scene, grid, HierarchicalPlanner(build_scene_graph(scene, []), grid, CLEAR)


def test_hierarchical_paths_are_clear_and_within_15_percent_of_flat_astar(world):
    scene, grid, planner = world
    assert len(scene.rooms) == 10
    rng = np.random.default_rng(0)
    free = np.argwhere(grid.clearance_m >= CLEAR + 0.05)
    checked = 0
    for _ in range(6):
        a, b = (grid.centres(*free[rng.integers(len(free))]) for _ in range(2))
        hier = planner.plan(a, b)
        flat = plan_flat(grid, a, b, CLEAR)
        np.testing.assert_allclose(hier.path_xy[[0, -1]], [a, b])
        assert np.all(grid.segment_clearance(hier.path_xy[:-1], hier.path_xy[1:]) >= CLEAR)
        assert abs(hier.length_m / flat.length_m - 1.0) <= 0.15, (hier.length_m, flat.length_m)
        # straight-line distance bounds both from below
        assert hier.length_m >= np.linalg.norm(b - a) - 1e-9
        assert hier.rooms[0] == planner.queries.room_at(a).room_id
        assert hier.rooms[-1] == planner.queries.room_at(b).room_id
        checked += len(hier.rooms) > 1
    assert checked >= 3, "most pairs should cross rooms"


def test_start_in_an_obstacle_is_refused(world):
    scene, grid, planner = world
    wardrobe = next(o for o in scene.objects if o.semantic_class in ("wardrobe", "bed"))
    free = grid.centres(*np.argwhere(grid.clearance_m >= 0.5)[0])
    with pytest.raises(NoPathError, match=r"start \(.*\) has less than 0.25 m clearance"):
        planner.plan(wardrobe.pos[:2], free)
    with pytest.raises(NoPathError, match=r"goal \(100.00, 100.00\) has less than 0.25 m"):
        plan_flat(grid, free, (100.0, 100.0), CLEAR)
