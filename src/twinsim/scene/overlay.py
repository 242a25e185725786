"""Polygon overlays (union, difference, intersection) that never fail on floating-point topology.

GEOS computes an overlay exactly first, so every world it always handled keeps its bytes. Where
that raises (`TopologyException: Ring edge missing`, `found two shells in EdgeRing list`: many
nearly coincident edges, as turned furniture makes), the same overlay is computed again on
valid inputs snap-rounded to a `SNAP_GRID_M` grid, which GEOS's OverlayNG does robustly; the
result differs from the exact one by at most a micrometre.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import shapely
from shapely.errors import GEOSException

SNAP_GRID_M = 1e-6  # far below any tolerance of the worlds, far above double rounding


def _robust(op: Callable[..., shapely.Geometry], *geoms) -> shapely.Geometry:
    """`op(*geoms)`, or snap-rounded on valid inputs where the exact overlay fails."""
    try:
        return op(*geoms)
    except GEOSException:
        return op(*(shapely.make_valid(g) for g in geoms), grid_size=SNAP_GRID_M)


def union_all(geoms: Sequence[shapely.Geometry]) -> shapely.Geometry:
    """The union of `geoms` (an empty collection for none)."""
    return _robust(shapely.union_all, list(geoms))


def difference(a: shapely.Geometry, b: shapely.Geometry) -> shapely.Geometry:
    """`a` minus `b`."""
    return _robust(shapely.difference, a, b)


def intersection(a: shapely.Geometry, b: shapely.Geometry) -> shapely.Geometry:
    """The part of `a` in `b`."""
    return _robust(shapely.intersection, a, b)
