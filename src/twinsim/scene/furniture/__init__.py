"""Furniture: primitive-geometry builders, a per-room-type catalogue, and collision-free placement.

Object frame convention (every builder): origin at the centre of the footprint on the floor
(z = 0 is the floor, geometry above it), +x is the object's front (the side you use or face: a
sofa's seat, a bed's foot, cabinet doors, a screen), the back is at -x, +y is to its left.
`FurnitureItem.half_extents` are the footprint half sizes along x (depth) and y (width).

Modules: `kit` (palette, item type, primitive geoms, footprints), the builders by family
(`living`, `storage`, `fixtures`, `decor`), `catalogue` (builders by name, items by room type)
and `furnish` (placement in a room). The entry points a world generator needs are here.
"""

from twinsim.scene.furniture.decor import ceiling_lamp
from twinsim.scene.furniture.furnish import Placement, RoomPlacer, furnish_room
from twinsim.scene.furniture.kit import Palette

__all__ = ["Palette", "Placement", "RoomPlacer", "ceiling_lamp", "furnish_room"]
