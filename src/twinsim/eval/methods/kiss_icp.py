"""KISS-ICP LiDAR odometry on a sequence's LiDAR stream, optionally without dynamic points."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from twinsim.eval.methods.base import Log, Method, MethodError, first_stream, save_estimate
from twinsim.sequence import SequenceReader, open_sequence


class KissIcpOdometry(Method):
    """KISS-ICP (deskewing with per-point times); `remove_dynamic` drops the points labelled
    dynamic first, CARLA-Loc's with/without-dynamics experiment.

    The range kept is `max_range_m` (10 m: rooms), or farther where the first scan's ranges
    reach farther (its 95th percentile, a street's buildings), with KISS-ICP's own voxel size
    rule (a hundredth of it): within 10 m a car's LiDAR sees mostly road, which leaves the
    motion along the street unobservable."""

    def __init__(self, remove_dynamic: bool = False, max_range_m: float = 10.0) -> None:
        self.remove_dynamic = remove_dynamic
        self.max_range_m = max_range_m
        self.name = "kiss_icp_static" if remove_dynamic else "kiss_icp"

    def target_stream(self, seq: SequenceReader) -> str:
        if not hasattr(seq, "lidar"):
            raise MethodError(f"{self.name}: this twinsim has no LiDAR reader")
        return first_stream(seq, "lidar")

    def run(self, seq_path: Path, trial_dir: Path, seed: int, log: Log) -> Path:
        from kiss_icp.config import load_config
        from kiss_icp.kiss_icp import KissICP

        seq = open_sequence(seq_path)
        scans = seq.lidar(self.target_stream(seq))
        reach = self._reach(scans)
        config = load_config(None)
        config.data.max_range = reach
        config.data.min_range = 0.3
        config.mapping.voxel_size = reach / 100.0
        odometry = KissICP(config)
        log(f"max range {reach:g} m, voxel size {reach / 100.0:g} m")
        t_ns: list[int] = []
        poses: list[np.ndarray] = []
        removed = 0
        for scan in scans:
            keep = ~np.asarray(scan.dynamic, bool) if self.remove_dynamic else slice(None)
            points = np.asarray(scan.points, np.float64)[keep]
            offsets = np.asarray(scan.t_offset_ns, np.float64)[keep] / 1e9
            removed += len(scan.points) - len(points)
            if len(points) < 10:
                log(f"scan at {scan.t_ns} ns: {len(points)} points, skipped")
                continue
            odometry.register_frame(points, offsets)
            t_ns.append(int(scan.t_ns))
            poses.append(odometry.last_pose.copy())
        log(f"registered {len(t_ns)} of {len(scans)} scans; removed {removed} dynamic points")
        return save_estimate(trial_dir, t_ns, poses, self.name)

    def _reach(self, scans) -> float:
        """The range to keep: `max_range_m`, or the first usable scan's 95th-percentile range
        (whole metres) where that is farther."""
        for scan in scans:
            ranges = np.linalg.norm(np.asarray(scan.points, np.float64), axis=1)
            if len(ranges) >= 10:
                return max(self.max_range_m, float(np.ceil(np.percentile(ranges, 95))))
        return self.max_range_m
