"""The drone in the apartment records the same bytes as the stored hashes.

`data/golden_drone_apartment.json` holds the sha256 of every stream file of a small run
(people, flying objects, a LiDAR and an event camera); `metadata.json` and `scene.json` may
gain fields and are left out, as is `checksums.csv` (it only hashes the files checked here).
First recorded before robots, sensors and worlds became plug-ins (the refactor kept them),
re-recorded with the pinned CPU kernels (`twinsim._numerics`, commit b64ddf3), and again when
scene format 3 fixed the robots' hinge ranges (the drone's pitch and roll limits had reached
MuJoCo as 0.44° instead of 0.44 rad, so it could not tilt) and every robot gained its
`contacts` stream, and again when round geoms were drawn within 1 mm of their exact surface
(`engine/round_meshes.py`) and furniture began to keep a passage between a room's doors
(this world's layout changed; poses, IMU and LiDAR of a same layout did not). The hashes
hold for the MuJoCo and NumPy versions `pyproject.toml` pins; upgrading either is a
deliberate change that records them anew.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from twinsim.config import load_config
from twinsim.sim import run

GOLDEN = Path(__file__).parent / "data" / "golden_drone_apartment.json"
OVERRIDES = (
    "people.count=2",
    "flying_objects.count=2",
    "lidars.lidar0.model=vlp-16",
    "lidars.lidar0.columns=180",
    "event_cameras.ev0.width=32",
    "event_cameras.ev0.height=24",
    "event_cameras.ev0.rate_hz=120",
)


def _hashes(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name not in ("metadata.json", "scene.json", "checksums.csv")
    }


def test_drone_in_apartment_is_byte_identical_to_the_recorded_hashes(tmp_path):
    cfg = load_config("tiny", OVERRIDES, seed=3, duration_s=0.5)
    got = _hashes(run(cfg, tmp_path / "seq"))
    want = json.loads(GOLDEN.read_text())
    assert sorted(got) == sorted(want)
    changed = [name for name in want if got[name] != want[name]]
    assert not changed, f"{len(changed)} files differ, e.g. {changed[:5]}"


def test_the_kernels_of_this_process_are_pinned():
    """The test process loaded NumPy with twinsim's pinned kernels (else the hashes above
    would hold on some machines only)."""
    from twinsim._numerics import PINNED, numerics

    assert numerics() == PINNED | {"pinned": True}
