"""Per-frame surface normals and forward optical flow (`sensors.<camera>.normals` / `.flow`).

Normals come from the geometry under each pixel, so on planar walls and floors they must agree
with the normals of the depth image's own surface; flow comes from each geom's motion, so it
must agree with an independent reprojection: static points by the two camera poses alone, a
flying object's by the rigid motion of its recorded box (boxes.jsonl).
"""

from __future__ import annotations

import hashlib
import itertools
import shutil

import numpy as np
import pytest

from twinsim.model.layout import FLOW_VISIBLE, frame_path
from twinsim.sensors.camera import backproject

SURFACE = ("sensors.cam0.normals=true", "sensors.cam0.flow=true")
# a 128×96 drone camera in a small apartment with a walker and two flying objects, 0.3 s
OVERRIDES = (
    *SURFACE,
    "sensors.cam0.width=128",
    "sensors.cam0.height=96",
    "people.count=1",
    "flying_objects.count=2",
)


def _record(out, overrides=OVERRIDES):
    from twinsim.config import load_config
    from twinsim.sim import run

    return run(load_config("tiny", overrides, seed=3, duration_s=0.3), out)


@pytest.fixture(scope="module")
def surface_sequence(tmp_path_factory, gl_backend):
    return _record(tmp_path_factory.mktemp("surface") / "seq")


def _digests(folder, kinds=("normals", "flow", "flow_valid")) -> dict[str, str]:
    return {
        f"{kind}/{p.name}": hashlib.sha256(p.read_bytes()).hexdigest()
        for kind in kinds
        for p in sorted((folder / kind).iterdir())
    }


def _classes(seq, *names: str) -> np.ndarray:
    """Instance ids of the given semantic classes."""
    return np.array(
        [i["instance_id"] for i in seq.metadata["instances"] if i["semantic_class"] in names]
    )


def _project(points: np.ndarray, K: np.ndarray, T_world_cam: np.ndarray) -> np.ndarray:
    cam = (points - T_world_cam[:3, 3]) @ T_world_cam[:3, :3]
    return cam[:, :2] / cam[:, 2:] * K[[0, 1], [0, 1]] + K[:2, 2]


def test_normals_match_depth_gradients_on_walls_and_floors(surface_sequence):
    from twinsim.sequence import open_sequence

    seq = open_sequence(surface_sequence)
    cam = seq.camera("cam0")
    planar = _classes(seq, "wall", "floor", "ceiling")
    angles, checked = [], 0
    for frame in cam:
        n = frame.normals.astype(np.float64)
        length = np.linalg.norm(n, axis=-1)
        seen = frame.depth > 0
        assert np.all(np.abs(length[seen] - 1.0) < 1e-5)  # every seen pixel has its normal
        assert np.all(length[~seen] == 0.0)
        h, w = frame.depth.shape
        u, v = np.meshgrid(np.arange(w), np.arange(h))
        rays = np.stack([(u - frame.K[0, 2]) / frame.K[0, 0], (v - frame.K[1, 2]) / frame.K[1, 1]])
        rays = np.concatenate([rays, np.ones((1, h, w))]).transpose(1, 2, 0)
        assert np.all(np.einsum("hwc,hwc->hw", n, rays)[seen] < 0.0)  # facing the camera
        # the depth image's own normals: central differences of its camera-frame points
        P = backproject(frame.depth, frame.K, np.eye(4))
        gx, gy = P[1:-1, 2:] - P[1:-1, :-2], P[2:, 1:-1] - P[:-2, 1:-1]
        g = np.cross(gx, gy)
        g /= np.linalg.norm(g, axis=-1, keepdims=True)
        g *= -np.sign(np.einsum("hwc,hwc->hw", g, rays[1:-1, 1:-1]))[..., None]
        # interior pixels of a wall or floor whose 3×3 neighbours all lie on the same face
        inner = np.isin(frame.instance, planar)[1:-1, 1:-1]
        for dy in (-1, 0, 1):
            for dx in (-1, 0, 1):
                shifted = (slice(1 + dy, h - 1 + dy), slice(1 + dx, w - 1 + dx))
                inner &= frame.instance[shifted] == frame.instance[1:-1, 1:-1]
                inner &= np.einsum("hwc,hwc->hw", n[shifted], n[1:-1, 1:-1]) > 1.0 - 1e-9
        a, b = g[inner], n[1:-1, 1:-1][inner]
        sin = np.linalg.norm(np.cross(a, b), axis=-1)
        angles.append(np.degrees(np.arctan2(sin, np.einsum("ij,ij->i", a, b))))
        checked += int(inner.sum())
    angles = np.concatenate(angles)
    assert checked > 20_000  # of 9 × 128 × 96 pixels
    assert np.median(angles) <= 1.0
    assert np.percentile(angles, 90) <= 3.0


