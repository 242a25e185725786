"""An outdoor world's road network as data (`SceneSpec.roads`): lanes as polylines, the
intersections and their traffic lights, sidewalks, crosswalks and the blocks between roads.

Planners (the car's route), traffic, walkers and the scene graph read it; the town generator
writes it. Everything is in world metres (x, y on the ground; z where a lane climbs a hill),
a lane's centre line runs in its driving direction, and a traffic light's state is a pure
function of time, so a replay sees the same light at the same instant.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

Vec2 = tuple[float, float]
Vec3 = tuple[float, float, float]

LightState = Literal["green", "yellow", "red"]


class _RoadSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class LaneSpec(_RoadSpec):
    """One lane: its centre line in driving direction, the lanes it leads to, its neighbours
    in the same direction (for lane changes) and its speed limit. `kind` is `connector` for
    the short lanes that cross an intersection or a roundabout joint."""

    lane_id: int = Field(ge=0)
    road_id: int = Field(ge=0)
    kind: Literal["driving", "connector", "ramp"] = "driving"
    centerline: tuple[Vec3, ...] = Field(min_length=2)
    width_m: float = Field(gt=0.0)
    speed_limit_mps: float = Field(gt=0.0)
    successors: tuple[int, ...] = ()
    left_neighbor: int | None = None
    right_neighbor: int | None = None
    intersection_id: int | None = None  # set on connectors inside an intersection
    stop_light_id: int | None = None  # the light a vehicle waits at before the lane's end
    stop_line_s_m: float | None = None  # arc length of the stop line (None: no stop line)

    def length_m(self) -> float:
        """Arc length of the centre line."""
        pts = np.asarray(self.centerline, dtype=float)
        return float(np.linalg.norm(np.diff(pts, axis=0), axis=1).sum())

    def point_at(self, s_m: float) -> tuple[np.ndarray, float]:
        """The centre-line point at arc length `s_m` (clipped to the lane) and its heading."""
        pts = np.asarray(self.centerline, dtype=float)
        seg = np.diff(pts, axis=0)
        lengths = np.linalg.norm(seg, axis=1)
        cum = np.concatenate([[0.0], np.cumsum(lengths)])
        s = min(max(float(s_m), 0.0), float(cum[-1]))
        k = min(int(np.searchsorted(cum, s, side="right")) - 1, len(seg) - 1)
        while k > 0 and lengths[k] == 0.0:
            k -= 1
        f = (s - cum[k]) / lengths[k] if lengths[k] > 0 else 0.0
        return pts[k] + f * seg[k], math.atan2(seg[k][1], seg[k][0])


class TrafficLightSpec(_RoadSpec):
    """A signal head at `pos` facing the lanes it controls. Its cycle is green, yellow, red
    from `offset_s`: the state at time t is a pure function of t (`state_at`)."""

    light_id: int = Field(ge=0)
    intersection_id: int = Field(ge=0)
    pos: Vec3
    yaw: float = 0.0
    lanes: tuple[int, ...]  # lanes whose stop line this light guards
    green_s: float = Field(gt=0.0)
    yellow_s: float = Field(gt=0.0)
    red_s: float = Field(gt=0.0)
    offset_s: float = 0.0

    def state_at(self, t_s: float) -> LightState:
        """The light's state at simulation time `t_s`."""
        period = self.green_s + self.yellow_s + self.red_s
        phase = math.fmod(t_s - self.offset_s, period)
        if phase < 0.0:
            phase += period
        if phase < self.green_s:
            return "green"
        if phase < self.green_s + self.yellow_s:
            return "yellow"
        return "red"


class IntersectionSpec(_RoadSpec):
    """A junction: its area on the ground and the kind of control it has."""

    intersection_id: int = Field(ge=0)
    kind: Literal["signalised", "priority", "roundabout", "ramp"]
    center: Vec2
    polygon: tuple[Vec2, ...] = Field(min_length=3)


