"""The fixed semantic class vocabulary shared by every sequence.

Ids never change meaning between versions: new classes are appended, never renumbered.
Id 0 means "nothing" in semantic images, as instance id 0 does in instance images.
"""

from __future__ import annotations

SEMANTIC_CLASSES: tuple[str, ...] = (
    "unlabeled",  # 0
    "wall",  # 1
    "floor",  # 2
    "ceiling",  # 3
    "door_frame",  # 4
    "bed",  # 5
    "sofa",  # 6
    "table",  # 7
    "chair",  # 8
    "shelf",  # 9
    "cabinet",  # 10
    "counter",  # 11
    "tv",  # 12
    "lamp",  # 13
    "plant",  # 14
    "desk",  # 15
    "wardrobe",  # 16
    "toilet",  # 17
    "bathtub",  # 18
    "sink",  # 19
    "rug",  # 20
    "nightstand",  # 21
    "refrigerator",  # 22
    "stove",  # 23
    "armchair",  # 24
    "person",  # 25  (skin / body of an animated human)
    "clothing",  # 26  (clothes worn by an animated human)
    "ball",  # 27
    "box",  # 28
    "toy",  # 29
    "bottle",  # 30
    "robot",  # 31
    "rack",  # 32  (warehouse racking: uprights, beams, shelf decks, back mesh)
    "pallet",  # 33  (a wooden pallet on a warehouse shelf)
    # outdoor worlds (town generator), after CARLA's classes
    "road",  # 34  (driving surface: lanes, intersections, ramps)
    "sidewalk",  # 35
    "road_marking",  # 36  (lane lines, stop lines)
    "crosswalk",  # 37  (zebra stripes)
    "kerb",  # 38
    "building",  # 39
    "vegetation",  # 40  (trees, hedges)
    "terrain",  # 41  (grass, soil, the ground off the road)
    "pole",  # 42  (street lights, sign and signal posts)
    "traffic_light",  # 43  (the signal head)
    "traffic_sign",  # 44
    "fence",  # 45
    "guard_rail",  # 46
    "car",  # 47
    "van",  # 48
    "truck",  # 49
    "bus",  # 50
    "bicycle",  # 51
)

CLASS_ID: dict[str, int] = {name: i for i, name in enumerate(SEMANTIC_CLASSES)}


def class_id(name: str) -> int:
    """Return the numeric id of a semantic class, with a clear error for unknown names."""
    try:
        return CLASS_ID[name]
    except KeyError:
        allowed = ", ".join(SEMANTIC_CLASSES[1:])
        raise ValueError(f"unknown semantic class {name!r}; allowed: {allowed}") from None
