"""Draw docs/images/lidar-scan.png: one HDL-32E sweep of a recorded run, coloured by class.

Records a short run of the default apartment with people and flying objects and an HDL-32E,
reads the sweep back with `open_sequence`, and draws it from above (world frame, each point
moved with the sensor pose of its own capture time) and as the sensor sees it (ring × column).

Usage: python scripts/lidar_scan_picture.py [--seed 3] [--out docs/images/lidar-scan.png]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from twinsim.config import load_config
from twinsim.scene.vocabulary import SEMANTIC_CLASSES
from twinsim.sequence import open_sequence
from twinsim.sim import run

OVERRIDES = [
    "people.count=12",
    "flying_objects.count=6",
    "lidars.lidar0.model=hdl-32e",
    "cameras.cam0.width=64",
    "cameras.cam0.height=48",
    "robot.min_rooms_visited=1",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path("docs/images/lidar-scan.png"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cfg = load_config("default", OVERRIDES, seed=args.seed, duration_s=1.5)
        seq = open_sequence(run(cfg, Path(tmp) / "seq"))
        lidar = seq.lidar("lidar0")
        scan = lidar[len(lidar) - 2]
        info = seq.stream_info("lidar0")
        t_gt, T_gt = seq.groundtruth()
    step_ns = 10**9 // seq.metadata["physics_hz"]
    T_body_lidar = np.array(info["T_body_sensor"])
    rows = np.searchsorted(t_gt, scan.t_ns + scan.t_offset_ns // step_ns * step_ns)
    # ground-truth poses come at 60 Hz: the nearest one is within 2 steps of the capture time
    rows = np.clip(rows, 0, len(t_gt) - 1)
    T = T_gt[rows] @ T_body_lidar
    world = np.einsum("nij,nj->ni", T[:, :3, :3], scan.points.astype(float)) + T[:, :3, 3]
    present = [int(c) for c in np.unique(scan.semantic)]
    cmap = plt.get_cmap("tab20", len(present))
    colour_of = {c: cmap(i) for i, c in enumerate(present)}
    colours = np.array([colour_of[int(c)] for c in scan.semantic])

    fig, (top, side) = plt.subplots(
        1, 2, figsize=(13, 5.2), gridspec_kw={"width_ratios": [1.0, 1.35]}
    )
    above = world[:, 2] < 2.2  # leave the ceiling out of the view from above
    order = np.argsort(world[above, 2])
    top.scatter(world[above, 0][order], world[above, 1][order], s=0.6, c=colours[above][order])
    origin = scan.T_world_lidar[:3, 3]
    top.plot(*origin[:2], marker="^", color="black", markersize=8)
    top.set_aspect("equal")
    top.set_title("one sweep from above (world frame, m)")
    columns, rings = info["columns"], info["rings"]
    column = np.arange(len(scan)) // rings  # firing order: column, then ring (all rays return)
    image = np.ones((rings, columns, 4))
    image[rings - 1 - scan.ring, column % columns] = colours
    side.imshow(image, aspect="auto", interpolation="nearest")
    side.set_title(f"as the sensor sees it: {rings} rings × {columns} columns (rear, left, …)")
    side.set_xlabel("column (firing order)")
    side.set_ylabel("ring (top = +10°)")
    handles = [
        plt.Line2D([], [], marker="o", ls="", color=colour_of[c], label=SEMANTIC_CLASSES[c])
        for c in present
    ]
    fig.legend(handles=handles, loc="lower center", ncol=min(10, len(handles)), fontsize=8)
    fig.suptitle(
        f"HDL-32E sweep at 10 Hz: {len(scan)} points, {int(scan.dynamic.sum())} on people "
        "and flying objects, coloured by semantic class"
    )
    fig.tight_layout(rect=(0, 0.08, 1, 0.95))
    fig.savefig(args.out, dpi=110)


if __name__ == "__main__":
    main()
