"""Draw docs/images/robots.png: each robot kind in the apartment, seen from beside it and
through its own camera.

For each kind, records a short run of the `tiny` apartment (a 320×240 camera), then rebuilds
its world at the last recorded frame from the logged `robot_state` and renders it from a
free camera behind and above the robot (robot geoms shown), next to the robot camera's
recorded frame.

Usage: python scripts/robot_pictures.py [--kinds drone omni ...] [--out docs/images/robots.png]
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
from twinsim.engine.backend import configure_backend
from twinsim.model.base import ROBOT_GEOM_GROUP
from twinsim.model.clock import step_to_ns
from twinsim.replay.source import load_source
from twinsim.sequence import open_sequence
from twinsim.sim import run

KINDS = ("drone", "omni", "diff_drive", "quadruped", "arm", "mjcf")
#: distance (m) of the outside view per kind; others 1.6 m
DISTANCE = {"drone": 1.4, "diff_drive": 1.1, "quadruped": 1.3, "arm": 1.6}
#: the arm's default 120° scan needs ~16 s: a 60° arc at twice the joint speed fits 3 s
EXTRA = {
    "arm": ["robot.arc_span_deg=60", "robot.max_joint_speed_dps=120"],
    "mjcf": [  # a user's robot file: the example rover, its camera on the pan servo's site
        f"robot.path={Path(__file__).resolve().parent.parent / 'examples/robots/wheelbot.xml'}",
        "robot.base=planar",
        "robot.mount=cam_site",
    ],
}


def _outside_view(seq_path: Path, cfg, width: int, height: int) -> np.ndarray:
    """The world at the last recorded camera frame, from behind and above the robot."""
    import mujoco  # after `configure_backend` chose the OpenGL platform

    from twinsim.engine.world import World

    source = load_source(seq_path)
    scene, hz = source.scene, cfg.sim.physics_hz
    world = World(scene, cfg.render, hz)
    robot = scene.robots[0]
    log = source.logs[robot.name]
    t_frame = int(open_sequence(seq_path).camera("cam0")[-1].t_ns)
    i = int(np.searchsorted(log.t_ns, t_frame))
    k = source.steps[0] + i
    assert step_to_ns(k, hz) == log.t_ns[i]
    world.pose_actors(k / hz)
    view = world.robot(robot.name)
    view.set_state(log.qpos[i], log.qvel[i])
    T = view.T_world_body()
    yaw = np.degrees(np.arctan2(T[1, 0], T[0, 0]))
    cam = mujoco.MjvCamera()
    cam.type = mujoco.mjtCamera.mjCAMERA_FREE
    cam.lookat[:] = T[:3, 3] + np.array([0.0, 0.0, 0.1])
    cam.distance = DISTANCE.get(robot.kind, 1.6)
    cam.elevation = -25.0
    cam.azimuth = _clear_azimuth(world, cam.lookat.copy(), cam.distance, yaw, cam.elevation)
    option = mujoco.MjvOption()
    option.geomgroup[:] = 1  # robot geoms too
    with mujoco.Renderer(world.model, height, width) as renderer:
        renderer.update_scene(world.data, camera=cam, scene_option=option)
        image = renderer.render()
    world.close()
    return image


def _clear_azimuth(world, lookat: np.ndarray, distance: float, yaw: float, elevation: float):
    """The azimuth nearest behind-and-beside the robot whose view line no wall blocks."""
    import mujoco

    groups = np.ones(6, dtype=np.uint8)
    groups[ROBOT_GEOM_GROUP] = 0
    hit = np.zeros(1, dtype=np.int32)
    el = np.radians(elevation)
    for offset in (150, 210, 120, 240, 90, 270, 180, 60, 300, 30, 330, 0):
        az = np.radians(yaw + offset)
        forward = np.array([np.cos(el) * np.cos(az), np.cos(el) * np.sin(az), np.sin(el)])
        d = mujoco.mj_ray(world.model, world.data, lookat, -forward, groups, 1, -1, hit)
        if d < 0 or d > distance + 0.1:
            return yaw + offset
    return yaw + 150


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kinds", nargs="+", default=list(KINDS))
    parser.add_argument("--seed", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path("docs/images/robots.png"))
    args = parser.parse_args()
    configure_backend("auto")
    overrides = ["sensors.cam0.width=320", "sensors.cam0.height=240"]
    rows = []
    for kind in args.kinds:
        sets = [f"robot.kind={kind}", *overrides, *EXTRA.get(kind, [])]
        cfg = load_config("tiny", sets, args.seed, duration_s=3.0)
        with tempfile.TemporaryDirectory() as tmp:
            seq_path = run(cfg, Path(tmp) / "seq")
            ego = open_sequence(seq_path).camera("cam0")[-1].rgb
            outside = _outside_view(seq_path, cfg, 320, 240)
        rows.append((kind, outside, ego))
    fig, axes = plt.subplots(len(rows), 2, figsize=(8, 3.0 * len(rows)), squeeze=False)
    for (kind, outside, ego), (left, right) in zip(rows, axes, strict=True):
        left.imshow(outside)
        left.set_title(f"{kind}: beside it", fontsize=10)
        right.imshow(ego)
        right.set_title(f"{kind}: its camera cam0", fontsize=10)
        for ax in (left, right):
            ax.axis("off")
    fig.tight_layout()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=90)
    from PIL import Image  # a 256-colour palette keeps the picture small in the repository

    Image.open(args.out).convert("RGB").quantize(256).save(args.out, optimize=True)


if __name__ == "__main__":
    main()
