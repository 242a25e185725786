"""The RGB-D camera: rendered frames with masks and boxes, and its ground-truth pose stream."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Literal

import numpy as np
from pydantic import Field, model_validator

from twinsim.geometry import (
    R_OPTICAL_MJCAM,
    T_to_pos_quat_xyzw,
    matrix_to_quat_wxyz,
    quat_wxyz_to_matrix,
)
from twinsim.model.layout import FLOW_OCCLUDED, FLOW_OUT, FLOW_VISIBLE, surface_kinds
from twinsim.model.mounts import CameraMount
from twinsim.model.sensors import SensorSpec
from twinsim.sensors.annotate import annotate_frame
from twinsim.sensors.base import (
    POSE_COLUMNS,
    RecordingContext,
    SensorConfig,
    SensorKind,
    SensorRecorder,
    base_metadata,
    substate,
)
from twinsim.sensors.camera import intrinsics
from twinsim.sensors.exposure import (
    SHUTTER_NOTE,
    ExposureRenderer,
    FrameShutter,
    StateHistory,
    has_exposure_effects,
    window_steps,
)
from twinsim.sensors.motion_stats import camera_motion_stats, dynamic_stats
from twinsim.sensors.rig import check_clipping, optical_fields
from twinsim.sensors.surface import SurfacePoints, forward_flow, frame_normals, surface_points
from twinsim.sequence.frames import CameraFrame
from twinsim.sequence.stream_checks import StreamCheck, check_camera

if TYPE_CHECKING:  # engine.render imports mujoco: not before the backend is chosen
    from twinsim.engine.render import RenderedFrame


class CameraConfig(SensorConfig):
    """RGB-D camera; `pos` and `rpy_deg` place its optical frame on the body (x forward).

    `exposure_s` (motion blur) and `rolling_shutter_readout_s` are simulated at render time
    (`twinsim.sensors.exposure`); 0 renders the single instant of the frame. `normals` and
    `flow` record each frame's surface normals and forward optical flow to the next frame
    (`twinsim.sensors.surface`).
    """

    kind: Literal["camera"] = "camera"
    width: int = Field(640, ge=8, le=4096)
    height: int = Field(480, ge=8, le=4096)
    hfov_deg: float = Field(90.0, gt=1.0, lt=179.0)
    rate_hz: int = Field(30, gt=0)
    pos: tuple[float, float, float] = (0.12, 0.0, 0.0)
    rpy_deg: tuple[float, float, float] = (0.0, 0.0, 0.0)
    near_m: float = Field(0.05, gt=0.0)
    far_m: float = Field(30.0, gt=0.0)
    exposure_s: float = Field(0.0, ge=0.0)
    rolling_shutter_readout_s: float = Field(0.0, ge=0.0)
    normals: bool = False
    flow: bool = False

    @model_validator(mode="after")
    def _shutter_within_frame(self) -> CameraConfig:
        check_clipping(self)
        period = 1.0 / self.rate_hz
        for field in ("exposure_s", "rolling_shutter_readout_s"):
            if getattr(self, field) > period:
                raise ValueError(
                    f"{field}={getattr(self, field)} must be <= 1/rate_hz = {period:.6g} s "
                    "(one frame period)"
                )
        return self


def camera_mount(sensor: SensorSpec) -> CameraMount:
    """A MuJoCo camera at the sensor's optical frame with its vertical field of view."""
    R_body_opt = quat_wxyz_to_matrix(sensor.quat)
    fx = sensor.width / 2 / np.tan(np.deg2rad(sensor.hfov_deg) / 2)
    return CameraMount(
        name=sensor.name,
        pos=sensor.pos,
        quat=matrix_to_quat_wxyz(R_body_opt @ R_OPTICAL_MJCAM),
        fovy_deg=float(np.rad2deg(2 * np.arctan(sensor.height / 2 / fx))),
        width=sensor.width,
        height=sensor.height,
        near_m=sensor.near_m,
        far_m=sensor.far_m,
    )


