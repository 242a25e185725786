"""Hierarchical planning on the scene graph vs flat A* on the occupancy grid of a large apartment.

Measured in one run: a 12-room apartment (`scene.min_rooms = max_rooms = 12`), its ground-truth
scene graph and its 5 cm clearance grid (both planners keep 0.25 m clearance). For random pairs of
free start and goal points in different rooms, both planners run alternately; reported are the
median query times (each the fastest of --repeats alternated runs, against the noise of a shared
machine), their ratio (the speed-up of the hierarchy), and the length of the smoothed
hierarchical path over the flat A* path (worst and median). Building the graph is reported
separately: it is done once per world, like Kimera's.

Usage: python benchmarks/dsg_planning.py [--seed 0] [--rooms 12] [--pairs 30] [--repeats 3]
                                         [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import numpy as np

from twinsim.dsg import HierarchicalPlanner, build_scene_graph, free_grid, plan_flat
from twinsim.robots.drone.spec import DroneSpec
from twinsim.scene.worlds.apartment.config import ApartmentConfig
from twinsim.scene.worlds.apartment.generator import generate_apartment

CLEAR = 0.25
ROBOT = DroneSpec(
    mass_kg=1.5,
    inertia=(0.0165, 0.0165, 0.0324),
    half_size=(0.18, 0.18, 0.05),
    start_pos=(0.0, 0.0, 1.2),
    start_yaw=0.0,
    max_speed_mps=0.5,
    max_roll_pitch_rate_dps=40,
    max_yaw_rate_dps=30,
    max_roll_pitch_deg=25,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rooms", type=int, default=12)
    parser.add_argument("--pairs", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path, default=Path("benchmarks/results/dsg_planning.json"))
    args = parser.parse_args()

    cfg = ApartmentConfig(min_rooms=args.rooms, max_rooms=args.rooms, texture_size=16)
    scene = generate_apartment(cfg, np.random.default_rng(args.seed)).to_scene(args.seed, ROBOT)
    t0 = time.perf_counter()
    graph = build_scene_graph(scene, [])
    grid = free_grid(scene)
    planner = HierarchicalPlanner(graph, grid, CLEAR)
    build_s = time.perf_counter() - t0

    rng = np.random.default_rng(args.seed)
    free = np.argwhere(grid.clearance_m >= CLEAR + 0.05)
    hier_s, flat_s, ratios, expanded = [], [], [], []
    while len(ratios) < args.pairs:
        a, b = (grid.centres(*free[rng.integers(len(free))]) for _ in range(2))
        if planner.queries.room_at(a) == planner.queries.room_at(b):
            continue
        best_hier = best_flat = float("inf")
        for _ in range(args.repeats):
            t1 = time.perf_counter()
            hier = planner.plan(a, b)
            t2 = time.perf_counter()
            flat = plan_flat(grid, a, b, CLEAR)
            t3 = time.perf_counter()
            best_hier, best_flat = min(best_hier, t2 - t1), min(best_flat, t3 - t2)
        hier_s.append(best_hier)
        flat_s.append(best_flat)
        ratios.append(hier.length_m / flat.length_m)
        expanded.append((hier.expanded, flat.expanded))
    result = {
        "rooms": len(scene.rooms),
        "doors": len(scene.doors),
        "places": graph.get_layer("PLACES").num_nodes(),
        "grid_cells": int(grid.clearance_m.size),
        "pairs": args.pairs,
        "repeats": args.repeats,
        "graph_build_s": round(build_s, 3),
        "hierarchical_median_ms": round(1e3 * statistics.median(hier_s), 2),
        "flat_astar_median_ms": round(1e3 * statistics.median(flat_s), 2),
        "speedup_median_of_medians": round(
            statistics.median(flat_s) / statistics.median(hier_s), 1
        ),
        "speedup_total_time": round(sum(flat_s) / sum(hier_s), 1),
        "length_ratio_median": round(statistics.median(ratios), 3),
        "length_ratio_max": round(max(ratios), 3),
        "length_ratio_min": round(min(ratios), 3),
        "expanded_median": {
            "hierarchical": statistics.median(e[0] for e in expanded),
            "flat": statistics.median(e[1] for e in expanded),
        },
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
