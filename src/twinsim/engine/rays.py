"""Batched ray casting into a world's current geometry: Embree for fixed boxes, MuJoCo for the rest.

`mj_multiRay` (MuJoCo 4.0) tests every ray against every body's bounding box, ~15 ns per body
and ray even when all its geoms are excluded by group, then against the geoms it may meet; the
default apartment's static world has 87 bodies. So a world is cast in parts:
- the static world's boxes (room shells, doors, box-only furniture; textured boxes are stored
  as 8-vertex meshes for their UVs, and are the same boxes) go to one Embree BVH of triangles
  built once (`twinsim.engine.box_bvh`), every ray, each hit's distance and normal recomputed in
  float64 on its face's plane; a hit float32 may have got wrong (at a face's border, on a plane
  two boxes share, on a back face) is unsure, and that ray goes to `mj_multiRay` on the whole
  static world (rare);
- the hills' triangles and every mesh object's (`ObjectSpec.mesh`) go to one Embree BVH of
  triangles (`twinsim.engine.triangle_bvh`), each hit refined in float64 on its triangle's
  plane and labelled with its visual geom; a ray through a shared edge is unsure, and recast
  by `mj_multiRay` with the boxes' unsure rays;
- each static object with a curved geom (capsule, cylinder, ellipsoid, sphere) is kept exact in
  its own small MuJoCo model, and so is each person, flying object and other robot; such a
  model gets only the rays that pass within its bounding sphere nearer than the static boxes'
  hit (a conservative numpy test, after ruling out spheres outside the bundle's cone).
Robot geoms are in group `ROBOT_GEOM_GROUP`, which no ray sees; a caster moves a robot's geoms
to a seen group only where it shows them: each other robot in its own moving model (in `whole`,
in the world model), the casting robot's own links nowhere.
The nearest hit wins (on a tie the lower world geom id, as `mj_multiRay` picks). Geom ids are
mapped back to the world model's by name, so the points are those of one `mj_multiRay` on the
whole world but for rays that graze an edge, where float32 and float64 may see different faces
at the same distance (a test bounds them). `split` casts the static world with `mj_multiRay`
instead of Embree (the former caster), `whole` casts every ray into the world model.

`mj_multiRay` borrows scratch memory from the `MjData` it is given, so each worker thread casts
into its own `MjData` (static models' poses set once, actors' and robots' copied from the
world's before each cast). It releases the GIL, so with `workers` > 1 the MuJoCo casts of one
bundle run on threads; for a LiDAR sector (~2 900 rays, many small casts) the threads' overhead
outweighs the overlap (measured), so `LidarScanner` uses one. Embree runs on the calling
thread: a bundle split over two threads cast slower through embreex (measured). Rays go to
copies of the models in which the textured boxes are analytic boxes again (~1.4× faster).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import mujoco
import numpy as np

from twinsim.engine.box_bvh import BoxBVH
from twinsim.engine.build import compile_model
from twinsim.engine.mesh_assets import visual_geom_name
from twinsim.engine.ray_prefilter import near_spheres
from twinsim.engine.terrain import CONTACT_GEOM_GROUP, terrain_geom_names
from twinsim.engine.triangle_bvh import TriangleBVH
from twinsim.model.base import ROBOT_GEOM_GROUP
from twinsim.scene.assets.posed import world_triangles
from twinsim.scene.terrain import terrain_mesh

_LUMA = np.array([0.2126, 0.7152, 0.0722])
_BODY_POSE_FIELDS = ("xpos", "xmat", "xipos", "ximat")
_GEOM_POSE_FIELDS = ("geom_xpos", "geom_xmat")
_LIVE_FIELDS = ("geom_size", "geom_rbound", "geom_aabb")
_SHOWN_GROUP = 0  # the group a robot's geoms take where a caster shows them
CASTERS = ("embree", "split", "whole")


def _ray_model(model: mujoco.MjModel) -> mujoco.MjModel:
    """A copy of `model` whose box-shaped meshes are box primitives of the same extent."""
    proxy = copy.copy(model)
    for g in np.flatnonzero(model.geom_type == mujoco.mjtGeom.mjGEOM_MESH):
        mesh = model.geom_dataid[g]
        start, n = model.mesh_vertadr[mesh], model.mesh_vertnum[mesh]
        verts = model.mesh_vert[start : start + n]
        half = np.abs(verts).max(axis=0)
        at_corners = np.abs(np.abs(verts) - half).max() <= 1e-6 * max(1.0, float(half.max()))
        if at_corners and len(np.unique(np.sign(verts), axis=0)) == 8:
            proxy.geom_type[g] = mujoco.mjtGeom.mjGEOM_BOX
            proxy.geom_size[g] = half
    return proxy


def geom_albedo(model: mujoco.MjModel) -> np.ndarray:
    """(ngeom,) diffuse reflectance in [0, 1]: luminance of the material colour × mean texel."""
    rgb = model.geom_rgba[:, :3].copy()
    role = int(mujoco.mjtTextureRole.mjTEXROLE_RGB)
    for g in np.flatnonzero(model.geom_matid >= 0):
        mat = model.geom_matid[g]
        rgb[g] = model.mat_rgba[mat, :3]
        tex = model.mat_texid[mat, role]
        if tex >= 0:
            start = model.tex_adr[tex]
            nc = model.tex_nchannel[tex]
            size = model.tex_height[tex] * model.tex_width[tex] * nc
            texels = model.tex_data[start : start + size].reshape(-1, nc)[:, :3]
            rgb[g] = rgb[g] * texels.mean(axis=0) / 255.0
    return np.clip(rgb @ _LUMA, 0.0, 1.0)


@dataclass(frozen=True)
class WorldSplit:
    """A world's geometry as models whose geoms and bodies match the world's by name."""

    # robots (hidden there) are in every model
    static: mujoco.MjModel  # the world without people and flying objects
    actors: tuple[mujoco.MjModel, ...]  # each person and flying object alone
    groups: tuple[np.ndarray, ...]  # world geom ids of each actor
    curved: tuple[mujoco.MjModel, ...]  # each static object with a non-box geom alone
    curved_groups: tuple[np.ndarray, ...]  # world geom ids of each such object
    robots: mujoco.MjModel  # the robots alone: each robot a caster shows is cast in a copy
    #: the hills' (`scene.terrain`) and the mesh objects' triangles, if any
    triangles: TriangleBVH | None = None
    triangle_geoms: np.ndarray | None = None  # world geom id of each triangle's visual geom


def split_world(world) -> WorldSplit:
    """Compile the static part of a `World`, each of its actors, each curved object and the
    robots apart."""
    scene, render = world.scene, world.render_config
    hz = round(1.0 / world.model.opt.timestep)
    # rays see no texels: the static model's textures are tiny (its boxes' UV meshes, whose
    # vertices do not depend on them, are kept), the actors' models have none
    tiny = [t.model_copy(update={"size": 8}) for t in scene.textures]
    static = scene.model_copy(update={"people": (), "flying_objects": (), "textures": tiny})
    plain = [m.model_copy(update={"texture": None}) for m in scene.materials]
    bare = scene.model_copy(
        update={
            "objects": (),
            "people": (),
            "flying_objects": (),
            "textures": (),
            "materials": plain,
        }
    )
    dynamic = world.maps.dynamic_geoms
    actors = [
        (
            bare.model_copy(update={"people": (p,)}),
            np.concatenate([dynamic[p.body_instance_id], dynamic[p.clothing_instance_id]]),
        )
        for p in scene.people
    ]
    actors += [
        (bare.model_copy(update={"flying_objects": (f,)}), dynamic[f.instance_id])
        for f in scene.flying_objects
    ]
    # a curved object keeps its textured boxes' meshes (its own materials, tiny textures):
    # their boxes are then the world's own
    curved = []
    for obj in scene.objects:
        if all(g.type == "box" for g in obj.geoms):
            continue
        mats = [m for m in scene.materials if m.name in {g.material for g in obj.geoms}]
        texs = [t for t in tiny if t.name in {m.texture for m in mats}]
        alone = static.model_copy(update={"objects": (obj,), "materials": mats, "textures": texs})
        body = world.maps.instance_body[obj.instance_id]
        start, count = world.model.body_geomadr[body], world.model.body_geomnum[body]
        curved.append((alone, np.arange(start, start + count)))
    return WorldSplit(
        compile_model(static, render, hz),
        tuple(compile_model(a, render, hz) for a, _ in actors),
        tuple(geoms for _, geoms in actors),
        tuple(compile_model(c, render, hz) for c, _ in curved),
        tuple(geoms for _, geoms in curved),
        compile_model(bare, render, hz),
        *_static_triangles(world),
    )


def _static_triangles(world) -> tuple[TriangleBVH | None, np.ndarray | None]:
    """One BVH of the hills' triangles and the mesh objects' (world frame), and the world
    geom id of each triangle; (None, None) in a world with neither."""
    scene, model = world.scene, world.model
    surfaces = []  # (vertices, faces, geom id)
    if scene.terrain is not None:
        hills = terrain_mesh(scene.terrain)
        surfaces.append(
            (hills.verts, hills.faces, model.geom(terrain_geom_names(scene.terrain)[0]).id)
        )
    for obj in scene.objects:
        if obj.mesh is not None:
            vertices, faces = world_triangles(scene, obj)
            surfaces.append((vertices, faces, model.geom(visual_geom_name(obj)).id))
    if not surfaces:
        return None, None
    starts = np.cumsum([0] + [len(v) for v, _, _ in surfaces[:-1]])
    faces = np.concatenate([f + s for (_, f, _), s in zip(surfaces, starts, strict=True)])
    geoms = np.concatenate([np.full(len(f), g) for _, f, g in surfaces])
    return TriangleBVH(np.concatenate([v for v, _, _ in surfaces]), faces), geoms


class _Target:
    """One model rays are cast into, its geoms and bodies the world's of the same names, with
    one scratch `MjData` per worker: posed once if nothing in it moves, else by `sync`; of the
    `hidden` world geoms (robots') only the `shown` ones are seen."""

    def __init__(
        self,
        world: mujoco.MjModel,
        model: mujoco.MjModel,
        exclude_body: int,
        workers: int,
        moves: bool,
        hidden: np.ndarray,
        shown: np.ndarray,
    ) -> None:
        self.model = _ray_model(model)
        self.moves = moves
        self.geoms = _world_ids(world, model, mujoco.mjtObj.mjOBJ_GEOM, model.ngeom)
        self.bodies = _world_ids(world, model, mujoco.mjtObj.mjOBJ_BODY, model.nbody)
        self.model.geom_group[np.isin(self.geoms, hidden)] = ROBOT_GEOM_GROUP
        self.model.geom_group[np.isin(self.geoms, shown)] = _SHOWN_GROUP
        # geoms kept as they are follow the world model's sizes (flying objects are rescaled)
        self._live = np.flatnonzero(self.model.geom_type == world.geom_type[self.geoms])
        self._live_world = self.geoms[self._live]
        found = np.flatnonzero(self.bodies == exclude_body)
        self.exclude = int(found[0]) if len(found) else -1
        self.scratch = [mujoco.MjData(self.model) for _ in range(workers)]
        if not moves:
            for scratch in self.scratch:
                mujoco.mj_kinematics(self.model, scratch)

    def sync(self, world: mujoco.MjModel, data: mujoco.MjData) -> None:
        """Copy the world's current geom sizes and poses (what `mj_multiRay` reads)."""
        for field in _LIVE_FIELDS:
            getattr(self.model, field)[self._live] = getattr(world, field)[self._live_world]
        for scratch in self.scratch:
            for field in _BODY_POSE_FIELDS:
                getattr(scratch, field)[:] = getattr(data, field)[self.bodies]
            for field in _GEOM_POSE_FIELDS:
                getattr(scratch, field)[:] = getattr(data, field)[self.geoms]

    def cast(
        self, worker: int, pnt: np.ndarray, vec: np.ndarray, groups: np.ndarray, max_range: float
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Cast the flat (3 n,) `vec`: (geom id in this model or −1, distance or −1, flat
        normals). Little besides `mj_multiRay`, which releases the GIL, so threads overlap."""
        n = len(vec) // 3
        geom, dist, normal = np.empty(n, np.int32), np.empty(n), np.empty(3 * n)
        if n:
            mujoco.mj_multiRay(
                self.model, self.scratch[worker], pnt, vec, groups, 1, self.exclude,
                geom, dist, normal, n, float(max_range),
            )  # fmt: skip
        return geom, dist, normal

    def visible(self, groups: np.ndarray) -> np.ndarray:
        """(ngeom,) whether `mj_multiRay` may hit each geom: not on the excluded body, in an
        enabled group, not transparent (colour or material alpha 0)."""
        m = self.model
        alpha = np.where(m.geom_matid >= 0, m.mat_rgba[m.geom_matid, 3], m.geom_rgba[:, 3])
        return (m.geom_bodyid != self.exclude) & (groups[m.geom_group] > 0) & (alpha != 0)


def _static_boxes(
    static: _Target, elsewhere: np.ndarray, groups: np.ndarray
) -> tuple[BoxBVH, np.ndarray]:
    """An Embree BVH of the static model's visible boxes that are cast `elsewhere` (world geom
    ids: curved objects, the terrain), and their world geom ids; every other visible static
    geom must be cast elsewhere."""
    m, data = static.model, static.scratch[0]
    visible = static.visible(groups) & ~np.isin(static.geoms, elsewhere)
    boxes = np.flatnonzero(visible & (m.geom_type == mujoco.mjtGeom.mjGEOM_BOX))
    other = np.flatnonzero(visible & (m.geom_type != mujoco.mjtGeom.mjGEOM_BOX))
    if len(other):
        name = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_GEOM, int(other[0]))
        raise ValueError(f"static geom {name!r} is neither a box nor cast apart")
    bvh = BoxBVH(data.geom_xpos[boxes], data.geom_xmat[boxes], m.geom_size[boxes])
    return bvh, static.geoms[boxes]


def _world_ids(world: mujoco.MjModel, model: mujoco.MjModel, kind, count: int) -> np.ndarray:
    """World ids of `model`'s objects of one kind, matched by name (the world body by id 0)."""
    if model is world:
        return np.arange(count)
    names = [mujoco.mj_id2name(model, kind, i) or "" for i in range(count)]
    ids = np.array([mujoco.mj_name2id(world, kind, name) for name in names], dtype=int)
    if kind == mujoco.mjtObj.mjOBJ_BODY:
        ids[0] = 0
    missing = np.flatnonzero(ids < 0)
    if len(missing):
        raise ValueError(f"ray model object {int(missing[0])} ({kind.name}) is not in the world")
    return ids


class RayCaster:
    """Casts bundles of rays from one origin; the excluded body and the robots' geoms are
    unseen, but for the `others` robots'.

    Without a `WorldSplit` every ray goes to the world model (`whole`); with one, rays go to
    its parts (see above): the static boxes to Embree (`boxes=True`), or the whole static
    world to `mj_multiRay` (`boxes=False`, the former `split` caster); each robot of `others`
    is a moving part.
    """

    def __init__(
        self,
        model: mujoco.MjModel,
        exclude_body: int,
        workers: int = 1,
        split: WorldSplit | None = None,
        boxes: bool = True,
        own: np.ndarray | None = None,
        others: Sequence[np.ndarray] = (),
    ) -> None:
        """`own`: the world geom ids of the casting robot (never seen, all its links); `others`:
        those of each other robot (seen where they are at each cast)."""
        self._source = model
        n = self._workers = max(1, workers)
        self._groups = np.ones(mujoco.mjNGROUP, np.uint8)
        self._groups[ROBOT_GEOM_GROUP] = 0
        self._groups[CONTACT_GEOM_GROUP] = 0
        empty = np.empty(0, int)
        seen = np.concatenate([empty, *others]).astype(int)
        hidden = np.concatenate([seen, empty if own is None else np.asarray(own, int)])
        if split is None:
            self._static = _Target(model, model, exclude_body, n, True, hidden, seen)
        else:
            self._static = _Target(model, split.static, exclude_body, n, False, hidden, empty)
        # (model, world geom ids, moves, robot geoms shown) of each part
        parts: list[tuple[mujoco.MjModel, np.ndarray, bool, np.ndarray]] = []
        self._boxes: BoxBVH | None = None
        self._triangles: TriangleBVH | None = None
        if split is not None:
            parts += [(a, g, True, empty) for a, g in zip(split.actors, split.groups, strict=True)]
            parts += [(split.robots, np.asarray(g, int), True, g) for g in others]
        if split is not None and boxes:
            curved = zip(split.curved, split.curved_groups, strict=True)
            parts += [(c, g, False, empty) for c, g in curved]
            apart = np.concatenate([empty, *split.curved_groups])
            if split.triangles is not None:
                self._triangles, self._triangle_geoms = split.triangles, split.triangle_geoms
                apart = np.union1d(apart, split.triangle_geoms)
            self._boxes, self._box_geoms = _static_boxes(self._static, apart, self._groups)
        self._parts = [
            _Target(model, m, exclude_body, n, moves, hidden, shown) for m, _, moves, shown in parts
        ]
        groups = [g for _, g, _, _ in parts]
        self._part_geoms = np.concatenate([np.empty(0, int), *groups])
        sizes = [len(g) for g in groups]
        self._part_start = np.cumsum([0, *sizes[:-1]]).astype(int)
        self._part_of = np.repeat(np.arange(len(sizes)), sizes)
        self._pool = ThreadPoolExecutor(n) if n > 1 else None

    @property
    def box_geoms(self) -> np.ndarray:
        """World geom ids of the static boxes cast by Embree (none without it)."""
        return self._box_geoms if self._boxes is not None else np.empty(0, int)

    def _part_rays(
        self, data: mujoco.MjData, origin: np.ndarray, dirs: np.ndarray, reach
    ) -> list[np.ndarray]:
        """Per part, the indices of the rays that may meet it (one bounding sphere per part)
        nearer than `reach` (scalar or per ray)."""
        if not self._parts:
            return []
        g, starts = self._part_geoms, self._part_start
        centers, radii = data.geom_xpos[g], self._source.geom_rbound[g]
        radii = np.where(radii > 0.0, radii, np.inf)  # rbound 0: unbounded (a plane)
        mid = (np.minimum.reduceat(centers, starts) + np.maximum.reduceat(centers, starts)) / 2
        spread = np.linalg.norm(centers - mid[self._part_of], axis=1) + radii
        return near_spheres(origin, dirs, mid, np.maximum.reduceat(spread, starts), reach)

    def _map(self, work, count: int) -> list:
        """`work(w)` for each worker w < count, on the worker threads."""
        if self._pool is None or count == 1:
            return [work(w) for w in range(count)]
        return list(self._pool.map(work, range(count)))

    def _cast_boxes(
        self, pnt: np.ndarray, dirs: np.ndarray, max_range: float
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The static boxes' and the static triangles' (hills, meshes) sure hits (world geom id
        or −1, distance or −1, normal) and the rays whose hit is unsure, via Embree."""
        rays, box, t, box_normal, unsure = self._boxes.cast(pnt, dirs, max_range)
        n = len(dirs)
        geom, dist, normal = np.full(n, -1), np.full(n, -1.0), np.zeros((n, 3))
        geom[rays], dist[rays], normal[rays] = self._box_geoms[box], t, box_normal
        if self._triangles is not None:
            rays, tri, t, tri_normal, unsure_tri = self._triangles.cast(pnt, dirs, max_range)
            nearer = (geom[rays] < 0) | (t < dist[rays])
            take = rays[nearer]
            geom[take] = self._triangle_geoms[tri[nearer]]
            dist[take], normal[take] = t[nearer], tri_normal[nearer]
            unsure = np.union1d(unsure, unsure_tri)
        return geom, dist, normal, unsure

    def cast(
        self, data: mujoco.MjData, origin: np.ndarray, dirs: np.ndarray, max_range: float
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Cast unit `dirs` (n, 3, world) from `origin` at `data`'s state.

        Returns (geom id, -1 = miss; distance in metres, -1 = miss; outward unit normal (n, 3)).
        """
        dirs = np.ascontiguousarray(dirs, dtype=np.float64)
        pnt = np.asarray(origin, dtype=np.float64)
        n, nw = len(dirs), self._workers
        if self._boxes is None:
            # every ray into the static (or whole) model, split evenly between the workers
            geom, dist, normal = np.full(n, -1), np.full(n, -1.0), np.zeros((n, 3))
            first = [(self._static, part) for part in np.array_split(np.arange(n), nw)]
            reach = max_range
        else:
            geom, dist, normal, unsure = self._cast_boxes(pnt, dirs, max_range)
            first = [(self._static, unsure)] if len(unsure) else []
            reach = np.where(geom >= 0, dist, max_range)  # nothing behind a box can be seen
        near = self._part_rays(data, pnt, dirs, reach)
        jobs = first + [(p, rays) for p, rays in zip(self._parts, near, strict=True) if len(rays)]
        for target, _ in jobs:
            if target.moves:
                target.sync(self._source, data)
        # the first jobs each to its worker, the others whole to the least loaded, largest first
        tasks: list[list[int]] = [[] for _ in range(nw)]
        load = [0] * nw
        order = list(range(len(first)))
        order += sorted(range(len(first), len(jobs)), key=lambda j: -len(jobs[j][1]))
        for j in order:
            w = j if j < len(first) and len(first) == nw else int(np.argmin(load))
            tasks[w].append(j)
            load[w] += len(jobs[j][1])
        results: dict[int, tuple] = {}
        vecs = [dirs[rays].reshape(-1) for _, rays in jobs]

        def work(w: int) -> None:
            for j in tasks[w]:
                results[j] = jobs[j][0].cast(w, pnt, vecs[j], self._groups, max_range)

        self._map(work, nw)
        for j, (target, rays) in enumerate(jobs):
            j_geom, j_dist, j_normal = results[j]
            j_geom = np.where(j_geom >= 0, target.geoms[j_geom], -1)
            if j < len(first):  # the static world's own answer for these rays
                geom[rays], dist[rays], normal[rays] = j_geom, j_dist, j_normal.reshape(-1, 3)
                continue
            s_geom, s_dist = geom[rays], dist[rays]
            nearer = (j_geom >= 0) & (
                (s_geom < 0) | (j_dist < s_dist) | ((j_dist == s_dist) & (j_geom < s_geom))
            )
            take = rays[nearer]
            geom[take], dist[take] = j_geom[nearer], j_dist[nearer]
            normal[take] = j_normal.reshape(-1, 3)[nearer]
        miss = (geom < 0) | (dist < 0) | (dist > max_range)
        geom[miss], dist[miss] = -1, -1.0
        return geom, dist, normal

    def close(self) -> None:
        """Stop the worker threads (safe to call twice)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
