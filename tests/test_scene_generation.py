"""The procedural apartment: floor plan, doors, walls, furniture, materials, lights, textures."""

from __future__ import annotations

import functools
import itertools
import random

import cv2
import numpy as np
import pytest
from shapely.geometry import box
from shapely.ops import unary_union

from conftest import make_robot
from twinsim.model.scene import ObjectSpec, RoomSpec, SceneSpec, TextureSpec
from twinsim.scene.furniture.kit import geoms_bounds, object_footprint
from twinsim.scene.layout import (
    WALL_THICKNESS,
    FloorPlan,
    Rect,
    room_rect,
    shared_wall,
    wall_pieces,
)
from twinsim.scene.textures import make_texture
from twinsim.scene.vocabulary import SEMANTIC_CLASSES
from twinsim.scene.worlds.apartment.config import ApartmentConfig
from twinsim.scene.worlds.apartment.generator import ApartmentLayout, generate_apartment

SEEDS = range(5)
STRUCTURE = {"wall", "floor", "ceiling", "door_frame"}
KINDS = ("wood", "tiles", "carpet", "plaster", "wallpaper", "fabric")
T = WALL_THICKNESS


@functools.cache
def _layout(
    seed: int, min_rooms: int = 4, max_rooms: int = 7, density: float = 1.0
) -> ApartmentLayout:
    cfg = ApartmentConfig(min_rooms=min_rooms, max_rooms=max_rooms, furniture_density=density)
    return generate_apartment(cfg, np.random.default_rng(seed))


def _furniture(layout: ApartmentLayout) -> list[ObjectSpec]:
    """Floor-standing furniture (ceiling fixtures have their origin on the ceiling)."""
    return [o for o in layout.objects if o.semantic_class not in STRUCTURE and o.pos[2] == 0.0]


def _scene(layout: ApartmentLayout, seed: int) -> SceneSpec:
    robot = make_robot(start=(0.0, 0.0, 1.0))
    return layout.to_scene(seed, (robot,))


def _world_boxes(objects: list[ObjectSpec]) -> np.ndarray:
    """(n, 2, 3) world min/max corners of axis-aligned box geoms of unrotated objects."""
    out = []
    for o in objects:
        assert o.quat == (1.0, 0.0, 0.0, 0.0)
        for g in o.geoms:
            assert g.type == "box"
            c = np.asarray(o.pos) + np.asarray(g.pos)
            out.append((c - np.asarray(g.size), c + np.asarray(g.size)))
    return np.asarray(out)


# --------------------------------------------------------------------------- floor plan


@pytest.mark.parametrize(("min_rooms", "max_rooms"), [(3, 3), (4, 7), (8, 8)])
def test_room_count_in_range_and_rooms_tile_the_footprint(min_rooms: int, max_rooms: int) -> None:
    for seed in SEEDS:
        layout = _layout(seed, min_rooms, max_rooms)
        assert min_rooms <= len(layout.rooms) <= max_rooms
        assert [r.room_id for r in layout.rooms] == list(range(len(layout.rooms)))
        rects = [room_rect(r) for r in layout.rooms]
        polys = [box(r.x0, r.y0, r.x1, r.y1) for r in rects]
        for a, b in itertools.combinations(polys, 2):
            assert a.intersection(b).area < 1e-9
        (x0, y0, _), (x1, y1, _) = layout.bounds_min, layout.bounds_max
        footprint = box(x0 + T / 2, y0 + T / 2, x1 - T / 2, y1 - T / 2)
        assert abs(sum(p.area for p in polys) - footprint.area) < 1e-6
        assert footprint.symmetric_difference(unary_union(polys)).area < 1e-6
        assert 40.0 - 1e-6 <= footprint.area <= 140.0 + 1e-6
        for room, r in zip(layout.rooms, rects, strict=True):
            min_side = 1.4 if room.type == "corridor" else 2.2
            assert min(r.width, r.depth) >= min_side


