"""The car's drive timed through the traffic lights of its route: it stops at a stop line
whose light will be red or yellow when it would get there, waits for green, and drives on.

The lights are pure functions of time (`TrafficLightSpec.state_at`, simulation time, which a
planned path's times are), so the whole drive is planned once: each stretch from rest to the
next stop line that needs a stop is timed with the same jerk-limited profile as the rest of
the drive, the wait holds the pose, and the traffic (planned afterwards) sees the car waiting.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from twinsim.model.roads import RoadNetworkSpec, TrafficLightSpec
from twinsim.model.scene import PathPoint
from twinsim.model.trajectory import Curve, MotionLimits, parametrize
from twinsim.robots.car.route import START_S_M

DT_S = 0.05  # the planned path's step (`parametrize`'s)
REACTION_S = 1.0  # after the light turns green the car moves off this much later
MIN_STRETCH_M = 8.0  # a stop line nearer than this to where the car stands is driven through
_SEARCH_M = 15.0  # a stop line is looked for this far about its estimated place on the route


def route_stops(
    network: RoadNetworkSpec, route: Sequence[int], curve: Curve, setback_m: float
) -> list[tuple[float, TrafficLightSpec]]:
    """(arc length on `curve` where the car's centre stops, the light) for every stop line on
    the route, in driving order; `setback_m`: from the stop line back to the car's centre."""
    lights = {light.light_id: light for light in network.traffic_lights}
    stops, before = [], 0.0
    for lane_id in route:
        lane = network.lanes[lane_id]
        s_line = lane.stop_line_s_m
        if lane.stop_light_id is not None and s_line is not None:
            guess = before + s_line - START_S_M
            near = np.flatnonzero(np.abs(curve.s - guess) <= _SEARCH_M)
            if len(near):
                point = np.asarray(lane.point_at(s_line)[0][:2])
                k = near[np.argmin(np.linalg.norm(curve.xy[near] - point, axis=1))]
                back = int(np.searchsorted(curve.s, curve.s[k] - setback_m, "right")) - 1
                if back > 0:  # a sample of the curve, so the stretches before and after meet
                    stops.append((float(curve.s[back]), lights[lane.stop_light_id]))
        before += lane.length_m()
    return stops


def _piece(curve: Curve, s_from: float, s_to: float | None = None) -> Curve:
    """The part of `curve` between two arc lengths, its arc length from 0."""
    keep = (curve.s >= s_from - 1e-9) & (curve.s <= (np.inf if s_to is None else s_to) + 1e-9)
    s = curve.s[keep]
    return Curve(s - s[0], curve.xy[keep], curve.heading[keep], curve.curvature[keep])


def _green_from(light: TrafficLightSpec, t_s: float) -> float:
    """The first instant at or after `t_s` that the light shows green."""
    period = light.green_s + light.yellow_s + light.red_s
    phase = math.fmod(t_s - light.offset_s, period)
    if phase < 0.0:
        phase += period
    return t_s if phase < light.green_s else t_s + period - phase


def _shifted(points: Sequence[PathPoint], t0: float, skip_first: bool) -> list[PathPoint]:
    return [
        p.model_copy(update={"t_s": round(t0 + p.t_s, 9)}) for p in points[1 if skip_first else 0 :]
    ]


def time_through_lights(
    curve: Curve,
    stops: Sequence[tuple[float, TrafficLightSpec]],
    limits: MotionLimits,
    z_m: float,
    stop_after_s: float | None,
) -> tuple[PathPoint, ...]:
    """The timed path along `curve` from rest, stopping before every light that is not green
    when the car would reach it and moving off `REACTION_S` after it turns green; cut to end
    at rest soon after `stop_after_s` (None: at the curve's end)."""
    points: list[PathPoint] = []
    t_now, s_now, ahead = 0.0, 0.0, list(stops)
    while True:
        rest = None if stop_after_s is None else stop_after_s - t_now
        if rest is not None and rest <= 0.0:
            break
        piece = _piece(curve, s_now)
        yaw = float(piece.heading[0])
        timed = parametrize([piece], limits, z_m=z_m, start_yaw=yaw, stop_after_s=rest)
        travelled = np.concatenate(
            [[0.0], np.cumsum(np.linalg.norm(np.diff([p.pos[:2] for p in timed], axis=0), axis=1))]
        )
        t = np.array([p.t_s for p in timed])
        halt = None
        while ahead and ahead[0][0] - s_now <= travelled[-1]:
            s_stop, light = ahead.pop(0)
            if s_stop - s_now < MIN_STRETCH_M:
                continue  # already at (or too near) the line: drive through
            arrive = t_now + float(np.interp(s_stop - s_now, travelled, t))
            if light.state_at(arrive) != "green":
                halt = (s_stop, light)
                break
        if halt is None:
            points += _shifted(timed, t_now, bool(points))
            break
        s_stop, light = halt
        stretch = parametrize(
            [_piece(curve, s_now, s_stop)], limits, z_m=z_m, start_yaw=yaw, stop_after_s=None
        )
        points += _shifted(stretch, t_now, bool(points))
        t_end = points[-1].t_s
        t_go = math.ceil((_green_from(light, t_end) + REACTION_S) / DT_S - 1e-9) * DT_S
        waiting = np.arange(1, round((t_go - t_end) / DT_S) + 1) * DT_S
        points += [points[-1].model_copy(update={"t_s": round(t_end + w, 9)}) for w in waiting]
        t_now, s_now = points[-1].t_s, s_stop
    return tuple(points)
