"""Twins in a changed world (fog, night, adversity, materials, stereo, weather); control mode."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from conftest import digest_folder
from twinsim.actors.motion import motion_for
from twinsim.actors.placement import PEOPLE_CELL_M, animation_trace
from twinsim.adversity.image import Weather
from twinsim.cli import app
from twinsim.engine.look import Look
from twinsim.errors import ConfigError
from twinsim.replay import (
    LightVariation,
    ReplayMode,
    StereoVariation,
    Variations,
    compare_sequences,
    load_variations,
    replay,
)
from twinsim.replay.replay import plan_twin
from twinsim.replay.reuse import reusable_cameras
from twinsim.replay.source import load_source
from twinsim.sequence import open_sequence, validate_sequence

SOURCE_OVERRIDES = (
    "people.count=3",
    "flying_objects.count=2",
    "cameras.cam0.width=96",
    "cameras.cam0.height=72",
)


@pytest.fixture(scope="module")
def source(tmp_path_factory, gl_backend) -> Path:
    """A 1 s world with people, recorded once for this module."""
    from twinsim.config import load_config
    from twinsim.sim import run

    cfg = load_config("tiny", SOURCE_OVERRIDES, seed=2, duration_s=1.0)
    return run(cfg, tmp_path_factory.mktemp("variations") / "source")


VISUAL = {
    "fog": Variations(fog=0.6),
    "night": Variations(light=LightVariation(preset="night")),
    "minor": Variations(adversity="minor"),
}


@pytest.fixture(scope="module")
def visual_twins(source, tmp_path_factory) -> dict[str, Path]:
    """Each visual twin, and `minor` once more with every frame rendered again (no copies)."""
    root = tmp_path_factory.mktemp("visual")
    twins = {name: replay(source, root / name, v) for name, v in VISUAL.items()}
    twins["minor rendered"] = replay(source, root / "rendered", VISUAL["minor"], rerender=True)
    return twins


def _bytes(folder: Path, relative: str) -> bytes:
    return (folder / relative).read_bytes()


@pytest.mark.parametrize("name", [*sorted(VISUAL), "minor rendered"])
def test_visual_twins_keep_poses_depth_and_masks(source, visual_twins, name):
    twin = visual_twins[name]
    assert validate_sequence(twin).ok
    for table in ("groundtruth_body", "groundtruth_cam0", "odometry", "imu0"):
        assert _bytes(source, f"{table}/data.csv") == _bytes(twin, f"{table}/data.csv")
    assert _bytes(source, "cam0/boxes.jsonl") == _bytes(twin, "cam0/boxes.jsonl")
    n = len(open_sequence(source).camera("cam0"))
    rgb_change = []
    for i in range(n):
        for kind, ext in (("depth", "npy"), ("instance", "png"), ("semantic", "png")):
            rel = f"cam0/{kind}/{i:06d}.{ext}"
            assert _bytes(source, rel) == _bytes(twin, rel), rel
        a = cv2.imread(str(source / f"cam0/rgb/{i:06d}.png")).astype(float)
        b = cv2.imread(str(twin / f"cam0/rgb/{i:06d}.png")).astype(float)
        rgb_change.append(np.abs(a - b).mean())
    assert min(rgb_change) > 3.0  # visibly different in every frame


def test_copied_frames_are_what_rendering_again_gives(source, visual_twins):
    """A visual twin takes depth, masks and boxes from its source and renders only colour;
    rendering every frame again gives the same bytes in every file."""
    copied, rendered = visual_twins["minor"], visual_twins["minor rendered"]
    a, b = digest_folder(copied), digest_folder(rendered)
    assert set(a) == set(b) and {p for p in a if a[p] != b[p]} == {"metadata.json"}
    twin_a = json.loads((copied / "metadata.json").read_text())["twin"]
    twin_b = json.loads((rendered / "metadata.json").read_text())["twin"]
    assert twin_a["copied_from_source"] == {"cam0": "depth, masks, boxes"}
    assert twin_b["copied_from_source"] == {}
    assert twin_a | {"copied_from_source": {}} == twin_b


MAJOR_SEED = 8  # a twin seed whose added walkers cross cam0's view in the module's source


@pytest.fixture(scope="module")
def major_twin(source, tmp_path_factory) -> tuple[Path, str]:
    """`--adversity major` from the CLI: the twin and what the command printed."""
    out = tmp_path_factory.mktemp("major") / "twin"
    args = ["replay", str(source), "--out", str(out), "--adversity", "major"]
    res = CliRunner().invoke(app, [*args, "--seed", str(MAJOR_SEED)])
    assert res.exit_code == 0, res.output
    return out, " ".join(res.output.split())


def test_major_adversity_adds_walking_people_seen_in_depth_and_masks(source, major_twin):
    """Unreal Robotics Lab's major level has moving people: walkers clear of the robot's path,
    in depth, masks, boxes and the instance table; poses and every other pixel unchanged."""
    twin, output = major_twin
    assert validate_sequence(twin).ok
    for table in ("groundtruth_body", "groundtruth_cam0", "odometry", "imu0"):
        assert _bytes(source, f"{table}/data.csv") == _bytes(twin, f"{table}/data.csv")
    a, b = open_sequence(source), open_sequence(twin)
    added = b.metadata["twin"]["people_added"]
    assert added["requested"] == 3 and 1 <= added["placed"] <= 3
    assert b.metadata["people"]["requested"] == a.metadata["people"]["requested"] + 3
    if added["placed"] < 3:
        assert f"--adversity major (3 people): only {added['placed']} fit" in output
    assert b.metadata["twin"]["copied_from_source"] == {}  # new geometry: nothing is copied
    old = {p.body_instance_id for p in a.scene.people}
    new = [p for p in b.scene.people if p.body_instance_id not in old]
    assert len(new) == added["placed"] and {p.motion.kind for p in new} <= {"walk", "idle"}
    assert any(p.motion.kind == "walk" for p in new)
    again = plan_twin(load_source(source), Variations(adversity="major", seed=MAJOR_SEED))
    assert again.scene.people == b.scene.people  # the walkers follow from the twin's seed
    ids = sorted(
        {r["instance_id"] for r in b.metadata["instances"]}
        - {r["instance_id"] for r in a.metadata["instances"]}
    )
    table = {r["instance_id"]: r for r in b.metadata["instances"]}
    assert {p.body_instance_id for p in new} <= set(ids)
    assert all(
        table[i]["dynamic"] and table[i]["semantic_class"] in ("person", "clothing") for i in ids
    )
    ca, cb = a.camera("cam0"), b.camera("cam0")
    seen_frames, boxed = 0, set()
    for i in range(len(ca)):
        fa, fb = ca[i], cb[i]
        seen = np.isin(fb.instance, ids)
        for kind in ("depth", "instance", "semantic"):
            x, y = getattr(fa, kind), getattr(fb, kind)
            assert np.array_equal(x[~seen], y[~seen]), (i, kind)  # only the walkers change
        nearer = (fb.depth[seen] < fa.depth[seen]) | (fa.depth[seen] == 0)
        assert nearer.all()  # a walker hides what was behind it
        seen_frames += bool(seen.any())
    for line in (twin / "cam0/boxes.jsonl").read_text().splitlines():
        boxed |= {box["instance_id"] for box in json.loads(line)["boxes"]}
    assert seen_frames >= len(ca) // 2 and boxed & set(ids)


def test_added_people_are_never_copied_from_the_source(source):
    """A teleport twin copies a camera's depth and masks only while the geometry is the
    source's: added people (even with no visual change) make it render every frame."""
    src = load_source(source)
    for variations, copied in ((Variations(), {"cam0"}), (Variations(add_people=2), set())):
        plan = plan_twin(src, variations)
        assert plan.look == Look() and plan.scene.lights == src.scene.lights
        same_look = (plan.look, plan.weather) == (Look(), {})
        reused = reusable_cameras(src, plan.config, plan.scene, same_look, ReplayMode.teleport)
        assert set(reused) == copied


