"""Each robot kind's and generator's world, as `scene.json`, is byte-identical to the hash
recorded before the packages were reorganised (issue 33): moving a kind into its folder or a
field into a shared base (`GroundSpec`) must not change one byte of the scenes it writes."""

from __future__ import annotations

import hashlib

import pytest

from twinsim.assemble import build_scene
from twinsim.config import load_config

# sha256 of `build_scene(...).to_json()`, first 16 hex digits, recorded at commit 16fb57c
GOLDEN = {
    "drone": ([], "11b2c0db1aaa278b"),
    "omni": (["robot.kind=omni"], "5476b0485498e991"),
    "diff_drive": (["robot.kind=diff_drive"], "dad92bc573f8bb90"),
    "quadruped": (["robot.kind=quadruped"], "a06bb335235fb49b"),
    "arm": (["robot.kind=arm"], "91060bde53910e1e"),
    "car_town": (["robot.kind=car", "scene.generator=town"], "a0fbd8977f2e7297"),
    "warehouse": (["scene.generator=warehouse"], "448da7d82c95a739"),
}


@pytest.mark.parametrize("case", sorted(GOLDEN))
def test_scene_json_is_byte_identical_to_the_recorded_hash(case):
    overrides, digest = GOLDEN[case]
    scene = build_scene(load_config("default", [*overrides, "seed=0"]))
    assert hashlib.sha256(scene.to_json().encode()).hexdigest()[:16] == digest
