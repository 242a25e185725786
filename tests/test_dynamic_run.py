"""A short run of a small dynamic world: people and flying objects, annotated at every frame."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from conftest import DYNAMIC_OVERRIDES, digest_folder
from twinsim.config import load_config
from twinsim.sensors.camera import backproject
from twinsim.sequence import open_sequence, validate_sequence
from twinsim.sim import run

OVERRIDES = list(DYNAMIC_OVERRIDES)


@pytest.fixture(scope="module")
def dynamic_run(dynamic_sequence) -> Path:
    return dynamic_sequence


def test_dynamic_sequence_is_valid_and_counts_people(dynamic_run):
    report = validate_sequence(dynamic_run)
    assert report.ok, report.problems
    meta = open_sequence(dynamic_run).metadata
    assert meta["people"]["requested"] == 4
    assert 1 <= meta["people"]["placed"] <= 4
    assert meta["flying_objects"] == 3
    dynamic = [row for row in meta["instances"] if row["dynamic"]]
    assert len(dynamic) == 2 * meta["people"]["placed"] + 3
    stats = meta["statistics"]
    assert stats["dynamic_content"]["frames"] == len(open_sequence(dynamic_run).camera("cam0"))
    assert len(stats["camera_motion"]["linear_speed"]) == 3


def test_moving_boxes_keypoints_and_coverage(dynamic_run):
    seq = open_sequence(dynamic_run)
    rows = {row["instance_id"]: row for row in seq.metadata["instances"]}
    person_parts = {}
    for row in rows.values():
        if "person_id" in row:
            person_parts.setdefault(row["person_id"], []).append(row["instance_id"])
    seen_dynamic = seen_keypoints = 0
    for frame in seq.camera("cam0"):
        dyn_ids = [i for i in np.unique(frame.instance) if i and rows[int(i)]["dynamic"]]
        coverage = np.isin(frame.instance, dyn_ids).mean() if dyn_ids else 0.0
        assert frame.dynamic_fraction == pytest.approx(coverage)
        pts = backproject(frame.depth, frame.K, frame.T_world_cam)
        for box in frame.boxes:
            iid = box["instance_id"]
            if not rows[iid]["dynamic"]:
                continue
            seen_dynamic += 1
            obb = box["obb"]
            local = (pts[frame.instance == iid] - obb["center"]) @ np.array(obb["rotation"])
            # every visible surface point of the moving instance lies in its 3D box at this frame
            assert np.all(np.abs(local) <= np.array(obb["half_extents"]) + 0.01)
        tight = {b["instance_id"]: b["tight"] for b in frame.boxes}
        for iid, kps in frame.keypoints.items():
            assert kps.shape == (17, 3)
            assert frame.joints_world[iid].shape[1] == 3
            own = next(ids for ids in person_parts.values() if iid in ids)
            boxes = [tight[i] for i in own if i in tight]
            for x, y in kps[kps[:, 2] == 2][:, :2]:
                seen_keypoints += 1
                px, py = int(np.floor(x + 0.5)), int(np.floor(y + 0.5))
                assert frame.instance[py, px] in own
                assert any(b[0] <= px <= b[2] and b[1] <= py <= b[3] for b in boxes)
    assert seen_dynamic > 0
    assert seen_keypoints > 0


def test_flying_objects_stay_in_bounds(dynamic_run):
    from twinsim.actors.flying import FlyingMotion

    scene = open_sequence(dynamic_run).scene
    lo, hi = np.array(scene.bounds_min), np.array(scene.bounds_max)
    for obj in scene.flying_objects:
        motion = FlyingMotion(obj)
        for t in np.arange(0.0, 4.0, 0.01):
            pos, _, _ = motion.pose(t)
            assert np.all(pos >= lo - 1e-9) and np.all(pos <= hi + 1e-9)


def test_dynamic_run_is_deterministic(dynamic_run, tmp_path):
    again = run(load_config("tiny", OVERRIDES, seed=2, duration_s=3.0), tmp_path / "again")
    assert digest_folder(again) == digest_folder(dynamic_run)


@pytest.mark.slow
def test_skipping_far_people_between_frames_changes_nothing(dynamic_run, tmp_path, monkeypatch):
    from twinsim.engine.world import World

    always = World.pose_actors
    monkeypatch.setattr(World, "pose_actors", lambda self, t_s, observed=True: always(self, t_s))
    full = run(load_config("tiny", OVERRIDES, seed=2, duration_s=3.0), tmp_path / "full")
    assert digest_folder(full) == digest_folder(dynamic_run)


def test_preview_can_pick_the_most_dynamic_frame(dynamic_sequence, tmp_path):
    """`make run` ends with `preview --most-dynamic`: the frame where people and moving objects
    cover the most pixels, so a newcomer sees them."""
    import json

    import cv2
    from typer.testing import CliRunner

    from twinsim.cli import app
    from twinsim.sequence.preview import preview_frame

    out = tmp_path / "p.png"
    args = ["preview", str(dynamic_sequence), "--most-dynamic", "--out", str(out)]
    assert CliRunner().invoke(app, args).exit_code == 0
    cam = open_sequence(dynamic_sequence).camera("cam0")
    shares = [json.loads(line)["dynamic_fraction"] for line in cam.boxes_lines]
    best = int(np.argmax(shares))
    assert shares[best] > 0
    assert np.array_equal(cv2.imread(str(out))[..., ::-1], preview_frame(cam[best]))
