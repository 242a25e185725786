"""Batched ray casting into a world's current geometry with `mujoco.mj_multiRay`.

`mj_multiRay` (MuJoCo 4.0) tests every ray against every body's bounding box, ~15 ns per body
and ray even when all its geoms are excluded by group, then against the geoms it may meet; a
person is ~13 mocap bodies. So a world is cast into several models: every ray into the static
world (compiled without people and flying objects, same bodies and geoms), and into each
person's or flying object's own model only the rays that pass within that actor's bounding
sphere (a conservative numpy test, after ruling out actors outside the bundle's cone); the
nearer hit wins (on a tie the lower world geom id, as `mj_multiRay` picks). Geom ids are
mapped back to the world model's by name, so the points are those one `mj_multiRay` on the
whole world returns (a test checks ids, distances and normals). Putting all static geoms on one
body, or on grid cells, was tried and is slower: the object bodies' boxes are what prune rays.

`mj_multiRay` borrows scratch memory from the `MjData` it is given, so each worker thread casts
into its own `MjData` holding a copy of the world's poses; MuJoCo releases the GIL while
casting, so the threads run in parallel. Rays go to copies of the models in which the textured
boxes, stored as 8-vertex meshes for their UVs, are analytic boxes again (the same surfaces,
~1.4× faster). Culling geoms per bundle of rays by group (by cone and by distance bound) was
tried and gained ~5 %: excluded geoms still cost their share of MuJoCo's loop.
"""

from __future__ import annotations

import copy
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import mujoco
import numpy as np

from twinsim.engine.build import ROBOT_GEOM_GROUP, compile_model

_LUMA = np.array([0.2126, 0.7152, 0.0722])
_BODY_POSE_FIELDS = ("xpos", "xmat", "xipos", "ximat")
_GEOM_POSE_FIELDS = ("geom_xpos", "geom_xmat")
_LIVE_FIELDS = ("geom_size", "geom_rbound", "geom_aabb")
_SPHERE_MARGIN_M = 1e-6  # widens every bounding sphere of the actor pre-filter (rounding)
_CONE_MARGIN_RAD = 1e-6  # widens the bundle's cone (arccos loses ~1e-8 rad near 0)


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

    static: mujoco.MjModel  # the world without people and flying objects
    actors: tuple[mujoco.MjModel, ...]  # each person and flying object alone (and the robot)
    groups: tuple[np.ndarray, ...]  # world geom ids of each actor


def split_world(world) -> WorldSplit:
    """Compile the static part of a `World` and each of its actors apart."""
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
    return WorldSplit(
        compile_model(static, render, hz),
        tuple(compile_model(a, render, hz) for a, _ in actors),
        tuple(geoms for _, geoms in actors),
    )


class _Target:
    """One model rays are cast into, its geoms and bodies the world's of the same names, with
    one scratch `MjData` per worker."""

    def __init__(
        self, world: mujoco.MjModel, model: mujoco.MjModel, exclude_body: int, workers: int
    ) -> None:
        self.model = _ray_model(model)
        self.geoms = _world_ids(world, model, mujoco.mjtObj.mjOBJ_GEOM, model.ngeom)
        self.bodies = _world_ids(world, model, mujoco.mjtObj.mjOBJ_BODY, model.nbody)
        # geoms kept as they are follow the world model's sizes (flying objects are rescaled)
        self._live = np.flatnonzero(self.model.geom_type == world.geom_type[self.geoms])
        self._live_world = self.geoms[self._live]
        found = np.flatnonzero(self.bodies == exclude_body)
        self.exclude = int(found[0]) if len(found) else -1
        self.scratch = [mujoco.MjData(self.model) for _ in range(workers)]

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
        """Cast the flat (3 n,) `vec`; (world geom id or −1, distance or −1, flat normals)."""
        n = len(vec) // 3
        geom, dist, normal = np.empty(n, np.int32), np.empty(n), np.empty(3 * n)
        if n:
            mujoco.mj_multiRay(
                self.model, self.scratch[worker], pnt, vec, groups, 1, self.exclude,
                geom, dist, normal, n, float(max_range),
            )  # fmt: skip
        hit = geom >= 0
        geom[hit] = self.geoms[geom[hit]]
        return geom, dist, normal


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


def _near_spheres(
    origin: np.ndarray, dirs: np.ndarray, centers: np.ndarray, radii: np.ndarray, reach: float
) -> np.ndarray:
    """(rays, spheres): whether each unit ray from `origin` may pass within a sphere, at most
    `reach` away (conservative). Spheres outside the bundle's cone are ruled out first."""
    rel = centers - origin
    dist = np.linalg.norm(rel, axis=1)
    r = radii + _SPHERE_MARGIN_M
    inside = dist <= r
    live = (dist - r <= reach) & ~inside
    axis = dirs.sum(axis=0)
    if np.linalg.norm(axis) > 0.0 and live.any():
        axis /= np.linalg.norm(axis)
        spread = np.arccos(np.clip((dirs @ axis).min(), -1.0, 1.0))
        off_axis = np.arccos(np.clip(rel[live] @ axis / dist[live], -1.0, 1.0))
        reach_angle = np.arcsin(np.minimum(1.0, r[live] / dist[live])) + _CONE_MARGIN_RAD
        live[live] = off_axis <= spread + reach_angle
    near = np.zeros((len(dirs), len(centers)), bool)
    near[:, inside] = True
    if live.any():
        along = dirs @ rel[live].T
        rl = r[live]
        near[:, live] = (along >= 0.0) & (dist[live] ** 2 - along * along <= rl * rl)
    return near


