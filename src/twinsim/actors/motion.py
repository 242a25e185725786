"""The animation of a person: its body built and its motion (procedural or BVH) tabulated."""

from __future__ import annotations

from collections.abc import Callable

from twinsim.actors.bvh import BvhClip, bvh_table, load_bvh
from twinsim.actors.gait import procedural_source
from twinsim.actors.human import build_body
from twinsim.actors.playback import HumanMotion, PoseTable
from twinsim.model.people import PersonSpec


def motion_for(
    person: PersonSpec, bvh_loader: Callable[[str], BvhClip] | None = None
) -> HumanMotion:
    """The animation of `person`; `bvh_loader(path) -> BvhClip` lets callers cache clips."""
    model = build_body(person.body)
    spec = person.motion
    if spec.kind == "bvh":
        table = bvh_table(model, spec, bvh_loader or load_bvh)
    else:
        table = PoseTable.sample(procedural_source(model, spec), spec.cycle_s)
    return HumanMotion(model, spec, table)
