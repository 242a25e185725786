"""One annotated camera frame: render, then masks, tight/loose 2D boxes and 3D boxes."""

from __future__ import annotations

import numpy as np

from twinsim.model.sensors import SensorSpec
from twinsim.scene.vocabulary import SEMANTIC_CLASSES
from twinsim.sensors.camera import intrinsics, loose_box, tight_boxes
from twinsim.sensors.keypoints import person_keypoints
from twinsim.sequence.frames import CameraFrame


def annotate_frame(
    world, cam: SensorSpec, index: int, t_ns: int, t_s: float = 0.0, rendered=None
) -> CameraFrame:
    """Render `cam` at the world's current state (time t_s), or take `rendered` (an exposure's
    composite, `twinsim.sensors.exposure`), and annotate every visible instance."""
    if rendered is None:
        rendered = world.render(cam.name, cam.width, cam.height)
    maps = world.maps
    instance = rendered.instance
    if instance is None:
        geom_lut = np.append(maps.geom_instance, np.uint16(0))  # index -1 → 0 (nothing)
        instance = geom_lut[rendered.geom_ids]
    semantic = maps.instance_class[instance]
    T_world_cam = world.T_world_cam(cam.name)
    T_cam_world = np.linalg.inv(T_world_cam)
    K = intrinsics(cam.width, cam.height, cam.hfov_deg)
    tight = tight_boxes(instance)
    ids = np.array(sorted(tight), dtype=np.int64)
    boxes = []
    for iid, (center, half, R) in zip(ids, world.instance_world_boxes(ids), strict=True):
        loose = loose_box(center, half, R, T_cam_world, K, cam.near_m, cam.width, cam.height)
        x0, y0, x1, y1 = tight[int(iid)]
        boxes.append(
            {
                "instance_id": int(iid),
                "semantic_class": SEMANTIC_CLASSES[int(maps.instance_class[iid])],
                "tight": [int(x0), int(y0), int(x1), int(y1)],
                "loose": None if loose is None else [int(v) for v in loose],
                "obb": {
                    "center": center.tolist(),
                    "half_extents": half.tolist(),
                    "rotation": R.tolist(),
                },
            }
        )
    people = person_keypoints(world, instance, rendered.depth, K, T_cam_world, t_s)
    return CameraFrame(
        index=index,
        t_ns=t_ns,
        rgb=rendered.rgb,
        depth=rendered.depth,
        instance=instance,
        semantic=semantic,
        T_world_cam=T_world_cam,
        boxes=boxes,
        people=people,
        dynamic_fraction=float(maps.instance_dynamic[instance].mean()),
    )
