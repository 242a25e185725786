"""The procedural apartment: floor plan → structure, materials, furniture and lights as data.

`generate_apartment` is a pure function of (config, generator state): the same seed gives an
equal `ApartmentLayout`. Structure conventions: each room's floor is a 5 cm box whose top is at
z = 0, its ceiling a 5 cm box whose bottom is at z = wall_height. Walls are 10 cm thick boxes
centred on the room boundaries; every wall between two sides (room | room, room | outside) is
one "wall" object made of two half-thickness slabs, one per side, so each room shows its own
wall finish and a shared wall exists once. Door openings leave a piece left and right of the
door and a lintel above it; a "door_frame" trim lines each opening. Ceiling light fixtures are
"lamp" objects whose origin is on the ceiling (pos z = wall_height). Mesh assets of the
config's catalogues (`scene.assets`) stand on the floor after the furniture, placed by each
room's furniture placer (back to a wall, else in the room), its rooms tried in a drawn order.
"""

from __future__ import annotations

import numpy as np

from twinsim.model.scene import DoorSpec, GeomSpec, LightSpec, RoomSpec
from twinsim.scene.assets.meshes import VisualMesh
from twinsim.scene.assets.placement import (
    PlacedAssets,
    Spot,
    add_mesh_objects,
    load_assets,
    place_assets,
    tall_box,
)
from twinsim.scene.furniture import Palette, RoomPlacer, ceiling_lamp, furnish_room
from twinsim.scene.furniture.kit import CORE_MAX_HEIGHT, FurnitureItem
from twinsim.scene.generators import Layout
from twinsim.scene.layout import (
    WALL_THICKNESS,
    FloorPlan,
    Rect,
    WallPiece,
    generate_floor_plan,
    room_rect,
    wall_pieces,
)
from twinsim.scene.parts import MaterialBook, ObjectList, box, hsv, r3, shift
from twinsim.scene.worlds.apartment.config import ApartmentConfig

FLOOR_THICKNESS = 0.05
CEILING_THICKNESS = 0.05
MAX_LIGHTS = 8
FRAME_WIDTH = 0.04
FRAME_PROUD = 0.015


ApartmentLayout = Layout  # the apartment's layout: rooms and doors always present


