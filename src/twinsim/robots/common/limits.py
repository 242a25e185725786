"""Commands a controller clamped to its robot's limits, counted so the sequence says so.

A controller that limits what it commands (a speed, a yaw rate, a motor's torque) does it
through its `clamped: ClampedCommands`: the value is clipped exactly as `np.clip` would, and
every physics step where a command was outside its limits is counted with the worst value
asked for. The loop writes each robot's counts into the metadata (`commands_clamped`), so a
command is never silently cut.

Controllers call this at every physics step, so a scalar or a short list of floats takes a
path in plain Python that gives `np.clip`'s bits (its rule for a value equal to a bound
included, which differs for signed zeros between scalar and array bounds).
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


def clip_float(value: float, low: float, high: float) -> float:
    """`np.clip` of a float between float bounds, in plain Python and with its bits: a value
    equal to a bound is kept (a signed zero too), a NaN passes."""
    kept = low if value < low else value
    return high if kept > high else kept


def _is_number(x) -> bool:
    """A float (np.float64 is one) that is not NaN."""
    return isinstance(x, float) and x == x


class ClampedCommands:
    """Per command name: its limits, the steps it was clamped and the extremes requested."""

    def __init__(self) -> None:
        self._by_name: dict[str, _Clamps] = {}

    def clip(self, name: str, value, low, high):
        """`np.clip(value, low, high)`, counting the step if any entry was outside."""
        if isinstance(value, float) and _is_number(low) and _is_number(high):
            entry = self._entry(name, low, high)
            if value < low or value > high:
                self._counted(entry, (float(value),))
            return np.float64(clip_float(value, low, high))
        clipped = np.clip(value, low, high)
        self._count(name, value, low, high)
        return clipped

    def clip_each(
        self, name: str, values: list[float], lows: list[float], highs: list[float]
    ) -> list[float]:
        """`np.clip` of arrays `values`, `lows`, `highs` (equal lengths, bounds not NaN), on
        floats, counted as one command (the step counts once, whichever entries were out)."""
        entry = self._by_name.get(name)
        if entry is None:
            entry = self._entry(name, float(np.min(lows)), float(np.max(highs)))
        out, outside = [], []
        for v, lo, hi in zip(values, lows, highs, strict=True):
            if v < lo or v > hi:
                outside.append(v)
            # np.clip with array bounds takes the bound where the value equals it
            kept = v if v > lo or v != v else lo
            out.append(kept if kept < hi or kept != kept else hi)
        if outside:
            self._counted(entry, (float(np.min(outside)), float(np.max(outside))))
        return out

    def note(self, name: str, requested: float, limit: float) -> None:
        """Count a step whose `requested` magnitude (a norm the caller scales down) was over
        `limit`."""
        if isinstance(requested, float) and _is_number(limit):
            entry = self._entry(name, 0.0, limit)
            if requested < 0.0 or requested > limit:
                self._counted(entry, (float(requested),))
            return
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

    def _entry(self, name: str, low: float, high: float) -> _Clamps:
        """The counts of `name`, its limits those of its first call."""
        entry = self._by_name.get(name)
        if entry is None:
            entry = self._by_name[name] = _Clamps(float(low), float(high))
        return entry

    @staticmethod
    def _counted(entry: _Clamps, extremes: tuple[float, ...]) -> None:
        """Count a clamped step whose values outside the limits range over `extremes`."""
        entry.steps += 1
        entry.lowest = min(entry.lowest, min(extremes))
        entry.highest = max(entry.highest, max(extremes))

    def _count(self, name: str, value, low, high) -> None:
        v = np.asarray(value, dtype=float)
        entry = self._by_name.get(name)
        if entry is None:
            entry = self._entry(name, float(np.min(low)), float(np.max(high)))
        outside = (v < low) | (v > high)
        if outside.any():
            self._counted(entry, (float(v[outside].min()), float(v[outside].max())))
