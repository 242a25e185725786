"""What a benchmark method is: it reads a sequence, writes a TUM estimate, and names its target."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Literal

import numpy as np

from twinsim.errors import TwinsimError
from twinsim.eval.io import read_sequence, write_tum
from twinsim.eval.trajectory import Trajectory, from_poses
from twinsim.sequence import SequenceReader

#: Name of the estimate every method leaves in its trial folder (TUM text).
ESTIMATE_FILE = "estimate.tum"

Log = Callable[[str], None]


class MethodError(TwinsimError):
    """A method is unknown, misconfigured, or cannot run on this sequence."""


class Method(ABC):
    """A trajectory estimator the harness runs once per trial."""

    name: str
    #: How the harness aligns the estimate to the ground truth: `se3` for methods that observe
    #: metric scale (RGB-D, stereo, LiDAR), `sim3` for monocular ones (scale unobservable).
    alignment: Literal["se3", "sim3"] = "se3"

    @abstractmethod
    def run(self, seq_path: Path, trial_dir: Path, seed: int, log: Log) -> Path:
        """Estimate the trajectory of `seq_path` into `trial_dir/estimate.tum`; return its path."""

    def target_stream(self, seq: SequenceReader) -> str:
        """The stream whose ground-truth poses the estimate is compared with (default: camera)."""
        return first_stream(seq, "camera")

    def ground_truth(self, seq: SequenceReader) -> Trajectory:
        """Ground truth of the estimated frame."""
        return read_sequence(seq.path, self.target_stream(seq))

    def frame_period_s(self, seq: SequenceReader) -> float:
        """Nominal time between estimate poses (the tracking rate's gap threshold)."""
        return 1.0 / float(seq.stream_info(self.target_stream(seq))["rate_hz"])


def first_stream(seq: SequenceReader, kind: str) -> str:
    """Name of the first stream of a type, with a `MethodError` when there is none."""
    for name in seq.streams:
        if seq.stream_info(name).get("type") == kind:
            return name
    raise MethodError(f"{seq.path}: no {kind} stream (streams: {', '.join(seq.streams)})")


class ReferenceChain:
    """Frame-to-reference odometry, one frame at a time: each observation is registered against
    the last tracked one (`track(reference, current)` → T_cur_ref, None when it fails). An
    untracked frame is a gap; after `reanchor_after` gaps in a row, tracking restarts from the
    current frame at the last estimated pose, as odometry does after a reset. Poses are the
    first frame's frame → each frame's (the first is the identity). Used offline by the
    benchmark methods and live by `twinsim.navigation.localization`."""

    def __init__(self, track: Callable[[Any, Any], np.ndarray | None], reanchor_after: int):
        self.track, self.reanchor_after = track, reanchor_after
        self.reference: tuple[Any, np.ndarray] | None = None  # (observation, pose)
        self.pose: np.ndarray | None = None  # the last estimated pose
        self.lost = 0

    def add(self, current: Any) -> tuple[np.ndarray | None, str]:
        """Register one observation: (its pose, or None when untracked; what happened: `first`,
        `tracked`, `lost` or `restarted`)."""
        if self.reference is None:
            self.reference, self.pose = (current, np.eye(4)), np.eye(4)
            return self.pose, "first"
        T_cur_ref = self.track(self.reference[0], current)
        if T_cur_ref is None:
            self.lost += 1
            if self.lost < self.reanchor_after:
                return None, "lost"
            self.reference, self.lost = (current, self.pose), 0
            return None, "restarted"
        self.pose = self.reference[1] @ np.linalg.inv(T_cur_ref)
        self.lost = 0
        self.reference = (current, self.pose)
        return self.pose, "tracked"


def chain_to_reference(
    frames: Iterable,
    observe: Callable[[Any], Any],
    track: Callable[[Any, Any], np.ndarray | None],
    reanchor_after: int,
    log: Log,
) -> tuple[list[int], list[np.ndarray]]:
    """Every frame through one `ReferenceChain`; returns the tracked frames' (t_ns, poses)."""
    chain = ReferenceChain(track, reanchor_after)
    t_ns: list[int] = []
    poses: list[np.ndarray] = []
    for frame in frames:
        pose, what = chain.add(observe(frame))
        if what == "lost":
            log(f"frame {frame.index}: not tracked")
        elif what == "restarted":
            log(f"frame {frame.index}: lost {chain.reanchor_after} frames; restarting from here")
        if pose is not None:
            t_ns.append(frame.t_ns)
            poses.append(pose)
    return t_ns, poses


def save_estimate(trial_dir: Path, t_ns: list[int], poses: list[np.ndarray], name: str) -> Path:
    """Write the estimated poses as `estimate.tum` in the trial folder."""
    if not t_ns:
        raise MethodError(f"{name}: tracked no frame")
    path = trial_dir / ESTIMATE_FILE
    write_tum(path, from_poses(np.array(t_ns, dtype=np.int64), np.stack(poses), name))
    return path
