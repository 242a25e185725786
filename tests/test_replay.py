"""Experiment repetition: exact teleport replays, static twins, refused sources and variations."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from conftest import digest_folder
from twinsim.errors import ConfigError, OutputFolderError
from twinsim.replay import Variations, compare_sequences, replay
from twinsim.replay.source import ReplaySourceError
from twinsim.sequence import open_sequence, validate_sequence

# the only metadata key of a twin that differs from its source: what it is a twin of
TWIN_ONLY_METADATA = {"twin"}


@pytest.fixture(scope="module", params=["copied", "rendered"])
def exact_twin(dynamic_sequence, tmp_path_factory, request) -> Path:
    """An unmodified teleport replay of the shared dynamic sequence: its camera frames copied
    from the source (the default), or every frame rendered again."""
    out = tmp_path_factory.mktemp(f"exact_{request.param}") / "twin"
    return replay(dynamic_sequence, out, rerender=request.param == "rendered")


@pytest.fixture(scope="module")
def static_twin(dynamic_sequence, tmp_path_factory) -> Path:
    return replay(
        dynamic_sequence, tmp_path_factory.mktemp("static") / "twin", Variations(static=True)
    )


def _dynamic_ids(seq) -> list[int]:
    return [row["instance_id"] for row in seq.metadata["instances"] if row["dynamic"]]


def test_unmodified_teleport_replay_is_byte_identical(dynamic_sequence, exact_twin):
    a, b = digest_folder(dynamic_sequence), digest_folder(exact_twin)
    assert set(a) == set(b)
    differing = {path for path in a if a[path] != b[path]}
    assert differing == {"metadata.json"}  # every stream, image and scene.json: same bytes
    meta_a = json.loads((dynamic_sequence / "metadata.json").read_text())
    meta_b = json.loads((exact_twin / "metadata.json").read_text())
    assert set(meta_b) - set(meta_a) == TWIN_ONLY_METADATA
    assert {k: v for k, v in meta_b.items() if k not in TWIN_ONLY_METADATA} == meta_a
    twin = meta_b["twin"]
    assert twin["source"] == str(dynamic_sequence.resolve())
    assert twin["mode"] == "teleport" and twin["variations"] == {}
    copied = {} if "rendered" in exact_twin.parent.name else {"cam0": "all"}
    assert twin["copied_from_source"] == copied


def test_compare_reports_zero_deviation_and_unit_ssim(dynamic_sequence, exact_twin):
    result = compare_sequences(dynamic_sequence, exact_twin)
    assert result.poses and result.cameras
    for dev in result.poses.values():
        assert dev["samples"] > 0
        for axis in ("x", "y", "z", "roll", "pitch", "yaw"):
            assert dev[axis] == {"mean": 0.0, "std": 0.0, "max_abs": 0.0}
    for cam in result.cameras.values():
        assert cam["frames"] == len(open_sequence(dynamic_sequence).camera("cam0"))
        assert cam["rgb_ssim"]["min"] == 1.0 and cam["depth_ssim"]["min"] == 1.0
        assert cam["depth_mae_m"]["max"] == 0.0
    assert all(t["max_abs_difference"] == 0.0 for t in result.tables.values())


def test_static_twin_has_no_dynamic_instance_anywhere(dynamic_sequence, static_twin):
    src, twin = open_sequence(dynamic_sequence), open_sequence(static_twin)
    assert validate_sequence(static_twin).ok
    removed = _dynamic_ids(src)
    assert removed and not _dynamic_ids(twin)
    assert twin.scene.people == () and twin.scene.flying_objects == ()
    known = {row["instance_id"] for row in twin.metadata["instances"]}
    for frame in twin.camera("cam0"):
        assert not np.isin(frame.instance, removed).any()
        assert {b["instance_id"] for b in frame.boxes} <= known
        assert frame.keypoints == {} and frame.dynamic_fraction == 0.0
    assert twin.metadata["twin"]["variations"] == {"static": True}
    assert twin.metadata["twin"]["copied_from_source"] == {}  # the world changed: all rendered
    # the robot flew exactly as recorded
    assert (dynamic_sequence / "groundtruth_body" / "data.csv").read_bytes() == (
        static_twin / "groundtruth_body" / "data.csv"
    ).read_bytes()


def test_static_twin_equals_original_wherever_no_dynamic_content_was_shown(
    dynamic_sequence, static_twin
):
    """Depth and masks equal outside the removed actors; where they were, the background shows.

    RGB may differ outside them only where a removed actor's shadow fell (reflections are off
    by default): such pixels can only be brighter in the twin, in every channel.
    """
    src, twin = open_sequence(dynamic_sequence), open_sequence(static_twin)
    removed = _dynamic_ids(src)
    cam_a, cam_b = src.camera("cam0"), twin.camera("cam0")
    shown, shadowed, outside = 0, 0, 0
    for fa, fb in zip(cam_a, cam_b, strict=True):
        dyn = np.isin(fa.instance, removed)
        keep = ~dyn
        assert np.array_equal(fa.depth[keep], fb.depth[keep])
        assert np.array_equal(fa.instance[keep], fb.instance[keep])
        assert np.array_equal(fa.semantic[keep], fb.semantic[keep])
        changed = np.any(fa.rgb != fb.rgb, axis=2) & keep
        assert (fb.rgb[changed].astype(int) >= fa.rgb[changed].astype(int)).all()
        shadowed += int(changed.sum())
        outside += int(keep.sum())
        # behind a removed actor: the background, farther away (or nothing within range)
        bg = fb.depth[dyn]
        assert ((bg >= fa.depth[dyn]) | (bg == 0)).all()
        assert (fb.instance[dyn] != 0).mean() > 0.9
        shown += int(dyn.sum())
    assert shown > 0, "the source must show dynamic content for this test to mean anything"
    assert shadowed < 0.05 * outside


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def _edit_metadata(folder: Path, **changes) -> None:
    path = folder / "metadata.json"
    meta = json.loads(path.read_text())
    meta.update(changes)
    path.write_text(json.dumps(meta))


def test_bad_sources_are_refused_before_anything_is_written(dynamic_sequence, tmp_path):
    out = tmp_path / "never"
    partial = _copy(dynamic_sequence, tmp_path / "partial")
    (partial / "INCOMPLETE").write_text("interrupted\n")
    with pytest.raises(ReplaySourceError, match="not a valid sequence"):
        replay(partial, out)
    old = _copy(dynamic_sequence, tmp_path / "old")
    _edit_metadata(old, twinsim_version="0.0.9")
    with pytest.raises(ReplaySourceError, match=r"twinsim 0\.0\.9, older than 0\.1\.0"):
        replay(old, out)
    _edit_metadata(old, twinsim_version="0.1.0", mujoco_version="3.1.0")
    with pytest.raises(ReplaySourceError, match=r"MuJoCo 3\.1\.0.*would not repeat exactly"):
        replay(old, out)
    assert not out.exists()


def test_bad_variations_and_outputs_are_refused(dynamic_sequence, tmp_path):
    out = tmp_path / "never"
    with pytest.raises(ConfigError, match=r"class 'sofa'.*dynamic classes present: .*person"):
        replay(dynamic_sequence, out, Variations(remove_classes=("sofa",)))
    with pytest.raises(ConfigError, match=r"no instance 9999.*dynamic instances: "):
        replay(dynamic_sequence, out, Variations(remove_instances=(9999,)))
    with pytest.raises(ConfigError, match="part of the static world"):
        replay(dynamic_sequence, out, Variations(remove_instances=(1,)))
    with pytest.raises(ConfigError, match="remove_cameras: no camera 'cam7'"):
        replay(dynamic_sequence, out, Variations(remove_cameras=("cam7",)))
    assert not out.exists()
    with pytest.raises(OutputFolderError, match="not empty"):
        replay(dynamic_sequence, dynamic_sequence)
    with pytest.raises(OutputFolderError, match="inside the sequence"):
        replay(dynamic_sequence, dynamic_sequence / "twin")
    assert not (dynamic_sequence / "twin").exists()


@pytest.mark.slow
def test_twin_of_a_noisy_sequence_is_rendered_clean(dynamic_sequence, tmp_path):
    """Frames changed by `twinsim noise` are not copied: the twin renders them again, clean."""
    from twinsim.noise import apply_noise, resolve_profile

    noisy = apply_noise(dynamic_sequence, tmp_path / "noisy", resolve_profile("kinect"), seed=1)
    twin = replay(noisy, tmp_path / "twin")
    assert open_sequence(twin).metadata["twin"]["copied_from_source"] == {}
    for i in (0, 7):
        rel = f"cam0/depth/{i:06d}.npy"
        assert (twin / rel).read_bytes() == (dynamic_sequence / rel).read_bytes()
        assert (twin / rel).read_bytes() != (noisy / rel).read_bytes()
