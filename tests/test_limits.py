"""Commands a controller clamps are counted (`twinsim.robots.common.limits`), and a run's metadata
reports them robot by robot (`commands_clamped`)."""

from __future__ import annotations

import numpy as np

from twinsim.robots.common.limits import ClampedCommands


def test_clip_is_np_clip_and_counts_each_step_outside():
    clamped = ClampedCommands()
    values = [np.array([0.2, -0.1]), np.array([1.5, 0.0]), np.array([-2.0, 3.0])]
    for v in values:
        assert np.array_equal(clamped.clip("torque", v, -1.0, 1.0), np.clip(v, -1.0, 1.0))
    clamped.clip("speed", 0.3, -0.5, 0.5)
    report = clamped.report()
    assert set(report) == {"torque"}  # never clamped: not reported
    assert report["torque"] == {
        "steps": 2,
        "limits": [-1.0, 1.0],
        "lowest_requested": -2.0,
        "highest_requested": 3.0,
    }


def test_note_counts_a_norm_over_its_limit():
    clamped = ClampedCommands()
    for speed in (0.4, 0.7, 0.6):
        clamped.note("speed_mps", speed, 0.5)
    assert clamped.report()["speed_mps"]["steps"] == 2
    assert clamped.report()["speed_mps"]["highest_requested"] == 0.7
