"""A running MuJoCo world: physics state, stepping split around control, and sensor reads.

A physics step is split as MuJoCo allows (`mj_step1`, then controls, then `mj_step2`) so that
everything recorded at step k — poses, images, IMU — describes the same instant k.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import mujoco
import numpy as np

from twinsim.engine import mujoco_warnings
from twinsim.engine.actors import ActorDriver
from twinsim.engine.build import compile_model, id_maps, sensor_mounts
from twinsim.engine.contacts import RobotContacts
from twinsim.engine.culling import ViewCulling
from twinsim.engine.lamps import LampPool
from twinsim.engine.look import Look, with_render_flicker
from twinsim.engine.render import CameraRenderer, RenderedFrame
from twinsim.engine.robot_view import RobotView
from twinsim.engine.surface import SurfaceNormals, from_geom_frame, to_geom_frame
from twinsim.geometry import R_OPTICAL_MJCAM, make_T
from twinsim.model.mounts import CameraMount, SiteMount
from twinsim.model.scene import SceneSpec
from twinsim.model.sections import RenderConfig
from twinsim.registries import ROBOTS
from twinsim.scene.sky import sky_level


class World:
    """The simulator view of a `SceneSpec`: owns the MuJoCo model, data and renderers."""

    def __init__(
        self, scene: SceneSpec, render: RenderConfig, physics_hz: int, look: Look | None = None
    ) -> None:
        mujoco_warnings.take_over()
        mujoco_warnings.diverged.clear()  # a diverged world before this one raised its own
        self.scene = scene
        self.look = look = with_render_flicker(look or Look(), render, scene.seed)
        self.model = compile_model(scene, render, physics_hz, look)
        self.render_config = render
        self.data = mujoco.MjData(self.model)
        self.maps = id_maps(self.model, scene)
        #: every robot's view of this world, by robot name, in the scene's order
        self.robots = {r.name: RobotView(self, r) for r in scene.robots}
        mounts = sensor_mounts(scene)
        self._cam_ids = {
            m.name: mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_CAMERA, m.name)
            for m in mounts
            if isinstance(m, CameraMount)
        }
        self._reading_adr = {
            f"{m.name}_{suffix}": self._sensor_adr(f"{m.name}_{suffix}")
            for m in mounts
            if isinstance(m, SiteMount)
            for _, suffix in m.sensors
        }
        self._robot_bodies = np.array([v.body_id for v in self.robots.values()], dtype=int)
        # each camera's view shows every robot but its own
        geoms = self.maps.robot_geoms
        self._others = {
            m.name: np.concatenate(
                [np.empty(0, int), *(g for n, g in geoms.items() if n != r.name)]
            )
            for r in scene.robots
            for m in sensor_mounts(scene, r.name)
            if isinstance(m, CameraMount)
        }
        self._renderers: dict[str, CameraRenderer] = {}
        self._surfaces: SurfaceNormals | None = None  # built when a camera records normals
        self._scratch: mujoco.MjData | None = None  # state posed for exposure sub-frames
        self._integrated: mujoco.MjData | None = None  # the state a step integrated to
        self._velocity = np.zeros(6)
        self.actors = ActorDriver(self.model, scene)
        self.culling = ViewCulling(self.model, scene, self._cullable_geoms())
        self.lamps = LampPool.of(self.model, scene)
        light = mujoco.mjtObj.mjOBJ_LIGHT
        self._lights = np.array(
            [mujoco.mj_name2id(self.model, light, li.name) for li in scene.lights], dtype=int
        )
        self._lit = self._lighting()  # as compiled: the levels flicker scales
        self._flicker_phase = np.random.default_rng(look.flicker_seed).uniform(0.0, 2 * np.pi)

    def _cullable_geoms(self) -> np.ndarray:
        """Every geom a camera may leave out when it cannot see it: all but the robots' (their
        groups decide) and planes (unbounded)."""
        robots = np.concatenate([np.empty(0, int), *self.maps.robot_geoms.values()])
        keep = self.model.geom_type != mujoco.mjtGeom.mjGEOM_PLANE
        keep[robots.astype(int)] = False
        return np.flatnonzero(keep)

    def _sensor_adr(self, name: str) -> int:
        return int(
            self.model.sensor_adr[mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_SENSOR, name)]
        )

    def _lighting(self) -> list[np.ndarray]:
        """Copies of the colours flicker scales: the scene lights' diffuse, specular and
        ambient, then the camera headlight's (the robot's own lamp stays steady)."""
        m, lights, head = self.model, self._lights, self.model.vis.headlight
        lit = (m.light_diffuse[lights], m.light_specular[lights], m.light_ambient[lights])
        return [a.copy() for a in (*lit, head.ambient, head.diffuse, head.specular)]

    def apply_lighting(self, t_s: float) -> None:
        """All scene light at t under the look's flicker (no-op without it): the lights and the
        headlight (MuJoCo's stand-in for the light the room bounces) dim together, down to
        1 - flicker of their level, so flicker 1.0 darkens the image fully at each trough."""
        look = self.look
        if look.flicker <= 0.0:
            return
        wave = 0.5 + 0.5 * np.sin(2 * np.pi * look.flicker_hz * t_s + self._flicker_phase)
        self._set_lighting([base * (1.0 - look.flicker * wave) for base in self._lit])

    def _set_lighting(self, values: list[np.ndarray]) -> None:
        """Set the colours `_lighting` reads, in its order."""
        m, lights, head = self.model, self._lights, self.model.vis.headlight
        m.light_diffuse[lights], m.light_specular[lights], m.light_ambient[lights] = values[:3]
        head.ambient[:], head.diffuse[:], head.specular[:] = values[3:]

    def pose_actors(self, t_s: float, observed: bool = True) -> None:
        """Move people and flying objects to their poses at t (before the step of that instant),
        and set the scene light of t (`apply_lighting`).

        When no sensor observes this step (`observed=False`), people far from every robot may
        keep their previous pose (see `ActorDriver.apply`).
        """
        robots_xy = None if observed else self.data.xpos[self._robot_bodies, :2].copy()
        self.actors.apply(self.data, t_s, robots_xy)
        self.apply_lighting(t_s)  # the light changes over time like the actors move

    def step_begin(self) -> None:
        """First half of a physics step: kinematics and velocity-dependent sensors at step k."""
        mujoco.mj_step1(self.model, self.data)

    def step_end(self) -> None:
        """Second half: apply the controls the robots set, compute accelerations
        (accelerometer), integrate to k+1."""
        mujoco.mj_step2(self.model, self.data)
        if mujoco_warnings.diverged:  # MuJoCo reset the state: nothing after it is true
            mujoco_warnings.raise_diverged(f"at t = {self.data.time:.4f} s")

    def integrated_state(self) -> mujoco.MjData:
        """A scratch state whose positions and velocities are those of the state the last step
        integrated to (its qpos, qvel and mocap poses), for what reads the world between steps.

        After `step_end` the running data's kinematics still describe the step's start; this
        leaves the running data untouched, since the next step's decisions (which far people
        keep their pose) read it as a scripted run and a replay do."""
        model, data = self.model, self.data
        if self._integrated is None:
            self._integrated = mujoco.MjData(model)
        state = self._integrated
        state.qpos[:], state.qvel[:] = data.qpos, data.qvel
        state.mocap_pos[:], state.mocap_quat[:] = data.mocap_pos, data.mocap_quat
        mujoco.mj_kinematics(model, state)
        mujoco.mj_comPos(model, state)
        mujoco.mj_comVel(model, state)
        return state

    def robot(self, name: str | None = None) -> RobotView:
        """The view of robot `name` (default: the first, the only one of a one-robot world)."""
        return self.robots[name] if name is not None else next(iter(self.robots.values()))

    def contacts(self, robot: str) -> RobotContacts:
        """The reader of robot `robot`'s contacts (its parts as its kind names them)."""
        spec = self.robots[robot].spec
        prefix = self.scene.stream_prefix(robot)
        parts = [self.model.body(prefix + p).id for p in ROBOTS.get(spec.kind).part_names(spec)]
        return RobotContacts(self.model, self.maps, self.maps.robot_geoms[robot], parts)

    def T_world_cam(self, camera: str, data: mujoco.MjData | None = None) -> np.ndarray:
        """Pose of a camera's OpenCV optical frame (x right, y down, z forward) in the world
        (in `data`, a state `posed_at` gives, else the running one)."""
        data = self.data if data is None else data
        cid = self._cam_ids[camera]
        R_world_mjcam = data.cam_xmat[cid].reshape(3, 3)
        return make_T(R_world_mjcam @ R_OPTICAL_MJCAM.T, data.cam_xpos[cid])

    def imu(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """(gyro rad/s, specific force m/s²) in the IMU frame; valid after `step_end`."""
        gyro_adr, accel_adr = self._reading_adr[f"{name}_gyro"], self._reading_adr[f"{name}_accel"]
        sd = self.data.sensordata
        return sd[gyro_adr : gyro_adr + 3].copy(), sd[accel_adr : accel_adr + 3].copy()

    def render(self, camera: str, width: int, height: int) -> RenderedFrame:
        """Render a camera at the current state (renderers are created on first use)."""
        return self._renderer(camera, width, height).render(self.data)

    def render_rgb(self, camera: str, width: int, height: int) -> np.ndarray:
        """Only the colour image of a camera at the current state (no depth, no masks)."""
        return self._renderer(camera, width, height).render_rgb(self.data)

    def render_rgb_depth(
        self, camera: str, width: int, height: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """The colour image and z-depth of a camera at the current state (no masks)."""
        return self._renderer(camera, width, height).render_rgb_depth(self.data)

    def render_at(
        self, camera: str, width: int, height: int, qpos: np.ndarray, t_s: float
    ) -> RenderedFrame:
        """Render a camera with the model at `qpos` (every robot) and actors and lights at t (an
        instant inside an exposure), posed on a scratch state; physics data and model are left
        bit-identical."""
        with self.posed_at(qpos, t_s) as scratch:
            return self._renderer(camera, width, height).render(scratch)

    @contextlib.contextmanager
    def posed_at(self, qpos: np.ndarray, t_s: float) -> Iterator[mujoco.MjData]:
        """A scratch state with the model at `qpos` (every robot) and actors and lights at t;
        inside the block the model's actor sizes and lights are those of t, after it the
        physics data and model are bit-identical to before."""
        model = self.model
        if self._scratch is None:
            self._scratch = mujoco.MjData(model)
        scratch = self._scratch
        posed = (model.geom_size, model.geom_pos, model.geom_rbound, model.geom_aabb)
        saved, lit = [a.copy() for a in posed], self._lighting()
        try:
            scratch.qpos[:] = qpos
            self.actors.apply(scratch, t_s)
            self.apply_lighting(t_s)
            mujoco.mj_kinematics(model, scratch)
            mujoco.mj_camlight(model, scratch)
            yield scratch
        finally:
            for array, copy in zip(posed, saved, strict=True):
                array[:] = copy
            self._set_lighting(lit)

    def point_velocities(
        self, geoms: np.ndarray, points: np.ndarray, t_s: float, h_s: float = 1e-3
    ) -> np.ndarray:
        """(N, 3) world velocities (m/s) of the material points `points` ((N, 3), world) on
        `geoms` at t_s, the running state's instant (after `step_begin`). Bodies MuJoCo moves
        (robots) from their velocities (`mj_objectVelocity`); kinematic actors (mocap: people,
        flying objects, traffic), which MuJoCo gives no velocity, by a central difference of
        their motion over t_s ± h_s, a flying object's scaling included. Static geoms: 0."""
        model, data = self.model, self.data
        out = np.zeros((len(geoms), 3))
        bodies = model.geom_bodyid[geoms]
        kinematic = model.body_mocapid[bodies] >= 0
        for b in np.unique(bodies[~kinematic & (model.body_weldid[bodies] != 0)]):
            rows = np.flatnonzero(bodies == b)
            mujoco.mj_objectVelocity(model, data, mujoco.mjtObj.mjOBJ_BODY, b, self._velocity, 0)
            arm = points[rows] - data.xipos[b]
            out[rows] = self._velocity[3:] + np.cross(self._velocity[:3], arm)
        rows = np.flatnonzero(kinematic)
        if rows.size:
            g, b = geoms[rows], bodies[rows]
            R = data.xmat[b].reshape(-1, 3, 3)
            local = np.einsum("nji,nj->ni", R, points[rows] - data.xpos[b])
            size, ends = model.geom_size[g, 0].copy(), []
            for t in (t_s - h_s, t_s + h_s):
                with self.posed_at(data.qpos, t) as posed:
                    scale = model.geom_size[g, 0] / size
                    R_t = posed.xmat[b].reshape(-1, 3, 3)
                    ends.append(
                        posed.xpos[b] + np.einsum("nij,nj->ni", R_t, local * scale[:, None])
                    )
            out[rows] = (ends[1] - ends[0]) / (2 * h_s)
        return out

    def _renderer(self, camera: str, width: int, height: int) -> CameraRenderer:
        renderer = self._renderers.get(camera)
        if renderer is None:
            renderer = self._renderers[camera] = CameraRenderer(
                self.model,
                camera,
                width,
                height,
                self.render_config.reflections,
                fog=self.look.fog_start_m is not None,
                culling=self.culling,
                shown=self._others.get(camera),
                sky_level=sky_level(self.scene),
                lamps=self.lamps,
            )
        return renderer

    def surface_normals(
        self, geoms: np.ndarray, points: np.ndarray, origin: np.ndarray
    ) -> np.ndarray:
        """World unit normals (n, 3) of geoms (n,) at world points on them, facing `origin`
        (`twinsim.engine.surface`); 0 where there is none."""
        if self._surfaces is None:
            self._surfaces = SurfaceNormals(self.model)
        return self._surfaces.normals(self.data, geoms, points, origin)

    def to_geom_frame(self, geoms: np.ndarray, points: np.ndarray) -> np.ndarray:
        """World points (n, 3) in the frames of their geoms (n,) at the current state."""
        return to_geom_frame(self.data, geoms, points)

    def from_geom_frame(self, geoms: np.ndarray, local: np.ndarray) -> np.ndarray:
        """Points (n, 3) in the frames of their geoms (n,) as world points at the current state
        (a point on a geom moves with it)."""
        return from_geom_frame(self.data, geoms, local)

    def instance_world_boxes(
        self, instance_ids: np.ndarray
    ) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """World OBBs (centre, half extents, rotation) of instances at the current state.

        Static instances carry a box fixed in their object frame; moving ones get a box fitted
        to their geoms at this instant (people: upright, turned with the pelvis).
        """
        boxes = []
        for iid in (int(i) for i in instance_ids):
            if iid in self.maps.dynamic_geoms:
                boxes.append(self._fitted_box(iid))
                continue
            body = self.maps.instance_body[iid]
            R = self.data.xmat[body].reshape(3, 3)
            center = R @ self.maps.local_box_center[iid] + self.data.xpos[body]
            boxes.append((center, self.maps.local_box_half[iid], R.copy()))
        return boxes

    def _fitted_box(self, iid: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        geoms = self.maps.dynamic_geoms[iid]
        body, yaw_only = self.maps.dynamic_frame[iid]
        R = self.data.xmat[body].reshape(3, 3).copy()
        if yaw_only:
            yaw = np.arctan2(R[1, 0], R[0, 0])
            c, s = np.cos(yaw), np.sin(yaw)
            R = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
        corners = geom_corners(self.model, self.data, geoms)
        local = corners @ R
        lo, hi = local.min(axis=0), local.max(axis=0)
        return R @ ((lo + hi) / 2), (hi - lo) / 2, R

    def close(self) -> None:
        for renderer in self._renderers.values():
            renderer.close()
        self._renderers.clear()


_SIGNS = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], float)


def geom_half_extents(model: mujoco.MjModel, geoms: np.ndarray) -> np.ndarray:
    """(n, 3) half extents, in each geom's frame, of boxes that contain the primitives."""
    size, types = model.geom_size[geoms], model.geom_type[geoms]
    half = size.copy()
    r = size[:, 0]
    sph = types == mujoco.mjtGeom.mjGEOM_SPHERE
    half[sph] = r[sph, None]
    cyl = types == mujoco.mjtGeom.mjGEOM_CYLINDER
    half[cyl] = np.stack([r[cyl], r[cyl], size[cyl, 1]], axis=1)
    cap = types == mujoco.mjtGeom.mjGEOM_CAPSULE
    half[cap] = np.stack([r[cap], r[cap], size[cap, 1] + r[cap]], axis=1)
    return half


def geom_corners(model: mujoco.MjModel, data: mujoco.MjData, geoms: np.ndarray) -> np.ndarray:
    """(8 n, 3) world corners of boxes containing each geom at the current state."""
    half = geom_half_extents(model, geoms)
    R = data.geom_xmat[geoms].reshape(-1, 3, 3)
    local = _SIGNS[None] * half[:, None, :]
    world = np.einsum("nij,nkj->nki", R, local) + data.geom_xpos[geoms][:, None, :]
    return world.reshape(-1, 3)