class CameraRecorder(SensorRecorder):
    """Renders (or takes from a twin's source) and writes each frame; logs the camera pose."""

    def __init__(self, cam: SensorSpec, ctx: RecordingContext) -> None:
        self.cam, self.ctx = cam, ctx
        self.period = ctx.physics_hz // cam.rate_hz
        self.source = ctx.frame_sources.get(cam.name)
        ctx.writer.add_camera(cam.name, surface_kinds(surface_metadata(cam)))
        ctx.writer.add_table(f"groundtruth_{cam.name}", POSE_COLUMNS)
        shuttered = has_exposure_effects(cam)
        self.exposure = ExposureRenderer(ctx.world, cam, ctx.physics_hz) if shuttered else None
        reach = math.ceil(window_steps(cam, ctx.physics_hz))
        self.history = StateHistory(reach) if shuttered else None
        self.frames = 0
        self.pose_t_ns: list[int] = []
        self.poses: list[np.ndarray] = []
        self.fractions: list[float] = []  # share of each frame covered by dynamic content
        self.K = intrinsics(cam.width, cam.height, cam.hfov_deg)
        self.pending: SurfacePoints | None = None  # the last frame's points, for its flow

    resumable = True

    def checkpoint(self) -> dict[str, np.ndarray]:
        """Frames so far, the poses and dynamic shares its statistics gather, and the motion
        history a shuttered camera blurs over."""
        state = {
            "frames": np.array(self.frames),
            "pose_t_ns": np.array(self.pose_t_ns, np.int64),
            "poses": np.array(self.poses, float).reshape(-1, 4, 4),
            "fractions": np.array(self.fractions, float),
        }
        if self.history is not None:
            state |= {f"history_{key}": value for key, value in self.history.state().items()}
        if self.pending is not None:
            state |= {f"surface_{key}": value for key, value in self.pending.state().items()}
        return state

    def restore(self, state: dict[str, np.ndarray]) -> None:
        self.frames = int(state["frames"])
        self.pose_t_ns = [int(t) for t in state["pose_t_ns"]]
        self.poses = list(np.array(state["poses"], float))
        self.fractions = [float(f) for f in state["fractions"]]
        if self.history is not None:
            self.history.restore(substate(state, "history_"))
        if "surface_pixels" in state:
            self.pending = SurfacePoints.from_state(substate(state, "surface_"))

    def observes(self, k: int) -> bool:
        return k % self.period == 0

    def before_step(self, k: int, t_ns: int, q: np.ndarray) -> None:
        world, writer = self.ctx.world, self.ctx.writer
        if self.history is not None:
            self.history.push(k, q)
        if k % self.ctx.pose_period == 0:
            T_world_cam = world.T_world_cam(self.cam.name)
            writer.append(f"groundtruth_{self.cam.name}", t_ns, T_to_pos_quat_xyzw(T_world_cam))
            self.pose_t_ns.append(t_ns)
            self.poses.append(T_world_cam)
        if k % self.period == 0:
            self.fractions.append(self._frame(k, t_ns))
            self.frames += 1

    def statistics(self) -> dict:
        """GRADE's Table 8: the camera's motion and how much of its images is dynamic."""
        return {
            "camera": self.cam.name,
            "camera_motion": camera_motion_stats(np.array(self.pose_t_ns), np.array(self.poses)),
            "dynamic_content": dynamic_stats(self.fractions),
        }

    def _frame(self, k: int, t_ns: int) -> float:
        """Render (or take from the source) and write the frame; its dynamic share."""
        cam, world, writer, index = self.cam, self.ctx.world, self.ctx.writer, self.frames
        if self.source is not None:
            rgb = None
            if not self.source.colour:
                rgb = world.render_rgb(cam.name, cam.width, cam.height)
            T_world_cam = world.T_world_cam(cam.name)
            shutter = None
            if self.history is not None:
                shutter = FrameShutter(world, cam, self.ctx.physics_hz, k, self.history)
            frame = self.source.frame(index, t_ns, T_world_cam, rgb, shutter=shutter)
            if isinstance(frame, CameraFrame):  # the source renders its own ground truth
                self._surface(frame, None)
                writer.write_frame(cam.name, frame)
                return frame.dynamic_fraction
            writer.write_copied_frame(cam.name, frame)
            return self.source.dynamic_fraction(index)
        rendered = None if self.exposure is None else self.exposure.render(k, self.history)
        sharp = self.exposure is None and (cam.normals or cam.flow)
        if sharp:
            rendered = world.render(cam.name, cam.width, cam.height)
        frame = annotate_frame(world, cam, index, t_ns, k / self.ctx.physics_hz, rendered)
        self._surface(frame, rendered if sharp else None)
        writer.write_frame(cam.name, frame)
        return frame.dynamic_fraction

    def _surface(self, frame: CameraFrame, rendered: RenderedFrame | None) -> None:
        """Give the frame its normals and write the previous frame's flow, from the geometry of
        `rendered`, or of a render of this instant where there is none with geom ids (an
        exposure's composite mixes instants; Cycles labels instances, not geoms)."""
        cam, world = self.cam, self.ctx.world
        if not (cam.normals or cam.flow):
            return
        if rendered is None or rendered.geom_ids is None:
            rendered = world.render(cam.name, cam.width, cam.height)
        geoms, depth, T = rendered.geom_ids, rendered.depth, frame.T_world_cam
        if cam.normals:
            frame.normals = frame_normals(world, geoms, depth, self.K, T)
        if cam.flow:
            if self.pending is not None:
                flow, valid = forward_flow(world, self.pending, self.K, T, depth)
                self.ctx.writer.write_flow(cam.name, frame.index - 1, flow, valid)
            self.pending = surface_points(world, geoms, depth, self.K, T)


