"""twinsim: physics-enabled dynamic worlds, exact twins of every run, annotated sensor data.

The public surface: `load_config` → `run` writes a sequence folder; `open_sequence` reads it
and `validate_sequence` checks it; `Session` drives the robots live (closed loop), recording
each episode as a sequence. Each is imported on first use (`_lazy.py`).
"""

import twinsim._numerics  # noqa: F401  (first: it pins NumPy's and OpenBLAS's kernels)
from twinsim._lazy import lazy_exports
from twinsim._version import __version__

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "Session": "twinsim.closedloop",
        "load_config": "twinsim.config",
        "open_sequence": "twinsim.sequence",
        "validate_sequence": "twinsim.sequence",
        "run": "twinsim.sim",
    },
)

__all__ = ["Session", "__version__", "load_config", "open_sequence", "run", "validate_sequence"]