class RayCaster:
    """Casts bundles of rays from one origin; geoms of the excluded body and robot group unseen.

    With a `WorldSplit` of the same world, rays go to its static and actor models (see above).
    """

    def __init__(
        self,
        model: mujoco.MjModel,
        exclude_body: int,
        workers: int = 2,
        split: WorldSplit | None = None,
    ) -> None:
        self._source = model
        n = self._workers = max(1, workers)
        static = model if split is None else split.static
        self._static = _Target(model, static, exclude_body, n)
        actors = () if split is None else split.actors
        self._actors = [_Target(model, a, exclude_body, n) for a in actors]
        groups = () if split is None else split.groups
        self._actor_geoms = np.concatenate([np.empty(0, int), *groups])
        sizes = [len(g) for g in groups]
        self._actor_start = np.cumsum([0, *sizes[:-1]]).astype(int)
        self._actor_of = np.repeat(np.arange(len(sizes)), sizes)
        self._groups = np.ones(mujoco.mjNGROUP, np.uint8)
        self._groups[ROBOT_GEOM_GROUP] = 0
        self._pool = ThreadPoolExecutor(n) if n > 1 else None

    def _actor_rays(
        self, data: mujoco.MjData, origin: np.ndarray, dirs: np.ndarray, reach: float
    ) -> list[np.ndarray]:
        """Per actor, the indices of the rays that may meet it (one bounding sphere per actor)."""
        if not self._actors:
            return []
        g, starts = self._actor_geoms, self._actor_start
        centers, radii = data.geom_xpos[g], self._source.geom_rbound[g]
        radii = np.where(radii > 0.0, radii, np.inf)  # rbound 0: unbounded (a plane)
        mid = (np.minimum.reduceat(centers, starts) + np.maximum.reduceat(centers, starts)) / 2
        spread = np.linalg.norm(centers - mid[self._actor_of], axis=1) + radii
        near = _near_spheres(origin, dirs, mid, np.maximum.reduceat(spread, starts), reach)
        hit = near.any(axis=0)
        return [np.flatnonzero(near[:, k]) if hit[k] else np.empty(0, int) for k in range(len(hit))]

    def cast(
        self, data: mujoco.MjData, origin: np.ndarray, dirs: np.ndarray, max_range: float
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Cast unit `dirs` (n, 3, world) from `origin` at `data`'s state.

        Returns (geom id, -1 = miss; distance in metres, -1 = miss; outward unit normal (n, 3)).
        """
        dirs = np.ascontiguousarray(dirs, dtype=np.float64)
        pnt = np.asarray(origin, dtype=np.float64)
        n = len(dirs)
        jobs = [(self._static, np.arange(n))]
        near = self._actor_rays(data, pnt, dirs, max_range)
        jobs += [(a, rays) for a, rays in zip(self._actors, near, strict=True) if len(rays)]
        for target, _ in jobs:
            target.sync(self._source, data)
        # the static rays split evenly; each actor's rays whole, to the least loaded worker
        nw = self._workers
        tasks = [[(0, part)] for part in np.array_split(np.arange(n), nw)]
        load = [len(t[0][1]) for t in tasks]
        for j in sorted(range(1, len(jobs)), key=lambda j: -len(jobs[j][1])):
            w = int(np.argmin(load))
            tasks[w].append((j, jobs[j][1]))
            load[w] += len(jobs[j][1])
        results: dict[tuple[int, int], tuple] = {}

        def work(w: int) -> None:
            for j, part in tasks[w]:
                vec = dirs[part].reshape(-1)
                results[j, w] = jobs[j][0].cast(w, pnt, vec, self._groups, max_range)

        if self._pool is None:
            work(0)
        else:
            list(self._pool.map(work, range(nw)))
        static = [results[0, w] for w in range(nw)]
        geom, dist, normal = (np.concatenate(r) for r in zip(*static, strict=True))
        normal = normal.reshape(n, 3)
        owner = {j: w for w in range(nw) for j, _ in tasks[w] if j}
        for j, (_, rays) in enumerate(jobs[1:], start=1):
            a_geom, a_dist, a_normal = results[j, owner[j]]
            s_geom, s_dist = geom[rays], dist[rays]
            nearer = (a_geom >= 0) & (
                (s_geom < 0) | (a_dist < s_dist) | ((a_dist == s_dist) & (a_geom < s_geom))
            )
            take = rays[nearer]
            geom[take], dist[take] = a_geom[nearer], a_dist[nearer]
            normal[take] = a_normal.reshape(-1, 3)[nearer]
        miss = (geom < 0) | (dist < 0) | (dist > max_range)
        geom[miss], dist[miss] = -1, -1.0
        return geom, dist, normal

    def close(self) -> None:
        """Stop the worker threads (safe to call twice)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
