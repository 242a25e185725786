"""Names of every file and column in a sequence folder (documented in docs/sequence-format.md)."""

from __future__ import annotations

import re
from pathlib import Path

SEQUENCE_FORMAT = "twinsim-sequence"
#: 2: several robots (`robots`, each stream's `robot`, `<robot>.<stream>` names when there are
#: several), sensor stream types named as their kinds (`event_camera`, was `events`)
SEQUENCE_FORMAT_VERSION = 2
#: the formats this twinsim reads (older ones are read as the current one, in memory; 1 by
#: `twinsim.compat` until its removal in twinsim 0.3.0)
READABLE_FORMAT_VERSIONS = (1, 2)

INCOMPLETE = "INCOMPLETE"
METADATA = "metadata.json"
SCENE = "scene.json"
CHECKSUMS = "checksums.csv"
#: the folder of the scene's mesh assets (`assets/<sha256>.npz`, named in `scene.json`)
ASSETS = "assets"
#: the last checkpoint of a run being written (`twinsim run --resume`), gone once it is complete
RESUME = "resume.npz"
RESUME_TMP = f".{RESUME}.tmp"  # a checkpoint being written

TABLE_FILE = "data.csv"
FRAMES_FILE = "frames.csv"
BOXES_FILE = "boxes.jsonl"

STATUS_INCOMPLETE = "incomplete"
STATUS_COMPLETE = "complete"

#: Pose columns (TUM order: translation in metres, then the quaternion x, y, z, w).
POSE_COLUMNS = ("x", "y", "z", "qx", "qy", "qz", "qw")
FRAME_COLUMNS = ("frame", "t_ns", *POSE_COLUMNS)
IMU_COLUMNS = ("gyro_x", "gyro_y", "gyro_z", "accel_x", "accel_y", "accel_z")

#: Per-frame image kinds of a camera and their file extensions.
IMAGE_KINDS = {"rgb": "png", "depth": "npy", "instance": "png", "semantic": "png"}
#: Optional per-frame ground truth of a camera (`normals: true`, `flow: true`) and extensions.
SURFACE_KINDS = {"normals": "npy", "flow": "npy", "flow_valid": "png"}
#: Flow validity: the pixel's point leaves the image (or has none), stays visible, is hidden.
FLOW_OUT, FLOW_VISIBLE, FLOW_OCCLUDED = 0, 1, 2

RESERVED_NAMES = frozenset({INCOMPLETE, METADATA, SCENE, CHECKSUMS, RESUME, ASSETS})


def frame_path(camera_dir: Path, kind: str, index: int) -> Path:
    """Path of one frame's image of the given kind, e.g. cam0/rgb/000012.png."""
    return camera_dir / kind / f"{index:06d}.{(IMAGE_KINDS | SURFACE_KINDS)[kind]}"


def surface_kinds(info: dict) -> tuple[str, ...]:
    """The optional per-frame kinds a camera's metadata entry says its stream holds."""
    kinds = ("normals",) if info.get("normals") else ()
    return kinds + (("flow", "flow_valid") if info.get("flow") else ())


def check_stream_name(name: str) -> None:
    """Reject stream names that are not a single, plain folder name inside the sequence."""
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", name):
        raise ValueError(f"stream name {name!r} must be a plain folder name (letters, digits, _-.)")
    if name in RESERVED_NAMES:
        raise ValueError(f"stream name {name!r} is reserved for a sequence file")


def sequence_containing(path: str | Path) -> Path | None:
    """The sequence folder (one holding `metadata.json` or the `INCOMPLETE` marker) that
    `path` would be written inside, following links as the write would; None when none."""
    resolved = Path(path).absolute().resolve()
    for folder in resolved.parents:
        if (folder / METADATA).is_file() or (folder / INCOMPLETE).is_file():
            return folder
    return None