class _Materials(MaterialBook):
    """The apartment's material choices: floors and walls by room type, furniture palettes."""

    def floor(self, room: RoomSpec) -> str:
        """Wood, tiles or carpet depending on the room type."""
        rng = self.rng
        name = f"floor_{room.name}"
        p_tiles = {"bathroom": 1.0, "kitchen": 0.7, "corridor": 0.4, "living_room": 0.2}
        p_carpet = {"bedroom": 0.4, "office": 0.4}
        u = rng.uniform()
        if u < p_tiles.get(room.type, 0.0):
            tile = rng.uniform(0.1, 0.2) if room.type == "bathroom" else rng.uniform(0.25, 0.45)
            n = int(rng.integers(3, 7))
            a = hsv(rng, (0, 360), (0.0, 0.3), (0.45, 0.95))
            b = hsv(rng, (0, 360), (0.0, 0.4), (0.3, 0.9))
            params = {"tiles": float(n), "grout": r3(rng.uniform(0.03, 0.08))}
            return self.textured(name, "tiles", (a, b), n * tile, rng.uniform(0.05, 0.3), params)
        if u < p_tiles.get(room.type, 0.0) + p_carpet.get(room.type, 0.0):
            a = hsv(rng, (0, 360), (0.1, 0.5), (0.25, 0.7))
            return self.textured(name, "carpet", (a, shift(a, 1.3)), rng.uniform(0.4, 0.7))
        plank = rng.uniform(0.12, 0.2)
        params = {"planks": 4.0, "rings": r3(rng.uniform(4.0, 10.0))}
        return self.textured(
            name, "wood", self.wood_colors(), 4 * plank, rng.uniform(0.0, 0.15), params
        )

    def wall(self, room: RoomSpec) -> str:
        """Plaster or wallpaper (wall tiles in wet rooms)."""
        rng = self.rng
        name = f"wall_{room.name}"
        u = rng.uniform()
        if room.type in ("bathroom", "kitchen") and u < 0.5:
            n = int(rng.integers(4, 9))
            a = hsv(rng, (0, 360), (0.0, 0.35), (0.6, 0.95))
            params = {"tiles": float(n), "grout": 0.05, "marble": r3(rng.uniform(0.0, 0.6))}
            return self.textured(
                name, "tiles", (a, shift(a, 0.85)), n * rng.uniform(0.1, 0.2), 0.0, params
            )
        if u < 0.6:
            a = hsv(rng, (0, 360), (0.0, 0.15), (0.75, 0.95))
            return self.textured(name, "plaster", (a, shift(a, 0.9)), rng.uniform(0.6, 1.2))
        a = hsv(rng, (0, 360), (0.05, 0.3), (0.65, 0.95))
        b = hsv(rng, (0, 360), (0.2, 0.6), (0.25, 0.6))
        params = {
            "motifs": float(2 * int(rng.integers(1, 4))),
            "stripes": float(rng.integers(0, 2) * rng.integers(2, 6)),
            "petals": float(rng.integers(4, 9)),
        }
        return self.textured(name, "wallpaper", (a, b), rng.uniform(0.5, 0.9), 0.0, params)

    def palette(self, room: RoomSpec, shared: dict[str, str]) -> Palette:
        """A room's furniture materials: its own wood, fabric, paint and rug, plus shared ones."""
        rng = self.rng
        wood = self.textured(
            f"wood_{room.name}",
            "wood",
            self.wood_colors(),
            rng.uniform(0.5, 0.9),
            rng.uniform(0.0, 0.1) if rng.uniform() < 0.3 else 0.0,
            {"planks": float(rng.integers(2, 6)), "rings": r3(rng.uniform(4.0, 12.0))},
        )
        fa = hsv(rng, (0, 360), (0.15, 0.7), (0.35, 0.85))
        fabric = self.textured(
            f"fabric_{room.name}",
            "fabric",
            (fa, hsv(rng, (0, 360), (0.1, 0.6), (0.35, 0.9))),
            rng.uniform(0.15, 0.3),
            0.0,
            {
                "threads": float(rng.integers(28, 56)),
                "twill": float(rng.integers(2)),
                "plaid": float(rng.integers(0, 2) * rng.integers(2, 5)),
            },
        )
        refl = rng.uniform(0.0, 0.3) if rng.uniform() < 0.3 else 0.0
        paint = self.plain(
            f"paint_{room.name}", hsv(rng, (0, 360), (0.0, 0.6), (0.3, 0.95)), refl, glossy=True
        )
        ra = hsv(rng, (0, 360), (0.2, 0.7), (0.3, 0.75))
        rb = hsv(rng, (0, 360), (0.1, 0.5), (0.4, 0.9))
        if rng.uniform() < 0.5:
            rug = self.textured(f"rug_{room.name}", "carpet", (ra, rb), rng.uniform(0.3, 0.6))
        else:
            params = {"threads": 32.0, "plaid": float(rng.integers(2, 6))}
            rug = self.textured(
                f"rug_{room.name}", "fabric", (ra, rb), rng.uniform(0.4, 0.8), 0.0, params
            )
        books = tuple(shared[k] for k in sorted(shared) if k.startswith("book"))
        return Palette(
            wood=wood,
            fabric=fabric,
            paint=paint,
            metal=shared["metal"],
            ceramic=shared["ceramic"],
            dark=shared["dark"],
            foliage=shared["foliage"],
            pot=shared["pot"],
            soil=shared["soil"],
            shade=shared["shade"],
            rug=rug,
            books=books,
        )

    def shared(self) -> dict[str, str]:
        """Materials used all over the apartment (metal, ceramic, plants, books, …)."""
        rng = self.rng
        out = {
            "metal": self.plain(
                "metal", hsv(rng, (0, 360), (0.0, 0.05), (0.55, 0.8)), rng.uniform(0.1, 0.3), True
            ),
            "ceramic": self.plain(
                "ceramic",
                hsv(rng, (0, 360), (0.0, 0.05), (0.88, 0.97)),
                rng.uniform(0.15, 0.3),
                True,
            ),
            "dark": self.plain(
                "dark", hsv(rng, (0, 360), (0.0, 0.1), (0.03, 0.12)), rng.uniform(0.0, 0.2), True
            ),
            "foliage": self.plain("foliage", hsv(rng, (80, 150), (0.4, 0.8), (0.2, 0.5))),
            "pot": self.plain("pot", hsv(rng, (10, 30), (0.4, 0.7), (0.35, 0.7))),
            "soil": self.plain("soil", hsv(rng, (20, 35), (0.4, 0.6), (0.1, 0.2))),
            "shade": self.plain("shade", hsv(rng, (30, 60), (0.05, 0.25), (0.85, 1.0))),
        }
        for k in range(5):
            out[f"book{k}"] = self.plain(f"book{k}", hsv(rng, (0, 360), (0.3, 0.9), (0.2, 0.85)))
        return out