def test_flow_lands_where_the_points_move(surface_sequence):
    from twinsim.sequence import open_sequence

    seq = open_sequence(surface_sequence)
    cam = seq.camera("cam0")
    dynamic = {i["instance_id"] for i in seq.metadata["instances"] if i["dynamic"]}
    rigid = set(_classes(seq, "toy", "box", "ball", "bottle").tolist()) & dynamic  # flying
    people = _classes(seq, "person")
    static_err, rigid_err, static_gap, same, on_walker = [], [], [], [], []
    frames = list(cam)
    assert frames[-1].flow is None and frames[-1].flow_valid is None  # the last has no flow
    moved = np.linalg.norm(frames[-1].T_world_cam[:3, 3] - frames[0].T_world_cam[:3, 3])
    assert moved > 0.05  # the camera moves
    for a, b in itertools.pairwise(frames):
        h, w = a.depth.shape
        u, v = np.meshgrid(np.arange(w), np.arange(h))
        visible = a.flow_valid == FLOW_VISIBLE
        assert np.isfinite(a.flow[visible]).all()
        landed = np.stack([u, v], -1) + a.flow
        P = backproject(a.depth, a.K, a.T_world_cam)
        # static points: where camera t+1 sees the same world point
        keep = visible & ~np.isin(a.instance, list(dynamic))
        static_err.append(
            np.linalg.norm(_project(P[keep], b.K, b.T_world_cam) - landed[keep], axis=1)
        )
        # and frame t+1 holds that point at the pixel it lands on
        lu, lv = np.rint(landed[keep]).astype(int).T
        same.append(b.instance[lv, lu] == a.instance[keep])
        Q = backproject(b.depth, b.K, b.T_world_cam)[lv, lu]
        static_gap.append(np.linalg.norm(Q - P[keep], axis=1) / a.depth[keep])
        # a walker's points land on the walker (limbs move, so no rigid reference)
        walker = visible & np.isin(a.instance, people)
        lu, lv = np.rint(landed[walker]).astype(int).T
        on_walker.append(np.isin(b.instance[lv, lu], people))
        # a flying object's points: moved by its box from frame t to frame t+1
        boxes_a = {x["instance_id"]: x["obb"] for x in a.boxes}
        boxes_b = {x["instance_id"]: x["obb"] for x in b.boxes}
        for iid in rigid & set(boxes_a) & set(boxes_b):
            mask = visible & (a.instance == iid)
            if not mask.any():
                continue
            R0, R1 = (np.array(x[iid]["rotation"]) for x in (boxes_a, boxes_b))
            c0, c1 = (np.array(x[iid]["center"]) for x in (boxes_a, boxes_b))
            moved_pts = (P[mask] - c0) @ R0 @ R1.T + c1
            rigid_err.append(
                np.linalg.norm(_project(moved_pts, b.K, b.T_world_cam) - landed[mask], axis=1)
            )
    static_err, static_gap = np.concatenate(static_err), np.concatenate(static_gap)
    rigid_err = np.concatenate(rigid_err)
    assert len(static_err) > 50_000 and len(rigid_err) > 100
    assert np.median(static_err) <= 0.5 and np.percentile(static_err, 99) <= 0.5
    assert np.median(rigid_err) <= 0.5
    assert np.mean(np.concatenate(same)) >= 0.97
    assert np.median(static_gap) <= 0.02  # 3D points agree to 2 % of the depth
    on_walker = np.concatenate(on_walker)
    assert len(on_walker) > 500 and np.mean(on_walker) >= 0.9


