"""BVH motion capture: a strict parser and retargeting of CMU-style skeletons onto ours.

Self-written on purpose: PyPI's `bvh` (0.3, 2017) is unmaintained and only splits text, `bvhio`
pins exact versions of PyGLM and spatial-transform, `bvhtools` pulls in raylib and matplotlib;
none reports the file and line of a malformed clip. BVH channels are applied in file order
(v_parent = R1·R2·R3·v); a joint with position channels takes them as its local translation
instead of its OFFSET. Retargeting copies every mapped bone's world orientation (relative to the
clip's rest pose) onto our part frames, so joint angles follow the clip exactly while our own
bone lengths are kept; the root trajectory is scaled by the ratio of leg lengths.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

from twinsim.actors.human import JOINT_NAMES, PART_NAMES, HumanModel
from twinsim.actors.playback import PoseTable
from twinsim.errors import TwinsimError
from twinsim.geometry import BOX_CORNERS, axis_rotations
from twinsim.model.people import HumanMotionSpec

_AXES = {"X": 0, "Y": 1, "Z": 2}
_CHANNELS = frozenset(f"{a}{kind}" for a in _AXES for kind in ("position", "rotation"))


class BvhError(TwinsimError):
    """A BVH file is unreadable, malformed, truncated, or its skeleton cannot be retargeted."""


@dataclass(frozen=True)
class BvhJoint:
    """One node of the hierarchy; End Sites are joints without channels named '<parent>_end'."""

    name: str
    parent: int  # index in BvhClip.joints, -1 for the root
    offset: tuple[float, float, float]
    channels: tuple[str, ...]
    channel_start: int  # column of the first channel in BvhClip.frames
    line: int  # line of the file that declares it
    is_end_site: bool = False


@dataclass(frozen=True, eq=False)
class BvhClip:
    """A parsed BVH file: hierarchy, frame time and channel values (F, C) as written."""

    path: str
    joints: tuple[BvhJoint, ...]
    frame_time_s: float
    frames: np.ndarray
    sha256: str

    @property
    def n_frames(self) -> int:
        return len(self.frames)

    @property
    def duration_s(self) -> float:
        """Time from the first to the last frame."""
        return (self.n_frames - 1) * self.frame_time_s

    def rest_positions(self) -> np.ndarray:
        """Joint positions (J, 3) with every rotation zero and every translation its OFFSET."""
        p = np.zeros((len(self.joints), 3))
        for j, joint in enumerate(self.joints):
            p[j] = (p[joint.parent] if joint.parent >= 0 else 0.0) + np.asarray(joint.offset)
        return p

    def forward_kinematics(self) -> tuple[np.ndarray, np.ndarray]:
        """World rotations (F, J, 3, 3) and positions (F, J, 3) of every joint in every frame."""
        F, J = self.n_frames, len(self.joints)
        R = np.empty((F, J, 3, 3))
        p = np.empty((F, J, 3))
        for j, joint in enumerate(self.joints):
            local_R = np.broadcast_to(np.eye(3), (F, 3, 3))
            t = np.broadcast_to(np.asarray(joint.offset, dtype=float), (F, 3)).copy()
            for k, ch in enumerate(joint.channels):
                values = self.frames[:, joint.channel_start + k]
                if ch.endswith("rotation"):
                    local_R = local_R @ axis_rotations(_AXES[ch[0]], np.radians(values))
                else:
                    t[:, _AXES[ch[0]]] = values
            if joint.parent < 0:
                R[:, j], p[:, j] = local_R, t
            else:
                R[:, j] = R[:, joint.parent] @ local_R
                p[:, j] = p[:, joint.parent] + (R[:, joint.parent] @ t[:, :, None])[..., 0]
        return R, p


class _Hierarchy:
    """Recursive-descent reader of the HIERARCHY section, with line numbers for errors."""

    def __init__(self, path: str, lines: list[str]) -> None:
        self.path = path
        self.tokens = [(tok, i + 1) for i, line in enumerate(lines) for tok in line.split()]
        self.pos = 0
        self.last_line = len(lines)
        self.joints: list[BvhJoint] = []
        self.n_channels = 0

    def fail(self, line: int, msg: str) -> BvhError:
        return BvhError(f"{self.path}: line {line}: {msg}")

    def next(self, what: str) -> tuple[str, int]:
        if self.pos >= len(self.tokens):
            raise self.fail(self.last_line, f"hierarchy ends early, expected {what}")
        self.pos += 1
        return self.tokens[self.pos - 1]

    def expect(self, word: str) -> int:
        tok, line = self.next(repr(word))
        if tok != word:
            raise self.fail(line, f"expected {word!r}, found {tok!r}")
        return line

    def number(self, what: str) -> float:
        tok, line = self.next(what)
        try:
            return float(tok)
        except ValueError:
            raise self.fail(line, f"{what}: {tok!r} is not a number") from None

    def parse(self) -> list[BvhJoint]:
        self.expect("HIERARCHY")
        self.expect("ROOT")
        name, line = self.next("the root joint's name")
        self.joint(name, -1, line)
        if self.pos < len(self.tokens):
            tok, line = self.tokens[self.pos]
            raise self.fail(line, f"unexpected {tok!r} after the root joint (one ROOT only)")
        return self.joints

    def joint(self, name: str, parent: int, line: int, end_site: bool = False) -> None:
        self.expect("{")
        self.expect("OFFSET")
        offset = tuple(self.number(f"OFFSET of {name!r}") for _ in range(3))
        channels: tuple[str, ...] = ()
        if not end_site:
            ch_line = self.expect("CHANNELS")
            count = self.number(f"channel count of {name!r}")
            if count != int(count) or count < 0:
                raise self.fail(ch_line, f"joint {name!r}: bad channel count {count}")
            listed = []
            for _ in range(int(count)):
                tok, _ = self.next(f"a channel of {name!r}")
                if tok not in _CHANNELS:
                    raise self.fail(
                        ch_line,
                        f"joint {name!r}: CHANNELS declares {int(count)} channels but lists "
                        f"{len(listed)} ({tok!r} is not a channel name)",
                    )
                listed.append(tok)
            channels = tuple(listed)
        index = len(self.joints)
        self.joints.append(
            BvhJoint(name, parent, offset, channels, self.n_channels, line, end_site)
        )
        self.n_channels += len(channels)
        while True:
            tok, tok_line = self.next(f"'}}' closing {name!r}")
            if tok == "}":
                return
            if end_site:
                raise self.fail(tok_line, f"unexpected {tok!r} in the End Site of {name!r}")
            if tok == "JOINT":
                child, child_line = self.next("a joint name")
                self.joint(child, index, child_line)
            elif tok == "End":
                self.expect("Site")
                self.joint(f"{name}_end", index, tok_line, end_site=True)
            elif tok in _CHANNELS:
                raise self.fail(
                    tok_line, f"joint {name!r}: CHANNELS lists more channels than it declares"
                )
            else:
                raise self.fail(tok_line, f"unexpected {tok!r} in joint {name!r}")


def _motion(path: str, lines: list[str], start: int, n_channels: int) -> tuple[float, np.ndarray]:
    """Frame time and the (F, C) frame values from the lines after MOTION (1-based `start`)."""
    rows = [(i + 1, line.split()) for i, line in enumerate(lines) if i + 1 > start and line.strip()]

    def header(k: int, label: list[str], what: str) -> str:
        if k >= len(rows):
            raise BvhError(f"{path}: line {len(lines)}: file ends before '{' '.join(label)}'")
        line, toks = rows[k]
        if toks[: len(label)] != label or len(toks) != len(label) + 1:
            raise BvhError(f"{path}: line {line}: expected '{' '.join(label)} <{what}>'")
        return toks[-1]

    n_tok = header(0, ["Frames:"], "count")
    dt_tok = header(1, ["Frame", "Time:"], "seconds")
    try:
        n = int(n_tok)
        dt = float(dt_tok)
    except ValueError:
        raise BvhError(f"{path}: line {rows[0][0]}: bad frame count or frame time") from None
    if n < 1 or not dt > 0 or not np.isfinite(dt):
        raise BvhError(f"{path}: line {rows[1][0]}: need >= 1 frame and a frame time > 0")
    body = rows[2:]
    if len(body) < n:
        raise BvhError(
            f"{path}: line {len(lines)}: declares {n} frames but the file ends after {len(body)}"
        )
    if len(body) > n:
        raise BvhError(f"{path}: line {body[n][0]}: more frame lines than the {n} declared")
    frames = np.empty((n, n_channels))
    for k, (line, toks) in enumerate(body):
        if len(toks) != n_channels:
            raise BvhError(
                f"{path}: line {line}: frame {k} has {len(toks)} values, "
                f"the hierarchy declares {n_channels} channels"
            )
        try:
            frames[k] = np.array(toks, dtype=float)
        except ValueError:
            bad = next(t for t in toks if not _is_float(t))
            raise BvhError(f"{path}: line {line}: frame {k}: {bad!r} is not a number") from None
        if not np.isfinite(frames[k]).all():
            raise BvhError(f"{path}: line {line}: frame {k} has a non-finite value")
    return dt, frames


def _is_float(tok: str) -> bool:
    try:
        float(tok)
    except ValueError:
        return False
    return True


def load_bvh(path) -> BvhClip:
    """Parse a BVH file; any problem raises `BvhError` naming the file and the line."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise BvhError(f"{p}: cannot read BVH file: {exc.strerror or exc}") from None
    lines = data.decode("latin-1").splitlines()
    motion_at = next((i + 1 for i, ln in enumerate(lines) if ln.strip() == "MOTION"), None)
    if motion_at is None:
        raise BvhError(f"{p}: line {len(lines)}: no MOTION section")
    hierarchy = _Hierarchy(str(p), lines[: motion_at - 1])
    joints = hierarchy.parse()
    dt, frames = _motion(str(p), lines, motion_at, hierarchy.n_channels)
    frames.flags.writeable = False
    return BvhClip(str(p), tuple(joints), dt, frames, hashlib.sha256(data).hexdigest())


