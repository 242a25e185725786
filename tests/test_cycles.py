"""Blender Cycles as a twin's renderer: the camera convention, a Cycles twin, Cycles' own
ground truth against MuJoCo's, and the one-line errors. Tiny images, few samples."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from conftest import digest_folder, place
from twinsim.render.cycles.camera import (
    BLENDER_FROM_OPENCV,
    apply_camera,
    blender_camera,
)
from twinsim.render.cycles.settings import CyclesSettings

pytestmark = pytest.mark.blender  # Blender Cycles (bpy)

W, H = 64, 48


def _look_at(eye, target) -> np.ndarray:
    """T_world_cam of an OpenCV camera at `eye` looking at `target`, world z up."""
    z = np.asarray(target, float) - eye
    z /= np.linalg.norm(z)
    x = np.cross(z, [0.0, 0.0, 1.0])
    x /= np.linalg.norm(x)
    T = np.eye(4)
    T[:3, 0], T[:3, 1], T[:3, 2], T[:3, 3] = x, np.cross(z, x), z, eye
    return T


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory, gl_backend):
    """A 1 s tiny run with two people and two flying objects, 64×48 camera, IMU."""
    from twinsim.config import load_config
    from twinsim.sim import run

    overrides = ("people.count=2", "flying_objects.count=2")
    out = tmp_path_factory.mktemp("cycles") / "src"
    return run(load_config("tiny", overrides, seed=3, duration_s=1.0), out)


@pytest.fixture(scope="module")
def cycles_twin(tiny_run, tmp_path_factory):
    """The tiny run's Cycles twin (8 spp, denoised, every 2nd frame rendered)."""
    from twinsim.replay import replay

    out = tmp_path_factory.mktemp("cycles") / "twin"
    settings = CyclesSettings(samples=8, denoise=True, seed=1, every=2)
    return replay(tiny_run, out, renderer="cycles", cycles=settings)


def test_opencv_points_land_on_the_same_blender_pixels():
    """A point projected by K·T_cam_world (OpenCV, principal point off centre) is where
    Blender's camera (`world_to_camera_view`) puts it, to 1e-4 px (mathutils is float32)."""
    import bpy
    from bpy_extras.object_utils import world_to_camera_view
    from mathutils import Vector

    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    obj = bpy.data.objects.new("cam", bpy.data.cameras.new("cam"))
    scene.collection.objects.link(obj)
    K = np.array([[41.0, 0.0, 27.3], [0.0, 41.0, 26.8], [0.0, 0.0, 1.0]])
    T_world_cam = _look_at(np.array([0.4, -1.0, 1.3]), [2.0, 1.5, 0.7])
    apply_camera(bpy, obj, blender_camera(K, W, H), T_world_cam, (0.05, 30.0))
    bpy.context.view_layer.update()
    rng = np.random.default_rng(0)
    p_cam = np.c_[rng.uniform(-1, 1, (50, 2)), rng.uniform(1.0, 6.0, 50)]
    p_world = p_cam @ T_world_cam[:3, :3].T + T_world_cam[:3, 3]
    uv_cv = (p_cam / p_cam[:, 2:]) @ K.T
    for p, (u, v, _) in zip(p_world, uv_cv, strict=True):
        ndc = world_to_camera_view(scene, obj, Vector(p.tolist()))
        assert ndc.x * W - 0.5 == pytest.approx(u, abs=1e-4)
        assert (1.0 - ndc.y) * H - 0.5 == pytest.approx(v, abs=1e-4)
    assert np.allclose(np.array(obj.matrix_world), T_world_cam @ BLENDER_FROM_OPENCV, atol=1e-6)


def test_principal_point_shifts_the_rendered_image(box_world, tmp_path):
    """Moving (cx, cy) by whole pixels translates the rendered object-index image by as many."""
    import mujoco

    from twinsim.render.cycles.scene import CyclesScene
    from twinsim.sensors.camera import intrinsics

    place(box_world, (0.3, 0.1, 1.2), yaw=0.4)
    mujoco.mj_forward(box_world.model, box_world.data)
    cycles = CyclesScene(box_world, CyclesSettings(samples=4, denoise=False), tmp_path / "w")
    K0 = intrinsics(W, H, 90.0)
    K1 = K0.copy()
    K1[0, 2] += 5
    K1[1, 2] -= 3
    T = box_world.T_world_cam("cam0")
    a = cycles.render(T, "robot", K0, (W, H), (0.05, 30.0)).instance
    b = cycles.render(T, "robot", K1, (W, H), (0.05, 30.0)).instance
    agree = b[0 : H - 3, 5:W] == a[3:H, 0 : W - 5]
    assert agree.mean() >= 0.98, agree.mean()
    assert (b != a).mean() > 0.05  # the shift did move the image
    assert not any(tmp_path.joinpath("w").iterdir())  # passes are read back and removed


