"""The region and place layers of a scene graph in a world with a road network (a town).

A town's free space is too large for the apartment's clearance grid (a 5 cm grid of a square
kilometre), and its structure is already data (`SceneSpec.roads`): the regions (the room
layer) are its blocks, its junctions and the road stretches between them (each road's driving
lanes, buffered to their width, less the junctions); regions are linked where a road stretch
meets a junction, where a block borders a road stretch, and between blocks a crosswalk joins.
Places are the traversable network: points every `spacing_m` along every lane (connectors
included, so junctions join their roads as lane successors do), along the sidewalks and over
the crosswalks, each with its half width as clearance; lane places are joined along the lane
and to their successors, sidewalk places along the ring and to the crosswalks at their ends
(a crosswalk end with no sidewalk near, at the town's edge, stays unjoined).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import shapely
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from scipy.spatial import cKDTree

from twinsim.dsg.places import Places
from twinsim.dsg.rooms import RegionLink, RoomRegion
from twinsim.model.roads import RoadNetworkSpec

ROADS = "roads"  # the graph's `rooms_from` for a town
BLOCK, JUNCTION, ROAD = "block", "junction", "road"
PLACE_SPACING_M = 5.0  # default place spacing along lanes and sidewalks
_SNAP_M = 0.3  # lane ends nearer than this are one place (a lane and its successor)
_TOUCH_M = 1.0  # regions this close are neighbours


@dataclass(frozen=True)
class TownLayout:
    """A town's regions, their links and its places."""

    rooms: tuple[RoomRegion, ...]
    links: tuple[RegionLink, ...]
    places: Places


def town_layout(roads: RoadNetworkSpec, spacing_m: float) -> TownLayout:
    """Regions, links and places of a road network, places every `spacing_m` metres."""
    regions = _regions(roads)
    polys = [r.polygon for r in regions]
    links = _links(roads, regions, polys)
    places = _places(roads, polys, spacing_m)
    return TownLayout(tuple(regions), tuple(links), places)


def _region(rid: int, name: str, kind: str, poly: shapely.Polygon) -> RoomRegion:
    ring = lambda coords: tuple((float(x), float(y)) for x, y in list(coords)[:-1])  # noqa: E731
    return RoomRegion(
        rid, name, kind, ring(poly.exterior.coords), tuple(ring(h.coords) for h in poly.interiors)
    )


def _regions(roads: RoadNetworkSpec) -> list[RoomRegion]:
    """Blocks, then junctions, then road stretches (one per piece a road keeps outside the
    junctions), numbered in that order."""
    regions = [
        _region(i, f"block_{b.block_id}", BLOCK, shapely.Polygon(b.polygon))
        for i, b in enumerate(roads.blocks)
    ]
    junctions = [shapely.Polygon(j.polygon) for j in roads.intersections]
    for j, poly in zip(roads.intersections, junctions, strict=True):
        regions.append(_region(len(regions), f"junction_{j.intersection_id}", JUNCTION, poly))
    taken = shapely.union_all(junctions) if junctions else shapely.Polygon()
    by_road: dict[int, list] = {}
    for lane in roads.lanes:
        if lane.kind == "connector":
            continue
        line = shapely.LineString(np.asarray(lane.centerline, float)[:, :2])
        by_road.setdefault(lane.road_id, []).append(line.buffer(lane.width_m / 2, cap_style=2))
    for road_id, strips in sorted(by_road.items()):
        area = shapely.union_all(strips).difference(taken)
        pieces = sorted(
            (p for p in shapely.get_parts(area) if p.area > 1.0),
            key=lambda p: (round(p.centroid.x, 3), round(p.centroid.y, 3)),
        )
        for k, piece in enumerate(pieces):
            regions.append(_region(len(regions), f"road_{road_id}_{k}", ROAD, piece))
    return regions


def _links(
    roads: RoadNetworkSpec, regions: list[RoomRegion], polys: list[shapely.Polygon]
) -> list[RegionLink]:
    """Road stretch – junction and block – road stretch where they (nearly) touch; block –
    block where a crosswalk joins their sidewalks."""
    tree = shapely.STRtree(polys)
    kinds = [r.type for r in regions]
    found: dict[tuple[int, int], dict] = {}
    for i, poly in enumerate(polys):
        if kinds[i] != ROAD:
            continue
        for j in sorted(int(k) for k in tree.query(poly, "dwithin", _TOUCH_M)):
            if kinds[j] in (JUNCTION, BLOCK):
                found[(min(i, j), max(i, j))] = {
                    "via": "junction" if kinds[j] == JUNCTION else "border"
                }
    block_region = {b.block_id: i for i, b in enumerate(roads.blocks)}
    sidewalk_block = {s.sidewalk_id: s.block_id for s in roads.sidewalks}
    for cross in roads.crosswalks:
        if cross.sidewalks is None:
            continue
        ends = [block_region.get(sidewalk_block.get(s)) for s in cross.sidewalks]
        if None in ends or ends[0] == ends[1]:
            continue
        key = (min(ends), max(ends))
        found.setdefault(key, {"via": "crosswalk", "crosswalks": []})
        found[key].setdefault("crosswalks", []).append(cross.crosswalk_id)
    return [
        RegionLink(a, b, float(polys[a].centroid.distance(polys[b].centroid)), meta)
        for (a, b), meta in sorted(found.items())
    ]