def test_room_types_are_plausible() -> None:
    for seed in SEEDS:
        for n in (3, 5, 8):
            types = [r.type for r in _layout(seed, n, n).rooms]
            assert types.count("living_room") == 1
            assert types.count("bathroom") >= 1
            assert "bedroom" in types
            if n >= 4:
                assert "kitchen" in types
            names = [r.name for r in _layout(seed, n, n).rooms]
            assert len(set(names)) == len(names)


def test_every_room_is_reachable_through_doors() -> None:
    for seed, (lo, hi) in itertools.product(SEEDS, [(3, 3), (4, 7), (8, 8)]):
        layout = _layout(seed, lo, hi)
        seen, stack = {0}, [0]
        while stack:
            i = stack.pop()
            for d in layout.doors:
                if i in d.rooms:
                    j = d.rooms[1] if d.rooms[0] == i else d.rooms[0]
                    if j not in seen:
                        seen.add(j)
                        stack.append(j)
        assert seen == {r.room_id for r in layout.rooms}


def test_each_door_lies_on_the_wall_its_two_rooms_share() -> None:
    for seed in SEEDS:
        layout = _layout(seed)
        rects = {r.room_id: room_rect(r) for r in layout.rooms}
        assert [d.door_id for d in layout.doors] == list(range(len(layout.doors)))
        assert len({d.rooms for d in layout.doors}) == len(layout.doors)
        for d in layout.doors:
            a, b = d.rooms
            assert a < b
            wall = shared_wall(rects[a], rects[b])
            assert wall is not None and wall.axis == d.axis
            along, across = (d.center[0], d.center[1]) if d.axis == "x" else d.center[::-1]
            assert abs(across - wall.coord) < 1e-9
            assert wall.lo + 0.6 <= along <= wall.hi - 0.6
            assert wall.lo + T / 2 < along - d.width / 2 and along + d.width / 2 < wall.hi - T / 2
            assert 0.9 <= d.width <= 1.0 and abs(d.height - 2.05) < 1e-9


# --------------------------------------------------------------------------- structure


def test_floors_ceilings_one_per_room_at_the_right_height() -> None:
    layout = _layout(0)
    for cls, z_face, sign in (("floor", 0.0, 1), ("ceiling", layout.wall_height, -1)):
        objs = [o for o in layout.objects if o.semantic_class == cls]
        assert sorted(o.room_id for o in objs) == [r.room_id for r in layout.rooms]
        for o in objs:
            (g,) = o.geoms
            face = o.pos[2] + g.pos[2] + sign * g.size[2]
            assert abs(face - z_face) < 1e-9
            r = room_rect(layout.rooms[o.room_id])
            assert abs(2 * g.size[0] - r.width) < 1e-6 and abs(2 * g.size[1] - r.depth) < 1e-6


def test_walls_do_not_overlap_and_close_every_room_except_at_doors() -> None:
    for seed in SEEDS:
        layout = _layout(seed)
        walls = [o for o in layout.objects if o.semantic_class == "wall"]
        boxes = _world_boxes(walls)
        lo = np.maximum(boxes[:, None, 0], boxes[None, :, 0])
        hi = np.minimum(boxes[:, None, 1], boxes[None, :, 1])
        vol = np.prod(np.clip(hi - lo, 0.0, None), axis=-1)
        np.fill_diagonal(vol, 0.0)
        assert vol.max() < 1e-9, "wall geoms overlap"
        assert (
            boxes[:, 0, 2].min() >= -1e-9 and abs(boxes[:, 1, 2].max() - layout.wall_height) < 1e-9
        )

        def covered(x: float, y: float, z: float, boxes: np.ndarray = boxes) -> int:
            p = np.array([x, y, z])
            return int(np.sum(np.all((boxes[:, 0] < p) & (p < boxes[:, 1]), axis=1)))

        for room in layout.rooms:
            r = room_rect(room)
            edges = [("x", r.y0, r.x0, r.x1), ("x", r.y1, r.x0, r.x1)]
            edges += [("y", r.x0, r.y0, r.y1), ("y", r.x1, r.y0, r.y1)]
            for axis, c, s0, s1 in edges:
                for s in np.arange(s0 + 0.013, s1, 0.05):
                    for off in (-0.02, 0.02):  # inside the wall, on both of its slabs
                        x, y = (s, c + off) if axis == "x" else (c + off, s)
                        in_door = any(
                            d.axis == axis
                            and abs((d.center[1] if axis == "x" else d.center[0]) - c) < 1e-9
                            and abs(s - (d.center[0] if axis == "x" else d.center[1])) < d.width / 2
                            for d in layout.doors
                        )
                        assert covered(x, y, 1.0) == (0 if in_door else 1), (room.name, x, y)
                        assert covered(x, y, layout.wall_height - 0.05) == 1
            # the junction squares at the room's corners are filled exactly once
            for cx, cy in ((r.x0, r.y0), (r.x1, r.y0), (r.x1, r.y1), (r.x0, r.y1)):
                for dx, dy in itertools.product((-0.03, 0.03), repeat=2):
                    assert covered(cx + dx, cy + dy, 1.0) == 1