def _ious(a: np.ndarray, b: np.ndarray, min_px: int) -> dict[int, float]:
    """IoU of each instance of `a` with at least `min_px` pixels against its pixels in `b`."""
    out = {}
    for iid in np.unique(a):
        x, y = a == iid, b == iid
        if x.sum() >= min_px:
            out[int(iid)] = float((x & y).sum() / (x | y).sum())
    return out


def test_cycles_ground_truth_matches_mujoco(tiny_run, tmp_path):
    """Cycles' z-depth and object-index passes against MuJoCo's at the instant of a recorded
    frame (MuJoCo re-renders the recorded depth bit for bit): depth equal on static surfaces,
    IoU ≥ 0.99 per instance at 256×192 (at the recorded 64×48 a one-pixel disagreement on a
    person's silhouette costs small instances more; measured IoUs printed with -s)."""
    from twinsim.render.cycles.scene import CyclesScene
    from twinsim.replay.source import load_source, world_at_frame
    from twinsim.sensors.camera import intrinsics
    from twinsim.sequence import open_sequence

    src = load_source(tiny_run)
    stream = open_sequence(tiny_run).camera("cam0")
    cam = src.scene.sensors[0]
    index = len(stream) // 2
    recorded = stream[index]
    world = world_at_frame(src, index, cam.width, cam.height)
    world4 = world_at_frame(src, index, 4 * cam.width, 4 * cam.height)
    settings = CyclesSettings(samples=1, denoise=False)
    try:
        assert np.array_equal(world.render("cam0", W, H).depth, recorded.depth)
        T_world_cam = world.T_world_cam("cam0")
        assert np.allclose(T_world_cam, recorded.T_world_cam, atol=1e-9)
        clip, w4, h4 = (cam.near_m, cam.far_m), 4 * W, 4 * H
        small = CyclesScene(world, settings, tmp_path / "w").render(
            T_world_cam, "robot", recorded.K, (W, H), clip
        )
        K4 = intrinsics(w4, h4, cam.hfov_deg)
        big = CyclesScene(world4, settings, tmp_path / "w").render(
            T_world_cam, "robot", K4, (w4, h4), clip
        )
        mujoco_big = world4.render("cam0", w4, h4)
        ids = world4.maps.geom_instance[np.maximum(mujoco_big.geom_ids, 0)]
        ids[mujoco_big.geom_ids < 0] = 0
        dynamic = world.maps.instance_dynamic
    finally:
        world.close()
        world4.close()
    for label, ours, theirs, depth, theirs_depth in (
        ("64x48", recorded.instance, small.instance, recorded.depth, small.depth),
        ("256x192", ids, big.instance, mujoco_big.depth, big.depth),
    ):
        same = (ours == theirs) & (ours > 0)
        static = same & ~dynamic[ours]
        error = np.abs(theirs_depth - depth)
        moving = error[same & dynamic[ours]]
        print(
            f"{label}: static depth error max {error[static].max():.2e} m on {static.sum()} px; "
            f"people/flying max {moving.max() if moving.size else 0:.2e} m; "
            f"IoU { ({k: round(v, 4) for k, v in _ious(ours, theirs, 20).items()}) }"
        )
        assert static.sum() > 0.5 * ours.size
        assert error[static].max() < 2e-3
    ious = _ious(ids, big.instance, 20)
    assert min(ious.values()) >= 0.99, ious


def test_cycles_twin_changes_only_colour(tiny_run, cycles_twin):
    """A Cycles twin is a valid sequence; its rendered RGB differs from the source's, the
    others' colour and every other file are the source's bytes; metadata names the renderer."""
    from twinsim.sequence import open_sequence, validate_sequence

    report = validate_sequence(cycles_twin)
    assert report.ok, report.problems
    a, b = digest_folder(tiny_run), digest_folder(cycles_twin)
    assert a.keys() == b.keys()
    changed = {k for k in a if a[k] != b[k]}
    rgb = sorted(k for k in a if "/rgb/" in k)
    rendered = set(rgb[::2])
    assert rendered and changed == rendered | ({"metadata.json", "checksums.csv"} & a.keys())
    src, twin = open_sequence(tiny_run).camera("cam0"), open_sequence(cycles_twin).camera("cam0")
    for i in range(0, len(src), 2):
        assert not np.array_equal(src[i].rgb, twin[i].rgb)
        assert np.array_equal(src[i].depth, twin[i].depth)
    renderer = json.loads((cycles_twin / "metadata.json").read_text())["twin"]["renderer"]
    assert renderer["name"] == "cycles" and renderer["samples"] == 8
    assert renderer["seed"] == 1 and renderer["every"] == 2
    assert renderer["blender_version"].startswith("5.0")
    assert not (cycles_twin / ".cycles-work").exists()


