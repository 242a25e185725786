"""The OpenCV pinhole camera (K, T_world_cam) as a Blender camera.

Blender's camera looks down its −z axis with y up and x right, so its frame is the OpenCV
optical frame (x right, y down, z forward) turned half a turn about x:

    T_world_blendercam = T_world_cam · diag(1, −1, −1, 1)

Intrinsics: square pixels (fx = fy) with a horizontal sensor fit, so the focal length in
pixels is `lens / sensor_width · W`; OpenCV puts pixel centres at integer coordinates and
Blender at half-integers, so the principal point (cx, cy) is Blender's shift of the frustum
`shift_x = (W/2 − cx − 0.5) / max(W, H)`, `shift_y = (cy + 0.5 − H/2) / max(W, H)`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: OpenCV optical frame → Blender camera frame (x kept, y and z flipped)
BLENDER_FROM_OPENCV = np.diag([1.0, -1.0, -1.0, 1.0])
_SENSOR_WIDTH_MM = 36.0


@dataclass(frozen=True)
class BlenderCamera:
    """The Blender camera data of a pinhole camera: focal length, sensor and frustum shift."""

    lens_mm: float
    sensor_width_mm: float
    shift_x: float
    shift_y: float
    width: int
    height: int


def blender_camera(K: np.ndarray, width: int, height: int) -> BlenderCamera:
    """Blender's camera for the intrinsics `K` of a `width`×`height` image (fx must equal fy)."""
    fx, fy, cx, cy = K[0, 0], K[1, 1], K[0, 2], K[1, 2]
    if not np.isclose(fx, fy, rtol=1e-9):
        raise ValueError(f"Cycles cameras have square pixels: fx {fx} != fy {fy}")
    big = max(width, height)
    return BlenderCamera(
        lens_mm=float(fx / width * _SENSOR_WIDTH_MM),
        sensor_width_mm=_SENSOR_WIDTH_MM,
        shift_x=float((width / 2 - cx - 0.5) / big),
        shift_y=float((cy + 0.5 - height / 2) / big),
        width=width,
        height=height,
    )


def blender_matrix_world(T_world_cam: np.ndarray) -> np.ndarray:
    """The Blender camera object's world matrix for the OpenCV camera pose `T_world_cam`."""
    return np.asarray(T_world_cam, float) @ BLENDER_FROM_OPENCV


def apply_camera(
    bpy, obj, cam: BlenderCamera, T_world_cam: np.ndarray, clip: tuple[float, float]
) -> None:
    """Set the Blender camera object `obj` (and the scene's resolution) to `cam` at the pose,
    seeing from `clip[0]` to `clip[1]` metres (the sensor's near and far planes)."""
    import mathutils

    data = obj.data
    data.type = "PERSP"
    data.sensor_fit = "HORIZONTAL"
    data.sensor_width = cam.sensor_width_mm
    data.lens = cam.lens_mm
    data.shift_x, data.shift_y = cam.shift_x, cam.shift_y
    data.clip_start, data.clip_end = clip
    render = bpy.context.scene.render
    render.resolution_x, render.resolution_y = cam.width, cam.height
    render.resolution_percentage = 100
    render.pixel_aspect_x = render.pixel_aspect_y = 1.0
    obj.matrix_world = mathutils.Matrix(blender_matrix_world(T_world_cam).tolist())
