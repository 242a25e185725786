"""Trajectory evaluation and benchmarking: readers, metrics on top of evo, baselines, harness.

See docs/evaluation.md for the metrics' definitions, the method YAML and the report layout.
"""

from twinsim.eval.io import TrajectoryFormat, read_trajectory, write_tum
from twinsim.eval.metrics import Evaluation, evaluate, tracking_rate
from twinsim.eval.trajectory import Trajectory, TrajectoryError, from_poses

__all__ = [
    "Evaluation",
    "Trajectory",
    "TrajectoryError",
    "TrajectoryFormat",
    "evaluate",
    "from_poses",
    "read_trajectory",
    "tracking_rate",
    "write_tum",
]
