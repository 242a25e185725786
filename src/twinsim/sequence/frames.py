"""One camera frame: what the simulator hands the writer, and what the reader hands back."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class CameraFrame:
    """A rendered frame to write; the writer copies the arrays, so buffers may be reused after.

    rgb (H, W, 3) uint8; depth (H, W) float32 z-depth in metres, 0 = no reading; instance
    (H, W) uint16, 0 = nothing; semantic (H, W) uint16 or uint8 class ids; T_world_cam (4, 4)
    float64 pose of the OpenCV optical frame; boxes as documented in docs/sequence-format.md.
    """

    index: int
    t_ns: int
    rgb: np.ndarray
    depth: np.ndarray
    instance: np.ndarray
    semantic: np.ndarray
    T_world_cam: np.ndarray
    boxes: list[dict] = field(default_factory=list)


@dataclass
class Frame:
    """A frame read back from a sequence, with the camera matrix K (3, 3) of its stream."""

    index: int
    t_ns: int
    rgb: np.ndarray
    depth: np.ndarray
    instance: np.ndarray
    semantic: np.ndarray
    K: np.ndarray
    T_world_cam: np.ndarray
    boxes: list[dict]
