"""The event camera: colour renders at its internal rate, events where log intensity changes."""

from __future__ import annotations

import numpy as np

from twinsim.scene.spec import SensorSpec
from twinsim.sensors.base import RecordingContext, SensorKind, SensorRecorder, base_metadata
from twinsim.sensors.camera import intrinsics
from twinsim.sensors.events import EventSimulator, log_intensity
from twinsim.sensors.kinds.camera import camera_mount


class EventRecorder(SensorRecorder):
    def __init__(self, cam: SensorSpec, ctx: RecordingContext) -> None:
        self.cam, self.ctx = cam, ctx
        self.period = ctx.physics_hz // cam.rate_hz
        self.simulator = EventSimulator(cam.events, cam.width, cam.height)
        ctx.writer.add_events(cam.name, cam.width, cam.height)

    def observes(self, k: int) -> bool:
        return k % self.period == 0

    def before_step(self, k: int, t_ns: int, q: np.ndarray) -> None:
        if k % self.period == 0:
            cam = self.cam
            rgb = self.ctx.world.render_rgb(cam.name, cam.width, cam.height)
            batch = self.simulator.update(t_ns, log_intensity(rgb, cam.events.log_eps))
            self.ctx.writer.append_events(cam.name, batch.x, batch.y, batch.t_ns, batch.polarity)


class EventCamera(SensorKind):
    type = "event_camera"

    def mounts(self, sensor: SensorSpec) -> tuple:
        return (camera_mount(sensor),)

    def metadata(self, sensor: SensorSpec) -> dict:
        K = intrinsics(sensor.width, sensor.height, sensor.hfov_deg)
        events = sensor.events
        return base_metadata(sensor) | {
            "type": "events",
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
