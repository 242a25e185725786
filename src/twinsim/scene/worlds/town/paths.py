"""Polylines for the town's roads (offsets, trimming, Bezier and arc pieces) and the roads that
leave the grid along them: the `highway` preset's dual carriageway north of the grid with an
off-ramp down to the grid's north-west node and an on-ramp up from its north-east node (the
eastbound side, whose lanes face the grid), and the `rural` preset's winding two-lane road.
"""

from __future__ import annotations

import math

import numpy as np

from twinsim.scene.parts import r4

Path = tuple[tuple[float, float], ...]


def as_path(pts) -> Path:
    """Points rounded to 0.1 mm, consecutive duplicates dropped."""
    out: list[tuple[float, float]] = []
    for p in pts:
        q = (r4(p[0]), r4(p[1]))
        if not out or q != out[-1]:
            out.append(q)
    return tuple(out)


def offset_path(path: np.ndarray, off: float) -> np.ndarray:
    """The polyline moved `off` metres to its right (mitred at the vertices)."""
    d = np.diff(path, axis=0)
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    seg_n = np.stack([d[:, 1], -d[:, 0]], axis=1)
    normals = np.empty_like(path)
    normals[0], normals[-1] = seg_n[0], seg_n[-1]
    if len(path) > 2:
        m = seg_n[:-1] + seg_n[1:]
        m /= np.linalg.norm(m, axis=1, keepdims=True)
        scale = 1.0 / np.maximum(np.sum(m * seg_n[1:], axis=1), 0.5)
        normals[1:-1] = m * scale[:, None]
    return path + off * normals


def trim_path(path: np.ndarray, s0: float, s1: float) -> np.ndarray:
    """The part of the polyline from arc length s0 to (its length - s1)."""
    seg = np.linalg.norm(np.diff(path, axis=0), axis=1)
    cum = np.concatenate([[0.0], np.cumsum(seg)])
    end = cum[-1] - s1

    def at(s: float) -> np.ndarray:
        k = min(max(int(np.searchsorted(cum, s, side="right")) - 1, 0), len(seg) - 1)
        return path[k] + (s - cum[k]) / seg[k] * (path[k + 1] - path[k])

    inner = [path[k] for k in range(len(path)) if s0 < cum[k] < end]
    return np.array([at(s0), *inner, at(end)])


def bezier(
    p0: np.ndarray, d0: np.ndarray, p1: np.ndarray, d1: np.ndarray, n: int = 9
) -> np.ndarray:
    """Points of a cubic Bezier from p0 (heading d0) to p1 (heading d1)."""
    dist = float(np.linalg.norm(p1 - p0))
    k = (0.4 if float(d0 @ d1) < -0.5 else 0.55) * dist  # U-turns bulge less
    c0, c1 = p0 + k * d0, p1 - k * d1
    t = np.linspace(0.0, 1.0, n)[:, None]
    return (1 - t) ** 3 * p0 + 3 * (1 - t) ** 2 * t * c0 + 3 * (1 - t) * t**2 * c1 + t**3 * p1


def arc(centre: tuple[float, float], radius: float, a0: float, a1: float, n: int) -> np.ndarray:
    """n points on a circle from angle a0 to a1 (radians)."""
    t = np.linspace(a0, a1, n)
    return np.stack([centre[0] + radius * np.cos(t), centre[1] + radius * np.sin(t)], axis=1)


RAMP_RADIUS_M = 40.0
RAMP_RUN_M = 30.0  # straight run beside the highway before a ramp curves away
RAMP_CLEAR_M = 12.0  # straight run into a grid node


def highway_layout(
    west: tuple[float, float],
    east: tuple[float, float],
    top_y: float,
    hw_half: float,
    lane_w: float,
    extend_m: float,
) -> dict:
    """Where the highway and its two ramps go, north of the grid whose top row of nodes runs
    from `west` to `east` (node centres) with kerbs at `top_y`: the highway's y, the x of its
    ends and of the two ramp junctions, and each ramp's centre line (off-ramp from the highway
    to `west`, on-ramp from `east` to the highway)."""
    y_ramp = top_y + RAMP_CLEAR_M + RAMP_RADIUS_M  # where a ramp runs beside the highway
    y_hw = y_ramp + hw_half + lane_w / 2
    x_off = west[0] - RAMP_RADIUS_M - RAMP_RUN_M
    x_on = east[0] + RAMP_RADIUS_M + RAMP_RUN_M
    r = RAMP_RADIUS_M
    off = [(x_off, y_ramp)]  # east beside the highway, then right (south) down to `west`
    off += list(arc((west[0] - r, y_ramp - r), r, math.pi / 2, 0.0, 9))
    off += [west]
    on = [east]  # north from `east`, then right (east) to run beside the highway
    on += list(arc((east[0] + r, y_ramp - r), r, math.pi, math.pi / 2, 9))
    on += [(x_on, y_ramp)]
    return dict(
        y=y_hw,
        x_west=west[0] - extend_m,
        x_east=east[0] + extend_m,
        x_off=x_off,
        x_on=x_on,
        off_ramp=as_path(off),
        on_ramp=as_path(on),
    )


def winding_path(start: tuple[float, float], length_m: float, rng: np.random.Generator) -> Path:
    """A road east from `start`: 20 m straight, then a gentle random meander, every 8 m."""
    amp = rng.uniform(15.0, 30.0)
    wave = rng.uniform(150.0, 250.0)
    phase = rng.uniform(0.0, 2 * math.pi)
    xs = np.arange(0.0, length_m + 1e-9, 8.0)
    ramp_in = np.clip((xs - 20.0) / 60.0, 0.0, 1.0)  # no meander near the grid
    ys = amp * ramp_in * (np.sin(2 * math.pi * xs / wave + phase) - math.sin(phase))
    return as_path(np.stack([start[0] + xs, start[1] + ys], axis=1))