# Names accepted for each bone, compared lower case without separators or "namespace:".
# In the limb names {L} stands for left / right and {S} for l / r.
_PELVIS_NAMES = ("hips", "hip", "pelvis", "root")
_NECK_NAMES = ("neck", "neck0", "neck1", "lowerneck")
_HEAD_NAMES = ("head",)
_LIMB_NAMES: dict[str, tuple[str, ...]] = {
    "upper_arm": (
        "{L}arm",
        "{L}uparm",
        "{L}upperarm",
        "{S}shldr",
        "{S}uparm",
        "{S}upperarm",
        "upperarm{S}",
    ),
    "lower_arm": ("{L}forearm", "{L}lowarm", "{L}lowerarm", "{S}forearm", "forearm{S}"),
    "hand": ("{L}hand", "{S}hand", "hand{S}", "{L}wrist", "{S}wrist"),
    "thigh": ("{L}upleg", "{L}thigh", "{L}upperleg", "{S}thigh", "{S}upleg", "thigh{S}", "{L}hip"),
    "shin": (
        "{L}leg",
        "{L}lowleg",
        "{L}lowerleg",
        "{L}shin",
        "{L}knee",
        "{S}shin",
        "{S}calf",
        "calf{S}",
    ),
    "foot": ("{L}foot", "{S}foot", "foot{S}", "{L}ankle", "{S}ankle"),
    "toe": (
        "{L}toebase",
        "{L}toe",
        "{L}toes",
        "{S}toe",
        "{S}toes",
        "{S}toebase",
        "{S}toe0",
        "toe{S}",
    ),
}
_OPTIONAL = ("toe",)


