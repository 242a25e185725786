"""Articulated human: skeleton, rigid body parts made of primitives, joints and keypoints.

Conventions (SI, world z up, floor at z = 0). The person frame is x forward, y to the person's own
left, z up. Every part has its own frame, placed at the joint that rotates it (pelvis at the root,
torso at the spine, head at the skull base, upper arm at the shoulder, lower arm at the elbow, hand
at the wrist, thigh at the hip, shin at the knee, foot at the ankle). In the rest pose (standing,
arms hanging) every part frame is aligned with the person frame, so limbs extend along their
frame's -z, torso, neck and head along +z, and the foot forward along +x with its sole at
z = -ankle height. Motions (`twinsim.actors.gait`, `twinsim.actors.bvh`) produce the world
orientation of every part and the pelvis position; positions follow by forward kinematics, so bone
lengths never change; `twinsim.actors.playback` plays them back and
`twinsim.actors.motion.motion_for` picks a person's motion.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from twinsim.model.people import HumanBodySpec
from twinsim.model.scene import GeomSpec

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


# Names that moved out of this module, still importable from here until actors/placement.py,
# engine/actors.py and their tests import them from their new modules.