def test_full_flicker_swings_the_image_from_lit_to_dark(source, tmp_path):
    """Flicker 1.0 dims all the scene's light (lamps, their ambient, the headlight) to nothing
    at each trough: the darkest frames are far below the brightest, which match the source."""
    twin = replay(source, tmp_path / "flicker", Variations(light=LightVariation(flicker=1.0)))
    src, cam = open_sequence(source).camera("cam0"), open_sequence(twin).camera("cam0")
    mean = np.array([cam[i].rgb.mean() for i in range(len(cam))])
    recorded = np.array([src[i].rgb.mean() for i in range(len(src))])
    assert mean.min() < 0.25 * mean.max()  # before: the darkest frame kept ~75 % of it
    assert mean.max() > 0.9 * recorded[mean.argmax()]  # full light at the crest


def test_night_is_dark_and_fog_pulls_far_pixels_to_the_fog_colour(source, visual_twins):
    src = open_sequence(source).camera("cam0")
    night = open_sequence(visual_twins["night"]).camera("cam0")
    fog = open_sequence(visual_twins["fog"])
    fog_rgb = np.array(fog.metadata["twin"]["look"]["fog_rgb"]) * 255
    fog_cam = fog.camera("cam0")
    for i in range(0, len(src), 10):
        assert night[i].rgb.mean() < 0.5 * src[i].rgb.mean()
        far = src[i].depth > 2.0
        gap_src = np.abs(src[i].rgb[far] - fog_rgb).mean()
        gap_fog = np.abs(fog_cam[i].rgb[far] - fog_rgb).mean()
        assert gap_fog < 0.7 * gap_src


