"""Exposure effects at render time: motion blur and rolling shutter against the geometry of a
turning camera, annotations of the blurred image, and physics left untouched."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from conftest import box_room_scene, digest_folder, place
from twinsim.config import load_config
from twinsim.errors import ConfigError
from twinsim.model.scene import LightSpec
from twinsim.model.sections import RenderConfig
from twinsim.sensors.annotate import annotate_frame
from twinsim.sensors.camera import intrinsics
from twinsim.sensors.exposure import ExposureRenderer, StateHistory, window_steps
from twinsim.sensors.kinds.camera import CameraConfig

#: a variant of a capability the everyday tier checks elsewhere (`make test` runs it)
pytestmark = pytest.mark.slow

HZ = 240
W, H = 160, 64
START = (0.0, 0.0, 1.2)
YAW0 = math.atan2(2.0, 3.0)  # facing the corner where the north wall meets the east wall
CORNER = np.array([3.0, 2.0, 1.2])  # a vertical edge: north wall (left) | east wall (right)
NORTH, EAST = 5, 3  # instance ids of the two walls
OMEGA = 3.0  # rad/s, turning left: the scene moves right in the image
K = 240  # the frame's physics step


def _world(cam: CameraConfig):
    """The box room under flat, shadowless light, so each wall renders as one colour."""
    from twinsim.engine.look import Look
    from twinsim.engine.world import World

    flat = LightSpec(
        name="flat",
        pos=(0.0, 0.0, 2.4),
        diffuse=(0.0, 0.0, 0.0),
        specular=(0.0, 0.0, 0.0),
        ambient=(1.0, 1.0, 1.0),
        directional=True,
    )
    scene = box_room_scene(cam, START).model_copy(update={"lights": (flat,)})
    return World(scene, RenderConfig(shadow_size=512), HZ, Look(headlight=0.0))


@pytest.fixture(scope="module")
def turning(gl_backend):
    """A world whose camera is turning at OMEGA; yields (world, camera spec factory)."""
    world = _world(CameraConfig(width=W, height=H))
    yield world
    world.close()


def _yaw(u: float, omega: float) -> float:
    """Yaw at fractional step u; the frame at step K faces the corner."""
    return YAW0 + omega * (u - K) / HZ


def _spec(world, exposure_s: float = 0.0, readout_s: float = 0.0):
    cam = world.scene.sensors[0]
    return cam.model_copy(update={"exposure_s": exposure_s, "rolling_shutter_readout_s": readout_s})


def _render(world, cam, omega: float):
    """The exposed frame of step K, the robot having turned at `omega` through the window."""
    reach = math.ceil(window_steps(cam, HZ))
    history = StateHistory(reach)
    for k in range(K - reach, K + 1):
        history.push(k, np.array([*START, _yaw(k, omega), 0.0, 0.0]))
    place(world, START, _yaw(K, omega))
    return ExposureRenderer(world, cam, HZ).render(K, history)


def _edge_column(world, u: float, omega: float) -> float:
    """Image column of the corner with the robot posed at fractional step u."""
    place(world, START, _yaw(u, omega))
    T_cam_world = np.linalg.inv(world.T_world_cam("cam0"))
    p = T_cam_world[:3, :3] @ CORNER + T_cam_world[:3, 3]
    Kmat = intrinsics(W, H, 90.0)
    return Kmat[0, 0] * p[0] / p[2] + Kmat[0, 2]


def _wall_rows(world, frame) -> np.ndarray:
    """Rows that show only the two walls."""
    inst = np.append(world.maps.geom_instance, np.uint16(0))[frame.geom_ids]
    return np.flatnonzero(np.isin(inst, (NORTH, EAST)).all(axis=1))


def _left_fraction(world, cam, omega: float) -> np.ndarray:
    """Per column, the share of the exposure the column's centre lies left of the edge."""
    e = cam.exposure_s * HZ
    us = np.linspace(K - e, K, 601)
    edge = np.array([_edge_column(world, u, omega) for u in us])
    return (np.arange(W)[:, None] < edge[None]).mean(axis=1)


