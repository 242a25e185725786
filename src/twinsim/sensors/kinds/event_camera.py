"""The event camera: colour renders at its internal rate, events where log intensity changes."""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field, model_validator

from twinsim.model.sensors import EventSpec, SensorSpec
from twinsim.sensors.base import (
    RecordingContext,
    SensorConfig,
    SensorKind,
    SensorRecorder,
    base_metadata,
)
from twinsim.sensors.camera import intrinsics
from twinsim.sensors.events import EventSimulator, log_intensity
from twinsim.sensors.kinds.camera import camera_mount
from twinsim.sensors.rig import check_clipping, optical_fields
from twinsim.sequence.stream_checks import StreamCheck, check_events


class EventCameraConfig(SensorConfig):
    """Event camera (ESIM / v2e): renders at `rate_hz`, events where log intensity changes.

    Placed like a camera (optical frame); thresholds are log-intensity contrasts.
    """

    kind: Literal["event_camera"] = "event_camera"
    width: int = Field(240, ge=8, le=2048)
    height: int = Field(180, ge=8, le=2048)
    hfov_deg: float = Field(90.0, gt=1.0, lt=179.0)
    rate_hz: int = Field(240, gt=0)
    pos: tuple[float, float, float] = (0.12, 0.0, 0.0)
    rpy_deg: tuple[float, float, float] = (0.0, 0.0, 0.0)
    threshold_pos: float = Field(0.2, gt=0.0, le=5.0)
    threshold_neg: float = Field(0.2, gt=0.0, le=5.0)
    refractory_period_s: float = Field(0.0005, ge=0.0, le=1.0)
    log_eps: float = Field(0.02, gt=0.0, le=1.0)
    near_m: float = Field(0.05, gt=0.0)
    far_m: float = Field(30.0, gt=0.0)

    @model_validator(mode="after")
    def _clipping(self) -> EventCameraConfig:
        check_clipping(self)
        return self


class EventRecorder(SensorRecorder):
    """Renders the camera at its internal rate, with the image weather where there is one (as a
    colour camera's frames have it), and writes the events between consecutive renders."""

    def __init__(self, cam: SensorSpec, ctx: RecordingContext) -> None:
        self.cam, self.ctx = cam, ctx
        self.period = ctx.physics_hz // cam.rate_hz
        self.simulator = EventSimulator(cam.events, cam.width, cam.height)
        self.K = intrinsics(cam.width, cam.height, cam.hfov_deg)
        ctx.writer.add_events(cam.name, cam.width, cam.height)

    resumable = True

    def checkpoint(self) -> dict[str, np.ndarray]:
        return self.simulator.state()

    def restore(self, state: dict[str, np.ndarray]) -> None:
        self.simulator.restore(state)

    def observes(self, k: int) -> bool:
        return k % self.period == 0

    def before_step(self, k: int, t_ns: int, q: np.ndarray) -> None:
        if k % self.period == 0:
            cam = self.cam
            log_image = log_intensity(self._render(t_ns), cam.events.log_eps)
            batch = self.simulator.update(t_ns, log_image)
            self.ctx.writer.append_events(cam.name, batch.x, batch.y, batch.t_ns, batch.polarity)

    def _render(self, t_ns: int) -> np.ndarray:
        """The colour image at t; in rain, snow or smoke the depth is rendered too and the
        weather composited from it, the pose and t (clear air renders colour only)."""
        cam, world, weather = self.cam, self.ctx.world, self.ctx.weather
        if weather is None:
            return world.render_rgb(cam.name, cam.width, cam.height)
        rgb, depth = world.render_rgb_depth(cam.name, cam.width, cam.height)
        return weather.apply(rgb, depth, self.K, world.T_world_cam(cam.name), t_ns / 1e9)


class EventCamera(SensorKind):
    type = "event_camera"
    config_model = EventCameraConfig

    def spec(self, name: str, cfg: EventCameraConfig) -> SensorSpec:
        events = EventSpec(
            threshold_pos=cfg.threshold_pos,
            threshold_neg=cfg.threshold_neg,
            refractory_ns=round(cfg.refractory_period_s * 1e9),
            log_eps=cfg.log_eps,
        )
        return SensorSpec(name=name, type="event_camera", events=events, **optical_fields(cfg))

    def mounts(self, sensor: SensorSpec) -> tuple:
        return (camera_mount(sensor),)

    def metadata(self, sensor: SensorSpec) -> dict:
        K = intrinsics(sensor.width, sensor.height, sensor.hfov_deg)
        events = sensor.events
        return base_metadata(sensor) | {
            "type": "event_camera",
            "frame": "OpenCV optical frame: x right, y down, z forward",
            "width": sensor.width,
            "height": sensor.height,
            "K": K.tolist(),
            "hfov_deg": sensor.hfov_deg,
            "threshold_pos": events.threshold_pos,
            "threshold_neg": events.threshold_neg,
            "refractory_ns": events.refractory_ns,
            "log_eps": events.log_eps,
            "note": "rate_hz is the internal render rate events are interpolated between",
        }

    def recorder(self, sensor: SensorSpec, ctx: RecordingContext) -> EventRecorder:
        return EventRecorder(sensor, ctx)

    def validate_stream(self, check: StreamCheck) -> None:
        """events.npy: every event in time order, inside the image and the recording."""
        check_events(check)
