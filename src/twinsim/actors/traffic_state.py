"""The state of one simulated traffic vehicle, and of a lane change under way, shared by the
traffic simulation (`twinsim.actors.traffic`) and its lane changes
(`twinsim.actors.lane_change`)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from twinsim.actors.vehicles import VehicleClass

#: per lane, (rear arc length, speed, vehicle index or −1 for an ego, length) of each occupant
Occupancy = dict[int, list[tuple[float, float, int, float]]]


@dataclass(frozen=True)
class LaneChange:
    """A move in progress onto the vehicle's current lane from `from_lane`: the old lane's
    centre lies `offset_m` to the left of the new one (right < 0) where the vehicle's centre
    was at arc length `start_s` of the new lane; the move ends `length_m` further on."""

    from_lane: int
    offset_m: float
    start_s: float
    length_m: float

    def _u(self, s: np.ndarray | float) -> np.ndarray:
        return np.clip((np.asarray(s, float) - self.start_s) / self.length_m, 0.0, 1.0)

    def offset(self, s: np.ndarray | float) -> np.ndarray:
        """Sideways offset (m, left > 0) of the centre from the new lane at centre arc `s`."""
        u = self._u(s)
        return self.offset_m * (1.0 - u**3 * (10.0 - 15.0 * u + 6.0 * u * u))

    def slope(self, s: np.ndarray | float) -> np.ndarray:
        """d offset / d s at centre arc `s`: the heading's turn away from the lane's."""
        u = self._u(s)
        return -self.offset_m * 30.0 * (u * (1.0 - u)) ** 2 / self.length_m

    def over(self, centre_s: float) -> bool:
        return centre_s >= self.start_s + self.length_m


@dataclass
class SimVehicle:
    """A vehicle as the simulation steps it: its route (lane ids) and where each route lane
    begins along it, its speed factor, position (front bumper's arc length on
    `route[index]`), speed, the connectors it holds and the lane change it is making."""

    cls: VehicleClass
    route: list[int]
    starts: list[float]
    factor: float
    index: int = 0
    s: float = 0.0
    v: float = 0.0
    #: connector held → where it begins and ends along the route (m)
    reserved: dict[int, tuple[float, float]] = field(default_factory=dict)
    change: LaneChange | None = None  # the lane change under way
    changed_at: int = -(10**9)  # the step the last lane change began
