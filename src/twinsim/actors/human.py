"""Articulated human: skeleton, rigid body parts made of primitives, keypoints, and playback.

Conventions (SI, world z up, floor at z = 0). The person frame is x forward, y to the person's own
left, z up. Every part has its own frame, placed at the joint that rotates it (pelvis at the root,
torso at the spine, head at the skull base, upper arm at the shoulder, lower arm at the elbow, hand
at the wrist, thigh at the hip, shin at the knee, foot at the ankle). In the rest pose (standing,
arms hanging) every part frame is aligned with the person frame, so limbs extend along their
frame's -z, torso, neck and head along +z, and the foot forward along +x with its sole at
z = -ankle height. Motions (`twinsim.actors.gait`, `twinsim.actors.bvh`) produce the world
orientation of every part and the pelvis position; positions follow by forward kinematics, so bone
lengths never change.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy.spatial.transform import Rotation

from twinsim.geometry import quat_wxyz_to_matrix
from twinsim.scene.spec import GeomSpec, HumanBodySpec, HumanMotionSpec, PersonSpec

if TYPE_CHECKING:
    from twinsim.actors.bvh import BvhClip

PART_NAMES: tuple[str, ...] = (
    "pelvis",
    "torso",
    "neck",
    "head",
    "l_upper_arm",
    "r_upper_arm",
    "l_lower_arm",
    "r_lower_arm",
    "l_hand",
    "r_hand",
    "l_thigh",
    "r_thigh",
    "l_shin",
    "r_shin",
    "l_foot",
    "r_foot",
)
PART_PARENTS: dict[str, str | None] = {
    "pelvis": None,
    "torso": "pelvis",
    "neck": "torso",
    "head": "neck",
    "l_upper_arm": "torso",
    "r_upper_arm": "torso",
    "l_lower_arm": "l_upper_arm",
    "r_lower_arm": "r_upper_arm",
    "l_hand": "l_lower_arm",
    "r_hand": "r_lower_arm",
    "l_thigh": "pelvis",
    "r_thigh": "pelvis",
    "l_shin": "l_thigh",
    "r_shin": "r_thigh",
    "l_foot": "l_shin",
    "r_foot": "r_shin",
}
JOINT_NAMES: tuple[str, ...] = (
    "pelvis",
    "spine",
    "chest",
    "neck",
    "head",
    "l_shoulder",
    "r_shoulder",
    "l_elbow",
    "r_elbow",
    "l_wrist",
    "r_wrist",
    "l_hip",
    "r_hip",
    "l_knee",
    "r_knee",
    "l_ankle",
    "r_ankle",
    "l_toe",
    "r_toe",
)
COCO_KEYPOINTS: tuple[str, ...] = (
    "nose",
    "left_eye",
    "right_eye",
    "left_ear",
    "right_ear",
    "left_shoulder",
    "right_shoulder",
    "left_elbow",
    "right_elbow",
    "left_wrist",
    "right_wrist",
    "left_hip",
    "right_hip",
    "left_knee",
    "right_knee",
    "left_ankle",
    "right_ankle",
)
# Keys accepted by `HumanBodySpec.segment_scale` (left and right share one scale).
SEGMENT_NAMES: tuple[str, ...] = (
    "pelvis",
    "torso",
    "neck",
    "head",
    "upper_arm",
    "lower_arm",
    "hand",
    "thigh",
    "shin",
    "foot",
)
LAYERS: tuple[str, ...] = ("skin", "clothing")

# Reference proportions as fractions of standing height (after Drillis & Contini's and Winter's
# anthropometric tables); each row is scaled by its segment's `segment_scale`.
_REF: dict[str, dict[str, float]] = {
    "foot": {
        "ankle_height": 0.039,
        "heel": 0.040,
        "toe_tip": 0.112,
        "toe_x": 0.080,
        "ball": 0.015,
        "top": 0.006,
    },
    "shin": {"length": 0.246},
    "thigh": {"length": 0.235},
    "pelvis": {"hip_drop": 0.030, "spine_rise": 0.050, "hip_half_width": 0.050},
    "torso": {"length": 0.230, "chest": 0.120, "shoulder_z": 0.210, "shoulder_half_width": 0.105},
    "neck": {"length": 0.045},
    "head": {"length": 0.125},
    "upper_arm": {"length": 0.186},
    "lower_arm": {"length": 0.146},
    "hand": {"length": 0.108},
}
# The seat surface a sitting person rests on, as a fraction of knee height (0.45 m at 1.75 m).
SEAT_KNEE_RATIO = 0.9


@dataclass(frozen=True)
class BodyPart:
    """One rigid segment: its primitives in the part frame, each tagged "skin" or "clothing"."""

    name: str
    parent: str | None
    geoms: tuple[GeomSpec, ...]
    layers: tuple[str, ...]


@dataclass(frozen=True, eq=False)
class HumanModel:
    """A person's rigid skeleton and body, built by `build_body`.

    `segment_lengths` holds metres: bone lengths (thigh, shin, upper_arm, lower_arm, hand, torso,
    neck, head), foot geometry (ankle_height, heel, toe_tip: sole height and extent behind/ahead
    of the ankle), widths (hip_width, shoulder_width between joint centres), pelvis offsets
    (hip_drop, spine_rise) and standing heights (pelvis_height of the root, knee_height).
    """

    height_m: float
    parts: tuple[BodyPart, ...]
    segment_lengths: dict[str, float]
    seat_height_m: float
    pelvis_half_height_m: float
    parent_index: np.ndarray  # (P,) parent part index, the root points at itself
    part_offset: np.ndarray  # (P, 3) part origin in its parent's frame at rest
    ancestry: np.ndarray  # (P, P) 1 where column part lies on the chain root → row part
    joint_part: np.ndarray  # (J,) part each joint is fixed to
    joint_local: np.ndarray  # (J, 3) joint position in that part's frame
    keypoint_part: np.ndarray  # (17,)
    keypoint_local: np.ndarray  # (17, 3)

    def part_index(self, name: str) -> int:
        """Index of a part in `PART_NAMES` order."""
        return PART_NAMES.index(name)

    def forward_kinematics(self, R: np.ndarray, root: np.ndarray) -> np.ndarray:
        """Part origins (N, P, 3) from world orientations (N, P, 3, 3) and pelvis (N, 3)."""
        steps = (R[:, self.parent_index] @ self.part_offset[:, :, None])[..., 0]
        return root[:, None, :] + self.ancestry @ steps

    def points_world(
        self, R: np.ndarray, origins: np.ndarray, part: np.ndarray, local: np.ndarray
    ) -> np.ndarray:
        """World positions (N, K, 3) of points fixed at `local` (K, 3) in parts `part` (K,)."""
        return origins[:, part] + (R[:, part] @ local[:, :, None])[..., 0]


def _read_only(a) -> np.ndarray:
    arr = np.array(a, dtype=float)
    arr.flags.writeable = False
    return arr


def _capsule(radius: float, z0: float, z1: float, material: str) -> GeomSpec:
    """A capsule along the part's z axis whose segment runs from z0 to z1."""
    return GeomSpec(
        type="capsule",
        size=(radius, abs(z1 - z0) / 2),
        pos=(0.0, 0.0, (z0 + z1) / 2),
        material=material,
    )