def _wall_geoms(piece: WallPiece, height: float, mats: tuple[str, str]) -> list[GeomSpec]:
    """Slab boxes of one wall (relative to its midpoint): full-height runs and door lintels."""
    mid = (piece.start + piece.end) / 2
    runs: list[tuple[float, float, float, float]] = []  # (s0, s1, z0, z1) along the wall
    k = 0 if piece.axis == "x" else 1
    s = piece.start
    for door in sorted(piece.doors, key=lambda d: d.center[k]):
        c = door.center[k]
        runs.append((s, c - door.width / 2, 0.0, height))
        runs.append((c - door.width / 2, c + door.width / 2, door.height, height))
        s = c + door.width / 2
    runs.append((s, piece.end, 0.0, height))
    q = WALL_THICKNESS / 4
    geoms = []
    for offset, mat in ((-q, mats[0]), (q, mats[1])):
        for s0, s1, z0, z1 in runs:
            along, half_along = (s0 + s1) / 2 - mid, (s1 - s0) / 2
            zc, hz = (z0 + z1) / 2, (z1 - z0) / 2
            if piece.axis == "x":
                geoms.append(box((along, offset, zc), (half_along, q, hz), mat))
            else:
                geoms.append(box((offset, along, zc), (q, half_along, hz), mat))
    return geoms


def _door_frame_geoms(door: DoorSpec, mat: str) -> list[GeomSpec]:
    """Jambs and head trim lining a door opening (relative to the door centre on the floor)."""
    half_across = WALL_THICKNESS / 2 + FRAME_PROUD
    hw = FRAME_WIDTH / 2
    jamb_h = (door.height - FRAME_WIDTH) / 2
    parts = [
        ((-door.width / 2 + hw, jamb_h), (hw, jamb_h)),
        ((door.width / 2 - hw, jamb_h), (hw, jamb_h)),
        ((0.0, door.height - hw), (door.width / 2, hw)),
    ]
    geoms = []
    for (along, zc), (half_along, hz) in parts:
        if door.axis == "x":
            geoms.append(box((along, 0.0, zc), (half_along, half_across, hz), mat))
        else:
            geoms.append(box((0.0, along, zc), (half_across, half_along, hz), mat))
    return geoms


def _light_spots(rects: list[Rect], n_lights: int) -> list[tuple[int, float, float]]:
    """Spread `n_lights` over rooms (largest area per light first), on a grid in each room."""
    counts = [0] * len(rects)
    for _ in range(n_lights):
        best = max(range(len(rects)), key=lambda i: (rects[i].area / (counts[i] + 1), -i))
        counts[best] += 1
    spots = []
    for i in sorted(range(len(rects)), key=lambda i: (-rects[i].area, i)):
        r = rects[i]
        for k in range(counts[i]):
            f = (k + 0.5) / counts[i]
            if r.width >= r.depth:
                spots.append((i, r.x0 + f * r.width, r.center[1]))
            else:
                spots.append((i, r.center[0], r.y0 + f * r.depth))
    return spots


