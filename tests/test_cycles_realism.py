"""Cycles' realism extras and their checks: the normal pass against MuJoCo's geometry, bump
maps, Cycles' shutter against the average of sharp instants, a shuttered twin, the sky of an
outdoor world, fog as a volume, lens effects and auto-exposure, a twin that stores Cycles'
own ground truth, and the same bytes on any thread count. Tiny images, few samples."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest

from conftest import box_room_scene, place
from twinsim.render.cycles.settings import CyclesSettings

pytestmark = pytest.mark.blender  # Blender Cycles (bpy)

W, H = 64, 48
CLIP = (0.05, 30.0)


def _scene(world, tmp_path, **settings):
    from twinsim.render.cycles.scene import CyclesScene

    return CyclesScene(world, CyclesSettings(**settings), tmp_path / "work")


def _K(w: int = W, h: int = H, hfov: float = 90.0) -> np.ndarray:
    from twinsim.sensors.camera import intrinsics

    return intrinsics(w, h, hfov)


@pytest.fixture(scope="module")
def apartment_frame(tmp_path_factory, gl_backend):
    """A World in the state of the middle frame of a 1 s tiny run (textured apartment)."""
    from twinsim.config import load_config
    from twinsim.replay.source import load_source, world_at_frame
    from twinsim.sequence import open_sequence
    from twinsim.sim import run

    out = tmp_path_factory.mktemp("realism") / "src"
    path = run(load_config("tiny", (), seed=5, duration_s=1.0), out)
    src = load_source(path)
    index = len(open_sequence(path).camera("cam0")) // 2
    world = world_at_frame(src, index, W, H)
    yield world, src
    world.close()


def _normals_from_depth(depth: np.ndarray, K: np.ndarray, T_world_cam: np.ndarray):
    """World-frame surface normals from a z-depth image by central differences (towards the
    camera), and where they are defined."""
    h, w = depth.shape
    u, v = np.meshgrid(np.arange(w, dtype=float), np.arange(h, dtype=float))
    p = np.stack([(u - K[0, 2]) / K[0, 0] * depth, (v - K[1, 2]) / K[1, 1] * depth, depth], -1)
    du = p[1:-1, 2:] - p[1:-1, :-2]
    dv = p[2:, 1:-1] - p[:-2, 1:-1]
    n = np.cross(du, dv)
    n /= np.linalg.norm(n, axis=-1, keepdims=True) + 1e-12
    n = np.pad(n, ((1, 1), (1, 1), (0, 0)))
    facing = np.sum(n * p, axis=-1) > 0
    n[facing] *= -1.0  # normals point back at the camera
    return n @ T_world_cam[:3, :3].T


def _flat_interior(instance: np.ndarray, depth: np.ndarray) -> np.ndarray:
    """Pixels whose 3×3 neighbourhood is one instance on one plane (inverse depth, affine in
    the pixel coordinates on a plane, has no second difference there): no edge, no crease."""
    ok = np.zeros(instance.shape, bool)
    c = instance[1:-1, 1:-1]
    same = np.ones_like(c, bool)
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            same &= (
                instance[1 + dy : instance.shape[0] - 1 + dy, 1 + dx : instance.shape[1] - 1 + dx]
                == c
            )
    d = 1.0 / np.maximum(depth, 1e-6)
    curvature = np.abs(d[1:-1, 2:] + d[1:-1, :-2] - 2 * d[1:-1, 1:-1])
    curvature += np.abs(d[2:, 1:-1] + d[:-2, 1:-1] - 2 * d[1:-1, 1:-1])
    ok[1:-1, 1:-1] = same & (c > 0) & (curvature < 5e-3 * d[1:-1, 1:-1])
    return ok


def test_normal_pass_matches_mujoco_geometry(apartment_frame, tmp_path):
    """Cycles' normal pass (world frame) is the normal of the surface MuJoCo's depth shows: on
    flat interiors the angle between them is below 1° for the median pixel with flat
    materials, and the bump maps tilt it by a few degrees, never more than 20°."""
    world, src = apartment_frame
    cam = src.scene.sensors[0]
    K, T = _K(W, H, cam.hfov_deg), world.T_world_cam("cam0")
    mujoco = world.render("cam0", W, H)
    reference = _normals_from_depth(mujoco.depth.astype(float), K, T)
    instance = world.maps.geom_instance[np.maximum(mujoco.geom_ids, 0)]
    instance[mujoco.geom_ids < 0] = 0
    flat = _flat_interior(instance, mujoco.depth.astype(float))
    assert flat.sum() > 0.25 * flat.size
    angles = {}
    for bump in (0.0, 0.3):
        passes = _scene(world, tmp_path, samples=1, denoise=False, bump=bump).render(
            T, "robot", K, (W, H), (cam.near_m, cam.far_m)
        )
        cos = np.clip(np.sum(passes.normal * reference, axis=-1), -1.0, 1.0)
        angles[bump] = np.degrees(np.arccos(cos[flat]))
    flat_median, bump_median = np.median(angles[0.0]), np.median(angles[0.3])
    print(
        f"normal angle on {flat.sum()} px: flat median {flat_median:.3f}°, "
        f"p95 {np.percentile(angles[0.0], 95):.3f}°; bump median {bump_median:.3f}°, "
        f"max {angles[0.3].max():.2f}°"
    )
    assert flat_median < 1.0 and np.percentile(angles[0.0], 95) < 3.0
    assert bump_median > flat_median  # the textures do shape the surfaces
    assert np.percentile(angles[0.3], 95) < 20.0


def test_the_same_bytes_on_one_or_two_threads(box_world, tmp_path):
    """Cycles with a fixed seed gives the same colour, depth and index bytes whatever the
    number of render threads (each pixel's samples are seeded by the pixel)."""
    import mujoco

    place(box_world, (0.3, 0.1, 1.2), yaw=0.4)
    mujoco.mj_forward(box_world.model, box_world.data)
    T, out = box_world.T_world_cam("cam0"), []
    for threads in (1, 2):
        cycles = _scene(box_world, tmp_path, samples=8, seed=3)
        cycles._scene.render.threads_mode = "FIXED"
        cycles._scene.render.threads = threads
        out.append(cycles.render(T, "robot", _K(), (W, H), CLIP))
    for field in ("rgb", "depth", "instance", "normal"):
        assert np.array_equal(getattr(out[0], field), getattr(out[1], field)), field


def _turned(T: np.ndarray, angle: float) -> np.ndarray:
    """`T_world_cam` panned by `angle` about the camera's own y axis."""
    c, s = math.cos(angle), math.sin(angle)
    out = T.copy()
    out[:3, :3] = T[:3, :3] @ np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])
    return out


