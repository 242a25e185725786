"""Passages between a room's doors: furniture may not cut one door of a room off another.

A room's free floor for passing is every point at least `PASSAGE_HALF_M` (Chebyshev) from its
walls and from every standing item's footprint, on a `CELL_M` grid. Where the empty room joins
all its doors' keep-out boxes through that floor, each item placed must keep them joined; a
room too narrow to join them empty (a door near a corner) is left as it is. So every ground
robot can cross every room it can enter, as people do: the widest, the quadruped, plans
through corridors 0.83 m wide on a grid that under-estimates clearances by up to 3.5 cm.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import ndimage

from twinsim.scene.layout import Rect

PASSAGE_HALF_M = 0.5  # half a passage's clear width: 1 m (accessibility guides ask 0.9 m)
CELL_M = 0.05


class Passages:
    """The passing floor of one room and whether its doors' regions share a component."""

    def __init__(self, inner: Rect, door_regions: Sequence[Rect]) -> None:
        h = PASSAGE_HALF_M
        self.xs = np.arange(inner.x0 + 0.5 * CELL_M, inner.x1, CELL_M)
        self.ys = np.arange(inner.y0 + 0.5 * CELL_M, inner.y1, CELL_M)
        self.free = np.outer(
            (self.xs >= inner.x0 + h) & (self.xs <= inner.x1 - h),
            (self.ys >= inner.y0 + h) & (self.ys <= inner.y1 - h),
        )
        self.regions = [self._cells(r) for r in door_regions]
        self.active = len(self.regions) > 1 and self._joined(self.free)

    def _cells(self, r: Rect) -> np.ndarray:
        """Mask of the cells whose centres lie in `r`."""
        return np.outer(
            (self.xs >= r.x0) & (self.xs <= r.x1), (self.ys >= r.y0) & (self.ys <= r.y1)
        )

    def _without(self, bounds: Rect) -> np.ndarray:
        """The passing floor less the cells within PASSAGE_HALF_M of a footprint."""
        h = PASSAGE_HALF_M
        return self.free & ~self._cells(
            Rect(bounds.x0 - h, bounds.y0 - h, bounds.x1 + h, bounds.y1 + h)
        )

    def _joined(self, free: np.ndarray) -> bool:
        """Whether one component of `free` reaches every door region."""
        labels, _ = ndimage.label(free)
        shared = None
        for region in self.regions:
            here = set(np.unique(labels[region]).tolist()) - {0}
            shared = here if shared is None else shared & here
        return bool(shared)

    def keeps(self, bounds: Rect) -> bool:
        """Whether an item standing on `bounds` leaves the doors joined (always, where the
        empty room did not join them)."""
        return not self.active or self._joined(self._without(bounds))

    def add(self, bounds: Rect) -> None:
        """Take an item standing on `bounds` off the passing floor."""
        if self.active:
            self.free = self._without(bounds)