def _samples(points: np.ndarray, spacing_m: float) -> np.ndarray:
    """Points every ~`spacing_m` along a polyline (its ends included)."""
    seg = np.linalg.norm(np.diff(points, axis=0), axis=1)
    cum = np.concatenate([[0.0], np.cumsum(seg)])
    n = max(1, int(np.ceil(cum[-1] / spacing_m)))
    s = np.linspace(0.0, cum[-1], n + 1)
    return np.stack([np.interp(s, cum, points[:, k]) for k in range(2)], axis=1)


def _places(roads: RoadNetworkSpec, polys: list[shapely.Polygon], spacing_m: float) -> Places:
    """Lane, sidewalk and crosswalk places; lane ends within `_SNAP_M` merged into one."""
    xy, half, network, edges = [], [], [], []
    lane_ends: dict[int, tuple[int, int]] = {}

    def chain(points: np.ndarray, width: float, kind: str, closed: bool = False) -> tuple[int, int]:
        """Places at `points` joined in order (a ring: its repeated last point dropped, its
        ends joined); the first and last place."""
        if closed:
            points = points[:-1]
        first = len(xy)
        xy.extend(points)
        half.extend([width / 2] * len(points))
        network.extend([kind] * len(points))
        edges.extend((first + k, first + k + 1) for k in range(len(points) - 1))
        if closed and len(points) > 2:
            edges.append((len(xy) - 1, first))
        return first, len(xy) - 1

    for lane in roads.lanes:
        pts = _samples(np.asarray(lane.centerline, float)[:, :2], spacing_m)
        lane_ends[lane.lane_id] = chain(pts, lane.width_m, "lane")
    for lane in roads.lanes:
        for nxt in lane.successors:
            edges.append((lane_ends[lane.lane_id][1], lane_ends[nxt][0]))
    walk_first = len(xy)
    for walk in roads.sidewalks:
        pts = np.asarray(walk.centerline, float)
        if walk.closed:
            pts = np.vstack([pts, pts[:1]])
        chain(_samples(pts, spacing_m), walk.width_m, "sidewalk", walk.closed)
    walk_tree = cKDTree(np.asarray(xy[walk_first:])) if len(xy) > walk_first else None
    widest = max((w.width_m for w in roads.sidewalks), default=0.0)
    for cross in roads.crosswalks:
        pts = _samples(np.array([cross.start, cross.end], float), spacing_m)
        a, b = chain(pts, cross.width_m, "crosswalk")
        if walk_tree is None:
            continue
        for end, at in ((a, pts[0]), (b, pts[-1])):
            gap, nearest = walk_tree.query(at)
            if gap <= spacing_m / 2 + widest:  # an end at the town's edge meets no sidewalk
                edges.append((end, walk_first + int(nearest)))
    xy, half = np.asarray(xy, float).reshape(-1, 2), np.asarray(half, float)
    # lane ends that coincide (a lane and its successor) become one place
    pairs = cKDTree(xy).query_pairs(_SNAP_M, output_type="ndarray")
    lanes = np.asarray(network) == "lane"
    pairs = pairs[lanes[pairs[:, 0]] & lanes[pairs[:, 1]]] if len(pairs) else pairs
    n = len(xy)
    graph = coo_matrix((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])), shape=(n, n))
    _, label = connected_components(graph, directed=False)
    _, first = np.unique(label, return_index=True)
    keep = np.sort(first)
    index = np.empty(label.max() + 1, int)
    index[label[keep]] = np.arange(len(keep))
    new = index[label]
    e = np.asarray(edges, int).reshape(-1, 2)
    e = np.sort(new[e], axis=1)
    e = np.unique(e[e[:, 0] != e[:, 1]], axis=0)
    xy, half = xy[keep], half[keep]
    room = _region_of(polys, xy)
    clear = np.minimum(half[e[:, 0]], half[e[:, 1]]) if len(e) else np.zeros(0)
    return Places(xy, half, room, e, clear, tuple(np.asarray(network)[keep].tolist()))


def _region_of(polys: list[shapely.Polygon], xy: np.ndarray) -> np.ndarray:
    """The first region (lowest id) covering each point, −1 where none does."""
    tree = shapely.STRtree(polys)
    points, hits = tree.query(shapely.points(xy), "covered_by")
    room = np.full(len(xy), len(polys), int)
    np.minimum.at(room, points, hits)
    room[room == len(polys)] = -1
    return room
