"""BVH import and retargeting, on small CMU-style clips the tests write themselves."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from twinsim.actors.bvh import BvhError, load_bvh
from twinsim.actors.human import JOINT_NAMES, PART_NAMES
from twinsim.actors.motion import motion_for
from twinsim.actors.surface import sample_surface_points
from twinsim.config import load_config
from twinsim.errors import ConfigError, TwinsimError
from twinsim.model.people import HumanBodySpec, HumanMotionSpec, PersonSpec
from twinsim.sim import build_scene

ROT = ("Zrotation", "Yrotation", "Xrotation")
N_FRAMES, FRAME_TIME = 11, 0.1


def arm(side: str, sign: float) -> tuple:
    return (
        f"{side}Shoulder",
        (sign * 1.5, 5.0, 0.0),
        [
            (
                f"{side}Arm",
                (sign * 5.0, 0.0, 0.0),
                [
                    (
                        f"{side}ForeArm",
                        (sign * 10.0, 0.0, 0.0),
                        [(f"{side}Hand", (sign * 8.0, 0, 0), [])],
                    )
                ],
            )
        ],
    )


def leg(side: str, sign: float) -> tuple:
    toe = (f"{side}ToeBase", (0.0, -2.0, 5.0), [])
    return (
        f"{side}UpLeg",
        (sign * 3.5, -1.0, 0.0),
        [(f"{side}Leg", (0.0, -17.0, 0.0), [(f"{side}Foot", (0.0, -17.0, 0.0), [toe])])],
    )


# A CMU-like skeleton in BVH units (y up, facing +z, the character's left along +x).
SKELETON = (
    "Hips",
    (0.0, 0.0, 0.0),
    [
        (
            "LowerBack",
            (0.0, 2.0, 0.0),
            [
                (
                    "Spine",
                    (0.0, 4.0, 0.0),
                    [
                        (
                            "Spine1",
                            (0.0, 4.0, 0.0),
                            [
                                ("Neck", (0.0, 6.0, 0.0), [("Head", (0.0, 3.0, 0.0), [])]),
                                arm("Left", 1.0),
                                arm("Right", -1.0),
                            ],
                        )
                    ],
                )
            ],
        ),
        leg("Left", 1.0),
        leg("Right", -1.0),
    ],
)
CLIP_LEG = 34.0


def hierarchy(node, depth: int, names: list[str], rename) -> list[str]:
    name, offset, children = node
    pad = "  " * depth
    head = "ROOT" if depth == 0 else "JOINT"
    channels = ("Xposition", "Yposition", "Zposition", *ROT) if depth == 0 else ROT
    names.append(name)
    lines = [
        f"{pad}{head} {rename(name)}",
        f"{pad}{{",
        f"{pad}  OFFSET {offset[0]:.4f} {offset[1]:.4f} {offset[2]:.4f}",
        f"{pad}  CHANNELS {len(channels)} {' '.join(channels)}",
    ]
    for child in children:
        lines += hierarchy(child, depth + 1, names, rename)
    if not children:
        lines += [f"{pad}  End Site", f"{pad}  {{", f"{pad}    OFFSET 0.0 2.0 0.0", f"{pad}  }}"]
    return [*lines, f"{pad}}}"]


def clip_text(rename=lambda n: n, knee_deg=None) -> str:
    """A clip whose root walks 2 units per frame along +z while the left knee bends 0 → 90°."""
    names: list[str] = []
    lines = ["HIERARCHY", *hierarchy(SKELETON, 0, names, rename), "MOTION"]
    lines += [f"Frames: {N_FRAMES}", f"Frame Time: {FRAME_TIME}"]
    knee_col = 6 + 3 * (names.index("LeftLeg") - 1) + 2  # its Xrotation
    knee = np.linspace(0.0, 90.0, N_FRAMES) if knee_deg is None else knee_deg
    for k in range(N_FRAMES):
        row = np.zeros(6 + 3 * (len(names) - 1))
        row[1], row[2] = 36.0, 2.0 * k
        row[knee_col] = knee[k]
        lines.append(" ".join(f"{v:.4f}" for v in row))
    return "\n".join(lines) + "\n"


def person(path, **kw) -> PersonSpec:
    motion = {"waypoints": ((2.0, 3.0),), "heading": 0.7, "cycle_s": 1.0} | kw
    return PersonSpec(
        person_id=3,
        name="mocap",
        body_instance_id=5,
        clothing_instance_id=6,
        body=HumanBodySpec(
            height_m=1.7,
            skin_material="skin",
            shirt_material="shirt",
            pants_material="pants",
            shoes_material="shoes",
        ),
        motion=HumanMotionSpec(kind="bvh", bvh_path=str(path), **motion),
    )


@pytest.fixture
def clip_path(tmp_path):
    path = tmp_path / "walk_knee.bvh"
    path.write_text(clip_text())
    return path


def knee_flexion_deg(J: np.ndarray, side: str) -> np.ndarray:
    hip, knee, ankle = (J[:, JOINT_NAMES.index(f"{side}_{n}")] for n in ("hip", "knee", "ankle"))
    a, b = knee - hip, ankle - knee
    cos = np.einsum("ni,ni->n", a, b) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    return np.degrees(np.arccos(np.clip(cos, -1.0, 1.0)))


def test_load_bvh_reads_hierarchy_and_frames(clip_path):
    clip = load_bvh(clip_path)
    movable = [j for j in clip.joints if not j.is_end_site]
    assert movable[0].name == "Hips" and movable[0].parent == -1
    assert len(movable) == 22 and sum(j.is_end_site for j in clip.joints) == 5
    assert clip.frames.shape == (N_FRAMES, 6 + 3 * 21)
    assert clip.duration_s == pytest.approx(1.0)
    assert clip.sha256 == hashlib.sha256(clip_path.read_bytes()).hexdigest()
    R, p = clip.forward_kinematics()
    rest = clip.rest_positions()
    assert np.allclose(p[0] - p[0, 0], rest - rest[0])
    assert np.allclose(R[:, 0], np.eye(3))


def test_retarget_follows_the_knee_and_places_the_root(clip_path):
    motion = motion_for(person(clip_path))
    t = np.arange(N_FRAMES) * FRAME_TIME
    J = motion.joints_world(t)
    assert np.allclose(knee_flexion_deg(J, "l"), np.linspace(0.0, 90.0, N_FRAMES), atol=0.05)
    assert np.all(knee_flexion_deg(J, "r") < 0.05)
    between = knee_flexion_deg(motion.joints_world(np.array([0.45])), "l")
    assert between[0] == pytest.approx(40.5, abs=0.5)

    heading = 0.7
    fwd = np.array([np.cos(heading), np.sin(heading), 0.0])
    left = np.array([-np.sin(heading), np.cos(heading), 0.0])
    T0 = motion.root_pose(0.0)
    assert np.allclose(T0[:2, 3], (2.0, 3.0))
    assert np.allclose(T0[:3, 0], fwd, atol=1e-6)
    J0 = motion.joints_world(0.0)
    assert (J0[JOINT_NAMES.index("l_hip")] - J0[JOINT_NAMES.index("r_hip")]) @ left > 0.1
    # The clip's root moves 20 units forward; units scale by the ratio of leg lengths.
    L = motion.model.segment_lengths
    scale = (L["thigh"] + L["shin"]) / CLIP_LEG
    T1 = motion.root_pose(1.0)
    assert np.allclose(T1[:3, 3] - T0[:3, 3], 20.0 * scale * fwd, atol=1e-6)
    # Ping-pong playback: it walks back to the start, and the feet rest on the floor.
    assert np.allclose(motion.root_pose(2.0), T0)
    T = motion.part_poses(t)
    pts = sample_surface_points(motion.model, 100)
    feet = [PART_NAMES.index("l_foot"), PART_NAMES.index("r_foot")]
    z = [
        np.einsum("nij,kj->nki", T[:, i, :3, :3], pts[i])[..., 2] + T[:, i, None, 2, 3]
        for i in feet
    ]
    lowest = np.minimum(*(zz.min(axis=1) for zz in z))
    assert -1e-6 < lowest.min() < 0.01


def test_retarget_accepts_daz_style_names_and_uses_the_loader(tmp_path):
    daz = {
        "Hips": "hip",
        "LowerBack": "abdomen",
        "Spine": "abdomen2",
        "Spine1": "chest",
        "Neck": "neck",
        "Head": "head",
    }
    for side, s in (("Left", "l"), ("Right", "r")):
        daz |= {
            f"{side}Shoulder": f"{s}Collar",
            f"{side}Arm": f"{s}Shldr",
            f"{side}ForeArm": f"{s}ForeArm",
            f"{side}Hand": f"{s}Hand",
            f"{side}UpLeg": f"{s}Thigh",
            f"{side}Leg": f"{s}Shin",
            f"{side}Foot": f"{s}Foot",
            f"{side}ToeBase": f"{s}Toe",
        }
    path = tmp_path / "daz.bvh"
    path.write_text(clip_text(rename=daz.get))
    calls = []

    def loader(p):
        calls.append(p)
        return load_bvh(p)

    motion = motion_for(person(path), bvh_loader=loader)
    assert calls == [str(path)]
    flex = knee_flexion_deg(motion.joints_world(np.array([1.0])), "l")
    assert flex[0] == pytest.approx(90.0, abs=0.05)


def test_sha256_is_checked(clip_path):
    digest = hashlib.sha256(clip_path.read_bytes()).hexdigest()
    motion_for(person(clip_path, bvh_sha256=digest))
    with pytest.raises(BvhError, match=r"walk_knee\.bvh.*sha256"):
        motion_for(person(clip_path, bvh_sha256="0" * 64))


def _lines(path) -> list[str]:
    return path.read_text().splitlines()


def _line_of(lines: list[str], needle: str) -> int:
    return next(i for i, ln in enumerate(lines) if needle in ln)


def test_malformed_files_name_the_file_and_line(tmp_path):
    lines = clip_text().splitlines()
    motion_at = lines.index("MOTION")

    def broken(name: str, new_lines: list[str]):
        path = tmp_path / name
        path.write_text("\n".join(new_lines) + "\n")
        return path

    leg_channels = _line_of(lines, "JOINT LeftLeg") + 3
    bad = list(lines)
    bad[leg_channels] = bad[leg_channels].replace("CHANNELS 3", "CHANNELS 4")
    with pytest.raises(BvhError, match=rf"channels\.bvh: line {leg_channels + 1}: .*LeftLeg"):
        load_bvh(broken("channels.bvh", bad))

    with pytest.raises(BvhError, match=r"nomotion\.bvh: line \d+: no MOTION"):
        load_bvh(broken("nomotion.bvh", lines[:motion_at]))

    with pytest.raises(BvhError, match=r"short\.bvh: line \d+: declares 11 frames .* after 6"):
        load_bvh(broken("short.bvh", lines[:-5]))

    bad = list(lines)
    row = motion_at + 3 + 3  # frame 3
    bad[row] = bad[row].replace("36.0000", "abc", 1)
    with pytest.raises(BvhError, match=rf"text\.bvh: line {row + 1}: frame 3: 'abc'"):
        load_bvh(broken("text.bvh", bad))

    bad = list(lines)
    bad[row] = bad[row].rsplit(" ", 1)[0]
    with pytest.raises(BvhError, match=rf"count\.bvh: line {row + 1}: frame 3 has 68 values"):
        load_bvh(broken("count.bvh", bad))

    bad = [*lines[:motion_at], *lines[motion_at:]]
    bad[1] = "ROOTS Hips"
    with pytest.raises(BvhError, match=r"root\.bvh: line 2: expected 'ROOT'"):
        load_bvh(broken("root.bvh", bad))

    with pytest.raises(BvhError, match=r"missing\.bvh: cannot read"):
        load_bvh(tmp_path / "missing.bvh")
    assert issubclass(BvhError, TwinsimError)


def test_unknown_skeleton_names_the_missing_joints(tmp_path):
    counter = iter(range(100))
    path = tmp_path / "robot.bvh"
    path.write_text(clip_text(rename=lambda n: f"Bone{next(counter)}"))
    load_bvh(path)  # parses fine
    with pytest.raises(BvhError, match=r"robot\.bvh: unknown skeleton: no joint for pelvis.*Bone0"):
        motion_for(person(path))


def test_config_bvh_files_are_played_by_people(clip_path):
    """`people.bvh_files` gives people clip motions, recorded with path and sha256, placed
    like any other person."""
    cfg = load_config("tiny", ["people.count=4", f"people.bvh_files=['{clip_path}']"], seed=1)
    cfg = cfg.model_copy(update={"people": cfg.people.model_copy(update={"motions": {"bvh": 1.0}})})
    scene = build_scene(cfg)
    assert scene.people and {p.motion.kind for p in scene.people} == {"bvh"}
    digest = hashlib.sha256(clip_path.read_bytes()).hexdigest()
    for p in scene.people:
        assert p.motion.bvh_sha256 == digest and p.motion.bvh_path == str(clip_path.resolve())
        assert p.motion.cycle_s == pytest.approx(N_FRAMES * FRAME_TIME)
        J = motion_for(p).joints_world(np.array([0.0, 0.5]))
        assert np.all(np.isfinite(J))


def test_bvh_weight_without_files_is_a_config_error():
    with pytest.raises(ConfigError, match="bvh_files"):
        load_config("tiny", ["people.count=2", "people.motions={'bvh': 1.0}"])