def test_validate_passes_and_rejects_tampered_files(surface_sequence, tmp_path):
    from twinsim.sequence import validate_sequence

    assert validate_sequence(surface_sequence).ok
    cases = {
        "normals": lambda a: a * 2.0,
        "flow": lambda a: np.full_like(a, np.nan),
    }
    for kind, tamper in cases.items():
        copy = tmp_path / kind
        shutil.copytree(surface_sequence, copy)
        path = frame_path(copy / "cam0", kind, 1)
        np.save(path, tamper(np.load(path)))
        report = validate_sequence(copy)
        assert not report.ok
        assert any(f"cam0/{kind}/000001.npy" in p for p in report.problems), report.problems
    copy = tmp_path / "extra"
    shutil.copytree(surface_sequence, copy)
    n = len(list((copy / "cam0" / "depth").iterdir()))
    shutil.copy(frame_path(copy / "cam0", "flow", 0), frame_path(copy / "cam0", "flow", n - 1))
    problems = validate_sequence(copy).problems
    assert any(f"flow/{n - 1:06d}.npy: not listed" in p for p in problems), problems


def test_same_seed_same_bytes_and_twins_keep_them(surface_sequence, tmp_path):
    from twinsim.noise import apply_noise, resolve_profile
    from twinsim.replay import replay

    want = _digests(surface_sequence / "cam0")
    assert len(want) == 9 + 2 * 8
    assert _digests(_record(tmp_path / "again") / "cam0") == want
    rendered = replay(surface_sequence, tmp_path / "twin", rerender=True)
    assert _digests(rendered / "cam0") == want  # a teleport twin records them again
    noisy = apply_noise(
        surface_sequence, tmp_path / "noisy", resolve_profile("grade", ["rgb.blur_samples=3"])
    )
    assert _digests(noisy / "cam0") == want  # noise copies them as they are


def test_options_off_write_nothing_new(tmp_path, gl_backend):
    seq = _record(tmp_path / "plain", ("sensors.cam0.width=32", "sensors.cam0.height=24"))
    assert sorted(p.name for p in (seq / "cam0").iterdir() if p.is_dir()) == [
        "depth",
        "instance",
        "rgb",
        "semantic",
    ]


def test_a_live_episode_observes_and_records_normals_and_flow(tmp_path, gl_backend):
    """A `Session` with both options on: each step's frames carry the normals the sequence
    records, and the episode's flow files validate (one fewer than frames)."""
    from twinsim.closedloop.session import Session
    from twinsim.config import load_config
    from twinsim.sequence import open_sequence, validate_sequence

    cfg = load_config("tiny", ["robot.kind=omni", *SURFACE], duration_s=0.5)
    seen = {}
    with Session(cfg, tmp_path / "eps") as session:
        obs = session.reset(seed=3)
        while not obs.done:
            for frame in obs.robots["robot"].frames.get("cam0") or []:
                seen[frame.index] = frame.normals.copy()
            obs = session.step({"velocity": {"vx": 0.3, "vy": 0.0, "wz": 0.5}})
        path = session.episode_path
    assert validate_sequence(path).ok
    camera = open_sequence(path).camera("cam0")
    assert len(seen) >= 10
    for index, normals in seen.items():
        np.testing.assert_array_equal(camera[index].normals, normals)
    flows = [camera[i].flow for i in range(len(camera))]
    assert all(f is not None for f in flows[:-1]) and flows[-1] is None