def test_cycles_shutter_is_the_average_of_the_instants(box_world, tmp_path):
    """A frame blurred by Cycles' shutter over keyframed instants (the camera panning, a
    cabinet sliding) equals the average of sharp renders along the same linear motion, far
    closer than to either end of the motion (4×4-pixel means, linear light)."""
    import mujoco

    place(box_world, (0.3, 0.1, 1.2), yaw=0.4)
    mujoco.mj_forward(box_world.model, box_world.data)
    T = box_world.T_world_cam("cam0")
    cycles = _scene(box_world, tmp_path, samples=32, denoise=False, seed=1)
    base = cycles.instant(T_world_cam=T)
    cabinet = int(np.flatnonzero(box_world.maps.geom_instance[cycles._geoms] == 7)[0])

    def at(f: float):
        matrices = base.geom_matrix.copy()
        matrices[cabinet, 1, 3] -= 0.8 * f
        return dataclasses.replace(base, geom_matrix=matrices, T_world_cam=_turned(T, 0.4 * f))

    motion = [at(f) for f in (0.0, 0.5, 1.0)]
    blurred = cycles.render(motion[-1].T_world_cam, "robot", _K(), (W, H), CLIP, motion).linear
    sharp = []
    for f in np.linspace(0.0, 1.0, 17):
        instant = at(f)
        sharp.append(cycles.render(instant.T_world_cam, "robot", _K(), (W, H), CLIP, [instant]))
    linear = [s.linear for s in sharp]

    def pooled(x):
        return x.reshape(H // 4, 4, W // 4, 4, 3).mean(axis=(1, 3))

    to_mean = np.abs(pooled(blurred) - pooled(np.mean(linear, axis=0))).mean()
    to_ends = min(np.abs(pooled(blurred) - pooled(s)).mean() for s in (linear[0], linear[-1]))
    print(f"shutter vs average {to_mean:.5f}, vs the nearer end {to_ends:.5f}")
    assert to_mean < 0.15 * to_ends


def test_a_shuttered_twin_is_blurred_by_cycles(tmp_path, gl_backend):
    """A run whose camera has an exposure time re-rendered by Cycles: the twin validates, its
    frames differ from a twin without motion blur, and the metadata names the shutter."""
    from twinsim.config import load_config
    from twinsim.replay import replay
    from twinsim.sequence import open_sequence, validate_sequence
    from twinsim.sim import run

    overrides = ("sensors.cam0.exposure_s=0.02", "sensors.cam0.rate_hz=10")
    src = run(load_config("tiny", overrides, seed=4, duration_s=1.0), tmp_path / "src")
    twins = {}
    for blur in (True, False):
        settings = CyclesSettings(samples=4, seed=2, motion_blur=blur, every=3)
        twins[blur] = replay(src, tmp_path / f"twin{blur}", renderer="cycles", cycles=settings)
    assert validate_sequence(twins[True]).ok
    a, b = open_sequence(twins[True]).camera("cam0"), open_sequence(twins[False]).camera("cam0")
    differ = [not np.array_equal(a[i].rgb, b[i].rgb) for i in range(0, len(a), 3)]
    assert sum(differ) >= len(differ) - 1, differ  # the first frame may not move yet
    renderer = json.loads((twins[True] / "metadata.json").read_text())["twin"]["renderer"]
    assert renderer["motion_blur"].startswith("Cycles shutter")


def _outdoor(scene):
    """The box room with no ceiling, as an outdoor world (a road network of one lane)."""
    from twinsim.model.roads import LaneSpec, RoadNetworkSpec

    lane = LaneSpec(
        lane_id=0,
        road_id=0,
        centerline=((-2.0, 0.0, 0.0), (2.0, 0.0, 0.0)),
        width_m=3.0,
        speed_limit_mps=10.0,
    )
    objects = tuple(o for o in scene.objects if o.semantic_class != "ceiling")
    roads = RoadNetworkSpec(preset="test", lanes=(lane,))
    return scene.model_copy(update={"objects": objects, "roads": roads})


def test_an_outdoor_world_has_a_sky_of_mujocos_ambient(tmp_path, gl_backend):
    """Looking straight up out of a world with roads, Cycles shows the zenith colour of the
    sky scaled to MuJoCo's ambient (its cosine-weighted mean); indoors the same view is the
    ceiling."""
    import mujoco

    from twinsim.engine.world import World
    from twinsim.model.sections import RenderConfig
    from twinsim.render.cycles.atmosphere import sky_scale
    from twinsim.render.cycles.materials import linear
    from twinsim.render.cycles.passes import srgb8
    from twinsim.scene.sky import ZENITH_SRGB

    world = World(_outdoor(box_room_scene()), RenderConfig(shadow_size=512), physics_hz=240)
    try:
        place(world, (0.0, 0.0, 1.2), pitch=-math.pi / 2)
        mujoco.mj_forward(world.model, world.data)
        T = world.T_world_cam("cam0")
        assert T[2, 2] > 0.999  # the optical axis points up
        cycles = _scene(world, tmp_path, samples=16, denoise=True)
        passes = cycles.render(T, "robot", _K(W, H, 30.0), (W, H), CLIP)
        ambient = cycles._lights.ambient()
    finally:
        world.close()
    assert np.all(passes.depth == 0.0)  # nothing but sky
    expected = srgb8(np.array(linear(ZENITH_SRGB)) * sky_scale(ambient))
    centre = passes.rgb[H // 2 - 2 : H // 2 + 2, W // 2 - 2 : W // 2 + 2].reshape(-1, 3)
    assert np.abs(centre.astype(int) - expected.astype(int)).max() <= 3, (centre[0], expected)


def test_fog_is_a_volume_that_hides_the_far_world(box_world, tmp_path):
    """Fog as a volume: with the lamps off (surfaces show only their ambient light, so no
    light path but the view's crosses the fog), a surface's detail comes through less the
    farther it is, following the transmittance exp(−σd) (correlation > 0.8; the nearest
    bins keep more than the light alone would, from the denoised scattering), and far
    surfaces take most of the fog's colour (its airlight; 80 % in a 6 m room)."""
    import mujoco

    from twinsim.engine.look import Look
    from twinsim.engine.world import World
    from twinsim.model.sections import RenderConfig
    from twinsim.render.cycles.atmosphere import fog_extinction_per_m
    from twinsim.render.cycles.materials import linear

    foggy = World(
        box_room_scene(), RenderConfig(shadow_size=512), 240, Look(fog_start_m=0.5, fog_end_m=4.0)
    )
    try:
        renders = []
        for world in (box_world, foggy):
            place(world, (-2.5, -1.5, 1.2), yaw=math.atan2(3.5, 5.0))
            world.model.light_diffuse[:] = 0.0  # surfaces show only their own (ambient) light,
            world.model.vis.headlight.diffuse[:] = 0.0  # which reaches the eye through the fog
            mujoco.mj_forward(world.model, world.data)
            cycles = _scene(world, tmp_path, samples=32, denoise=True, seed=1)
            renders.append(cycles.render(world.T_world_cam("cam0"), "robot", _K(), (W, H), CLIP))
    finally:
        foggy.close()
    clear, fog = renders
    depth, hit = clear.depth, clear.depth > 0
    sigma = fog_extinction_per_m(4.0)
    # the surfaces' detail (colour about its depth bin's mean) comes through the fog scaled by
    # the transmittance: the fitted slope of foggy detail on clear detail, bin by bin
    measured, expected = [], []
    for lo in np.arange(0.0, 8.0, 0.5):
        m = hit & (depth >= lo) & (depth < lo + 0.5)
        if m.sum() < 40:
            continue
        c = clear.linear[m] - clear.linear[m].mean(axis=0)
        f = fog.linear[m] - fog.linear[m].mean(axis=0)
        measured.append(float((c * f).sum() / (c * c).sum()))
        expected.append(math.exp(-sigma * float(np.median(depth[m]))))
    measured, expected = np.array(measured), np.array(expected)
    print(f"detail kept {measured.round(3)}, exp(−σd) {expected.round(3)}")
    assert len(measured) >= 4
    assert np.corrcoef(measured, expected)[0, 1] > 0.8  # the farther, the more fog hides
    assert measured[-4:].mean() < 0.25 * measured[:3].mean()
    airlight = fog.linear[depth > 4.0].mean(axis=0) / np.array(linear(Look().fog_rgb))
    assert np.all((airlight > 0.7) & (airlight < 1.1)), airlight  # a room, not deep fog


def test_lens_effects_and_auto_exposure():
    """Vignetting scales the corners by cos⁴θ; lateral chromatic aberration moves red out and
    blue in by k·r about the principal point; auto-exposure brings a dark scene's log-average
    to middle grey and converges with its time constant."""
    from twinsim.render.cycles.lens import (
        AE_TAU_S,
        MIDDLE_GREY,
        AutoExposure,
        chromatic_aberration,
        vignette,
    )

    K = _K(64, 48, 90.0)
    flat = np.ones((48, 64, 3), np.float32)
    corner = vignette(flat, K, 1.0)[0, 0, 0]
    x, y = (0 - K[0, 2]) / K[0, 0], (0 - K[1, 2]) / K[1, 1]
    assert corner == pytest.approx(1.0 / (1.0 + x * x + y * y) ** 2, rel=1e-6)
    assert vignette(flat, K, 0.5)[24, 32, 0] == pytest.approx(1.0, abs=1e-3)

    dot = np.zeros((48, 64, 3), np.float32)
    dot[23:26, 55:58] = 1.0  # a white dot 24.5 px right of the centre
    k = 0.04
    fringed = chromatic_aberration(dot, K, k)

    def centroid_x(channel):
        img = fringed[..., channel]
        return float((img.sum(axis=0) * np.arange(64)).sum() / img.sum())

    r = 56.0 - K[0, 2]
    assert centroid_x(0) - centroid_x(1) == pytest.approx(k * r, abs=0.15)
    assert centroid_x(1) - centroid_x(2) == pytest.approx(k * r, abs=0.15)

    ae, dark = AutoExposure(), np.full((8, 8, 3), 0.02, np.float32)
    assert ae.gain(dark, 0.0) * 0.02 == pytest.approx(MIDDLE_GREY, rel=0.01)
    assert AutoExposure().gain(dark / 10, 0.0) == pytest.approx(16.0)  # at most 4 stops
    bright = np.full((8, 8, 3), 0.09, np.float32)  # needs 2× where dark needed 9×
    first = ae.gain(bright, AE_TAU_S)  # one time constant later: 63 % of the way in log
    expected = math.log2(9.0) + (1 - math.exp(-1.0)) * (math.log2(2.0) - math.log2(9.0))
    assert math.log2(first) == pytest.approx(expected, abs=0.01)


def test_a_twin_can_store_cycles_own_ground_truth(tmp_path, gl_backend):
    """`ground_truth="cycles"`: the twin's depth, masks and boxes are Cycles' (depth within
    2 mm of MuJoCo's on the pixels both label alike, instances agreeing on ≥ 97 % of pixels at
    64×48), every box fits its mask, the metadata says so; with `every` > 1 it is refused."""
    from twinsim.config import load_config
    from twinsim.errors import ConfigError
    from twinsim.replay import replay
    from twinsim.sequence import open_sequence, validate_sequence
    from twinsim.sim import run

    with pytest.raises(ConfigError, match="never mixes"):
        CyclesSettings(ground_truth="cycles", every=2)
    src = run(load_config("tiny", ("people.count=1",), seed=6, duration_s=0.4), tmp_path / "src")
    settings = CyclesSettings(samples=2, denoise=False, ground_truth="cycles")
    twin = replay(src, tmp_path / "twin", renderer="cycles", cycles=settings)
    assert validate_sequence(twin).ok
    a, b = open_sequence(src).camera("cam0"), open_sequence(twin).camera("cam0")
    for i in range(len(a)):
        same = a[i].instance == b[i].instance
        assert same.mean() >= 0.97
        both = same & (a[i].instance > 0)
        assert np.abs(a[i].depth[both] - b[i].depth[both]).max() < 2e-3
    lines = (twin / "cam0" / "boxes.jsonl").read_text().splitlines()
    for i, line in enumerate(lines):
        for box in json.loads(line)["boxes"]:
            ys, xs = np.nonzero(b[i].instance == box["instance_id"])
            assert box["tight"] == [xs.min(), ys.min(), xs.max(), ys.max()]
    twin_meta = json.loads((twin / "metadata.json").read_text())["twin"]
    assert twin_meta["renderer"]["ground_truth"] == "cycles"
    assert "from Cycles" in twin_meta["copied_from_source"]["cam0"]