def test_wall_junctions_are_filled_once_even_where_four_rooms_meet() -> None:
    rects = [
        Rect(0, 0, 3, 3),
        Rect(3, 0, 6, 3),
        Rect(0, 3, 3, 6),
        Rect(3, 3, 6, 5),
        Rect(3, 5, 6, 6),
    ]
    rooms = tuple(
        RoomSpec(
            room_id=i,
            type="office",
            name=f"r{i}",
            polygon=((r.x0, r.y0), (r.x1, r.y0), (r.x1, r.y1), (r.x0, r.y1)),
        )
        for i, r in enumerate(rects)
    )
    pieces = wall_pieces(FloorPlan(footprint=Rect(0, 0, 6, 6), rooms=rooms, doors=()))
    shared = [p for p in pieces if None not in (p.neg_room, p.pos_room)]
    assert len(shared) == 6 and len(pieces) == 6 + 9
    boxes = []
    for p in pieces:
        lo, hi = [p.start, p.coord - T / 2], [p.end, p.coord + T / 2]
        if p.axis == "y":
            lo, hi = lo[::-1], hi[::-1]
        boxes.append((lo, hi))
    b = np.asarray(boxes)
    overlap = np.prod(
        np.clip(
            np.minimum(b[:, None, 1], b[None, :, 1]) - np.maximum(b[:, None, 0], b[None, :, 0]),
            0,
            None,
        ),
        axis=-1,
    )
    np.fill_diagonal(overlap, 0.0)
    assert overlap.max() < 1e-12
    for x, y in [
        (0, 0),
        (3, 0),
        (6, 0),
        (0, 3),
        (3, 3),
        (6, 3),
        (3, 5),
        (6, 5),
        (0, 6),
        (3, 6),
        (6, 6),
    ]:
        for dx, dy in itertools.product((-0.03, 0.03), repeat=2):
            p = np.array([x + dx, y + dy])
            inside = np.all((b[:, 0] < p) & (p < b[:, 1]), axis=1).sum()
            outside_footprint = not (0 - T / 2 < p[0] < 6 + T / 2 and 0 - T / 2 < p[1] < 6 + T / 2)
            assert inside == (0 if outside_footprint else 1), (x, y, dx, dy)


def test_door_frames_line_the_openings() -> None:
    layout = _layout(1)
    frames = [o for o in layout.objects if o.semantic_class == "door_frame"]
    assert len(frames) == len(layout.doors)
    for f, d in zip(frames, layout.doors, strict=True):
        assert f.pos[:2] == pytest.approx(d.center)
        assert len(f.geoms) == 3


# --------------------------------------------------------------------------- furniture


