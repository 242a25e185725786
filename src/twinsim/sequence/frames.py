"""One camera frame: what the simulator hands the writer, what the reader hands back, and a
frame copied from another sequence (see `twinsim.replay.frame_source`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np


@dataclass
class CameraFrame:
    """A rendered frame to write; the writer copies the arrays, so buffers may be reused after.

    rgb (H, W, 3) uint8; depth (H, W) float32 z-depth in metres, 0 = no reading; instance
    (H, W) uint16, 0 = nothing; semantic (H, W) uint16 or uint8 class ids; T_world_cam (4, 4)
    float64 pose of the OpenCV optical frame; boxes as documented in docs/sequence-format.md;
    people: one dict per person in view ({"instance_id", "keypoints": 17 × [x, y, v],
    "joints_world": J × [x, y, z]}); dynamic_fraction: share of pixels on dynamic instances;
    normals (H, W, 3) float32 unit normals in the optical frame, for a stream that records them.
    """

    index: int
    t_ns: int
    rgb: np.ndarray
    depth: np.ndarray
    instance: np.ndarray
    semantic: np.ndarray
    T_world_cam: np.ndarray
    boxes: list[dict] = field(default_factory=list)
    people: list[dict] = field(default_factory=list)
    dynamic_fraction: float = 0.0
    normals: np.ndarray | None = None


@dataclass
class Frame:
    """A frame read back from a sequence, with the camera matrix K (3, 3) of its stream.

    `keypoints`: person instance id → (17, 3) COCO keypoints (x, y, visibility 0/1/2);
    `joints_world`: person instance id → (J, 3) skeleton joints in the world frame.
    `normals` (H, W, 3) float32, `flow` (H, W, 2) float32 and `flow_valid` (H, W) uint8 where
    the stream records them (a stream's last frame has no flow); see docs/sequence-format.md.
    """

    index: int
    t_ns: int
    rgb: np.ndarray
    depth: np.ndarray
    instance: np.ndarray
    semantic: np.ndarray
    K: np.ndarray
    T_world_cam: np.ndarray
    boxes: list[dict]
    keypoints: dict[int, np.ndarray] = field(default_factory=dict)
    joints_world: dict[int, np.ndarray] = field(default_factory=dict)
    dynamic_fraction: float = 0.0
    normals: np.ndarray | None = None
    flow: np.ndarray | None = None
    flow_valid: np.ndarray | None = None


@dataclass
class CopiedFrame:
    """A frame taken file for file from another sequence's camera stream (a twin that provably
    sees the same, or noise that changes some images): masks, its frames.csv and boxes.jsonl
    lines verbatim, and the colour and depth images unless `rgb` / `depth` give new ones.
    `T_world_cam` is the pose of that line, for whoever composites onto the image."""

    index: int
    t_ns: int
    source: Path  # the source camera folder
    frame_line: str  # the source frame's frames.csv line, verbatim
    boxes_line: str  # the source frame's boxes.jsonl line, verbatim
    T_world_cam: np.ndarray
    rgb: np.ndarray | None = None
    depth: np.ndarray | None = None
