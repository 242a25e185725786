"""Walkers who yield to robots: waits put into a walker's own time, so its root never comes
within a clearance of a robot's planned position.

People are kinematic: a walker that meets a robot pushes it with unbounded force (it knocked
a quadruped over). Robots' tours are planned before the run, so where each robot will be is
known; `yield_to_robots` sweeps a walker's motion forward on a dense clock and, at the first
time its root would come within `PERSON_RADIUS_M` + the robot's footprint radius +
`YIELD_MARGIN_M` of a robot, makes it stop at its last stance on both feet before then (a heel
strike of a walk, any moment of a motion-capture clip) and wait there until moving on keeps
clear for `RESUME_HORIZON_S`; then it looks for the next conflict, with the robot coming later.
A stop where the robot would reach the waiting walker is moved a step earlier, as far back as
needed. A walker who would wait more than `MAX_TOTAL_WAIT_S` in all stays where it waits for
the rest of the run; one whom no stop keeps clear (a robot's tour runs along its whole route)
stays, with a warning, where robots come least close. The waits are `HumanMotionSpec.pauses`:
the motion stays a pure function of time, stored in `scene.json`, and playback
(`twinsim.actors.playback`) holds the person's own time during each, so the ping-pong cycle
carries on from where it stopped. Nothing random is drawn.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from twinsim.actors.gait import double_support_times
from twinsim.actors.motion import motion_for
from twinsim.actors.playback import HumanMotion, own_time
from twinsim.model.people import PersonSpec

log = logging.getLogger(__name__)

PERSON_RADIUS_M = 0.35  # half a body width and the arms' swing, around the root
YIELD_MARGIN_M = 0.2  # kept on top of both radii (a robot following its plan a little late)
SAMPLE_HZ = 100.0  # the clock walkers and robots are compared on
RESUME_HORIZON_S = 2.0  # a waiting walker moves on when this long ahead of it is clear
MAX_TOTAL_WAIT_S = 30.0  # waits beyond this in all and the walker stays where it waits
CLIP_STOP_STEP_S = 0.1  # a motion-capture clip may stop every this much of its own time
MOVES_M = 0.05  # a root that keeps within this of its place cannot make way by waiting
YIELDING_MOTIONS = frozenset({"walk", "bvh"})
_CHUNK = 256  # resume times checked at once

Pauses = tuple[tuple[float, float], ...]


@dataclass(frozen=True)
class RobotTrack:
    """A robot's planned body x, y (N, 2) at the times `yield_times` gives, and the radius of
    its footprint about that point."""

    xy: np.ndarray
    radius_m: float


def yield_times(total_s: float) -> np.ndarray:
    """The clock walkers are checked on: `SAMPLE_HZ` samples from 0 to at least `total_s`."""
    return np.arange(math.ceil(total_s * SAMPLE_HZ - 1e-9) + 1) / SAMPLE_HZ


def yield_to_robots(
    person: PersonSpec, robots: Sequence[RobotTrack], t_s: np.ndarray
) -> PersonSpec:
    """`person` with the waits that keep its root clear of every robot over `t_s` (found
    anew: any it had are replaced); unchanged if it stays clear, keeps its place or does not
    walk."""
    pauses: Pauses = ()
    if person.motion.kind in YIELDING_MOTIONS and robots:
        plan = _Yielding(person, robots, t_s)
        if plan.moves():
            pauses = plan.pauses()
    if pauses == person.motion.pauses:
        return person
    return person.model_copy(update={"motion": person.motion.model_copy(update={"pauses": pauses})})


def clearances(robots: Sequence[RobotTrack]) -> np.ndarray:
    """The distance (R,) a walker's root keeps from each robot's planned position."""
    return np.array([PERSON_RADIUS_M + r.radius_m + YIELD_MARGIN_M for r in robots])


def stop_times(motion: HumanMotion, until_s: float) -> np.ndarray:
    """Own times in [0, until_s] at which the motion may stop, ascending: where its clip time
    (forward or backward through the ping-pong) is a walk's stance on both feet, or any
    `CLIP_STOP_STEP_S` of a motion-capture clip."""
    spec, period = motion.spec, motion.period_s
    if spec.kind == "walk":
        tau = double_support_times(spec)
    else:
        tau = np.append(np.arange(0.0, spec.cycle_s, CLIP_STOP_STEP_S), spec.cycle_s)
    turns = np.arange(-1, math.ceil((until_s + spec.phase_s) / period) + 1) * period
    u = np.concatenate([turns[:, None] + tau, turns[:, None] + period - tau]).ravel()
    u = u - spec.phase_s
    return np.unique(u[(u >= 0.0) & (u <= until_s)])


class _Yielding:
    """One walker's waits for the robots, found by a forward sweep (see the module)."""

    def __init__(self, person: PersonSpec, robots: Sequence[RobotTrack], t_s: np.ndarray):
        self.t = np.asarray(t_s, dtype=float)
        self.name = person.name
        self.motion = motion_for(
            person.model_copy(update={"motion": person.motion.model_copy(update={"pauses": ()})})
        )
        self.robots = np.stack([r.xy for r in robots])  # (R, N, 2)
        self.clearance = clearances(robots)
        self.stops = stop_times(self.motion, float(self.t[-1]))
        self.ahead = np.arange(round(RESUME_HORIZON_S * SAMPLE_HZ) + 1)

    def moves(self) -> bool:
        """Whether the root leaves its place at all over the run (else waiting is no help)."""
        xy = self.motion.root_xy(self.t)
        return bool(np.ptp(xy, axis=0).max() > MOVES_M)

    def gaps(self, idx: np.ndarray, xy: np.ndarray) -> np.ndarray:
        """How far the root at `xy` (..., 2) keeps beyond the clearance of the nearest robot
        at clock indices `idx` (...); negative where it comes too close."""
        d = np.linalg.norm(self.robots[:, idx] - xy, axis=-1)
        clearance = np.expand_dims(self.clearance, tuple(range(1, d.ndim)))
        return (d - clearance).min(axis=0)

    def pauses(self) -> Pauses:
        """Waits until the walker keeps clear over the whole clock (or cannot)."""
        pauses: Pauses = ()
        every = np.arange(len(self.t))
        while True:
            own = own_time(self.t, pauses)
            bad = np.flatnonzero(self.gaps(every, self.motion.root_xy(own)) < 0.0)
            if not len(bad):
                return pauses
            pauses, resolved = self._wait(pauses, int(bad[0]), float(own[bad[0]]))
            if not resolved:
                return pauses

    def _wait(self, pauses: Pauses, k_c: int, u_c: float) -> tuple[Pauses, bool]:
        """The waits with one before the conflict at clock index `k_c` (own time `u_c`), and
        whether it keeps clear: at the latest stop whose spot no robot reaches before the
        walker can move on (the waits after an earlier stop are dropped: the sweep finds them
        anew), else, to the end, at the stop robots come least close to."""
        starts = np.array([own_time(a, pauses) for a, _ in pauses])  # own times, ascending
        here = np.unique(np.concatenate([self.stops[self.stops <= u_c], starts, [0.0]]))
        best: tuple[float, Pauses] | None = None
        for h in here[::-1]:
            n = int(np.searchsorted(starts, h))
            base = pauses[:n]
            waited = sum(d for _, d in base)
            # a stop where a wait began: that wait lasts longer
            t_h = pauses[n][0] if n < len(pauses) and starts[n] == h else float(h) + waited
            k_h = int(np.searchsorted(self.t, t_h))
            spot = self.motion.root_xy(np.array([h]))
            gaps = self.gaps(np.arange(k_h, len(self.t)), spot)
            unsafe = np.flatnonzero(gaps < 0.0)
            k_fail = k_h + int(unsafe[0]) if len(unsafe) else len(self.t)
            budget = MAX_TOTAL_WAIT_S - waited
            k_last = min(k_fail, int(np.searchsorted(self.t, t_h + budget, side="right")))
            k_e = self._resume(float(h), max(k_c, k_h + 1), k_last)
            if k_e is not None:
                return (*base, (t_h, float(self.t[k_e]) - t_h)), True
            if k_fail == len(self.t):
                return (*base, (t_h, self._to_end(t_h))), True
            if best is None or gaps.min() > best[0]:
                best = (float(gaps.min()), (*base, (t_h, self._to_end(t_h))))
        log.warning(
            "%s: no stop keeps clear of the robots from %.2f s; it waits where a robot comes "
            "%.2f m within its clearance",
            self.name,
            self.t[k_c],
            -best[0],
        )
        return best[1], False

    def _resume(self, h: float, k_lo: int, k_hi: int) -> int | None:
        """The first clock index in [k_lo, k_hi) from which walking on from own time `h`
        keeps clear for `RESUME_HORIZON_S` (or to the end of the clock), or None."""
        walk = self.motion.root_xy(h + self.ahead / SAMPLE_HZ)  # (H, 2)
        last = len(self.t) - 1
        for k0 in range(k_lo, k_hi, _CHUNK):
            k_e = np.arange(k0, min(k0 + _CHUNK, k_hi))
            idx = k_e[:, None] + self.ahead[None, :]
            gaps = self.gaps(np.minimum(idx, last), walk[None])
            ok = np.flatnonzero(np.all((gaps >= 0.0) | (idx > last), axis=1))
            if len(ok):
                return int(k_e[ok[0]])
        return None

    def _to_end(self, t_h: float) -> float:
        """How long a wait from `t_h` lasts to the end of the clock (at least one sample)."""
        return max(float(self.t[-1]) - t_h, 1.0 / SAMPLE_HZ)
