"""Frame-to-frame dense RGB-D odometry with OpenCV 5's `cv2.Odometry` (photometric + ICP)."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from twinsim.eval.methods.base import Log, Method, first_stream, save_estimate
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
        settings = cv2.OdometrySettings()
        settings.setCameraMatrix(cam.K.astype(np.float32))
        settings.setMinDepth(0.05)
        settings.setMaxDepth(self.max_depth_m)
        settings.setMaxDepthDiff(self.max_depth_diff_m)
        odometry = cv2.Odometry(cv2.OdometryType_RGB_DEPTH, settings, cv2.OdometryAlgoType_COMMON)
        t_ns: list[int] = []
        poses: list[np.ndarray] = []
        reference = None
        lost = 0
        for frame in cam:
            gray = cv2.cvtColor(frame.rgb, cv2.COLOR_RGB2GRAY)
            depth = frame.depth.astype(np.float32)
            if reference is None:
                pose = np.eye(4)
            else:
                ok, Rt = odometry.compute(reference[0], reference[1], depth, gray)
                if not ok:
                    lost += 1
                    if lost < self.reanchor_after:
                        log(f"frame {frame.index}: not tracked")
                    else:
                        log(f"frame {frame.index}: lost {lost} frames; restarting from here")
                        reference, lost = (depth, gray, poses[-1]), 0
                    continue
                # Rt maps points of the reference camera into the current camera.
                pose = reference[2] @ np.linalg.inv(Rt)
            lost = 0
            reference = (depth, gray, pose)
            t_ns.append(frame.t_ns)
            poses.append(pose)
        log(f"tracked {len(t_ns)} of {len(cam)} frames")
        return save_estimate(trial_dir, t_ns, poses, self.name)
