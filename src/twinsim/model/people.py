"""The people of a scene as plain data: each person's body (proportions, materials) and motion
(a pure function of time that `twinsim.actors` builds and plays)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from twinsim.model.base import FrozenSpec, Vec2


class HumanBodySpec(FrozenSpec):
    """Body proportions and materials of one person (see `twinsim.actors.human`).

    `segment_scale` multiplies the reference skeleton's segment lengths per segment name so
    people differ in build, not only in height; materials name entries of `SceneSpec.materials`.
    """

    height_m: float = Field(ge=1.2, le=2.2)
    segment_scale: dict[str, float] = Field(default_factory=dict)
    girth_scale: float = 1.0
    skin_material: str
    shirt_material: str
    pants_material: str
    shoes_material: str
    hair_material: str | None = None


class HumanMotionSpec(FrozenSpec):
    """How a person moves, fully resolved: a pure function of time built by `twinsim.actors`.

    Walks follow `waypoints` (world x, y of the root on the floor) at `speed_mps`; stationary
    motions (idle, wave, sit) stand at the first waypoint facing `heading`; a sit with a seat
    lowers the pelvis onto that seat's height (the waypoint is the seat's middle). One pass lasts
    `cycle_s`; playback runs forward then reversed (GRADE), so motion never stops. BVH clips are
    referenced by path and sha256 so a replay can check it uses the same file. `pauses` are
    waits `(start_s, duration_s)` in simulation time, in order and apart, during which the
    person's own time (what playback runs on) stands still: a walker yielding to a robot.
    """

    kind: Literal["walk", "idle", "wave", "sit", "bvh"]
    waypoints: tuple[Vec2, ...]
    heading: float = 0.0
    speed_mps: float = Field(1.0, ge=0.0)
    cycle_s: float = Field(gt=0.0)
    phase_s: float = 0.0
    gait_frequency_hz: float = Field(1.8, gt=0.0)
    bvh_path: str | None = None
    bvh_sha256: str | None = None
    seat_instance_id: int | None = None  # "sit" on this chair, armchair or sofa
    seat_height_m: float | None = Field(None, gt=0.0)  # its seat's top above the floor
    pauses: tuple[tuple[float, float], ...] = ()

    @field_validator("pauses")
    @classmethod
    def _pauses_in_order(
        cls, pauses: tuple[tuple[float, float], ...]
    ) -> tuple[tuple[float, float], ...]:
        """Each wait lasts a while and begins after the one before has ended."""
        end = float("-inf")
        for start, duration in pauses:
            if duration <= 0.0 or start < end:
                raise ValueError(f"pauses must last > 0 s and be in order apart, got {pauses}")
            end = start + duration
        return pauses


class PersonSpec(FrozenSpec):
    """An animated person: two instances, body/skin (class person) and clothing (class clothing)."""

    person_id: int
    name: str
    body_instance_id: int = Field(ge=1, le=65535)
    clothing_instance_id: int = Field(ge=1, le=65535)
    body: HumanBodySpec
    motion: HumanMotionSpec