def surface_metadata(sensor: SensorSpec) -> dict:
    """The metadata entries of the per-frame ground truth a camera records (none when off, so
    streams without it keep their metadata)."""
    entries = {}
    if sensor.normals:
        entries["normals"] = (
            "normals/: float32 (H, W, 3) unit surface normals in the optical frame, facing the "
            "camera, from the geometry under each pixel; 0 = nothing seen"
        )
    if sensor.flow:
        entries["flow"] = (
            "flow/: float32 (H, W, 2) forward optical flow (u, v pixels) to the next frame, NaN "
            "where the pixel saw nothing or its point went behind the camera; flow_valid/: uint8 "
            f"{FLOW_OUT} out of view, {FLOW_VISIBLE} visible, {FLOW_OCCLUDED} occluded; the last "
            "frame has none"
        )
    return entries


class Camera(SensorKind):
    type = "camera"
    config_model = CameraConfig

    def spec(self, name: str, cfg: CameraConfig) -> SensorSpec:
        return SensorSpec(
            name=name,
            type="camera",
            exposure_s=cfg.exposure_s,
            rolling_shutter_readout_s=cfg.rolling_shutter_readout_s,
            normals=cfg.normals,
            flow=cfg.flow,
            **optical_fields(cfg),
        )

    def mounts(self, sensor: SensorSpec) -> tuple[CameraMount, ...]:
        return (camera_mount(sensor),)

    def metadata(self, sensor: SensorSpec) -> dict:
        K = intrinsics(sensor.width, sensor.height, sensor.hfov_deg)
        return (
            base_metadata(sensor)
            | {
                "frame": "OpenCV optical frame: x right, y down, z forward",
                "width": sensor.width,
                "height": sensor.height,
                "K": K.tolist(),
                "hfov_deg": sensor.hfov_deg,
                "vfov_deg": float(np.rad2deg(2 * np.arctan(sensor.height / 2 / K[0, 0]))),
                "near_m": sensor.near_m,
                "far_m": sensor.far_m,
                "depth": "float32 metres along the optical axis (z-depth), 0 = no reading",
                "exposure_s": sensor.exposure_s,
                "rolling_shutter_readout_s": sensor.rolling_shutter_readout_s,
                "shutter": SHUTTER_NOTE,
            }
            | surface_metadata(sensor)
        )

    def extra_streams(self, sensor: SensorSpec, pose_rate_hz: int) -> dict[str, dict]:
        return {
            f"groundtruth_{sensor.name}": {
                "type": "pose",
                "rate_hz": pose_rate_hz,
                "pose": f"T_world_{sensor.name} (OpenCV optical frame)",
            }
        }

    def recorder(self, sensor: SensorSpec, ctx: RecordingContext) -> CameraRecorder:
        return CameraRecorder(sensor, ctx)

    def validate_stream(self, check: StreamCheck) -> None:
        """frames.csv, boxes.jsonl and every frame's four images."""
        check_camera(check)
