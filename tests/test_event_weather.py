"""Event cameras see the image-space weather: rain, snow and smoke are composited onto each of
their renders by the colour cameras' own `Weather`, so a still camera in a still world fires
only where the weather moves, and a twin in weather reproduces the events of a run in it."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import digest_folder
from twinsim.closedloop import Session
from twinsim.config import load_config
from twinsim.model.sensors import EventSpec
from twinsim.replay import Variations, replay
from twinsim.sensors.events import EventSimulator, log_intensity
from twinsim.sequence import open_sequence
from twinsim.sim import run

SEED = 3
C = 0.02  # a sensitive sensor: the slow smoke drift (0.15 m/s) crosses 2 % within the episode
# ev0 sits where cam0 does (same mount, size and field of view) and renders at cam0's 30 Hz,
# so the colour frames the writer composites are exactly the images the events come from
EVENT_CAMERA = ("sensors.ev0.kind=event_camera", "sensors.ev0.width=64", "sensors.ev0.height=48")
STILL = (
    "robot.kind=omni",
    "sensors.cam0.pos=[0.08,0,0.7]",
    "sensors.ev0.pos=[0.08,0,0.7]",
    *EVENT_CAMERA,
    "sensors.ev0.rate_hz=30",
    f"sensors.ev0.threshold_pos={C}",
    f"sensors.ev0.threshold_neg={C}",
    "sensors.ev0.refractory_period_s=0",
)
STEPS = 20  # control periods of 1/30 s after the reset: 21 frames, 20 intervals of events
WEATHERS = {
    "clear": (),
    "rain": ("weather.rain=1",),
    "snow": ("weather.snow=1",),
    "smoke": ("weather.smoke=1",),
}


def _episode(out, *overrides: str):
    """An omni robot holding still (no command) in the static tiny world, recorded to `out`."""
    cfg = load_config("tiny", [*STILL, *overrides], seed=SEED, duration_s=1.0)
    with Session(cfg, out.parent) as session:
        session.reset(seed=SEED, out=out)
        for _ in range(STEPS):
            session.step()
    return out


@pytest.fixture(scope="module")
def episodes(tmp_path_factory, gl_backend):
    base = tmp_path_factory.mktemp("event-weather")
    return {name: _episode(base / name / "ep", *o) for name, o in WEATHERS.items()}


def _differing(a, b) -> set[str]:
    """The files of two sequence folders that differ (or that one of them lacks)."""
    da, db = digest_folder(a), digest_folder(b)
    return {p for p in da.keys() | db.keys() if da.get(p) != db.get(p)}


def _log_frames(path) -> tuple[np.ndarray, np.ndarray]:
    """cam0's frame times and log intensities (the event camera's luma and eps)."""
    frames = list(open_sequence(path).camera("cam0"))
    t_ns = np.array([f.t_ns for f in frames])
    return t_ns, np.stack([log_intensity(f.rgb, 0.02) for f in frames])


def test_a_still_camera_in_clear_air_fires_nothing(episodes):
    assert len(open_sequence(episodes["clear"]).events("ev0")) == 0
    _, L = _log_frames(episodes["clear"])
    assert (L[0] == L).all()  # nothing in view moves: what fires below is the weather


@pytest.mark.parametrize("name", ["rain", "snow", "smoke"])
def test_the_events_are_those_of_the_composited_colour_frames(episodes, name):
    """The events are, event for event, those of cam0's colour frames as the writer composited
    them with the same `Weather`, and they lie where those frames show the weather."""
    seq = open_sequence(episodes[name])
    recorded = seq.events("ev0")
    spec = EventSpec(threshold_pos=C, threshold_neg=C, refractory_ns=0, log_eps=0.02)
    simulator = EventSimulator(spec, 64, 48)
    t_ns, L = _log_frames(episodes[name])
    batches = [simulator.update(int(t), image) for t, image in zip(t_ns, L, strict=True)]
    for field in ("t_ns", "x", "y", "polarity"):
        expected = np.concatenate([getattr(b, field) for b in batches])
        np.testing.assert_array_equal(getattr(recorded, field), expected)
    _, clear = _log_frames(episodes["clear"])
    weather = (clear != L).any(axis=0)  # pixels that show a drop, a flake or smoke
    assert weather[recorded.y, recorded.x].all()
    counts = {"rain": 100_000, "snow": 50_000, "smoke": 30}
    assert len(recorded) > counts[name]


def test_rain_streaks_fire_both_ways_as_drops_pass(episodes):
    """A drop passing a pixel changes it, and the pixel changes back when the drop has fallen
    past: most pixels that fire, fire with both polarities."""
    ev = open_sequence(episodes["rain"]).events("ev0")
    pixel = ev.y.astype(np.int64) * 64 + ev.x
    up = np.unique(pixel[ev.polarity == 1])
    down = np.unique(pixel[ev.polarity == -1])
    assert len(np.intersect1d(up, down)) > 0.5 * len(up)


def test_a_twin_of_the_clear_episode_in_rain_fires_the_same_events(episodes, tmp_path):
    twin = replay(episodes["clear"], tmp_path / "twin", Variations(rain=1.0, seed=SEED))
    assert _differing(episodes["rain"], twin) == {"metadata.json"}  # events.npy included
    assert (twin / "ev0" / "events.npy").is_file()


def test_a_run_in_snow_fires_the_events_of_its_twin(tmp_path, gl_backend):
    """A run (`sim.record`) composites the event renders too: its events are those of the
    snow twin of the same run in clear air, and differ from the clear run's."""
    moving = (*EVENT_CAMERA, "sensors.ev0.rate_hz=120")  # the tiny drone's flight
    clear = run(load_config("tiny", moving, seed=SEED, duration_s=0.25), tmp_path / "clear")
    snow_cfg = load_config("tiny", [*moving, "weather.snow=1"], seed=SEED, duration_s=0.25)
    snow = run(snow_cfg, tmp_path / "snow")
    twin = replay(clear, tmp_path / "twin", Variations(snow=1.0, seed=SEED))
    assert _differing(snow, twin) == {"metadata.json"}
    assert "ev0/events.npy" in _differing(snow, clear)
    counts = [len(open_sequence(p).events("ev0")) for p in (clear, snow)]
    assert counts[1] > counts[0] > 0  # the flight's own events, and the snow's on top
