"""Frame-to-frame dense RGB-D odometry with OpenCV 5's `cv2.Odometry` (photometric + ICP)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from twinsim.eval.methods.base import (
    Log,
    Method,
    chain_to_reference,
    first_stream,
    save_estimate,
)
from twinsim.sequence import open_sequence


class RgbdOdometry(Method):
    """`cv2.Odometry(RGB_DEPTH, COMMON)` between consecutive frames; a failed frame is a gap and
    the next frame is registered against the last tracked one; after `reanchor_after` failures
    in a row, tracking restarts from the current frame at the last estimated pose."""

    name = "rgbd_odometry"

    def __init__(
        self, max_depth_m: float = 8.0, max_depth_diff_m: float = 0.2, reanchor_after: int = 3
    ) -> None:
        self.max_depth_m = max_depth_m
        self.max_depth_diff_m = max_depth_diff_m  # ICP correspondences (OpenCV's default 0.07)
        self.reanchor_after = reanchor_after

    def run(self, seq_path: Path, trial_dir: Path, seed: int, log: Log) -> Path:
        seq = open_sequence(seq_path)
        cam = seq.camera(first_stream(seq, "camera"))
        observe, track = rgbd_tracker(cam.K, self.max_depth_m, self.max_depth_diff_m)
        t_ns, poses = chain_to_reference(cam, observe, track, self.reanchor_after, log)
        log(f"tracked {len(t_ns)} of {len(cam)} frames")
        return save_estimate(trial_dir, t_ns, poses, self.name)


def rgbd_tracker(
    K: np.ndarray, max_depth_m: float, max_depth_diff_m: float
) -> tuple[Callable[[Any], tuple], Callable[[tuple, tuple], np.ndarray | None]]:
    """`cv2.Odometry(RGB_DEPTH, COMMON)` for a camera of intrinsics `K`, as (observe, track):
    `observe(frame)` → its (depth, grey) images, `track(reference, current)` → T_cur_ref or
    None; shared by the benchmark method and the live localizer."""
    settings = cv2.OdometrySettings()
    settings.setCameraMatrix(np.asarray(K, np.float32))
    settings.setMinDepth(0.05)
    settings.setMaxDepth(max_depth_m)
    settings.setMaxDepthDiff(max_depth_diff_m)
    odometry = cv2.Odometry(cv2.OdometryType_RGB_DEPTH, settings, cv2.OdometryAlgoType_COMMON)

    def observe(frame) -> tuple[np.ndarray, np.ndarray]:
        return frame.depth.astype(np.float32), cv2.cvtColor(frame.rgb, cv2.COLOR_RGB2GRAY)

    def track(reference: tuple, current: tuple) -> np.ndarray | None:
        # Rt maps points of the reference camera into the current camera: T_cur_ref
        ok, Rt = odometry.compute(*reference, *current)
        return Rt if ok else None

    return observe, track