@pytest.fixture(scope="module")
def stereo_twin(source, tmp_path_factory) -> Path:
    """New materials, an added stereo pair and a camera looking down (all keep the geometry)."""
    stereo = StereoVariation(baseline_m=0.12, width=192, height=144, rate_hz=10)
    down = {"width": 64, "height": 48, "rate_hz": 5, "rpy_deg": [0, 60, 0], "pos": [0, 0, -0.05]}
    variations = Variations(materials_seed=7, stereo=stereo, cameras={"down": down})
    return replay(source, tmp_path_factory.mktemp("stereo") / "twin", variations)


def test_stereo_pair_disparity_agrees_with_depth(stereo_twin):
    twin = open_sequence(stereo_twin)
    left, right = twin.camera("stereo_left"), twin.camera("stereo_right")
    assert len(left) == len(right) == 10  # its own rate over the recorded second
    assert np.array_equal(left.t_ns, right.t_ns)
    fx = left.K[0, 0]
    sgbm = cv2.StereoSGBM_create(0, 48, 5, P1=200, P2=800, uniquenessRatio=10)
    within, errors = [], []
    for i in range(0, len(left), 3):
        fl, fr = left[i], right[i]
        rel = np.linalg.inv(fl.T_world_cam) @ fr.T_world_cam
        np.testing.assert_allclose(rel[:3, 3], [0.12, 0, 0], atol=1e-9)
        gray = [cv2.cvtColor(f.rgb, cv2.COLOR_RGB2GRAY) for f in (fl, fr)]
        disparity = sgbm.compute(*gray).astype(np.float32) / 16
        expected = np.where(fl.depth > 0, fx * 0.12 / np.maximum(fl.depth, 1e-6), 0)
        valid = (disparity > 0) & (expected > 0)
        assert valid.mean() > 0.4
        err = np.abs(disparity - expected)[valid]
        errors.append(np.median(err))
        within.append((err < 1.0).mean())
    assert max(errors) < 0.5 and min(within) > 0.85


def test_added_camera_poses_follow_the_body_at_its_own_rate(source, stereo_twin):
    twin = open_sequence(stereo_twin)
    cam = twin.camera("down")
    assert len(cam) == 5 and np.all(np.diff(cam.t_ns) == 200_000_000)
    t_body, T_body = open_sequence(source).groundtruth()
    T_body_cam = np.array(twin.stream_info("down")["T_body_sensor"])
    index = np.searchsorted(t_body, cam.t_ns)
    assert np.array_equal(t_body[index], cam.t_ns)
    np.testing.assert_allclose(cam.T_world_cam, T_body[index] @ T_body_cam, atol=1e-9)
    optical_z = T_body_cam[:3, 2]  # pitched 60° down: forward and mostly down in the body frame
    np.testing.assert_allclose(optical_z, [0.5, 0.0, -np.sqrt(3) / 2], atol=1e-9)


