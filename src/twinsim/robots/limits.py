"""Commands a controller clamped to its robot's limits, counted so the sequence says so.

A controller that limits what it commands (a speed, a yaw rate, a motor's torque) does it
through its `clamped: ClampedCommands`: the value is clipped exactly as `np.clip` would, and
every physics step where a command was outside its limits is counted with the worst value
asked for. The loop writes each robot's counts into the metadata (`commands_clamped`), so a
command is never silently cut.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class _Clamps:
    low: float
    high: float
    steps: int = 0
    lowest: float = np.inf
    highest: float = -np.inf


class ClampedCommands:
    """Per command name: its limits, the steps it was clamped and the extremes requested."""

    def __init__(self) -> None:
        self._by_name: dict[str, _Clamps] = {}

    def clip(self, name: str, value, low, high):
        """`np.clip(value, low, high)`, counting the step if any entry was outside."""
        clipped = np.clip(value, low, high)
        self._count(name, value, low, high)
        return clipped

    def note(self, name: str, requested: float, limit: float) -> None:
        """Count a step whose `requested` magnitude (a norm the caller scales down) was over
        `limit`."""
        self._count(name, requested, 0.0, limit)

    def report(self) -> dict[str, dict]:
        """What was clamped: name → steps, limits and the lowest and highest value asked for."""
        return {
            name: {
                "steps": c.steps,
                "limits": [c.low, c.high],
                "lowest_requested": c.lowest,
                "highest_requested": c.highest,
            }
            for name, c in sorted(self._by_name.items())
            if c.steps
        }

    def _count(self, name: str, value, low, high) -> None:
        v = np.asarray(value, dtype=float)
        lo, hi = float(np.min(low)), float(np.max(high))
        entry = self._by_name.setdefault(name, _Clamps(lo, hi))
        outside = (v < low) | (v > high)
        if np.any(outside):
            entry.steps += 1
            entry.lowest = min(entry.lowest, float(v[outside].min()))
            entry.highest = max(entry.highest, float(v[outside].max()))