def test_cycles_is_deterministic(box_world, tmp_path):
    """The same state, seed and samples give the same bytes (CPU Cycles, denoised)."""
    import mujoco

    from twinsim.render.cycles.scene import CyclesScene
    from twinsim.sensors.camera import intrinsics

    place(box_world, (-0.5, 0.4, 1.0), yaw=2.0)
    mujoco.mj_forward(box_world.model, box_world.data)
    cycles = CyclesScene(box_world, CyclesSettings(samples=4, seed=7), tmp_path / "w")
    T, K = box_world.T_world_cam("cam0"), intrinsics(W, H, 90.0)
    first = cycles.render(T, "robot", K, (W, H), (0.05, 30.0))
    again = cycles.render(T, "robot", K, (W, H), (0.05, 30.0))
    assert np.array_equal(first.rgb, again.rgb)
    assert np.array_equal(first.depth, again.depth)


def test_adaptive_sampling_is_deterministic_and_takes_effect(box_world, tmp_path):
    """Adaptive sampling stops pixels early (another image than all samples) and gives the
    same bytes again for the same seed and threshold. 128 samples: well above Cycles' automatic
    minimum (at 32 samples this threshold stopped no pixel early)."""
    import mujoco

    from twinsim.render.cycles.scene import CyclesScene
    from twinsim.sensors.camera import intrinsics

    place(box_world, (-0.5, 0.4, 1.0), yaw=2.0)
    mujoco.mj_forward(box_world.model, box_world.data)
    T, K = box_world.T_world_cam("cam0"), intrinsics(W, H, 90.0)
    images = []
    for threshold in (0.1, 0.1, 0.0):
        settings = CyclesSettings(samples=128, seed=3, denoise=False, adaptive_threshold=threshold)
        cycles = CyclesScene(box_world, settings, tmp_path / f"w{len(images)}")
        images.append(cycles.render(T, "robot", K, (W, H), (0.05, 30.0)).rgb)
    assert np.array_equal(images[0], images[1])
    assert not np.array_equal(images[0], images[2])


def _cli(*args: str, hide_bpy: bool = False) -> subprocess.CompletedProcess:
    """`twinsim ARGS` in a new interpreter (with `import bpy` failing if `hide_bpy`)."""
    hide = "sys.modules['bpy'] = None; " if hide_bpy else ""
    code = (
        f"import sys; {hide}from twinsim.cli import main; sys.argv = {['twinsim', *args]!r}; main()"
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--renderer", "povray"], "unknown renderer 'povray'; valid: mujoco, cycles"),
        (["--renderer", "cycles", "--samples", "0"], "--samples must be > 0, got 0"),
        (["--renderer", "cycles", "--rerender"], "do not see the source's world"),
        (["--renderer", "cycles", "--ground-truth", "pov"], "valid: mujoco, cycles"),
        (["--renderer", "cycles", "--ground-truth", "cycles", "--every", "2"], "never mixes"),
        (["--renderer", "cycles", "--exposure", "manual"], "valid: fixed, auto"),
        (["--renderer", "cycles", "--vignetting", "2"], "--vignetting must be in [0, 1]"),
        (["--renderer", "cycles", "--adaptive-threshold", "-1"], "--adaptive-threshold must be"),
    ],
)
def test_bad_renderer_options_are_one_line_errors(tiny_run, tmp_path, options, message):
    """Bad renderer options: exit 2, one line naming the problem, nothing written."""
    out = tmp_path / "twin"
    result = _cli("replay", str(tiny_run), "--out", str(out), *options)
    assert result.returncode == 2, result.stderr + result.stdout
    assert message in result.stderr + result.stdout
    assert "Traceback" not in result.stderr
    assert not out.exists()


def test_missing_bpy_is_a_one_line_error_with_the_install_command(tiny_run, tmp_path):
    """Without bpy, `--renderer cycles` says how to install it (exit 2, no traceback)."""
    out = tmp_path / "twin"
    result = _cli("replay", str(tiny_run), "--out", str(out), "--renderer", "cycles", hide_bpy=True)
    assert result.returncode == 2, result.stderr + result.stdout
    assert "install it: pip install --no-deps bpy==5.0.1" in result.stderr + result.stdout
    assert "Traceback" not in result.stderr
    assert not out.exists()


def test_a_pool_of_workers_gives_the_same_twin(tiny_run, cycles_twin, tmp_path):
    """Frames rendered by two worker processes (each its own Blender scene, fed the main
    process's instants) make the same twin, byte for byte, as one process."""
    from twinsim.replay import replay

    settings = CyclesSettings(samples=8, denoise=True, seed=1, every=2, workers=2)
    pooled = replay(tiny_run, tmp_path / "pooled", renderer="cycles", cycles=settings)
    assert digest_folder(pooled) == digest_folder(cycles_twin)
