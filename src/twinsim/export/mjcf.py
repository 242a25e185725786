"""The recorded world as a standalone MuJoCo model: `world.xml` with `textures/*.png` and
`meshes/*.obj` beside it (`engine/mjcf_export.py` writes them), which
`mujoco.MjModel.from_xml_path` loads. The static world only: robots, people and flying
objects are left out (their poses change; the sequence has them)."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from twinsim.engine.mjcf_export import write_mjcf
from twinsim.export.common import ExportError, Progress, no_progress, prepare_output
from twinsim.model.sections import RenderConfig
from twinsim.sequence.reader import SequenceReader

MJCF_FILE = "world.xml"


def export_mjcf(seq: SequenceReader, out: Path, *, progress: Progress = no_progress) -> Path:
    """Write the static world of `seq` as `out/world.xml` and its assets; returns the XML."""
    config = seq.metadata.get("config") or {}
    try:
        render = RenderConfig.model_validate(config.get("render") or {})
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = ".".join(map(str, problem["loc"]))
        raise ExportError(f"{seq.path}: recorded render.{where}: {problem['msg']}") from None
    physics_hz = int(seq.metadata["physics_hz"])
    out = prepare_output(out)
    path = write_mjcf(seq.scene, render, physics_hz, out, MJCF_FILE)
    progress(1, 1)
    return path
