"""Feature-based RGB-D visual odometry: ORB features, PnP + RANSAC, optional dynamic masking.

With `mask_dynamic`, features on instances the sequence marks dynamic (people, flying objects)
are never used: an "oracle DynaSLAM" that shows what perfect segmentation is worth.
"""

from __future__ import annotations

from pathlib import Path

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

MIN_INLIERS = 15
MAX_STEP_M = 0.25  # from the reference frame; larger jumps are taken as tracking failures
MAX_STEP_DEG = 15.0


class FeatureVO(Method):
    """Frame-to-frame ORB + PnP-RANSAC against the last tracked frame.

    A frame with too few inliers or an implausible jump is not tracked (a gap); after
    `reanchor_after` such frames in a row, tracking restarts from the current frame at the last
    estimated pose, as odometry does after a reset. Each trial shuffles the correspondences with
    its seed, so RANSAC draws different samples per trial (deterministic for a given seed), as
    real systems vary from run to run.
    """

    def __init__(
        self,
        mask_dynamic: bool = False,
        max_depth_m: float = 8.0,
        features: int = 1000,
        reanchor_after: int = 3,
    ) -> None:
        self.mask_dynamic = mask_dynamic
        self.reanchor_after = reanchor_after
        self.max_depth_m = max_depth_m
        self.features = features
        self.name = "feature_vo_masked" if mask_dynamic else "feature_vo"

    def run(self, seq_path: Path, trial_dir: Path, seed: int, log: Log) -> Path:
        rng = np.random.default_rng(seed)
        seq = open_sequence(seq_path)
        cam = seq.camera(first_stream(seq, "camera"))
        ids = np.array(
            [i["instance_id"] for i in seq.metadata["instances"] if i.get("dynamic")], dtype=int
        )
        patch = 31 if cam.width >= 320 else 15
        orb = cv2.ORB_create(
            nfeatures=self.features, edgeThreshold=patch, patchSize=patch, fastThreshold=10
        )
        matcher = cv2.BFMatcher(cv2.NORM_HAMMING, crossCheck=True)
        K = cam.K.astype(np.float64)

        def observe(frame) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
            gray = cv2.cvtColor(frame.rgb, cv2.COLOR_RGB2GRAY)
            keypoints, descriptors = orb.detectAndCompute(gray, self._mask(frame.instance, ids))
            points = np.array([kp.pt for kp in keypoints], dtype=np.float64).reshape(-1, 2)
            return points, descriptors, frame.depth

        def track(reference, current) -> np.ndarray | None:
            return self._track(reference, current[0], current[1], matcher, K, rng)

        t_ns, poses = chain_to_reference(cam, observe, track, self.reanchor_after, log)
        log(f"tracked {len(t_ns)} of {len(cam)} frames")
        return save_estimate(trial_dir, t_ns, poses, self.name)

    def _mask(self, instance: np.ndarray, dynamic_ids: np.ndarray) -> np.ndarray:
        """255 where features may be detected; dynamic instances (dilated 2 px) are cut out."""
        mask = np.full(instance.shape, 255, dtype=np.uint8)
        if self.mask_dynamic and len(dynamic_ids):
            dynamic = np.isin(instance, dynamic_ids).astype(np.uint8)
            dynamic = cv2.dilate(dynamic, np.ones((5, 5), np.uint8))
            mask[dynamic > 0] = 0
        return mask

    def _track(self, reference, points, descriptors, matcher, K, rng) -> np.ndarray | None:
        """T_cur_ref from PnP on the reference's 3D points (its depth) and the current 2D
        features; None when it fails."""
        ref_points, ref_descriptors, ref_depth = reference
        if descriptors is None or ref_descriptors is None:
            return None
        matches = matcher.match(ref_descriptors, descriptors)
        if len(matches) < MIN_INLIERS:
            return None
        ref_uv = ref_points[[m.queryIdx for m in matches]]
        cur_uv = points[[m.trainIdx for m in matches]]
        rows = np.clip(np.round(ref_uv[:, 1]).astype(int), 0, ref_depth.shape[0] - 1)
        cols = np.clip(np.round(ref_uv[:, 0]).astype(int), 0, ref_depth.shape[1] - 1)
        z = ref_depth[rows, cols].astype(np.float64)
        valid = (z > 0.05) & (z < self.max_depth_m)
        if valid.sum() < MIN_INLIERS:
            return None
        order = rng.permutation(int(valid.sum()))
        uv, cur, z = ref_uv[valid][order], cur_uv[valid][order], z[valid][order]
        xyz = np.column_stack(
            [(uv[:, 0] - K[0, 2]) * z / K[0, 0], (uv[:, 1] - K[1, 2]) * z / K[1, 1], z]
        )
        ok, rvec, tvec, inliers = cv2.solvePnPRansac(
            xyz, cur, K, None, iterationsCount=200, reprojectionError=2.0, confidence=0.999
        )
        if not ok or inliers is None or len(inliers) < MIN_INLIERS:
            return None
        if np.linalg.norm(tvec) > MAX_STEP_M or np.degrees(np.linalg.norm(rvec)) > MAX_STEP_DEG:
            return None
        T = np.eye(4)
        T[:3, :3] = cv2.Rodrigues(rvec)[0]
        T[:3, 3] = tvec.ravel()
        return T
