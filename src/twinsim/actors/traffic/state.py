"""The state of one simulated traffic vehicle, of a lane change and of an overtake through the
oncoming lane under way, shared by the traffic simulation (`simulation`), its lane changes
(`lane_change`) and its overtakes (`overtake`)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from twinsim.actors.traffic.vehicles import VehicleClass

#: per lane, (rear arc length, speed, vehicle index or −1 for an ego, length) of each occupant
Occupancy = dict[int, list[tuple[float, float, int, float]]]


def _smoothstep(u: np.ndarray) -> np.ndarray:
    """The quintic smoothstep: 0 to 1 with zero slope and curvature at both ends."""
    return u**3 * (10.0 - 15.0 * u + 6.0 * u * u)


@dataclass(frozen=True)
class Shift:
    """A sideways move along a lane: the centre's offset from the lane's centre line (m, left
    > 0) goes from `from_m` to `to_m` as a quintic smoothstep of the centre's arc length, from
    `start_s` over `length_m` (so the sideways speed and acceleration are zero at both ends)."""

    start_s: float
    length_m: float
    from_m: float
    to_m: float

    def _u(self, s: np.ndarray | float) -> np.ndarray:
        return np.clip((np.asarray(s, float) - self.start_s) / self.length_m, 0.0, 1.0)

    def offset(self, s: np.ndarray | float) -> np.ndarray:
        """Sideways offset (m, left > 0) of the centre from the lane at centre arc `s`."""
        return self.to_m + (self.from_m - self.to_m) * (1.0 - _smoothstep(self._u(s)))

    def slope(self, s: np.ndarray | float) -> np.ndarray:
        """d offset / d s at centre arc `s`: the heading's turn away from the lane's."""
        u = self._u(s)
        return (self.to_m - self.from_m) * 30.0 * (u * (1.0 - u)) ** 2 / self.length_m

    def over(self, centre_s: float) -> bool:
        return centre_s >= self.start_s + self.length_m


@dataclass(frozen=True)
class LaneChange:
    """A move in progress onto the vehicle's current lane from `from_lane`: the old lane's
    centre lies `offset_m` to the left of the new one (right < 0) where the vehicle's centre
    was at arc length `start_s` of the new lane; the move ends `length_m` further on."""

    from_lane: int
    offset_m: float
    start_s: float
    length_m: float

    @property
    def shift(self) -> Shift:
        """The move as a sideways shift from the old lane's offset onto the new lane."""
        return Shift(self.start_s, self.length_m, self.offset_m, 0.0)

    def offset(self, s: np.ndarray | float) -> np.ndarray:
        """Sideways offset (m, left > 0) of the centre from the new lane at centre arc `s`."""
        return self.shift.offset(s)

    def slope(self, s: np.ndarray | float) -> np.ndarray:
        """d offset / d s at centre arc `s`: the heading's turn away from the lane's."""
        return self.shift.slope(s)

    def over(self, centre_s: float) -> bool:
        return self.shift.over(centre_s)


@dataclass
class Overtake:
    """An overtake through the oncoming lane `twin` of the vehicle's lane `lane`, passing
    vehicle `target`: `shift` is the move under way (out onto the oncoming lane, whose centre
    lies `shift.to_m` to the left, then back once `back`); beyond `clear_m` to the side the
    vehicle is clear of the target's body."""

    lane: int
    twin: int
    target: int
    clear_m: float
    shift: Shift
    back: bool = False

    def beside(self, centre_s: float) -> bool:
        """Whether the vehicle is wholly on the oncoming lane (out, not yet moving back)."""
        return not self.back and self.shift.over(centre_s)

    def holds_oncoming(self, centre_s: float, half_width_m: float) -> bool:
        """Whether its body reaches over the line between its lane and the oncoming one."""
        line = max(self.shift.from_m, self.shift.to_m) / 2
        return float(self.shift.offset(centre_s)) + half_width_m > line

    def passing(self, centre_s: float) -> bool:
        """Whether it is far enough to the side to drive past the target."""
        return float(self.shift.offset(centre_s)) >= self.clear_m


@dataclass
class SimVehicle:
    """A vehicle as the simulation steps it: its route (lane ids) and where each route lane
    begins along it, its speed factor, position (front bumper's arc length on
    `route[index]`), speed, the connectors it holds and the lane change or overtake it is
    making."""

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
    changed_at: int = -(10**9)  # the step the last lane change or overtake began (or ended)
    overtake: Overtake | None = None  # the overtake through the oncoming lane under way

    def sideways(self, centre_s: float) -> tuple[float, float]:
        """The centre's offset (m, left > 0) from its lane and that offset's slope d/ds at
        centre arc `centre_s`, from the lane change or overtake under way (0, 0 for none)."""
        move = self.change if self.change is not None else self.overtake
        if move is None:
            return 0.0, 0.0
        shift = move.shift
        return float(shift.offset(centre_s)), float(shift.slope(centre_s))
