"""COCO person keypoints per frame: 2D projections with visibility, and 3D joints.

Visibility follows COCO: 2 = in the image and seen (the pixel shows this person, body or
clothing, no more than `SURFACE_DEPTH_M` in front of the keypoint: a body surface over its own
joint), 1 = in the image but occluded, 0 = outside the image or behind the camera.
"""

from __future__ import annotations

import numpy as np

SURFACE_DEPTH_M = 0.25


def project(points_world: np.ndarray, K: np.ndarray, T_cam_world: np.ndarray):
    """Pixel coordinates (n, 2) and depths (n,) of world points."""
    p = points_world @ T_cam_world[:3, :3].T + T_cam_world[:3, 3]
    z = p[:, 2]
    with np.errstate(divide="ignore", invalid="ignore"):
        uv = p[:, :2] / z[:, None] * K[[0, 1], [0, 1]] + K[:2, 2]
    return uv, z


def visibility(
    uv: np.ndarray,
    z: np.ndarray,
    own_ids: tuple[int, int],
    instance: np.ndarray,
    depth: np.ndarray,
    near_m: float,
) -> np.ndarray:
    """COCO visibility flag (0, 1, 2) of each projected keypoint."""
    h, w = instance.shape
    px = np.floor(np.nan_to_num(uv) + 0.5).astype(np.int64)
    inside = (
        np.isfinite(uv).all(axis=1)
        & (z >= near_m)
        & (px[:, 0] >= 0)
        & (px[:, 0] < w)
        & (px[:, 1] >= 0)
        & (px[:, 1] < h)
    )
    flags = inside.astype(np.int64)
    x, y = px[inside].T
    seen = np.isin(instance[y, x], own_ids) & (depth[y, x] >= z[inside] - SURFACE_DEPTH_M)
    flags[np.flatnonzero(inside)[seen]] = 2
    return flags


def person_keypoints(world, instance, depth, K, T_cam_world, t_s: float) -> list[dict]:
    """Keypoints and joints of every person with at least one keypoint in the image."""
    out = []
    near = float(world.model.vis.map.znear * world.model.stat.extent)
    for person, motion in world.actors.people():
        kp_world = motion.keypoints_world(t_s)
        uv, z = project(kp_world, K, T_cam_world)
        flags = visibility(
            uv, z, (person.body_instance_id, person.clothing_instance_id), instance, depth, near
        )
        if not flags.any():
            continue
        uv = np.where(flags[:, None] > 0, uv, 0.0)
        out.append(
            {
                "instance_id": person.body_instance_id,
                "keypoints": np.column_stack([uv, flags]).tolist(),
                "joints_world": motion.joints_world(t_s).tolist(),
            }
        )
    return out