def test_furniture_stays_in_its_room_clear_of_doors_and_other_furniture() -> None:
    for seed, (lo, hi) in itertools.product(SEEDS, [(4, 7), (8, 8)]):
        layout = _layout(seed, lo, hi)
        furniture = _furniture(layout)
        assert len(furniture) >= 2 * len(layout.rooms)
        keepouts = []
        for d in layout.doors:
            cx, cy = d.center
            w = d.width / 2
            k = (
                box(cx - w, cy - 1.0, cx + w, cy + 1.0)
                if d.axis == "x"
                else box(cx - 1.0, cy - w, cx + 1.0, cy + w)
            )
            keepouts.append(k)
        feet = {o.instance_id: object_footprint(o) for o in furniture}
        for o in furniture:
            r = room_rect(layout.rooms[o.room_id]).shrink(T / 2)
            assert box(r.x0, r.y0, r.x1, r.y1).buffer(1e-6).contains(feet[o.instance_id]), o.name
            for k in keepouts:
                assert feet[o.instance_id].intersection(k).area < 1e-9, o.name
        for a, b in itertools.combinations(furniture, 2):
            if (a.semantic_class == "rug") != (b.semantic_class == "rug"):
                continue  # rugs lie under other furniture
            assert feet[a.instance_id].intersection(feet[b.instance_id]).area < 1e-9, (
                a.name,
                b.name,
            )


def test_room_centres_stay_free_for_flying() -> None:
    for seed in SEEDS:
        layout = _layout(seed)
        for room in layout.rooms:
            r = room_rect(room).shrink(T / 2)
            cx, cy = r.center
            if room.type == "corridor":  # a centre line along the corridor, at any height
                if r.width >= r.depth:
                    zone, min_top = box(r.x0, cy - 0.01, r.x1, cy + 0.01), 0.02
                else:
                    zone, min_top = box(cx - 0.01, r.y0, cx + 0.01, r.y1), 0.02
            else:  # a central square, above knee height
                half = min(0.6, 0.2 * min(r.width, r.depth))
                zone, min_top = box(cx - half, cy - half, cx + half, cy + half), 0.8
            for o in _furniture(layout):
                if o.room_id != room.room_id:
                    continue
                for g in o.geoms:
                    if geoms_bounds([g])[1][2] <= min_top:
                        continue
                    part = object_footprint(o.model_copy(update={"geoms": (g,)}))
                    assert part.intersection(zone).area < 1e-9, (room.name, o.name)


def test_furniture_is_upright_on_the_floor_and_under_the_ceiling() -> None:
    layout = _layout(2)
    for o in _furniture(layout):
        w, x, y, z = o.quat
        assert x == 0.0 and y == 0.0 and abs(w * w + z * z - 1.0) < 1e-9
        yaw = 2 * np.arctan2(z, w)
        assert abs(yaw / (np.pi / 2) - round(yaw / (np.pi / 2))) < 1e-9
        tops = [g.pos[2] + max(g.size) for g in o.geoms]
        bottoms = [g.pos[2] - g.size[-1] for g in o.geoms if g.type == "box"]
        assert max(tops) < layout.wall_height
        assert min(bottoms, default=0.0) >= -1e-9


def test_rooms_get_their_typical_furniture() -> None:
    wanted = {
        "bedroom": "bed",
        "bathroom": "toilet",
        "living_room": "sofa",
        "kitchen": "stove",
        "office": "desk",
    }
    hits: dict[str, list[bool]] = {t: [] for t in wanted}
    for seed in range(8):
        layout = _layout(seed)
        for room in layout.rooms:
            if room.type in wanted:
                classes = {
                    o.semantic_class for o in _furniture(layout) if o.room_id == room.room_id
                }
                hits[room.type].append(wanted[room.type] in classes)
    for t, h in hits.items():
        assert h and np.mean(h) >= 0.8, (t, h)


def test_furniture_density_scales_the_amount_of_furniture() -> None:
    empty = _layout(0, density=0.0)
    assert _furniture(empty) == []
    sparse = sum(len(_furniture(_layout(s, density=0.5))) for s in SEEDS)
    full = sum(len(_furniture(_layout(s, density=1.0))) for s in SEEDS)
    dense = sum(len(_furniture(_layout(s, density=2.0))) for s in SEEDS)
    assert sparse < full < dense