def build_body(body: HumanBodySpec) -> HumanModel:
    """Skeleton and primitives of one person; standing height equals `body.height_m` exactly."""
    unknown = set(body.segment_scale) - set(SEGMENT_NAMES)
    if unknown:
        raise ValueError(f"segment_scale keys {sorted(unknown)} unknown; use {SEGMENT_NAMES}")
    if any(v <= 0 for v in body.segment_scale.values()):
        raise ValueError(f"segment_scale values must be > 0, got {body.segment_scale}")
    if body.girth_scale <= 0:
        raise ValueError(f"girth_scale must be > 0, got {body.girth_scale}")
    scale = {s: body.segment_scale.get(s, 1.0) for s in SEGMENT_NAMES}
    vertical = (
        _REF["foot"]["ankle_height"] * scale["foot"]
        + _REF["shin"]["length"] * scale["shin"]
        + _REF["thigh"]["length"] * scale["thigh"]
        + (_REF["pelvis"]["hip_drop"] + _REF["pelvis"]["spine_rise"]) * scale["pelvis"]
        + _REF["torso"]["length"] * scale["torso"]
        + _REF["neck"]["length"] * scale["neck"]
        + _REF["head"]["length"] * scale["head"]
    )
    unit = body.height_m / vertical
    g = body.girth_scale

    def m(seg: str, frac: float) -> float:
        return frac * scale[seg] * unit

    def ref(seg: str, key: str) -> float:
        return m(seg, _REF[seg][key])

    L = {
        name: ref(name, "length")
        for name in ("shin", "thigh", "torso", "neck", "head", "upper_arm", "lower_arm", "hand")
    }
    ankle_h = ref("foot", "ankle_height")
    heel, toe_tip, toe_x = ref("foot", "heel"), ref("foot", "toe_tip"), ref("foot", "toe_x")
    hip_drop, spine_rise = ref("pelvis", "hip_drop"), ref("pelvis", "spine_rise")
    hip_w, sh_w = ref("pelvis", "hip_half_width"), ref("torso", "shoulder_half_width")
    sh_z, chest_z = ref("torso", "shoulder_z"), ref("torso", "chest")
    knee_h = ankle_h + L["shin"]
    pelvis_z = knee_h + L["thigh"] + hip_drop
    L |= {
        "ankle_height": ankle_h,
        "heel": heel,
        "toe_tip": toe_tip,
        "hip_width": 2 * hip_w,
        "shoulder_width": 2 * sh_w,
        "hip_drop": hip_drop,
        "spine_rise": spine_rise,
        "pelvis_height": pelvis_z,
        "knee_height": knee_h,
    }

    skin, hair = body.skin_material, body.hair_material
    shirt, pants, shoes = body.shirt_material, body.pants_material, body.shoes_material
    pelvis_half_h = m("pelvis", 0.062)
    head_geoms = [
        (
            GeomSpec(
                type="ellipsoid",
                size=(m("head", 0.057), m("head", 0.046), m("head", 0.0625)),
                pos=(m("head", 0.004), 0.0, m("head", 0.0625)),
                material=skin,
            ),
            "skin",
        )
    ]
    if hair is not None:
        head_geoms.append(
            (
                GeomSpec(
                    type="ellipsoid",
                    size=(m("head", 0.058), m("head", 0.048), m("head", 0.036)),
                    pos=(-m("head", 0.008), 0.0, m("head", 0.09)),
                    material=hair,
                ),
                "skin",
            )
        )
    foot_box = GeomSpec(
        type="box",
        size=((heel + toe_tip) / 2, m("foot", 0.026) * g, (ankle_h + ref("foot", "top")) / 2),
        pos=((toe_tip - heel) / 2, 0.0, (ref("foot", "top") - ankle_h) / 2),
        material=shoes,
    )
    y_axis = (np.sqrt(0.5), -np.sqrt(0.5), 0.0, 0.0)  # turns a capsule's z axis onto y
    geoms: dict[str, list[tuple[GeomSpec, str]]] = {
        "pelvis": [
            (
                GeomSpec(
                    type="ellipsoid",
                    size=(m("pelvis", 0.062) * g, m("pelvis", 0.092) * g, pelvis_half_h),
                    material=pants,
                ),
                "clothing",
            )
        ],
        "torso": [
            (
                GeomSpec(
                    type="ellipsoid",
                    size=(m("torso", 0.06) * g, m("torso", 0.082) * g, m("torso", 0.075)),
                    pos=(0.0, 0.0, m("torso", 0.055)),
                    material=shirt,
                ),
                "clothing",
            ),
            (
                GeomSpec(
                    type="ellipsoid",
                    size=(m("torso", 0.066) * g, m("torso", 0.098) * g, m("torso", 0.085)),
                    pos=(0.0, 0.0, m("torso", 0.145)),
                    material=shirt,
                ),
                "clothing",
            ),
            (
                GeomSpec(
                    type="capsule",
                    size=(m("torso", 0.032) * g, m("torso", 0.07)),
                    pos=(-m("torso", 0.005), 0.0, m("torso", 0.198)),
                    quat=y_axis,
                    material=shirt,
                ),
                "clothing",
            ),
        ],
        "neck": [(_capsule(m("neck", 0.028) * g, 0.0, L["neck"], skin), "skin")],
        "head": head_geoms,
    }
    for side in "lr":
        geoms[f"{side}_upper_arm"] = [
            (_capsule(m("upper_arm", 0.024) * g, 0.0, -L["upper_arm"], shirt), "clothing")
        ]
        geoms[f"{side}_lower_arm"] = [
            (_capsule(m("lower_arm", 0.019) * g, 0.0, -L["lower_arm"], skin), "skin")
        ]
        geoms[f"{side}_hand"] = [
            (
                GeomSpec(
                    type="box",
                    size=(m("hand", 0.024) * g, m("hand", 0.011) * g, 0.45 * L["hand"]),
                    pos=(0.0, 0.0, -0.5 * L["hand"]),
                    material=skin,
                ),
                "skin",
            )
        ]
        geoms[f"{side}_thigh"] = [
            (_capsule(m("thigh", 0.037) * g, 0.0, -L["thigh"], pants), "clothing")
        ]
        geoms[f"{side}_shin"] = [
            (_capsule(m("shin", 0.027) * g, 0.0, -L["shin"], pants), "clothing")
        ]
        geoms[f"{side}_foot"] = [(foot_box, "clothing")]
    parts = tuple(
        BodyPart(
            name=n,
            parent=PART_PARENTS[n],
            geoms=tuple(gm for gm, _ in geoms[n]),
            layers=tuple(layer for _, layer in geoms[n]),
        )
        for n in PART_NAMES
    )

    offsets = {
        "pelvis": (0.0, 0.0, 0.0),
        "torso": (0.0, 0.0, spine_rise),
        "neck": (0.0, 0.0, L["torso"]),
        "head": (0.0, 0.0, L["neck"]),
    }
    for side, sign in (("l", 1.0), ("r", -1.0)):
        offsets |= {
            f"{side}_upper_arm": (0.0, sign * sh_w, sh_z),
            f"{side}_lower_arm": (0.0, 0.0, -L["upper_arm"]),
            f"{side}_hand": (0.0, 0.0, -L["lower_arm"]),
            f"{side}_thigh": (0.0, sign * hip_w, -hip_drop),
            f"{side}_shin": (0.0, 0.0, -L["thigh"]),
            f"{side}_foot": (0.0, 0.0, -L["shin"]),
        }
    parent_index = [PART_NAMES.index(PART_PARENTS[n] or n) for n in PART_NAMES]
    ancestry = np.zeros((len(PART_NAMES), len(PART_NAMES)))
    for i in range(len(PART_NAMES)):
        j = i
        while j != 0:
            ancestry[i, j] = 1.0
            j = parent_index[j]

    joint_at = {
        "pelvis": ("pelvis", (0.0, 0.0, 0.0)),
        "spine": ("torso", (0.0, 0.0, 0.0)),
        "chest": ("torso", (0.0, 0.0, chest_z)),
        "neck": ("neck", (0.0, 0.0, 0.0)),
        "head": ("head", (0.0, 0.0, 0.0)),
    }
    for side in "lr":
        for joint, part in (
            ("shoulder", "upper_arm"),
            ("elbow", "lower_arm"),
            ("wrist", "hand"),
            ("hip", "thigh"),
            ("knee", "shin"),
            ("ankle", "foot"),
        ):
            joint_at[f"{side}_{joint}"] = (f"{side}_{part}", (0.0, 0.0, 0.0))
        joint_at[f"{side}_toe"] = (f"{side}_foot", (toe_x, 0.0, ref("foot", "ball") - ankle_h))
    face = {
        "nose": (0.062, 0.0, 0.045),
        "left_eye": (0.052, 0.018, 0.062),
        "right_eye": (0.052, -0.018, 0.062),
        "left_ear": (0.0, 0.046, 0.058),
        "right_ear": (0.0, -0.046, 0.058),
    }
    keypoint_at = {k: ("head", tuple(m("head", c) for c in v)) for k, v in face.items()}
    for side, word in (("l", "left"), ("r", "right")):
        for joint in ("shoulder", "elbow", "wrist", "hip", "knee", "ankle"):
            keypoint_at[f"{word}_{joint}"] = joint_at[f"{side}_{joint}"]

    return HumanModel(
        height_m=body.height_m,
        parts=parts,
        segment_lengths=L,
        seat_height_m=SEAT_KNEE_RATIO * knee_h,
        pelvis_half_height_m=pelvis_half_h,
        parent_index=np.array(parent_index),
        part_offset=_read_only([offsets[n] for n in PART_NAMES]),
        ancestry=_read_only(ancestry),
        joint_part=np.array([PART_NAMES.index(joint_at[j][0]) for j in JOINT_NAMES]),
        joint_local=_read_only([joint_at[j][1] for j in JOINT_NAMES]),
        keypoint_part=np.array([PART_NAMES.index(keypoint_at[k][0]) for k in COCO_KEYPOINTS]),
        keypoint_local=_read_only([keypoint_at[k][1] for k in COCO_KEYPOINTS]),
    )


