"""KISS-ICP LiDAR odometry on a sequence's LiDAR stream, optionally without dynamic points."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from twinsim.eval.methods.base import Log, Method, MethodError, first_stream, save_estimate
from twinsim.sequence import SequenceReader, open_sequence

MIN_POINTS = 10  # a sweep with fewer points (after removal) is skipped


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
        seq = open_sequence(seq_path)
        scans = seq.lidar(self.target_stream(seq))
        reach = self._reach(scans)
        odometry = kiss_icp_pipeline(reach)
        log(f"max range {reach:g} m, voxel size {reach / 100.0:g} m")
        t_ns: list[int] = []
        poses: list[np.ndarray] = []
        removed = 0
        for scan in scans:
            points, offsets = scan_points(scan, self.remove_dynamic)
            removed += len(scan.points) - len(points)
            if len(points) < MIN_POINTS:
                log(f"scan at {scan.t_ns} ns: {len(points)} points, skipped")
                continue
            odometry.register_frame(points, offsets)
            t_ns.append(pose_stamp(scan, offsets))
            poses.append(odometry.last_pose.copy())
        log(f"registered {len(t_ns)} of {len(scans)} scans; removed {removed} dynamic points")
        return save_estimate(trial_dir, t_ns, poses, self.name)

    def _reach(self, scans) -> float:
        """The range to keep: `max_range_m`, or the first usable scan's reach where farther."""
        for scan in scans:
            if len(scan.points) >= MIN_POINTS:
                return scan_reach(scan, self.max_range_m)
        return self.max_range_m


def scan_reach(scan, max_range_m: float) -> float:
    """`max_range_m`, or the scan's 95th-percentile range (whole metres) where that is farther."""
    ranges = np.linalg.norm(np.asarray(scan.points, np.float64), axis=1)
    return max(max_range_m, float(np.ceil(np.percentile(ranges, 95))))


def pose_stamp(scan, offsets_s: np.ndarray) -> int:
    """The instant KISS-ICP's pose of a sweep refers to: its deskewing carries every point to
    the sweep's latest capture time (timestamps normalised to the last one), so the pose is the
    LiDAR's at the sweep's start plus its latest point's offset, not at the start."""
    return int(scan.t_ns) + round(float(np.max(offsets_s)) * 1e9)


def scan_points(scan, remove_dynamic: bool) -> tuple[np.ndarray, np.ndarray]:
    """A sweep's points (N, 3) and their capture times from its start (s), KISS-ICP's input;
    without the points labelled dynamic when `remove_dynamic`."""
    keep = ~np.asarray(scan.dynamic, bool) if remove_dynamic else slice(None)
    points = np.asarray(scan.points, np.float64)[keep]
    return points, np.asarray(scan.t_offset_ns, np.float64)[keep] / 1e9


def kiss_icp_pipeline(reach_m: float):
    """A KISS-ICP pipeline keeping ranges 0.3 m..`reach_m`, with its own voxel size rule (a
    hundredth of the range); shared by the benchmark method and the live localizer."""
    from kiss_icp.config import load_config
    from kiss_icp.kiss_icp import KissICP

    config = load_config(None)
    config.data.max_range = reach_m
    config.data.min_range = 0.3
    config.mapping.voxel_size = reach_m / 100.0
    return KissICP(config)