# --------------------------------------------------------------------------- ids, names, data


def test_instance_ids_names_and_classes() -> None:
    for seed in SEEDS:
        layout = _layout(seed)
        ids = [o.instance_id for o in layout.objects]
        assert ids == list(range(1, len(ids) + 1))
        names = [o.name for o in layout.objects]
        assert len(set(names)) == len(names)
        assert {o.semantic_class for o in layout.objects} <= set(SEMANTIC_CLASSES[1:])
        room_ids = {r.room_id for r in layout.rooms}
        assert all(o.room_id is None or o.room_id in room_ids for o in layout.objects)


def test_materials_textures_and_scales_are_consistent() -> None:
    layout = _layout(3)
    tex_names = [t.name for t in layout.textures]
    mat_names = [m.name for m in layout.materials]
    assert len(set(tex_names)) == len(tex_names) and len(set(mat_names)) == len(mat_names)
    assert {g.material for o in layout.objects for g in o.geoms} <= set(mat_names)
    assert {m.texture for m in layout.materials if m.texture} == set(tex_names)
    assert all(t.size == ApartmentConfig().texture_size for t in layout.textures)
    for m in layout.materials:
        assert 0.0 <= m.reflectance <= 0.3
        if m.texture:
            assert m.texuniform
            # one texture tile spans 0.1–2 m, so its ~5–25 px features are ~1–5 cm
            assert 0.1 <= 1.0 / m.texrepeat[0] <= 2.0
    floors = {o.room_id: o.geoms[0].material for o in layout.objects if o.semantic_class == "floor"}
    kinds = {t.name: t.kind for t in layout.textures}
    mats = {m.name: m for m in layout.materials}
    for room in layout.rooms:
        kind = kinds[mats[floors[room.room_id]].texture]
        assert kind in ("wood", "tiles", "carpet")
        if room.type == "bathroom":
            assert kind == "tiles"


def test_same_seed_same_apartment_different_seed_different_apartment() -> None:
    cfg = ApartmentConfig(min_rooms=4, max_rooms=7)
    a = generate_apartment(cfg, np.random.default_rng(11))
    np_state, py_state = np.random.get_state(), random.getstate()
    b = generate_apartment(cfg, np.random.default_rng(11))
    assert a == b
    assert _scene(a, 11).to_json() == _scene(b, 11).to_json()
    assert SceneSpec.from_json(_scene(a, 11).to_json()) == _scene(a, 11)
    c = generate_apartment(cfg, np.random.default_rng(12))
    assert a != c and a.rooms != c.rooms
    # no global random state is consumed or touched
    assert random.getstate() == py_state
    after = np.random.get_state()
    assert after[0] == np_state[0] and np.array_equal(after[1], np_state[1])


def test_lights_are_bounded_below_the_ceiling_with_at_most_one_shadow() -> None:
    for seed in SEEDS:
        layout = _layout(seed)
        cfg = ApartmentConfig()
        assert min(cfg.min_lights, 8) <= len(layout.lights) <= min(cfg.max_lights, 8)
        assert sum(light.castshadow for light in layout.lights) <= 1
        names = [light.name for light in layout.lights]
        assert len(set(names)) == len(names)
        for light in layout.lights:
            assert not light.directional and light.dir == (0.0, 0.0, -1.0)
            assert all(0.3 <= c <= 0.8 for c in light.diffuse)
            assert 0.0 < light.cutoff_deg <= 90.0
            x, y, z = light.pos
            assert layout.wall_height - 0.3 < z < layout.wall_height
            assert any(
                room_rect(r).x0 < x < room_rect(r).x1 and room_rect(r).y0 < y < room_rect(r).y1
                for r in layout.rooms
            )
    many = generate_apartment(
        ApartmentConfig(min_lights=10, max_lights=20), np.random.default_rng(0)
    )
    assert len(many.lights) == 8
    assert sum(light.castshadow for light in many.lights) == 1


