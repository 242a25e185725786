"""Event camera model: polarity, count and timing of events, refractory period, determinism."""

from __future__ import annotations

import numpy as np
import pytest

from twinsim.model.sensors import EventSpec
from twinsim.sensors.events import EventSimulator, log_intensity

W, H = 12, 10
BRIGHT = (slice(1, 4), slice(1, 5))  # rows, columns of the brightening patch
DARK = (slice(6, 9), slice(7, 11))
C = 0.2


def _spec(refractory_ns: int = 0) -> EventSpec:
    return EventSpec(threshold_pos=C, threshold_neg=C, refractory_ns=refractory_ns, log_eps=0.02)


def _patches(gain_bright: float, gain_dark: float) -> np.ndarray:
    """An RGB image: mid grey, one patch scaled by gain_bright and one by gain_dark."""
    image = np.full((H, W, 3), 100.0)
    image[BRIGHT] *= gain_bright
    image[DARK] *= gain_dark
    return np.clip(np.rint(image), 0, 255).astype(np.uint8)


def test_brightening_and_darkening_patches_give_their_polarity():
    sim = EventSimulator(_spec(), W, H)
    eps = 0.02
    assert len(sim.update(0, log_intensity(_patches(1.0, 1.0), eps))) == 0  # reference only
    batch = sim.update(10_000_000, log_intensity(_patches(2.0, 0.4), eps))
    ys, xs = batch.y.astype(int), batch.x.astype(int)
    in_bright = (ys >= 1) & (ys < 4) & (xs >= 1) & (xs < 5)
    in_dark = (ys >= 6) & (ys < 9) & (xs >= 7) & (xs < 11)
    assert (in_bright | in_dark).all()  # nothing where the image did not change
    assert (batch.polarity[in_bright] == 1).all() and (batch.polarity[in_dark] == -1).all()
    # every pixel fires once per threshold crossed: floor(|Δ log I| / C)
    step_up = np.log(200 / 255 + eps) - np.log(100 / 255 + eps)
    step_down = np.log(100 / 255 + eps) - np.log(40 / 255 + eps)
    assert in_bright.sum() == 12 * int(step_up // C)
    assert in_dark.sum() == 12 * int(step_down // C)
    # times: in (t0, t1], sorted, the k-th crossing of a pixel at k·C / Δ of the interval
    assert (batch.t_ns > 0).all() and (batch.t_ns <= 10_000_000).all()
    assert (np.diff(batch.t_ns) >= 0).all()
    first_up = batch.t_ns[in_bright].min()
    assert first_up == round(C / step_up * 10_000_000)
    # nothing changes after: no events; back to the start image: opposite polarities
    assert len(sim.update(20_000_000, log_intensity(_patches(2.0, 0.4), eps))) == 0
    back = sim.update(30_000_000, log_intensity(_patches(1.0, 1.0), eps))
    by, bx = back.y.astype(int), back.x.astype(int)
    was_bright = (by >= 1) & (by < 4) & (bx >= 1) & (bx < 5)
    assert (back.polarity[was_bright] == -1).all() and (back.polarity[~was_bright] == 1).all()


def test_refractory_period_drops_events_too_close_in_time():
    steps = [_patches(g, 1.0) for g in (1.0, 2.5)]
    free = EventSimulator(_spec(0), W, H)
    held = EventSimulator(_spec(8_000_000), W, H)
    for sim in (free, held):
        sim.update(0, log_intensity(steps[0], 0.02))
    a = free.update(10_000_000, log_intensity(steps[1], 0.02))
    b = held.update(10_000_000, log_intensity(steps[1], 0.02))
    assert len(a) > len(b) > 0
    per_pixel = np.bincount(b.y.astype(int) * W + b.x.astype(int))
    assert per_pixel.max() == 1  # the 10 ms ramp leaves room for one event per 8 ms pixel
    for pixel in np.unique(a.y.astype(int) * W + a.x):
        t = np.sort(a.t_ns[a.y.astype(int) * W + a.x == pixel])
        assert len(t) >= 2 and (np.diff(t) < 8_000_000).all()


def test_events_are_deterministic_and_reject_time_going_back():
    rng = np.random.default_rng(3)
    frames = rng.integers(0, 256, size=(5, H, W, 3), dtype=np.uint8)
    runs = []
    for _ in range(2):
        sim = EventSimulator(_spec(1_000_000), W, H)
        out = [sim.update(i * 4_166_667, log_intensity(f, 0.02)) for i, f in enumerate(frames)]
        runs.append(np.concatenate([np.stack([b.t_ns, b.x, b.y, b.polarity]) for b in out], 1))
    np.testing.assert_array_equal(runs[0], runs[1])
    assert runs[0].shape[1] > 100
    with pytest.raises(ValueError, match="not after the previous render"):
        sim.update(0, log_intensity(frames[0], 0.02))
