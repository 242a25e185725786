"""Which rays of a bundle may meet each of many bounding spheres, conservatively and fast:
the LiDAR's pre-filter before it casts into the actors' and curved objects' own models
(`engine/rays.py`)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

_SPHERE_MARGIN_M = 1e-6  # widens every bounding sphere of the actor pre-filter (rounding)
_CONE_MARGIN_RAD = 1e-6  # widens the bundle's cone (arccos loses ~1e-8 rad near 0)
_POLE_RAD = math.radians(80.0)  # a sphere reaching this elevation is tested against every ray


def near_spheres(
    origin: np.ndarray, dirs: np.ndarray, centers: np.ndarray, radii: np.ndarray, reach
) -> list[np.ndarray]:
    """Per sphere, the unit rays from `origin` that may pass within it, entering it at most
    `reach` (scalar or per ray) away (conservative): indices into `dirs`, each once. Spheres
    outside the bundle's cone are ruled out first; the spheres narrow in azimuth are tested
    only against the rays in their azimuth windows (`_AzimuthWindow.rays_of`), all at once,
    the others against every ray (`_dense`)."""
    reach = np.broadcast_to(np.asarray(reach, np.float64), (len(dirs),))
    rel = centers - origin
    dist = np.linalg.norm(rel, axis=1)
    r = radii + _SPHERE_MARGIN_M
    inside = dist <= r
    live = (dist - r <= reach.max(initial=0.0)) & ~inside
    axis = dirs.sum(axis=0)
    if np.linalg.norm(axis) > 0.0 and live.any():
        axis /= np.linalg.norm(axis)
        spread = np.arccos(np.clip((dirs @ axis).min(), -1.0, 1.0))
        off_axis = np.arccos(np.clip(rel[live] @ axis / dist[live], -1.0, 1.0))
        reach_angle = np.arcsin(np.minimum(1.0, r[live] / dist[live])) + _CONE_MARGIN_RAD
        live[live] = off_axis <= spread + reach_angle
    rays: list[np.ndarray] = [np.empty(0, int)] * len(centers)
    for k in np.flatnonzero(inside):
        rays[k] = np.arange(len(dirs))
    ids = np.flatnonzero(live)
    if not len(ids):
        return rays
    # a sphere seen at elevation e under a half-angle h spans azimuths within
    # asin(sin h / cos e) of its centre's (while |e| + h < 90°)
    elev = np.arcsin(np.clip(rel[ids, 2] / dist[ids], -1.0, 1.0))
    half = np.arcsin(np.minimum(1.0, r[ids] / dist[ids]))
    tilt = np.minimum(np.abs(elev) + half, _POLE_RAD)
    width = np.arcsin(np.minimum(1.0, np.sin(half) / np.cos(tilt))) + _CONE_MARGIN_RAD
    azimuth = np.arctan2(dirs[:, 1], dirs[:, 0])
    order = np.argsort(azimuth, kind="stable")
    window = _AzimuthWindow(azimuth[order], order)
    wide = (np.abs(elev) + half >= _POLE_RAD) | (2.0 * width >= 0.5 * window.span)
    for k, row in zip(ids[wide], _dense(rel, dist, r, dirs, reach, ids[wide]), strict=True):
        rays[k] = row
    narrow = np.flatnonzero(~wide)
    if not len(narrow):
        return rays
    centre_azimuth = np.arctan2(rel[ids[narrow], 1], rel[ids[narrow], 0])
    owner, cand = window.rays_of(centre_azimuth - width[narrow], centre_azimuth + width[narrow])
    k = ids[narrow]
    # along = dirs[cand] · rel[owner], a column at a time (gathers of 1-D arrays are cheapest)
    along = np.zeros(len(cand))
    for axis in range(3):
        along += np.ascontiguousarray(dirs[:, axis])[cand] * rel[k, axis][owner]
    near = np.sqrt(dist[k] ** 2 - r[k] ** 2)[owner]
    keep = (along >= near) & (along <= reach[cand] + r[k][owner])
    found = np.split(cand[keep], np.cumsum(np.bincount(owner[keep], minlength=len(narrow)))[:-1])
    for j, rays_j in zip(k, found, strict=True):
        rays[j] = rays_j
    return rays


def _dense(
    rel: np.ndarray, dist: np.ndarray, r: np.ndarray, dirs: np.ndarray, reach, ids: np.ndarray
) -> list[np.ndarray]:
    """`near_spheres` for the spheres `ids` against every ray: a ray passes within r of the
    centre, in front, iff along ≥ √(dist² − r²); it enters the sphere no nearer than along − r."""
    if not len(ids):
        return []
    along = rel[ids] @ dirs.T  # (spheres, rays)
    lo = np.sqrt(dist[ids] ** 2 - r[ids] ** 2)[:, None]
    near = (along >= lo) & (along <= reach + r[ids][:, None])
    return [np.flatnonzero(row) for row in near]


@dataclass(frozen=True)
class _AzimuthWindow:
    """A bundle's rays sorted by world azimuth, to pick those within an azimuth interval."""

    sorted_azimuth: np.ndarray
    order: np.ndarray

    @property
    def span(self) -> float:
        return float(self.sorted_azimuth[-1] - self.sorted_azimuth[0])

    def rays_of(self, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The rays with azimuth in [lo[j], hi[j]] (wrapping at ±π; each interval narrower
        than a turn) of every interval j, as (interval, ray index) pairs grouped by interval."""
        az, n = self.sorted_azimuth, len(self.sorted_azimuth)
        # each interval as three runs of the sorted rays: its own and the two wrapped parts
        start = np.stack(
            [
                np.searchsorted(az, lo),
                np.searchsorted(az, lo + 2.0 * math.pi),
                np.zeros_like(lo, int),
            ],
            axis=1,
        )
        stop = np.stack(
            [
                np.searchsorted(az, hi, "right"),
                np.where(lo < -math.pi, n, 0),
                np.where(hi > math.pi, np.searchsorted(az, hi - 2.0 * math.pi, "right"), 0),
            ],
            axis=1,
        )
        length = np.maximum(stop - start, 0).ravel()
        first = start.ravel() - np.cumsum(length) + length
        pos = np.repeat(first, length) + np.arange(length.sum())
        owner = np.repeat(np.arange(len(lo)), length.reshape(-1, 3).sum(axis=1))
        return owner, self.order[pos]
