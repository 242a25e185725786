"""Draw docs/images/towns.png: each town preset from above its car and through the car's camera.

For each preset, builds the `carla_loc` world with that preset (60 vehicles, 30 walkers asked
for), puts the car at a point of its planned drive with the traffic posed at that instant, and
renders a free camera high behind the car next to the car's left camera (as a recording
renders it, 640x360).

Usage: python scripts/town_pictures.py [--presets small_town mid_city ...] [--out PATH]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from twinsim.actors.traffic.in_town import VEHICLE_PREFIX
from twinsim.config import load_config
from twinsim.engine.backend import configure_backend
from twinsim.robots.omni.spec import pose_to_qpos
from twinsim.scene.sky import sky_level, sky_rgb
from twinsim.sim import build_scene

PRESETS = ("small_town", "mid_city", "highway", "skyscraper_city", "rural")
SIZE = (640, 360)


def _elevations(cam, fovy_deg: float) -> np.ndarray:
    """The sine of each pixel's view-ray elevation for MuJoCo's free camera `cam` (H, W)."""
    a, e = np.radians(cam.azimuth), np.radians(cam.elevation)
    forward = np.array([np.cos(e) * np.cos(a), np.cos(e) * np.sin(a), np.sin(e)])
    right = np.cross(forward, [0.0, 0.0, 1.0])
    right /= np.linalg.norm(right)
    up = np.cross(right, forward)
    tan_half = np.tan(np.radians(fovy_deg) / 2)
    w, h = SIZE
    y = (1.0 - 2.0 * (np.arange(h) + 0.5) / h) * tan_half
    x = (2.0 * (np.arange(w) + 0.5) / w - 1.0) * tan_half * w / h
    rays = forward + x[None, :, None] * right + y[:, None, None] * up
    return rays[..., 2] / np.linalg.norm(rays, axis=-1)


def _views(preset: str, seed: int) -> tuple[np.ndarray, np.ndarray, str]:
    """(overview, car camera) images of one preset and a caption."""
    overrides = [f"scene.preset={preset}", "traffic.vehicles=60", "traffic.walkers=30"]
    cfg = load_config("carla_loc", overrides, seed=seed, duration_s=30.0)
    configure_backend(cfg.render.backend)
    import mujoco  # after the OpenGL platform is chosen

    from twinsim.engine.world import World

    scene = build_scene(cfg)
    world = World(scene, cfg.render, cfg.sim.physics_hz)
    point = scene.robot.path[len(scene.robot.path) // 3]
    world.pose_actors(1.0 + point.t_s)
    world.robot().set_state(pose_to_qpos(point.pos, point.yaw), np.zeros(3))
    cam = mujoco.MjvCamera()
    cam.type = mujoco.mjtCamera.mjCAMERA_FREE
    cam.lookat[:] = np.asarray(point.pos) + np.array([0.0, 0.0, 2.0])
    cam.distance, cam.elevation, cam.azimuth = 70.0, -35.0, float(np.degrees(point.yaw))
    option = mujoco.MjvOption()
    option.geomgroup[:] = 1  # the car too
    with mujoco.Renderer(world.model, SIZE[1], SIZE[0]) as renderer:
        renderer.update_scene(world.data, camera=cam, scene_option=option)
        overview = renderer.render().copy()
        renderer.enable_segmentation_rendering()
        empty = renderer.render()[..., 0] < 0
    fovy = float(world.model.vis.global_.fovy)
    overview[empty] = np.round(255 * sky_rgb(_elevations(cam, fovy)[empty], sky_level(scene)))
    frame = world.render("cam_left", *SIZE).rgb  # as a recording renders it: culled, with sky
    world.close()
    vehicles = sum(f.name.startswith(VEHICLE_PREFIX) for f in scene.flying_objects)
    roads = scene.roads
    length = sum(
        float(np.linalg.norm(np.diff(np.asarray(lane.centerline)[:, :2], axis=0), axis=1).sum())
        for lane in roads.lanes
        if lane.kind != "connector"
    )
    caption = (
        f"{preset}: {len(roads.blocks)} blocks, {length / 1000:.1f} km of lanes, "
        f"{vehicles} vehicles, {len(scene.people)} walkers"
    )
    return overview, frame, caption


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presets", nargs="+", default=list(PRESETS), choices=PRESETS)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("docs/images/towns.png"))
    args = parser.parse_args()
    rows = [_views(p, args.seed) for p in args.presets]
    fig, axes = plt.subplots(len(rows), 2, figsize=(12, 3.6 * len(rows)), squeeze=False)
    for (overview, frame, caption), (left, right) in zip(rows, axes, strict=True):
        left.imshow(overview)
        right.imshow(frame)
        left.set_title(caption, loc="left", fontsize=10)
        right.set_title("the car's left camera", loc="left", fontsize=10)
        for ax in (left, right):
            ax.axis("off")
    fig.tight_layout()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.out.with_suffix(".tmp.png")
    fig.savefig(tmp, dpi=80)
    tmp.replace(args.out)
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