def test_changing_a_camera_keeps_its_other_settings(source):
    src = load_source(source)
    plan = plan_twin(src, Variations(cameras={"cam0": {"rpy_deg": [0, 20, 0]}}))
    before, after = src.config.robot.sensors["cam0"], plan.config.robot.sensors["cam0"]
    assert after.rpy_deg == (0, 20, 0) and after.width == before.width == 96
    assert after.model_copy(update={"rpy_deg": before.rpy_deg}) == before
    with pytest.raises(ConfigError, match=r"cameras\.cam0\.hfov_deg"):
        plan_twin(src, Variations(cameras={"cam0": {"hfov_deg": 500}}))


def test_new_materials_keep_geometry(source, stereo_twin):
    a, b = open_sequence(source), open_sequence(stereo_twin)
    # cam0 is unchanged: its depth and masks are the source's, only its colour is rendered
    assert b.metadata["twin"]["copied_from_source"] == {"cam0": "depth, masks, boxes"}
    assert a.scene.objects == b.scene.objects and a.scene.textures != b.scene.textures
    fa, fb = a.camera("cam0")[5], b.camera("cam0")[5]
    assert np.array_equal(fa.depth, fb.depth) and np.array_equal(fa.instance, fb.instance)
    assert np.abs(fa.rgb.astype(int) - fb.rgb).mean() > 5


def test_control_replay_repeats_the_motion(source, tmp_path):
    """Logged set-points through the PID and physics again: GRADE's bar, per axis."""
    twin = replay(source, tmp_path / "control", mode=ReplayMode.control)
    result = compare_sequences(source, twin, stride=30)
    assert set(result.poses) == {"groundtruth_body", "groundtruth_cam0"}
    for dev in result.poses.values():
        for axis in ("x", "y", "z", "roll", "pitch", "yaw"):
            assert abs(dev[axis]["mean"]) <= 1e-6 and dev[axis]["std"] <= 1e-5
    assert result.tables["imu0"]["max_abs_difference"] < 1e-9
    assert json.loads((twin / "metadata.json").read_text())["twin"]["mode"] == "control"


def test_variations_from_yaml_compose(tmp_path):
    path = tmp_path / "twin.yaml"
    path.write_text(
        yaml.safe_dump(
            {"static": True, "adversity": "minor", "rain": 0.0, "light": {"preset": "dusk"}}
        )
    )
    v = load_variations(path).resolved()
    assert v.static and v.fog == 0.15 and v.rain == 0.0 and v.smoke == 0.2
    assert v.light.preset == "dusk"
    # URL's minor level is environmental effects only; major adds flicker and walking people
    assert v.light.flicker == 0.0 and v.add_people == 0
    major = Variations(adversity="major").resolved()
    assert major.add_people == 3 and major.add_people_motions == {"walk": 1.0}
    assert major.light.flicker == 0.4 and major.smoke == 0.6
    assert Variations(adversity="major", add_people=1).resolved().add_people == 1
    assert Variations(adversity="major").summary() == {"adversity": "major"}
    path.write_text("fog: 2\n")
    with pytest.raises(ConfigError, match=r"twin\.yaml': fog: .* less than or equal to 1"):
        load_variations(path)
    path.write_text("rainbow: 1\n")
    with pytest.raises(ConfigError, match="unknown variation 'rainbow'"):
        load_variations(path)


def test_rain_is_hidden_behind_near_surfaces(source):
    """Particles are drawn only in front of the surface each pixel sees."""
    scene = open_sequence(source).scene
    weather = Weather(scene, rain=1.0, snow=0.0, smoke=0.0, seed=3)
    K = np.array([[48.0, 0, 47.5], [0, 48.0, 35.5], [0, 0, 1]])
    T = np.eye(4)
    T[:3, :3] = [[0, 0, 1], [-1, 0, 0], [0, -1, 0]]  # looking along world +x
    T[:3, 3] = [scene.bounds_min[0] + 0.5, 0.0, 1.3]
    grey = np.full((72, 96, 3), 90, np.uint8)
    far = weather.apply(grey, np.full((72, 96), 8.0, np.float32), K, T, 0.5)
    near = weather.apply(grey, np.full((72, 96), 0.3, np.float32), K, T, 0.5)
    again = weather.apply(grey, np.full((72, 96), 8.0, np.float32), K, T, 0.5)
    assert np.array_equal(far, again)  # deterministic
    changed_far = np.any(far != grey, axis=2).mean()
    changed_near = np.any(near != grey, axis=2).mean()
    assert changed_far > 0.02 and changed_near < 0.2 * changed_far
    assert (far.astype(int) >= grey).all()  # drops are lighter than this grey wall


