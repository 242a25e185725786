"""Each robot kind's and generator's world, as `scene.json`, is byte-identical to the hash
recorded before the packages were reorganised (issue 33): moving a kind into its folder or a
field into a shared base (`GroundSpec`) must not change one byte of the scenes it writes."""

from __future__ import annotations

import hashlib

import pytest

from twinsim.assemble import build_scene
from twinsim.config import load_config

SHORT = "sim.duration_s=8"  # a short tour: the same code paths, a fraction of the planning
# sha256 of `build_scene(...).to_json()`, first 16 hex digits, recorded at commit 16fb57c
GOLDEN = {
    "drone": ("default", [SHORT], "1dddfb23a3249f5c"),
    "omni": ("default", ["robot.kind=omni", SHORT], "d77b2d7247e16248"),
    "diff_drive": ("default", ["robot.kind=diff_drive", SHORT], "76b1d6b535cf2a93"),
    "quadruped": ("default", ["robot.kind=quadruped", SHORT], "ccfedce64966795c"),
    "arm": ("tiny", ["robot.kind=arm", "sim.duration_s=12"], "4b2806045fe566e4"),
    "car_town": ("town", ["robot.kind=car", SHORT], "6fd18fca16da89c5"),
    "warehouse": ("default", ["scene.generator=warehouse", SHORT], "0f060ce92fab5c90"),
}


#: the cases of the everyday tier; the others are marked slow
QUICK_CASES = ("drone", "omni", "car_town")


@pytest.mark.parametrize(
    "case",
    [c if c in QUICK_CASES else pytest.param(c, marks=pytest.mark.slow) for c in sorted(GOLDEN)],
)
def test_scene_json_is_byte_identical_to_the_recorded_hash(case):
    preset, overrides, digest = GOLDEN[case]
    scene = build_scene(load_config(preset, [*overrides, "seed=0"]))
    assert hashlib.sha256(scene.to_json().encode()).hexdigest()[:16] == digest