def _normalise(name: str) -> str:
    n = name.split(":")[-1].lower()
    for ch in "_- .":
        n = n.replace(ch, "")
    return n.removeprefix("bip01").removeprefix("bip001")


def _find_roles(clip: BvhClip) -> dict[str, int]:
    """Clip joint index of every role (pelvis, neck, head, l_/r_ limb bones, optional toes)."""
    by_name: dict[str, int] = {}
    for j, joint in enumerate(clip.joints):
        if not joint.is_end_site:
            by_name.setdefault(_normalise(joint.name), j)
    wanted = {"pelvis": _PELVIS_NAMES, "neck": _NECK_NAMES, "head": _HEAD_NAMES}
    for bone, names in _LIMB_NAMES.items():
        for s, long in (("l", "left"), ("r", "right")):
            wanted[f"{s}_{bone}"] = tuple(n.format(L=long, S=s) for n in names)
    roles = {}
    for role, names in wanted.items():
        hit = next((by_name[n] for n in names if n in by_name), None)
        if hit is not None:
            roles[role] = hit
    missing = [r for r in wanted if r not in roles and r[2:] not in _OPTIONAL]
    if missing:
        have = ", ".join(j.name for j in clip.joints if not j.is_end_site)
        raise BvhError(
            f"{clip.path}: unknown skeleton: no joint for {', '.join(missing)} "
            f"(CMU-style names such as Hips, Neck, Head, LeftArm, LeftForeArm, LeftHand, "
            f"LeftUpLeg, LeftLeg, LeftFoot expected; the file has: {have})"
        )
    return roles


