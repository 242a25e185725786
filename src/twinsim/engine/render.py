"""Offscreen rendering of one camera: RGB and depth from a single pass, plus a segmentation pass.

`mujoco.Renderer` renders RGB and depth separately; reading both buffers after one
`mjr_render` halves the cost (DESIGN.md's measurements). Images come out in OpenCV row order
(top row first); depth is z-depth in metres along the optical axis, 0 where nothing was hit.
Outdoors the pixels no geom covers show the sky (`twinsim.scene.sky`), painted after the pass:
MuJoCo's skybox is a finite sphere that would hide (and give depth to) everything beyond it.
Round geoms that MuJoCo's own tessellation would draw too coarsely are drawn as their camera
meshes (`round_meshes`), so depth stays within 1 mm (or 0.1 % of the size) of the exact shape.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np
from mujoco.rendering.classic import gl_context

from twinsim.engine.culling import CULLED_GEOM_GROUP, ViewCulling
from twinsim.engine.lamps import LampPool
from twinsim.engine.round_meshes import cube_textured, mesh_frames, round_mesh_table
from twinsim.model.base import ROBOT_GEOM_GROUP
from twinsim.scene.sky import sky_rgb

VISIBLE_ROBOT_GROUP = 0  # the group other robots' geoms take while a camera renders them


@dataclass
class RenderedFrame:
    """A camera's images: colour, z-depth and what each pixel sees, as MuJoCo geom ids or,
    from a renderer that labels instances itself (Cycles), as `instance` ids."""

    rgb: np.ndarray  # (H, W, 3) uint8
    depth: np.ndarray  # (H, W) float32 metres, 0 = no hit
    geom_ids: np.ndarray | None  # (H, W) int32 MuJoCo geom id, -1 = nothing
    instance: np.ndarray | None = None  # (H, W) uint16 instance id, 0 = nothing


class CameraRenderer:
    """Renders a fixed model camera at a fixed resolution into reusable buffers."""

    def __init__(
        self,
        model: mujoco.MjModel,
        camera: str,
        width: int,
        height: int,
        reflections: bool = False,
        fog: bool = False,
        culling: ViewCulling | None = None,
        shown: np.ndarray | None = None,
        sky_level: float | None = None,
        lamps: LampPool | None = None,
    ) -> None:
        """`shown`: robot geoms this camera sees (other robots'); robot geoms are hidden else;
        `sky_level`: an outdoor world's sky brightness (None: no sky, indoors); `lamps`: the
        street lamps to place for this camera at night."""
        self._model = model
        self._shown = np.empty(0, int) if shown is None else np.asarray(shown, int)
        self._culling = None if reflections else culling  # a mirror shows what is out of view
        self._width, self._height = width, height
        self._gl = gl_context.GLContext(width, height)
        self._gl.make_current()
        self._ctx = mujoco.MjrContext(model, mujoco.mjtFontScale.mjFONTSCALE_150.value)
        mujoco.mjr_setBuffer(mujoco.mjtFramebuffer.mjFB_OFFSCREEN.value, self._ctx)
        self._ctx.readDepthMap = mujoco.mjtDepthMap.mjDEPTH_ZEROFAR
        self._scene = mujoco.MjvScene(model, maxgeom=max(1000, 2 * model.ngeom))
        # each visible reflective surface re-renders the whole scene: off unless asked for
        self._scene.flags[mujoco.mjtRndFlag.mjRND_REFLECTION] = reflections
        self._fog = fog  # colour pass only: fog must not tint the segmentation colours
        self._option = mujoco.MjvOption()
        self._option.geomgroup[ROBOT_GEOM_GROUP] = 0
        self._option.geomgroup[CULLED_GEOM_GROUP] = 0
        self._camera = mujoco.MjvCamera()
        self._camera.type = mujoco.mjtCamera.mjCAMERA_FIXED
        self._camera.fixedcamid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_CAMERA, camera)
        self._rect = mujoco.MjrRect(0, 0, width, height)
        self._rgb = np.empty((height, width, 3), np.uint8)
        self._zbuf = np.empty((height, width), np.float32)
        self._seg = np.empty((height, width, 3), np.uint8)
        self._segid_lut = np.full(2**16, -1, np.int32)
        self._round_mesh, self._round_size = round_mesh_table(model)
        # a camera mesh carries the primitive's texture coordinates; a cube map (none of
        # twinsim's textures) is generated from its vertices, in the mesh's frame
        self._mesh_uv = (~cube_textured(model)).astype(int)
        self._mesh_pos, self._mesh_rot = mesh_frames(model)
        near = np.float32(model.vis.map.znear * model.stat.extent)
        far = np.float32(model.vis.map.zfar * model.stat.extent)
        # MuJoCo renders with reversed Z: window depth d maps to metres as d_coef / (d + c_coef).
        c = -(far + near) / (far - near)
        d = -(np.float32(2) * far * near) / (far - near)
        self._c_coef = np.float32(-0.5) * c - np.float32(0.5)
        self._d_coef = np.float32(-0.5) * d
        self._sky_level = sky_level
        self._lamps = lamps
        self._rays = None if sky_level is None else self._ray_directions(model, width, height)

    def _ray_directions(self, model: mujoco.MjModel, width: int, height: int) -> np.ndarray:
        """Unit view rays (H·W, 3) in MuJoCo's camera frame (looking along −z, y up), rows
        bottom-up as OpenGL reads them."""
        tan_y = np.tan(np.deg2rad(model.cam_fovy[self._camera.fixedcamid]) / 2)
        tan_x = tan_y * width / height
        x = (2 * (np.arange(width) + 0.5) / width - 1) * tan_x
        y = (2 * (np.arange(height) + 0.5) / height - 1) * tan_y
        rays = np.stack(np.broadcast_arrays(x[None, :], y[:, None], -1.0), axis=-1)
        return (rays / np.linalg.norm(rays, axis=-1, keepdims=True)).reshape(-1, 3)

    def _paint_sky(self, data: mujoco.MjData) -> None:
        """The sky (or, in fog, the fog's colour: the sky is infinitely far) in the pixels no
        geom covers (depth buffer still cleared), from each ray's elevation."""
        empty = np.flatnonzero(self._zbuf.reshape(-1) <= 0.0)
        if not len(empty):
            return
        if self._fog:
            colour = np.broadcast_to(np.asarray(self._model.vis.rgba.fog[:3]), (len(empty), 3))
        else:
            up = data.cam_xmat[self._camera.fixedcamid].reshape(3, 3)[2]  # world z in cam frame
            colour = sky_rgb(self._rays[empty] @ up, self._sky_level)
        self._rgb.reshape(-1, 3)[empty] = np.round(255.0 * colour).astype(np.uint8)

    def render(self, data: mujoco.MjData) -> RenderedFrame:
        """Render the current state; the arrays returned are new (safe to hand to a writer)."""
        self.render_raw(data)
        return RenderedFrame(self._rgb[::-1].copy(), self._metric_depth(), self._geom_ids())

    def render_rgb(self, data: mujoco.MjData) -> np.ndarray:
        """Only the colour image of the current state (new array): a twin that takes depth and
        masks from its source skips the depth read-back and the segmentation pass."""
        self._update_scene(data)
        self._colour_pass(None if self._rays is None else self._zbuf, data)
        return self._rgb[::-1].copy()

    def render_rgb_depth(self, data: mujoco.MjData) -> tuple[np.ndarray, np.ndarray]:
        """The colour image and z-depth of the current state (new arrays), without the
        segmentation pass: what compositing image-space weather onto a render needs."""
        self._update_scene(data)
        self._colour_pass(self._zbuf, data)
        return self._rgb[::-1].copy(), self._metric_depth()

    def render_raw(self, data: mujoco.MjData) -> None:
        """The bare MuJoCo cost of a frame: one RGB+depth pass and one segmentation pass, read back.

        Benchmarks divide the pipeline's frame time by this.
        """
        self._update_scene(data)
        self._colour_pass(self._zbuf, data)
        flags = self._scene.flags
        flags[mujoco.mjtRndFlag.mjRND_SEGMENT] = flags[mujoco.mjtRndFlag.mjRND_IDCOLOR] = 1
        try:
            mujoco.mjr_render(self._rect, self._scene, self._ctx)
            mujoco.mjr_readPixels(self._seg, None, self._rect, self._ctx)
        finally:
            flags[mujoco.mjtRndFlag.mjRND_SEGMENT] = flags[mujoco.mjtRndFlag.mjRND_IDCOLOR] = 0

    def _colour_pass(self, zbuf: np.ndarray | None, data: mujoco.MjData) -> None:
        """Render the updated scene in colour (with fog, if any); read RGB and, if given, depth;
        outdoors paint the sky."""
        flags = self._scene.flags
        flags[mujoco.mjtRndFlag.mjRND_FOG] = self._fog
        try:
            mujoco.mjr_render(self._rect, self._scene, self._ctx)
            mujoco.mjr_readPixels(self._rgb, zbuf, self._rect, self._ctx)
        finally:
            flags[mujoco.mjtRndFlag.mjRND_FOG] = 0
        if self._rays is not None:
            self._paint_sky(data)

    def _update_scene(self, data: mujoco.MjData) -> None:
        """Make the GL context current and update the scene, culled actor geoms left out."""
        self._gl.make_current()
        model = self._model
        groups = model.geom_group
        hidden = np.empty(0, int)
        if self._culling is not None:
            aspect = self._width / self._height
            hidden = self._culling.hidden(model, data, self._camera.fixedcamid, aspect)
        if self._lamps is not None:
            cam = self._camera.fixedcamid
            self._lamps.place(data, data.cam_xpos[cam], -data.cam_xmat[cam].reshape(3, 3)[:, 2])
        changed = np.concatenate([hidden, self._shown])
        saved = groups[changed].copy()
        groups[hidden] = CULLED_GEOM_GROUP
        groups[self._shown] = VISIBLE_ROBOT_GROUP
        try:
            everything = mujoco.mjtCatBit.mjCAT_ALL
            mujoco.mjv_updateScene(
                model, data, self._option, None, self._camera, everything, self._scene
            )
            visible = np.flatnonzero(self._option.geomgroup[groups])
            self._update_segid_lut(visible)
            self._draw_round_meshes(visible)
        finally:
            groups[changed] = saved

    def _metric_depth(self) -> np.ndarray:
        z = self._zbuf[::-1]
        depth = np.float32(self._d_coef) / (z + np.float32(self._c_coef))
        depth[z <= 0.0] = 0.0
        return depth

    def _geom_ids(self) -> np.ndarray:
        seg = self._seg[::-1]
        # ids are scene geom indices + 1 < 2**16, so the third colour byte is always 0
        segid = seg[..., 0] | (seg[..., 1].astype(np.uint16) << 8)
        return self._segid_lut[segid]

    def _update_segid_lut(self, visible: np.ndarray) -> None:
        """Map colour-coded segmentation ids (scene geom index + 1) to model geom ids.

        `mjv_updateScene` adds the visible model geoms (`visible`, from the geom groups at the
        time of the update) first, in id order (then sites), so the table follows; a test
        checks it against the ids MuJoCo stores in each scene geom.
        """
        if len(visible) >= 2**16 - 1:
            raise ValueError(f"{len(visible)} geoms in view: segmentation supports at most 65534")
        self._segid_lut[:] = -1
        self._segid_lut[1 : len(visible) + 1] = visible

    def _draw_round_meshes(self, visible: np.ndarray) -> None:
        """Draw each visible geom that has a camera mesh as that mesh (in the geom's frame)."""
        mesh = self._round_mesh[visible]
        geoms = self._scene.geoms
        for k in np.flatnonzero(mesh >= 0):  # scene geom k is model geom visible[k]
            g, m = geoms[k], mesh[k]
            if g.objid != visible[k]:  # MuJoCo skipped a geom (alpha 0?): ids would be wrong
                raise RuntimeError(f"scene geom {k} is model geom {g.objid}, not {visible[k]}")
            scale = g.size[0] / self._round_size[visible[k]]  # flying objects scale
            g.type = mujoco.mjtGeom.mjGEOM_MESH
            g.dataid = 2 * m  # MuJoCo's display lists: 2·id the mesh, 2·id + 1 its hull
            g.texcoord = self._mesh_uv[visible[k]]
            g.pos += scale * (g.mat @ self._mesh_pos[m])
            g.mat[:] = scale * (g.mat @ self._mesh_rot[m])  # GL normalises the normals

    def close(self) -> None:
        """Free the GL resources (safe to call twice). MuJoCo frees a render context's GL
        objects in whatever context is current, so this renderer's own is made current for it
        and the one current before is restored: freed in another renderer's context, they would
        delete that renderer's framebuffer, and its frames would repeat from then on."""
        if getattr(self, "_ctx", None) is not None:  # None once freed, or if __init__ failed
            with self._gl.as_current():
                self._ctx.free()
            self._gl.free()
            self._ctx = None

    def __del__(self) -> None:
        """A renderer dropped without `close()` (its world forgotten) is freed as `close()`
        frees it, whenever the garbage collector gets to it."""
        self.close()
