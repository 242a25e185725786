"""The furniture catalogue: a builder per item name, and which items each room type gets."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from twinsim.scene.furniture.decor import lamp, plant, rug, tv
from twinsim.scene.furniture.fixtures import bathtub, refrigerator, sink, stove, toilet
from twinsim.scene.furniture.kit import FurnitureItem, Palette
from twinsim.scene.furniture.living import armchair, bed, chair, desk, sofa, table
from twinsim.scene.furniture.storage import cabinet, counter, nightstand, shelf, wardrobe

Builder = Callable[[np.random.Generator, Palette], FurnitureItem]

BUILDERS: dict[str, Builder] = {
    "bed": bed,
    "sofa": sofa,
    "armchair": armchair,
    "table": table,
    "chair": chair,
    "desk": desk,
    "shelf": shelf,
    "cabinet": cabinet,
    "wardrobe": wardrobe,
    "counter": counter,
    "tv": tv,
    "lamp": lamp,
    "plant": plant,
    "nightstand": nightstand,
    "refrigerator": refrigerator,
    "stove": stove,
    "toilet": toilet,
    "bathtub": bathtub,
    "sink": sink,
    "rug": rug,
}

# (item, probability at density 1, slots, where): "wall" = back to a wall, "interior" = free
# standing, "center" = near the room centre (rugs)
CATALOGUE: dict[str, tuple[tuple[str, float, int, str], ...]] = {
    "living_room": (
        ("sofa", 1.0, 1, "wall"),
        ("tv", 0.9, 1, "wall"),
        ("shelf", 0.7, 2, "wall"),
        ("armchair", 0.6, 2, "wall"),
        ("cabinet", 0.5, 1, "wall"),
        ("table", 0.5, 1, "interior"),
        ("lamp", 0.7, 2, "wall"),
        ("plant", 0.8, 3, "wall"),
        ("rug", 0.7, 1, "center"),
    ),
    "kitchen": (
        ("counter", 1.0, 1, "wall"),
        ("stove", 0.95, 1, "wall"),
        ("refrigerator", 0.95, 1, "wall"),
        ("counter", 0.8, 1, "wall"),
        ("table", 0.7, 1, "interior"),
        ("cabinet", 0.4, 1, "wall"),
        ("shelf", 0.3, 1, "wall"),
        ("plant", 0.4, 1, "wall"),
    ),
    "bedroom": (
        ("bed", 1.0, 1, "wall"),
        ("wardrobe", 0.8, 1, "wall"),
        ("desk", 0.3, 1, "wall"),
        ("shelf", 0.4, 1, "wall"),
        ("cabinet", 0.3, 1, "wall"),
        ("armchair", 0.2, 1, "wall"),
        ("lamp", 0.5, 1, "wall"),
        ("plant", 0.5, 2, "wall"),
        ("rug", 0.5, 1, "center"),
    ),
    "bathroom": (
        ("bathtub", 0.7, 1, "wall"),
        ("toilet", 1.0, 1, "wall"),
        ("sink", 1.0, 1, "wall"),
        ("cabinet", 0.4, 1, "wall"),
        ("plant", 0.3, 1, "wall"),
        ("rug", 0.4, 1, "center"),
    ),
    "office": (
        ("desk", 1.0, 2, "wall"),
        ("shelf", 0.9, 2, "wall"),
        ("cabinet", 0.6, 1, "wall"),
        ("armchair", 0.3, 1, "wall"),
        ("lamp", 0.5, 1, "wall"),
        ("plant", 0.6, 2, "wall"),
        ("rug", 0.3, 1, "center"),
    ),
    "corridor": (
        ("shelf", 0.4, 1, "wall"),
        ("cabinet", 0.4, 1, "wall"),
        ("plant", 0.6, 2, "wall"),
        ("rug", 0.5, 1, "center"),
    ),
}

KITCHENETTE: tuple[tuple[str, float, int, str], ...] = (
    ("counter", 1.0, 1, "wall"),
    ("refrigerator", 1.0, 1, "wall"),
    ("stove", 1.0, 1, "wall"),
)