def _first_child(clip: BvhClip, j: int, rest: np.ndarray) -> int | None:
    """The first child of joint j that does not sit on top of it, if any."""
    for c, joint in enumerate(clip.joints):
        if joint.parent == j and np.linalg.norm(rest[c] - rest[j]) > 1e-9:
            return c
    return None


def _align(ours: np.ndarray, theirs: np.ndarray) -> np.ndarray:
    """Smallest rotation taking unit vector `ours` onto unit vector `theirs`."""
    axis = np.cross(ours, theirs)
    s, c = np.linalg.norm(axis), float(ours @ theirs)
    if s < 1e-9:
        if c > 0:
            return np.eye(3)
        perp = np.cross(ours, [1.0, 0.0, 0.0] if abs(ours[0]) < 0.9 else [0.0, 1.0, 0.0])
        return Rotation.from_rotvec(np.pi * perp / np.linalg.norm(perp)).as_matrix()
    return Rotation.from_rotvec(axis / s * np.arctan2(s, c)).as_matrix()


def retarget(clip: BvhClip, model: HumanModel, spec: HumanMotionSpec) -> PoseTable:
    """Map a CMU-style clip onto `model`, starting at waypoints[0] facing `heading`.

    The clip's up axis is the principal axis closest to hips → head at rest, its left the
    direction from the right to the left hip; the feet's lowest point over the clip is put on
    the floor.
    """
    roles = _find_roles(clip)
    rest = clip.rest_positions()
    up_bvh = rest[roles["head"]] - rest[roles["pelvis"]]
    up = np.eye(3)[np.argmax(np.abs(up_bvh))] * np.sign(up_bvh[np.argmax(np.abs(up_bvh))])
    left = rest[roles["l_thigh"]] - rest[roles["r_thigh"]]
    left = left - (left @ up) * up
    thigh = clip.joints[roles["l_thigh"]]
    if np.linalg.norm(left) < 1e-9:
        raise BvhError(f"{clip.path}: line {thigh.line}: joint {thigh.name!r}: the hips coincide")
    left /= np.linalg.norm(left)
    C = np.stack([np.cross(left, up), left, up])  # rows: our x, y, z in clip coordinates

    clip_leg = (
        np.mean(
            [
                np.linalg.norm(rest[roles[f"{s}_{b}"]] - rest[roles[f"{s}_{a}"]])
                for s in "lr"
                for a, b in (("thigh", "shin"), ("shin", "foot"))
            ]
        )
        * 2
    )
    if clip_leg < 1e-9:
        raise BvhError(f"{clip.path}: line {thigh.line}: joint {thigh.name!r}: legs of length 0")
    L = model.segment_lengths
    scale = (L["thigh"] + L["shin"]) / clip_leg

    torso_j = clip.joints[roles["neck"]].parent
    source = {"pelvis": roles["pelvis"], "torso": torso_j, "neck": roles["neck"]}
    target = {"torso": roles["neck"], "neck": roles["head"]}
    for s in "lr":
        source |= {f"{s}_{b}": roles[f"{s}_{b}"] for b in ("upper_arm", "lower_arm", "hand")}
        source |= {f"{s}_{b}": roles[f"{s}_{b}"] for b in ("thigh", "shin", "foot")}
        target |= {
            f"{s}_upper_arm": roles[f"{s}_lower_arm"],
            f"{s}_lower_arm": roles[f"{s}_hand"],
            f"{s}_thigh": roles[f"{s}_shin"],
            f"{s}_shin": roles[f"{s}_foot"],
        }
        if f"{s}_toe" in roles:
            target[f"{s}_foot"] = roles[f"{s}_toe"]
    source["head"] = roles["head"]
    toe = model.joint_local[JOINT_NAMES.index("l_toe")]
    align = []
    for part in PART_NAMES:
        j = source[part]
        end = target.get(part, _first_child(clip, j, rest))
        ours = np.array([0.0, 0.0, 1.0 if part in ("torso", "neck", "head") else -1.0])
        if part.endswith("foot"):
            ours = toe / np.linalg.norm(toe)
        if part == "pelvis" or end is None or np.linalg.norm(rest[end] - rest[j]) < 1e-9:
            align.append(np.eye(3))
        else:
            d = C @ (rest[end] - rest[j])
            align.append(_align(ours, d / np.linalg.norm(d)))

    R_clip, p_clip = clip.forward_kinematics()
    idx = [source[p] for p in PART_NAMES]
    R = C @ R_clip[:, idx] @ C.T @ np.stack(align)
    root = scale * (p_clip[:, roles["pelvis"]] @ C.T)
    fx = R[0, 0, :, 0]
    Y = Rotation.from_euler("z", spec.heading - np.arctan2(fx[1], fx[0])).as_matrix()
    R = Y @ R
    root = (root - root[0] * np.array([1.0, 1.0, 0.0])) @ Y.T
    root[:, :2] += np.asarray(spec.waypoints[0], dtype=float)
    feet = [model.part_index("l_foot"), model.part_index("r_foot")]
    box = model.parts[feet[0]].geoms[0]
    corners = np.asarray(box.pos) + np.array(box.size) * BOX_CORNERS
    origins = model.forward_kinematics(R, root)[:, feet]
    lowest = (origins[:, :, None] + (R[:, feet, None] @ corners[:, :, None])[..., 0])[..., 2]
    root[:, 2] -= lowest.min()

    return PoseTable(R, root, clip.frame_time_s)


def bvh_table(
    model: HumanModel, spec: HumanMotionSpec, loader: Callable[[str], BvhClip] = load_bvh
) -> PoseTable:
    """Load `spec.bvh_path` (checking `bvh_sha256` when given) and retarget it onto `model`."""
    if not spec.bvh_path or not spec.waypoints:
        raise BvhError("motion kind 'bvh' needs a bvh_path and a start waypoint")
    clip = loader(spec.bvh_path)
    if spec.bvh_sha256 and clip.sha256 != spec.bvh_sha256.lower():
        raise BvhError(
            f"{spec.bvh_path}: sha256 {clip.sha256} differs from the scene's {spec.bvh_sha256}"
        )
    return retarget(clip, model, spec)