# A motion's core: clip times τ (N,) → part world orientations (N, P, 3, 3), pelvis (N, 3).
PoseSource = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]

TABLE_HZ = 120.0  # rate at which procedural motions are tabulated
_CHUNK = 4096  # samples evaluated at once while tabulating


def _quat_matrix_map() -> np.ndarray:
    """M (16, 9) with R.ravel() = (q qᵀ).ravel() @ M / |q|² for q in (x, y, z, w) order."""
    terms = {  # R entry → ((i, j), coefficient) over products q_i q_j
        0: (((3, 3), 1), ((0, 0), 1), ((1, 1), -1), ((2, 2), -1)),
        1: (((0, 1), 2), ((2, 3), -2)),
        2: (((0, 2), 2), ((1, 3), 2)),
        3: (((0, 1), 2), ((2, 3), 2)),
        4: (((3, 3), 1), ((0, 0), -1), ((1, 1), 1), ((2, 2), -1)),
        5: (((1, 2), 2), ((0, 3), -2)),
        6: (((0, 2), 2), ((1, 3), -2)),
        7: (((1, 2), 2), ((0, 3), 2)),
        8: (((3, 3), 1), ((0, 0), -1), ((1, 1), -1), ((2, 2), 1)),
    }
    M = np.zeros((16, 9))
    for entry, products in terms.items():
        for (i, j), coef in products:
            M[4 * i + j, entry] = coef
    return M


