"""twinsim: physics-enabled dynamic worlds, exact twins of every run, annotated sensor data.

The public surface: `load_config` → `run` writes a sequence folder; `open_sequence` reads it
and `validate_sequence` checks it; `Session` drives the robots live (closed loop), recording
each episode as a sequence.
"""

import twinsim._numerics  # noqa: F401  (first: it pins NumPy's and OpenBLAS's kernels)
from twinsim._version import __version__
from twinsim.closedloop import Session
from twinsim.config import load_config
from twinsim.sequence import open_sequence, validate_sequence
from twinsim.sim import run

__all__ = ["Session", "__version__", "load_config", "open_sequence", "run", "validate_sequence"]