# --------------------------------------------------------------------------- textures


@pytest.mark.parametrize("kind", KINDS)
def test_texture_is_deterministic_with_the_right_shape(kind: str) -> None:
    for size in (64, 100, 256):
        spec = TextureSpec(
            name="t", kind=kind, seed=5, size=size, color_a=(0.2, 0.3, 0.4), color_b=(0.8, 0.7, 0.5)
        )
        img = make_texture(spec)
        assert img.shape == (size, size, 3) and img.dtype == np.uint8
        assert np.array_equal(img, make_texture(spec.model_copy()))
        assert not np.array_equal(img, make_texture(spec.model_copy(update={"seed": 6})))


def _seam_ratio(img: np.ndarray) -> float:
    """Step across the wrap-around edge ÷ typical step inside, after a light wrap-around blur."""
    p = 8
    padded = np.pad(img.astype(np.float32), ((p, p), (p, p), (0, 0)), mode="wrap")
    blurred = cv2.GaussianBlur(padded, (0, 0), 2.0)[p:-p, p:-p]
    ratios = []
    for axis in (0, 1):
        a = np.moveaxis(blurred, axis, 0)
        inner = np.abs(np.diff(a, axis=0)).mean(axis=(1, 2))
        ratios.append(np.abs(a[0] - a[-1]).mean() / np.percentile(inner, 90))
    return float(max(ratios))


@pytest.mark.parametrize("kind", KINDS)
def test_texture_tiles_seamlessly(kind: str) -> None:
    for seed in range(4):
        spec = TextureSpec(
            name="t", kind=kind, seed=seed, color_a=(0.3, 0.3, 0.3), color_b=(0.8, 0.7, 0.6)
        )
        assert _seam_ratio(make_texture(spec)) < 2.5
    plaster = TextureSpec(name="t", kind="plaster", seed=1, color_a=(0.3,) * 3, color_b=(0.8,) * 3)
    img = make_texture(plaster)
    assert _seam_ratio(img) < 1.3
    assert _seam_ratio(img[:150, :150]) > 1.3  # a crop does not tile: the check can tell


def test_every_apartment_texture_is_rich_in_orb_features() -> None:
    orb = cv2.ORB_create()
    layout = _layout(0)
    specs = list(layout.textures)
    pale = TextureSpec(name="pale", kind="plaster", seed=3, color_a=(0.93,) * 3, color_b=(0.9,) * 3)
    specs.append(pale)
    assert len({s.kind for s in specs}) >= 4
    for spec in specs:
        img = make_texture(spec.model_copy(update={"size": 256}))
        keypoints = orb.detect(cv2.cvtColor(img, cv2.COLOR_RGB2GRAY), None)
        assert len(keypoints) >= 100, (spec.name, spec.kind, len(keypoints))


@pytest.mark.parametrize("kind", KINDS)
def test_each_texture_kind_is_rich_in_orb_features(kind: str) -> None:
    orb = cv2.ORB_create()
    spec = TextureSpec(
        name="t", kind=kind, seed=9, color_a=(0.55, 0.5, 0.45), color_b=(0.6, 0.55, 0.5)
    )
    img = make_texture(spec)
    assert len(orb.detect(cv2.cvtColor(img, cv2.COLOR_RGB2GRAY), None)) >= 100


def test_documented_vocabulary_matches_code():
    from pathlib import Path

    from twinsim.scene.vocabulary import SEMANTIC_CLASSES

    doc = (Path(__file__).parent.parent / "docs" / "classes.md").read_text()
    rows = [
        line.split("|")[1:3] for line in doc.splitlines() if line.startswith("| ") and "`" in line
    ]
    assert [(int(i), c.strip().strip("`")) for i, c in rows] == list(enumerate(SEMANTIC_CLASSES))
    assert len(SEMANTIC_CLASSES) <= 256  # semantic images are uint8
