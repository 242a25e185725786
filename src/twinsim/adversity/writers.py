"""Writers between a recorder and its sequence that put the weather into what is written: rain,
snow and smoke onto each colour image (`WeatherWriter`), fog, rain and snow into each LiDAR sweep
(`twinsim.sensors.lidar_weather.LidarWeatherWriter`). A run, a live episode and a twin write
through the same ones (`weather_writers`); their event cameras composite the same image weather
onto each render (`image_weather`, handed to the recorder)."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np

from twinsim.adversity.atmosphere import lidar_weather
from twinsim.adversity.image import Weather
from twinsim.engine.look import Look
from twinsim.model.layout import frame_path
from twinsim.model.scene import SceneSpec
from twinsim.sensors.camera import intrinsics
from twinsim.sensors.lidar_weather import LidarWeatherWriter
from twinsim.sequence.frames import CameraFrame, CopiedFrame
from twinsim.sequence.images import read_npy

WEATHER_IN_FLIGHT = 2  # frames composited ahead of the writer


class WeatherWriter:
    """A writer that composites the weather onto each colour image before writing it.

    Compositing runs on one worker thread (NumPy releases the GIL) while the simulation renders
    the next frames, at most `in_flight` frames ahead; frames are handed to the writer in the
    order they came. `in_flight=0` composites each frame before `write_frame` returns (a live
    episode observes the frame it records).
    """

    def __init__(
        self, writer, weather: Weather, scene: SceneSpec, in_flight: int = WEATHER_IN_FLIGHT
    ) -> None:
        self._writer, self._weather, self._in_flight = writer, weather, in_flight
        self._K = {
            scene.stream_prefix(s.robot) + s.name: intrinsics(s.width, s.height, s.hfov_deg)
            for s in scene.sensors
            if s.type == "camera"
        }
        self._pool = (
            ThreadPoolExecutor(max_workers=1, thread_name_prefix="weather") if in_flight else None
        )
        self._pending: deque[tuple[Callable, str, CameraFrame | CopiedFrame, Future | None]]
        self._pending = deque()

    def __getattr__(self, name: str):
        return getattr(self._writer, name)

    def write_frame(self, name: str, frame: CameraFrame) -> None:
        self._queue(self._writer.write_frame, name, frame, frame.depth)

    def write_copied_frame(self, name: str, frame: CopiedFrame) -> None:
        """A copied frame with a new colour image gets weather; one copied whole has it."""
        depth = None
        if frame.rgb is not None:
            depth = read_npy(frame_path(frame.source, "depth", frame.index), name)
        self._queue(self._writer.write_copied_frame, name, frame, depth)

    def _queue(self, write: Callable, name: str, frame, depth: np.ndarray | None) -> None:
        if depth is not None and self._pool is None:
            frame.rgb = self._apply(name, frame, depth)
            write(name, frame)
            return
        future = None
        if depth is not None:
            future = self._pool.submit(self._apply, name, frame, depth)
        self._pending.append((write, name, frame, future))
        while len(self._pending) > self._in_flight:
            self._write_oldest()

    def _apply(self, name: str, frame, depth: np.ndarray) -> np.ndarray:
        args = (frame.rgb, depth, self._K[name], frame.T_world_cam, frame.t_ns / 1e9)
        return self._weather.apply(*args)

    def _write_oldest(self) -> None:
        write, name, frame, future = self._pending.popleft()
        if future is not None:
            frame.rgb = future.result()
        write(name, frame)

    def write_pending(self) -> None:
        """Write every frame still being composited (before a checkpoint)."""
        while self._pending:
            self._write_oldest()

    def flush(self) -> None:
        """Write every frame still being composited (before the writer closes)."""
        try:
            self.write_pending()
        finally:
            if self._pool is not None:
                self._pool.shutdown(wait=True)


def min_ranges(scene: SceneSpec) -> dict[str, float]:
    """Each LiDAR stream's minimum range, by stream name."""
    return {
        scene.stream_prefix(s.robot) + s.name: s.lidar.min_range_m
        for s in scene.sensors
        if s.type == "lidar"
    }


def image_weather(scene: SceneSpec, weather: dict) -> Weather | None:
    """The rain, snow and smoke of `weather` (`Atmosphere`'s) in `scene`, composited onto the
    colour cameras' frames and the event cameras' renders alike; None where there are none."""
    image = Weather(
        scene,
        weather.get("rain", 0.0),
        weather.get("snow", 0.0),
        weather.get("smoke", 0.0),
        int(weather.get("seed", 0)),
    )
    return image if image.active else None


def weather_writers(
    writer,
    scene: SceneSpec,
    look: Look,
    weather: dict,
    image: Weather | None,
    in_flight: int = WEATHER_IN_FLIGHT,
):
    """`writer` behind the LiDAR weather (fog, rain, snow) of `look` and `weather`
    (`Atmosphere`'s) and the image weather `image` (`image_weather` of them, which the event
    cameras composite too), each only where it changes something; `writer` itself in clear
    air. Call `flush()` on what it returns (when it is not `writer`) before the writer closes."""
    target = writer
    lidar = lidar_weather(look, weather)
    if lidar.active:
        target = LidarWeatherWriter(target, lidar, min_ranges(scene))
    if image is not None:
        target = WeatherWriter(target, image, scene, in_flight)
    return target
