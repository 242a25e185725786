"""Where people can sit: the seat surfaces of chairs, armchairs and sofas in a scene.

Seating furniture faces +x in its own frame (`twinsim.scene.furniture`). A seat is a box part
whose top is at sitting height and whose footprint fits a person: a chair's seat board, each of
a sofa's cushions. Arm rests (too narrow), backs and bases (too high or low) are not seats.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from twinsim.geometry import quat_wxyz_to_matrix
from twinsim.model.scene import ObjectSpec

SEATING_CLASSES = ("chair", "armchair", "sofa")
SEAT_TOP_M = (0.35, 0.6)  # seat heights people sit at
SEAT_MIN_SIDE_M = 0.3  # narrowest seat a person fits on


@dataclass(frozen=True)
class Seat:
    """A place to sit: the seat's middle on the floor plan, the way a sitter faces, its height."""

    instance_id: int
    xy: tuple[float, float]
    heading: float
    height_m: float


def find_seats(objects: Sequence[ObjectSpec]) -> list[Seat]:
    """Every seat of every chair, armchair and sofa, in object order."""
    seats = []
    for obj in objects:
        if obj.semantic_class not in SEATING_CLASSES:
            continue
        R = quat_wxyz_to_matrix(obj.quat)
        heading = math.atan2(R[1, 0], R[0, 0])
        for geom in obj.geoms:
            if geom.type != "box":
                continue
            top = obj.pos[2] + geom.pos[2] + geom.size[2]
            if not SEAT_TOP_M[0] <= top <= SEAT_TOP_M[1]:
                continue
            if 2 * min(geom.size[0], geom.size[1]) < SEAT_MIN_SIDE_M:
                continue
            middle = np.asarray(obj.pos) + R @ np.asarray(geom.pos)
            seats.append(
                Seat(
                    instance_id=obj.instance_id,
                    xy=(round(float(middle[0]), 4), round(float(middle[1]), 4)),
                    heading=round(heading, 6),
                    height_m=round(float(top), 4),
                )
            )
    return seats
