"""What traffic keeps clear of, and the check that it did: the ego's planned drive and where
people are on the traffic clock; which simulated vehicles keep apart from each other, the egos
and people at every step (the model keeps nearly all apart by its rules; this check is the
guarantee, and a vehicle that fails it is taken out)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from shapely.geometry import Point, Polygon

from twinsim.actors.traffic.vehicles import VehicleClass

EGO_CLEAR_M = 1.0  # kept between a vehicle's footprint and the ego's
PERSON_CLEAR_M = 0.8  # kept between a vehicle's footprint and a person's root


@dataclass(frozen=True)
class EgoTrack:
    """The ego's planned drive on the traffic clock: centre x, y, heading, the lanes it is on
    (lane id, arc length of its centre) at each step, and its half length and width."""

    xy: np.ndarray  # (N, 2)
    yaw: np.ndarray  # (N,)
    lanes: list[list[tuple[int, float]]]
    half_length_m: float
    half_width_m: float


@dataclass(frozen=True)
class CrossingTrack:
    """Where people are on the traffic clock: for each crosswalk, whether anyone is on it
    (or about to step on) at each step."""

    occupied: dict[int, np.ndarray]  # crosswalk id → (N,) bool
    people_xy: np.ndarray  # (P, N, 2) every person's root


def _footprint(pose: np.ndarray, half_l: float, half_w: float) -> Polygon:
    x, y, _, yaw = pose
    c, s = math.cos(yaw), math.sin(yaw)
    corners = [
        (x + c * a - s * b, y + s * a + c * b)
        for a, b in ((half_l, half_w), (-half_l, half_w), (-half_l, -half_w), (half_l, -half_w))
    ]
    return Polygon(corners)


def _apart(poses: np.ndarray, classes: Sequence[VehicleClass]) -> np.ndarray:
    """Which vehicles to keep so that no two kept footprints ever overlap: of each pair that
    does, the one spawned later goes (once; the model keeps nearly all apart)."""
    keep = np.ones(len(classes), bool)
    reach = np.array([math.hypot(c.length_m / 2, c.width_m / 2) for c in classes])
    for k in range(poses.shape[1]):
        xy = poses[:, k, :2]
        near = np.linalg.norm(xy[:, None] - xy[None], axis=-1) < reach[:, None] + reach[None]
        for i, j in zip(*np.nonzero(np.triu(near, 1)), strict=True):
            if not (keep[i] and keep[j]):
                continue
            a = _footprint(poses[i, k], classes[i].length_m / 2, classes[i].width_m / 2)
            b = _footprint(poses[j, k], classes[j].length_m / 2, classes[j].width_m / 2)
            if a.intersects(b):
                keep[j] = False
    return keep


def keep_clear(
    poses: np.ndarray,
    classes: Sequence[VehicleClass],
    egos: Sequence[EgoTrack],
    people_xy: np.ndarray | None,
) -> np.ndarray:
    """Which vehicles keep apart from each other, `EGO_CLEAR_M` from each ego's footprint and
    `PERSON_CLEAR_M` from every person's root at every step (bool per vehicle)."""
    keep = _apart(poses, classes) if len(classes) else np.ones(0, bool)
    for i, cls in enumerate(classes):
        if not keep[i]:
            continue
        half_l, half_w = cls.length_m / 2, cls.width_m / 2
        centre = poses[i, :, :2]
        for ego in egos:
            if not keep[i]:
                break
            n = min(len(ego.xy), len(centre))
            reach = math.hypot(half_l, half_w) + math.hypot(ego.half_length_m, ego.half_width_m)
            near = np.flatnonzero(
                np.linalg.norm(centre[:n] - ego.xy[:n], axis=1) < reach + EGO_CLEAR_M
            )
            for k in near:
                ego_box = _footprint(
                    np.r_[ego.xy[k], 0.0, ego.yaw[k]], ego.half_length_m, ego.half_width_m
                )
                if _footprint(poses[i, k], half_l, half_w).distance(ego_box) < EGO_CLEAR_M:
                    keep[i] = False
                    break
        if keep[i] and people_xy is not None and len(people_xy):
            n = min(people_xy.shape[1], len(centre))
            d = np.linalg.norm(people_xy[:, :n] - centre[None, :n], axis=-1)
            near = np.argwhere(d < math.hypot(half_l, half_w) + PERSON_CLEAR_M)
            for p, k in near:
                box = _footprint(poses[i, k], half_l, half_w)
                if box.distance(Point(people_xy[p, k])) < PERSON_CLEAR_M:
                    keep[i] = False
                    break
    return keep