def test_added_people_keep_clear_of_the_robot_path(source):
    src = load_source(source)
    plan = plan_twin(src, Variations(add_people=4, add_flying_objects=2, seed=1))
    old = {p.body_instance_id for p in src.scene.people}
    new = [p for p in plan.scene.people if p.body_instance_id not in old]
    assert new, "at least one of four people fits"
    largest = max(r["instance_id"] for r in src.scene.instance_table())
    assert min(p.body_instance_id for p in new) > largest
    assert len({p.name for p in plan.scene.people}) == len(plan.scene.people)
    assert len(plan.scene.flying_objects) == len(src.scene.flying_objects) + 2
    robot_xy = src.log.qpos[:, :2]
    for person in new:
        waypoints = np.asarray(person.motion.waypoints)
        gap = np.linalg.norm(waypoints[:, None, :] - robot_xy[None, ::24, :], axis=2).min()
        assert gap > 0.3
    # the added people keep out of the recorded people's traces, as placed people do
    total_s = src.config.sim.bootstrap_s + src.config.sim.duration_s

    def cells(person) -> set:
        trace = animation_trace(motion_for(person), total_s)
        return set(map(tuple, np.floor(trace / PEOPLE_CELL_M).astype(int)))

    recorded = set().union(*(cells(p) for p in src.scene.people))
    limit = src.config.people.max_trace_intersections
    assert all(len(cells(p) & recorded) <= limit for p in new)


def test_cli_replay_static_fog_night(source, tmp_path):
    out = tmp_path / "cli"
    args = ["replay", str(source), "--out", str(out), "--static", "--fog", "0.3"]
    res = CliRunner().invoke(app, [*args, "--light", "night"])
    assert res.exit_code == 0, res.output
    twin = open_sequence(out).metadata["twin"]
    assert twin["variations"] == {"static": True, "fog": 0.3, "light": {"preset": "night"}}
    assert twin["look"]["lamp_rgb"] is not None and twin["look"]["fog_end_m"] == 10.0
    again = CliRunner().invoke(app, args)
    assert again.exit_code == 2 and "not empty" in again.output
    bad = CliRunner().invoke(
        app, ["replay", str(source), "--out", str(tmp_path / "x"), "--fog", "3"]
    )
    assert bad.exit_code == 2 and "fog" in bad.output and not (tmp_path / "x").exists()


def test_cli_rerender_renders_every_frame(source, tmp_path):
    out = tmp_path / "dusk"
    args = ["replay", str(source), "--out", str(out), "--light", "dusk", "--rerender"]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    assert open_sequence(out).metadata["twin"]["copied_from_source"] == {}


def test_rain_in_a_town_is_a_periodic_field_of_the_same_density():
    """A world larger than the particle cube repeats it: memory of one cube, and around any
    camera the rain's density is the configured one."""
    from twinsim.adversity.image import RAIN_PER_M3, TILE_M
    from twinsim.config import load_config
    from twinsim.sim import build_scene

    town = build_scene(load_config("town", ["robot.kind=car"], seed=1, duration_s=1.0))
    weather = Weather(town, rain=1.0, snow=0.0, smoke=0.0, seed=3)
    drops = weather.particles[0]
    assert weather.tiled and len(drops.xyz0) == round(RAIN_PER_M3 * TILE_M**3)
    for eye in (np.array([0.0, 0.0, 1.5]), np.array([-31.0, 12.5, 4.0])):
        near = np.linalg.norm(weather._positions(drops, 0.3, eye) - eye, axis=1) < 8.0
        assert near.sum() == pytest.approx(RAIN_PER_M3 * 4 / 3 * np.pi * 8.0**3, rel=0.03)