def test_motion_blur_spreads_an_edge_over_the_predicted_columns(turning):
    cam = _spec(turning, exposure_s=0.03)
    sharp_cam = _spec(turning)
    sharp = _render(turning, sharp_cam, OMEGA)
    frame = _render(turning, cam, OMEGA)
    rows = _wall_rows(turning, sharp)
    assert len(rows) > 20
    red = frame.rgb[rows, :, 0].astype(float)
    left = float(np.median(sharp.rgb[rows, :10, 0]))  # north wall's red
    right = float(np.median(sharp.rgb[rows, -10:, 0]))  # east wall's red
    measured = (red - right) / (left - right)
    predicted = _left_fraction(turning, cam, OMEGA)
    assert np.abs(measured - predicted[None]).max() < 0.07
    # the ramp is as wide as the edge moved during the exposure (fx · ω · e at the centre)
    start, end = _edge_column(turning, K - 0.03 * HZ, OMEGA), _edge_column(turning, K, OMEGA)
    assert end - start == pytest.approx(80.0 * OMEGA * 0.03, rel=0.15)  # fx = 80 px
    ramp = ((measured > 0.03) & (measured < 0.97)).sum(axis=1)
    assert np.all(np.abs(ramp - (end - start)) <= 1.5)
    # no motion: the exposure changes nothing, byte for byte
    still = _render(turning, cam, 0.0)
    plain = turning.render("cam0", W, H)
    assert np.array_equal(still.rgb, plain.rgb)
    assert np.array_equal(still.depth, plain.depth)
    assert np.array_equal(still.geom_ids, plain.geom_ids)


def test_rolling_shutter_slants_a_vertical_edge_by_the_readout(turning):
    readout = 0.03
    cam = _spec(turning, readout_s=readout)
    frame = _render(turning, cam, OMEGA)
    rows = _wall_rows(turning, frame)
    inst = np.append(turning.maps.geom_instance, np.uint16(0))[frame.geom_ids]
    for r in rows:
        u = K - readout * HZ * (1.0 - r / (H - 1))  # row r is read at this instant
        predicted_first_east = math.ceil(_edge_column(turning, u, OMEGA))
        first_east = int(np.argmax(frame.rgb[r, :, 0] > 140))  # the east wall is red
        assert abs(first_east - predicted_first_east) <= 1
        assert int(np.argmax(inst[r] == EAST)) == first_east  # the mask follows the image
    top, bottom = rows[0], rows[-1]
    shift = (bottom - top) / (H - 1) * 80.0 * OMEGA * readout
    first = [int(np.argmax(frame.rgb[r, :, 0] > 140)) for r in (top, bottom)]
    assert first[1] - first[0] == pytest.approx(shift, abs=1.5)
    assert shift > 3.0


def test_masks_take_the_label_seen_longest_and_boxes_follow(turning):
    cam = _spec(turning, exposure_s=0.03)
    rendered = _render(turning, cam, OMEGA)
    sharp = turning.render("cam0", W, H)  # the robot is back at step K
    frame = annotate_frame(turning, cam, 0, 0, K / HZ, rendered)
    rows = _wall_rows(turning, rendered)
    predicted = _left_fraction(turning, cam, OMEGA)
    last_north = int(np.flatnonzero(predicted >= 0.5).max())
    for r in rows:
        north = np.flatnonzero(frame.instance[r] == NORTH)
        assert abs(int(north.max()) - last_north) <= 1
        assert frame.instance[r, north.max() + 1] == EAST
    boxes = {b["instance_id"]: b for b in frame.boxes}
    ys, xs = np.nonzero(frame.instance == NORTH)
    assert boxes[NORTH]["tight"] == [int(xs.min()), int(ys.min()), int(xs.max()), int(ys.max())]
    assert np.array_equal(frame.depth, sharp.depth)  # depth: sharp at the frame's instant
    assert frame.semantic[rows[0], 0] == turning.maps.instance_class[NORTH]