def _lights(
    plan: FloorPlan, cfg: ApartmentConfig, height: float, rng: np.random.Generator
) -> list[tuple[int, LightSpec]]:
    """Ceiling spot lights pointing down; only the first (in the largest room) casts shadows."""
    lo, hi = min(cfg.min_lights, MAX_LIGHTS), min(cfg.max_lights, MAX_LIGHTS)
    n = int(rng.integers(lo, hi + 1))
    rects = [room_rect(r) for r in plan.rooms]
    out = []
    tints = ((1.0, 0.9, 0.75), (1.0, 1.0, 1.0), (0.85, 0.93, 1.0))
    for k, (room_id, x, y) in enumerate(_light_spots(rects, n)):
        tint = tints[int(rng.integers(len(tints)))]
        level = rng.uniform(0.4, 0.8)
        r, g, b = (r3(np.clip(level * t, 0.3, 0.8)) for t in tint)
        spec = r3(rng.uniform(0.1, 0.3))
        amb = r3(rng.uniform(0.02, 0.05))
        light = LightSpec(
            name=f"light_{k}",
            pos=(
                r3(x + rng.uniform(-0.2, 0.2)),
                r3(y + rng.uniform(-0.2, 0.2)),
                r3(height - 0.1),
            ),
            dir=(0.0, 0.0, -1.0),
            diffuse=(r, g, b),
            specular=(spec, spec, spec),
            ambient=(amb, amb, amb),
            directional=False,
            castshadow=k == 0,
            attenuation=(1.0, r3(rng.uniform(0.0, 0.1)), r3(rng.uniform(0.02, 0.08))),
            cutoff_deg=r3(rng.uniform(60.0, 90.0)),
            exponent=r3(rng.uniform(0.0, 2.0)),
        )
        out.append((room_id, light))
    return out


