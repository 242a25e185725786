"""The ray caster's pre-filter (which rays may meet an actor's bounding sphere): against the
exact ray–sphere entry computed here, it keeps every ray that enters a sphere within reach and
only rays that pass within it, for LiDAR-like sectors, sectors across the ±180° azimuth seam,
spheres overhead and bundles in every direction."""

from __future__ import annotations

import numpy as np
import pytest

from twinsim.engine.ray_prefilter import near_spheres


def _sector(rng, az0: float, az1: float, el0: float, el1: float, n: int) -> np.ndarray:
    az, el = rng.uniform(az0, az1, n), rng.uniform(el0, el1, n)
    return np.stack([np.cos(el) * np.cos(az), np.cos(el) * np.sin(az), np.sin(el)], axis=1)


def _entry(dirs: np.ndarray, centre: np.ndarray, radius: float) -> np.ndarray:
    """Distance at which each ray from the origin enters the sphere (inf: it never does)."""
    t = dirs @ centre
    miss2 = centre @ centre - t * t
    enter = t - np.sqrt(np.maximum(radius * radius - miss2, 0.0))
    return np.where((miss2 <= radius * radius) & (enter >= 0.0), enter, np.inf)


BUNDLES = {
    "lidar sector": (-0.3, 0.35, -0.52, 0.18),
    "across the seam": (np.pi - 0.3, np.pi + 0.3, -0.52, 0.18),
    "steep": (0.0, 0.6, 0.9, 1.5),
    "everywhere": (-np.pi, np.pi, -1.5, 1.5),
}


@pytest.mark.parametrize("bundle", BUNDLES)
def test_the_prefilter_keeps_every_ray_that_enters_and_only_those_near(bundle):
    rng = np.random.default_rng(len(bundle))
    dirs = _sector(rng, *BUNDLES[bundle], 4000)
    centres = rng.uniform(-40.0, 40.0, (300, 3))
    centres[:150, 2] *= 0.1  # half of them near the sensor's height, as traffic is
    centres[:5] = [[0.0, 0.0, 30.0], [0.5, 0.0, 8.0], [-30, 1e-3, 0], [-30, -1e-3, 0], [8, 0, 0]]
    radii = rng.uniform(0.2, 6.0, len(centres))
    reach = rng.uniform(5.0, 70.0, len(dirs))
    picked = near_spheres(np.zeros(3), dirs, centres, radii, reach)
    kept = 0
    for centre, radius, rays in zip(centres, radii, picked, strict=True):
        enters = np.flatnonzero(_entry(dirs, centre, radius) <= reach)
        assert np.isin(enters, rays).all()
        t = dirs[rays] @ centre
        assert (centre @ centre - t * t <= radius**2 + 1e-6).all() and (t > 0).all()
        assert len(np.unique(rays)) == len(rays)  # each ray once
        kept += len(rays)
    assert kept > 0