def test_exposure_fields_are_validated():
    with pytest.raises(ConfigError, match=r"exposure_s=0\.05 must be <= 1/rate_hz"):
        load_config("tiny", ["cameras.cam0.exposure_s=0.05"])
    with pytest.raises(ConfigError, match=r"rolling_shutter_readout_s.*greater than or equal"):
        load_config("tiny", ["cameras.cam0.rolling_shutter_readout_s=-0.01"])


RUN_OVERRIDES = ("people.count=1", "flying_objects.count=2", "sim.bootstrap_s=0.25")
SHUTTER = ("cameras.cam0.exposure_s=0.02", "cameras.cam0.rolling_shutter_readout_s=0.015")


@pytest.fixture(scope="module")
def runs(tmp_path_factory, gl_backend):
    """Two tiny dynamic runs, identical but for the camera's exposure and readout."""
    from twinsim.sim import run

    root = tmp_path_factory.mktemp("exposure")
    plain = run(load_config("tiny", RUN_OVERRIDES, seed=3, duration_s=0.5), root / "plain")
    shutter = run(
        load_config("tiny", (*RUN_OVERRIDES, *SHUTTER), seed=3, duration_s=0.5), root / "shutter"
    )
    return plain, shutter


def test_exposure_leaves_physics_and_ground_truth_unchanged(runs):
    plain, shutter = (digest_folder(p) for p in runs)
    assert set(plain) == set(shutter)
    differing = {p for p in plain if plain[p] != shutter[p]}
    # robot_state, IMU, odometry, joint states and poses: the same bytes
    described = {"metadata.json", "scene.json", "checksums.csv"}
    assert differing and all(p.startswith("cam0/") or p in described for p in differing)
    scenes = [json.loads((p / "scene.json").read_text()) for p in runs]
    for sensor in scenes[1]["sensors"]:
        if sensor["name"] == "cam0":
            assert (sensor["exposure_s"], sensor["rolling_shutter_readout_s"]) == (0.02, 0.015)
            sensor["exposure_s"] = sensor["rolling_shutter_readout_s"] = 0.0
    assert scenes[0] == scenes[1]  # the same world but for the camera's shutter
    assert any(p.startswith("cam0/rgb/") for p in differing)
    assert not any(p.startswith("cam0/depth/") for p in differing)  # depth is sharp at t


def test_a_run_with_exposure_is_a_valid_sequence_and_replays_exactly(runs, tmp_path):
    from twinsim.replay import replay
    from twinsim.sequence import open_sequence, validate_sequence

    _, shutter = runs
    assert validate_sequence(shutter).ok
    meta = json.loads((shutter / "metadata.json").read_text())["streams"]["cam0"]
    assert meta["exposure_s"] == 0.02 and meta["rolling_shutter_readout_s"] == 0.015
    seq = open_sequence(shutter)
    for frame in seq.camera("cam0"):
        for box in frame.boxes:
            ys, xs = np.nonzero(frame.instance == box["instance_id"])
            assert box["tight"] == [int(xs.min()), int(ys.min()), int(xs.max()), int(ys.max())]
    twin = replay(shutter, tmp_path / "twin")
    a, b = digest_folder(shutter), digest_folder(twin)
    assert {p for p in a if a[p] != b[p]} == {"metadata.json"}


@pytest.mark.slow
def test_a_twin_can_add_the_shutter_to_a_plain_run(runs, tmp_path):
    from twinsim.replay import Variations, replay

    plain, shutter = runs
    shutter_fields = {"exposure_s": 0.02, "rolling_shutter_readout_s": 0.015}
    twin = replay(plain, tmp_path / "twin", Variations(cameras={"cam0": shutter_fields}))
    a, b = digest_folder(shutter), digest_folder(twin)
    frames = [p for p in a if p.startswith("cam0/")]
    assert frames and all(a[p] == b[p] for p in frames)  # as if recorded with the shutter