def generate_apartment(cfg: ApartmentConfig, rng: np.random.Generator) -> ApartmentLayout:
    """Generate a furnished, lit apartment from the scene config, drawing only from `rng`."""
    n_rooms = int(rng.integers(cfg.min_rooms, cfg.max_rooms + 1))
    plan = generate_floor_plan(n_rooms, rng)
    height = cfg.wall_height_m
    mats = _Materials(rng, cfg.texture_size)
    objs = ObjectList()
    rects = [room_rect(r) for r in plan.rooms]

    ceiling = mats.textured(
        "ceiling", "plaster", ((0.95, 0.95, 0.93), (0.88, 0.88, 0.86)), rng.uniform(0.8, 1.2)
    )
    exterior = mats.plain("exterior", (0.6, 0.6, 0.6))
    frame = mats.plain("door_frame", hsv(rng, (0, 360), (0.0, 0.2), (0.5, 0.95)), glossy=True)
    floor_mats = [mats.floor(room) for room in plan.rooms]
    wall_mats = [mats.wall(room) for room in plan.rooms]
    shared = mats.shared()
    palettes = [mats.palette(room, shared) for room in plan.rooms]

    for room, rect in zip(plan.rooms, rects, strict=True):
        cx, cy = rect.center
        half = (rect.width / 2, rect.depth / 2)
        i = room.room_id
        objs.add(
            f"floor_{room.name}",
            "floor",
            (cx, cy, 0.0),
            [box((0, 0, -FLOOR_THICKNESS / 2), (*half, FLOOR_THICKNESS / 2), floor_mats[i])],
            i,
        )
        objs.add(
            f"ceiling_{room.name}",
            "ceiling",
            (cx, cy, height),
            [box((0, 0, CEILING_THICKNESS / 2), (*half, CEILING_THICKNESS / 2), ceiling)],
            i,
        )

    def side(room_id: int | None) -> tuple[str, str]:
        if room_id is None:
            return ("outside", exterior)
        return (plan.rooms[room_id].name, wall_mats[room_id])

    for k, piece in enumerate(wall_pieces(plan)):
        (neg_name, neg_mat), (pos_name, pos_mat) = side(piece.neg_room), side(piece.pos_room)
        mid = (piece.start + piece.end) / 2
        pos = (mid, piece.coord, 0.0) if piece.axis == "x" else (piece.coord, mid, 0.0)
        owner = piece.pos_room if piece.neg_room is None else piece.neg_room
        room_id = owner if None in (piece.neg_room, piece.pos_room) else None
        objs.add(
            f"wall_{k}_{neg_name}_{pos_name}",
            "wall",
            pos,
            _wall_geoms(piece, height, (neg_mat, pos_mat)),
            room_id,
        )

    for door in plan.doors:
        objs.add(
            f"door_frame_{door.door_id}",
            "door_frame",
            (*door.center, 0.0),
            _door_frame_geoms(door, frame),
            None,
        )

    lights = _lights(plan, cfg, height, rng)
    for room_id, light in lights:
        fixture = ceiling_lamp(rng, palettes[room_id])
        objs.add(
            f"ceiling_lamp_{light.name}",
            "lamp",
            (light.pos[0], light.pos[1], height),
            fixture.geoms,
            room_id,
        )

    has_kitchen = any(r.type == "kitchen" for r in plan.rooms)
    placers = []
    for room, rect in zip(plan.rooms, rects, strict=True):
        doors = [d for d in plan.doors if room.room_id in d.rooms]
        placer = furnish_room(
            rect,
            room.type,
            doors,
            palettes[room.room_id],
            cfg.furniture_density,
            WALL_THICKNESS,
            rng,
            kitchenette=room.type == "living_room" and not has_kitchen,
        )
        placers.append(placer)
        counts: dict[str, int] = {}
        for p in placer.placed:
            cls = p.item.semantic_class
            counts[cls] = counts.get(cls, 0) + 1
            objs.add(
                f"{room.name}_{cls}_{counts[cls] - 1}",
                cls,
                (p.x, p.y, 0.0),
                p.item.geoms,
                room.room_id,
                p.yaw,
            )

    assets = PlacedAssets()
    if cfg.assets:
        spot = _room_spots(plan.rooms, placers)
        assets = add_mesh_objects(place_assets(load_assets(cfg.assets), rng, spot), objs)
    fp = plan.footprint
    t = WALL_THICKNESS / 2
    return ApartmentLayout(
        rooms=plan.rooms,
        doors=plan.doors,
        objects=tuple(objs.items),
        textures=tuple(mats.textures),
        materials=(*mats.materials, *assets.materials),
        lights=tuple(light for _, light in lights),
        wall_height=height,
        bounds_min=(r3(fp.x0 - t), r3(fp.y0 - t), -FLOOR_THICKNESS),
        bounds_max=(r3(fp.x1 + t), r3(fp.y1 + t), r3(height + CEILING_THICKNESS)),
        mesh_assets=assets.specs,
        asset_bytes=assets.blobs,
    )


def _room_spots(rooms: tuple[RoomSpec, ...], placers: list[RoomPlacer]):
    """Where a copy of a floor asset stands: the rooms in a drawn order, in each back to a
    wall, else anywhere in the room, clear of the furniture (the room's own placer)."""

    def spot(asset: VisualMesh, rng: np.random.Generator) -> Spot | None:
        hx, hy, height = asset.footprint()
        tall = tall_box(asset, CORE_MAX_HEIGHT)
        item = FurnitureItem(asset.item.entry.semantic_class, (), (hx, hy), height, tall)
        for i in rng.permutation(len(rooms)).tolist():
            for where in ("wall", "interior"):
                placed = placers[i].place(lambda: item, where)
                if placed is not None:
                    room = rooms[i]
                    return Spot(placed.x, placed.y, placed.yaw, room.room_id, room.name)
        return None

    return spot
