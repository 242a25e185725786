"""Trajectory evaluation and benchmarking: readers, metrics on top of evo, baselines, harness.

See docs/evaluation.md for the metrics' definitions, the method YAML and the report layout.
"""

from twinsim._lazy import lazy_exports

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "TrajectoryFormat": "twinsim.eval.io",
        "read_trajectory": "twinsim.eval.io",
        "write_tum": "twinsim.eval.io",
        "Evaluation": "twinsim.eval.metrics",
        "evaluate": "twinsim.eval.metrics",
        "tracking_rate": "twinsim.eval.metrics",
        "Trajectory": "twinsim.eval.trajectory",
        "TrajectoryError": "twinsim.eval.trajectory",
        "from_poses": "twinsim.eval.trajectory",
    },
)

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
