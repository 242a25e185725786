"""Experiment repetition and twins: replay a recorded run exactly, or in a changed world.

`replay(src, out, Variations(...))` writes the twin; `compare_sequences(a, b)` measures how far
two runs of the same experiment are apart (poses per axis, RGB and depth similarity).
"""

from twinsim.replay.compare import compare_sequences
from twinsim.replay.replay import replay
from twinsim.replay.variations import (
    Adversity,
    LightPreset,
    LightVariation,
    ReplayMode,
    StereoVariation,
    Variations,
    load_variations,
)

__all__ = [
    "Adversity",
    "LightPreset",
    "LightVariation",
    "ReplayMode",
    "StereoVariation",
    "Variations",
    "compare_sequences",
    "load_variations",
    "replay",
]
