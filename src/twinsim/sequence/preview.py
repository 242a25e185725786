"""A 2×2 contact sheet of one camera frame: RGB, depth, instance masks, and boxes over RGB."""

from __future__ import annotations

import cv2
import numpy as np

from twinsim.sequence.reader import Frame


def _colour_ids(ids: np.ndarray) -> np.ndarray:
    """A stable, distinct colour per id (0 stays black)."""
    h = ids.astype(np.uint32) * np.uint32(2654435761)
    rgb = np.stack([(h >> 24) & 255, (h >> 16) & 255, (h >> 8) & 255], axis=-1).astype(np.uint8)
    rgb[ids == 0] = 0
    return rgb


def preview_frame(frame: Frame, max_depth_m: float = 8.0) -> np.ndarray:
    """RGB image (2H, 2W, 3): colour | depth (near = bright) / instances | tight boxes on colour."""
    depth = np.clip(1.0 - frame.depth / max_depth_m, 0.0, 1.0)
    depth[frame.depth <= 0] = 0.0
    depth_rgb = cv2.applyColorMap((depth * 255).astype(np.uint8), cv2.COLORMAP_INFERNO)[..., ::-1]
    boxed = np.ascontiguousarray(frame.rgb.copy())
    for box in frame.boxes:
        x0, y0, x1, y1 = box["tight"]
        cv2.rectangle(boxed, (x0, y0), (x1, y1), (60, 255, 60), 1)
    top = np.hstack([frame.rgb, depth_rgb])
    bottom = np.hstack([_colour_ids(frame.instance), boxed])
    return np.vstack([top, bottom])