class SidewalkSpec(_RoadSpec):
    """A walkable strip beside the road: its centre line (closed where it rings a block)."""

    sidewalk_id: int = Field(ge=0)
    centerline: tuple[Vec2, ...] = Field(min_length=2)
    width_m: float = Field(gt=0.0)
    closed: bool = False
    block_id: int | None = None


class CrosswalkSpec(_RoadSpec):
    """A zebra crossing from sidewalk to sidewalk: its two ends and its width."""

    crosswalk_id: int = Field(ge=0)
    start: Vec2
    end: Vec2
    width_m: float = Field(gt=0.0)
    intersection_id: int | None = None
    sidewalks: tuple[int, int] | None = None  # the sidewalks it joins


class BlockSpec(_RoadSpec):
    """The land between roads: its outline and what it holds."""

    block_id: int = Field(ge=0)
    kind: Literal["residential", "commercial", "downtown", "park", "rural"]
    polygon: tuple[Vec2, ...] = Field(min_length=3)


#: the materials every traffic vehicle's head and tail lamps share (they glow at night)
VEHICLE_LAMP_MATERIALS = ("mat_vehicle_headlamp", "mat_vehicle_taillamp")


class RoadNetworkSpec(_RoadSpec):
    """Every lane, junction, light, sidewalk, crossing and block of a town; where its street
    lamps shine from and the materials that glow while they are on (`twinsim.scene.sky`)."""

    preset: str
    lanes: tuple[LaneSpec, ...]
    intersections: tuple[IntersectionSpec, ...] = ()
    traffic_lights: tuple[TrafficLightSpec, ...] = ()
    sidewalks: tuple[SidewalkSpec, ...] = ()
    crosswalks: tuple[CrosswalkSpec, ...] = ()
    blocks: tuple[BlockSpec, ...] = ()
    street_lamps: tuple[Vec3, ...] = ()
    lamp_materials: tuple[str, ...] = ()

    @model_validator(mode="after")
    def _references_resolve(self) -> RoadNetworkSpec:
        """Every id a lane or light names exists, and lane ids are their positions."""
        ids = [lane.lane_id for lane in self.lanes]
        if ids != list(range(len(ids))):
            raise ValueError("roads.lanes: lane_id must be 0, 1, 2, ... in order")
        n = len(ids)
        lights = {light.light_id for light in self.traffic_lights}
        junctions = {j.intersection_id for j in self.intersections}
        for lane in self.lanes:
            named = [*lane.successors, lane.left_neighbor, lane.right_neighbor]
            bad = [i for i in named if i is not None and not 0 <= i < n]
            if bad:
                raise ValueError(f"roads.lanes[{lane.lane_id}]: unknown lanes {bad}")
            if lane.stop_light_id is not None and lane.stop_light_id not in lights:
                raise ValueError(f"roads.lanes[{lane.lane_id}]: unknown light {lane.stop_light_id}")
            if lane.intersection_id is not None and lane.intersection_id not in junctions:
                raise ValueError(
                    f"roads.lanes[{lane.lane_id}]: unknown intersection {lane.intersection_id}"
                )
        for light in self.traffic_lights:
            if light.intersection_id not in junctions or any(not 0 <= i < n for i in light.lanes):
                raise ValueError(f"roads.traffic_lights[{light.light_id}]: unknown reference")
        return self

    def total_lane_length_m(self) -> float:
        """Sum of every driving and ramp lane's length (connectors excluded)."""
        return sum(lane.length_m() for lane in self.lanes if lane.kind != "connector")

    def predecessors(self) -> dict[int, tuple[int, ...]]:
        """For each lane id, the lanes that lead into it."""
        into: dict[int, list[int]] = {lane.lane_id: [] for lane in self.lanes}
        for lane in self.lanes:
            for nxt in lane.successors:
                into[nxt].append(lane.lane_id)
        return {k: tuple(v) for k, v in into.items()}

    def light(self, light_id: int) -> TrafficLightSpec:
        """The traffic light with this id."""
        for light in self.traffic_lights:
            if light.light_id == light_id:
                return light
        raise KeyError(light_id)