_QUAT_TO_MATRIX = _quat_matrix_map()


class PoseTable:
    """A motion tabulated at a fixed step: part quaternions and pelvis positions.

    Playback interpolates linearly between samples (normalised quaternions), which costs a few
    numpy calls however complex the motion, so a pose per physics step stays cheap; times past
    the last sample hold it.
    """

    def __init__(self, R: np.ndarray, root: np.ndarray, step_s: float) -> None:
        q = Rotation.from_matrix(R.reshape(-1, 3, 3)).as_quat().reshape(*R.shape[:2], 4)
        flips = np.sign(np.einsum("fpi,fpi->fp", q[1:], q[:-1]))
        flips[flips == 0] = 1.0
        q[1:] *= np.cumprod(flips, axis=0)[..., None]
        self._q = q.astype(np.float32)
        self._root = np.asarray(root, dtype=float)
        self.step_s = float(step_s)
        self._last = len(q) - 1

    @classmethod
    def sample(cls, source: PoseSource, duration_s: float, rate_hz: float = TABLE_HZ) -> PoseTable:
        """Tabulate `source` on [0, duration_s], both ends included."""
        n = max(int(np.ceil(duration_s * rate_hz)), 1)
        tau = np.linspace(0.0, duration_s, n + 1)
        parts = [source(tau[i : i + _CHUNK]) for i in range(0, len(tau), _CHUNK)]
        R = np.concatenate([r for r, _ in parts])
        return cls(R, np.concatenate([p for _, p in parts]), duration_s / n)

    def __call__(self, tau: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Part quaternions (N, P, 4; x y z w, unnormalised) and pelvis (N, 3) at clip times τ."""
        x = np.minimum(np.maximum(tau / self.step_s, 0.0), self._last)
        i0 = np.minimum(x.astype(int), max(self._last - 1, 0))
        i1 = np.minimum(i0 + 1, self._last)
        w = (x - i0)[:, None]
        q0, r0 = self._q[i0], self._root[i0]
        return q0 + w[:, :, None] * (self._q[i1] - q0), r0 + w * (self._root[i1] - r0)

    def at(self, tau: float) -> tuple[np.ndarray, np.ndarray]:
        """`self(np.array([tau]))` for one time, with scalar index arithmetic (the hot path)."""
        x = min(max(tau / self.step_s, 0.0), float(self._last))
        i0 = min(int(x), max(self._last - 1, 0))
        i1 = min(i0 + 1, self._last)
        w = np.float64(x - i0)
        q0, r0 = self._q[i0], self._root[i0]
        return (q0 + w * (self._q[i1] - q0))[None], (r0 + w * (self._root[i1] - r0))[None]


def _rotations(q: np.ndarray) -> np.ndarray:
    """Rotation matrices (..., 3, 3) of non-zero quaternions (..., 4), (x, y, z, w) order."""
    qq = (q[..., :, None] * q[..., None, :]).reshape(*q.shape[:-1], 16)
    return (qq @ _QUAT_TO_MATRIX / (q * q).sum(axis=-1)[..., None]).reshape(*q.shape[:-1], 3, 3)


class HumanMotion:
    """A person's animation; every method is a pure function of simulation time `t_s`.

    Scalar `t_s` gives one result; a 1-D array of times gives a leading time axis. Playback is
    ping-pong (GRADE): the motion runs forward for `cycle_s`, then backward, period 2·cycle_s,
    shifted by `phase_s`, so it never jumps and never stops.
    """

    def __init__(self, model: HumanModel, spec: HumanMotionSpec, table: PoseTable) -> None:
        self.model = model
        self.spec = spec
        self.cycle_s = float(spec.cycle_s)
        self.period_s = 2.0 * self.cycle_s
        self._table = table

    def playback_time(self, t_s) -> np.ndarray:
        """Clip time τ(t): a triangle wave 0 → cycle_s → 0 of period 2·cycle_s."""
        u = np.mod(np.asarray(t_s, dtype=float) + self.spec.phase_s, self.period_s)
        return np.where(u <= self.cycle_s, u, self.period_s - u)

    def _state(self, t_s) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
        """Quaternions (N, P, 4), orientations (N, P, 3, 3), part origins (N, P, 3), scalar?"""
        t = np.asarray(t_s, dtype=float)
        if t.ndim == 0:
            u = (float(t) + self.spec.phase_s) % self.period_s
            q, root = self._table.at(u if u <= self.cycle_s else self.period_s - u)
        elif t.ndim == 1:
            q, root = self._table(self.playback_time(t))
        else:
            raise ValueError(f"t_s must be a scalar or a 1-D array, got shape {t.shape}")
        R = _rotations(q)
        return q, R, self.model.forward_kinematics(R, root), t.ndim == 0

    def part_poses(self, t_s) -> np.ndarray:
        """World pose T_world_part of every part, (P, 4, 4) in `PART_NAMES` order."""
        _, R, p, scalar = self._state(t_s)
        T = np.zeros((*R.shape[:2], 4, 4))
        T[..., :3, :3] = R
        T[..., :3, 3] = p
        T[..., 3, 3] = 1.0
        return T[0] if scalar else T

    def part_pos_quat(self, t_s) -> tuple[np.ndarray, np.ndarray]:
        """Part positions (P, 3) and unit quaternions (P, 4) in MuJoCo's (w, x, y, z) order."""
        q, _, p, scalar = self._state(t_s)
        q = q[..., [3, 0, 1, 2]] / np.linalg.norm(q, axis=-1, keepdims=True)
        return (p[0], q[0]) if scalar else (p, q)

    def joints_world(self, t_s) -> np.ndarray:
        """World joint positions, (J, 3) in `JOINT_NAMES` order."""
        _, R, p, scalar = self._state(t_s)
        out = self.model.points_world(R, p, self.model.joint_part, self.model.joint_local)
        return out[0] if scalar else out

    def keypoints_world(self, t_s) -> np.ndarray:
        """World positions of the 17 COCO keypoints, (17, 3) in `COCO_KEYPOINTS` order."""
        _, R, p, scalar = self._state(t_s)
        out = self.model.points_world(R, p, self.model.keypoint_part, self.model.keypoint_local)
        return out[0] if scalar else out

    def root_pose(self, t_s) -> np.ndarray:
        """World pose of the pelvis frame, (4, 4)."""
        _, R, p, scalar = self._state(t_s)
        T = np.zeros((len(R), 4, 4))
        T[:, :3, :3] = R[:, 0]
        T[:, :3, 3] = p[:, 0]
        T[:, 3, 3] = 1.0
        return T[0] if scalar else T


def motion_for(
    person: PersonSpec, bvh_loader: Callable[[str], BvhClip] | None = None
) -> HumanMotion:
    """The animation of `person`; `bvh_loader(path) -> BvhClip` lets callers cache clips."""
    # Imported here: gait and bvh build on this module's skeleton.
    from twinsim.actors import bvh, gait

    model = build_body(person.body)
    spec = person.motion
    if spec.kind == "bvh":
        table = bvh.bvh_table(model, spec, bvh_loader or bvh.load_bvh)
    else:
        table = PoseTable.sample(gait.procedural_source(model, spec), spec.cycle_s)
    return HumanMotion(model, spec, table)


def _kronecker(n: int) -> np.ndarray:
    """First n points of the R3 low-discrepancy sequence in [0, 1)^3 (deterministic, even)."""
    g = 1.2207440846057596
    alpha = 1.0 / g ** np.arange(1, 4)
    return (0.5 + np.arange(1, n + 1)[:, None] * alpha) % 1.0


def _geom_area(geom: GeomSpec) -> float:
    s = geom.size
    if geom.type == "sphere":
        return 4 * np.pi * s[0] ** 2
    if geom.type == "ellipsoid":
        p = 1.6075  # Thomsen's approximation
        a, b, c = (x**p for x in s[:3])
        return 4 * np.pi * ((a * b + a * c + b * c) / 3) ** (1 / p)
    if geom.type == "box":
        x, y, z = s[:3]
        return 8 * (x * y + y * z + z * x)
    if geom.type == "capsule":
        return 4 * np.pi * s[0] * s[1] + 4 * np.pi * s[0] ** 2
    return 4 * np.pi * s[0] * s[1] + 2 * np.pi * s[0] ** 2  # cylinder


def _sphere_dirs(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    z = 1.0 - 2.0 * u
    r = np.sqrt(np.maximum(1.0 - z * z, 0.0))
    return np.stack([r * np.cos(2 * np.pi * v), r * np.sin(2 * np.pi * v), z], axis=-1)


def _geom_surface(geom: GeomSpec, q: np.ndarray) -> np.ndarray:
    """Points on the surface of `geom` in its own frame from quasi-random samples q (n, 3)."""
    u, v, w = q.T
    s = np.asarray(geom.size, dtype=float)
    if geom.type in ("sphere", "ellipsoid"):
        semi = np.full(3, s[0]) if geom.type == "sphere" else s[:3]
        return _sphere_dirs(u, v) * semi
    if geom.type == "box":
        face_area = np.array([s[1] * s[2], s[0] * s[2], s[0] * s[1]]).repeat(2)
        face = np.minimum(np.searchsorted(np.cumsum(face_area) / face_area.sum(), w), 5)
        axis, sign = face // 2, np.where(face % 2 == 0, 1.0, -1.0)
        p = np.empty((len(q), 3))
        a1, a2 = (axis + 1) % 3, (axis + 2) % 3
        rows = np.arange(len(q))
        p[rows, axis] = sign * s[axis]
        p[rows, a1] = (2 * u - 1) * s[a1]
        p[rows, a2] = (2 * v - 1) * s[a2]
        return p
    r, h = s[0], s[1]
    side = 4 * np.pi * r * h
    ang = 2 * np.pi * v
    on_side = w < side / _geom_area(geom)
    side_pts = np.stack([r * np.cos(ang), r * np.sin(ang), (2 * u - 1) * h], axis=-1)
    if geom.type == "capsule":
        d = _sphere_dirs(u, v)
        end_pts = r * d + np.stack([0 * u, 0 * u, np.sign(d[:, 2]) * h], axis=-1)
    else:
        rad = r * np.sqrt(u)
        end_pts = np.stack([rad * np.cos(ang), rad * np.sin(ang), np.where(w < 0.5, h, -h)], -1)
    return np.where(on_side[:, None], side_pts, end_pts)


def _split(n: int, weights: np.ndarray) -> np.ndarray:
    """Largest-remainder split of n items proportional to weights."""
    share = n * weights / weights.sum()
    counts = np.floor(share).astype(int)
    counts[np.argsort(-(share - counts), kind="stable")[: n - counts.sum()]] += 1
    return counts


def sample_surface_points(model: HumanModel, n_per_part: int) -> list[np.ndarray]:
    """Deterministic points on each part's geoms, (n_per_part, 3) in that part's frame.

    Points spread over the geoms in proportion to their area; transform them by
    `HumanMotion.part_poses(t)` over many t to get the 3D trace of a whole animation.
    """
    out = []
    for part in model.parts:
        counts = _split(n_per_part, np.array([_geom_area(g) for g in part.geoms]))
        pts = [
            _geom_surface(g, _kronecker(c)) @ quat_wxyz_to_matrix(g.quat).T + np.asarray(g.pos)
            for g, c in zip(part.geoms, counts, strict=True)
        ]
        out.append(np.concatenate(pts) if pts else np.zeros((0, 3)))
    return out
