"""Changing light in live worlds (`render.flicker`): navbench's major adversity dims the scene
light slowly while the none level keeps it steady, and an episode with changing light still
replays byte-identically."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import digest_folder
from twinsim.closedloop.session import Session
from twinsim.config import load_config
from twinsim.errors import TwinsimError
from twinsim.navigation.bench import NavBenchSpec
from twinsim.replay import replay

SMALL = ["sensors.cam0.width=32", "sensors.cam0.height=24"]


def _brightness(level: str, seconds: float = 3.0) -> np.ndarray:
    """Mean rgb of each frame of a robot holding still in the tiny world at an adversity level."""
    spec = NavBenchSpec(methods=("planner",), worlds=("apartment",), overrides=tuple(SMALL))
    cfg = load_config("tiny", spec.config_overrides("apartment", level), duration_s=10)
    means = []
    with Session(cfg, record=False) as session:
        obs = session.reset(seed=2)
        end_ns = obs.t_ns + seconds * 1e9
        while obs.t_ns < end_ns:
            frame = obs.robots["robot"].latest_frame("cam0")
            if frame is not None:
                means.append(float(frame.rgb.mean()))
            obs = session.step({})
    return np.array(means)


@pytest.mark.slow
def test_major_adversity_changes_the_light_and_none_does_not(gl_backend):
    steady, dimming = _brightness("none"), _brightness("major")
    assert len(steady) > 60 and len(dimming) > 60
    assert np.ptp(steady) < 0.5  # a still robot in a still world: the same image
    # flicker 0.5 at 0.2 Hz: over 3 s (well over half a period) the light moves by a quarter
    # of its level or more, slowly (no jump between frames)
    assert np.ptp(dimming) > 0.12 * dimming.max(), (dimming.min(), dimming.max())
    assert np.abs(np.diff(dimming)).max() < 0.05 * dimming.max()


def test_an_episode_with_changing_light_replays_byte_identically(gl_backend, tmp_path):
    cfg = load_config("tiny", [*SMALL, "render.flicker=0.8", "render.flicker_hz=1.0"])
    with Session(cfg, tmp_path / "episodes") as session:
        obs = session.reset(seed=1)
        for _ in range(20):
            obs = session.step({})
        path = session.close()
    twin = replay(path, tmp_path / "twin", rerender=True)
    a, b = digest_folder(path), digest_folder(twin)
    assert {p for p in a if a[p] != b.get(p)} == {"metadata.json"}
    assert obs.t_ns > 0


@pytest.mark.parametrize("value", ["render.flicker=1.5", "render.flicker_hz=0"])
def test_render_light_fields_are_range_checked(value):
    with pytest.raises(TwinsimError, match=r"render\.flicker"):
        load_config("tiny", [value])
