"""`twinsim run --resume DIR`: an interrupted run finished from its last checkpoint
(`twinsim.checkpoint`).

A resumed run rebuilds the world from the config the checkpoint keeps (its scene and metadata
must come out as the folder has them), checks what it can before changing anything (no link
or FIFO in the folder, a state for every stream, every file the checkpoint vouches for as it
saw it, the logged rows; the writer then holds the folder's lock), cuts every stream back to
the checkpoint,
gives the recorders their state, and replays the physics and the controllers up to the
checkpoint without rendering, checking each recorded step against the logged `robot_state`
row (so a resume that would diverge is refused, never written). From there it records as the
interrupted run would have: the finished folder is byte-identical to an uninterrupted run.
"""

from __future__ import annotations

import json
from pathlib import Path

from twinsim.atomic import check_plain_folder
from twinsim.checkpoint import Checkpoint, LoggedStates, read_checkpoint
from twinsim.errors import OutputFolderError
from twinsim.model.layout import INCOMPLETE, METADATA
from twinsim.model.scene import SceneSpec
from twinsim.sequence.ledger import ledger_problems
from twinsim.sequence.reader import read_metadata


def resume(folder: str | Path, progress=None) -> Path:
    """Finish the interrupted run in `folder` from its last checkpoint (`twinsim run --resume`)."""
    from twinsim.config import validate_config
    from twinsim.engine.backend import configure_backend
    from twinsim.sim import build_scene, record, step_range

    folder = Path(folder)
    if not folder.is_dir():
        raise OutputFolderError(f"{folder}: no such folder to resume")
    if not (folder / INCOMPLETE).is_file():
        raise OutputFolderError(f"{folder}: is not an interrupted run (no {INCOMPLETE} marker)")
    checkpoint = read_checkpoint(folder)
    cfg = validate_config(json.loads(checkpoint.config))
    configure_backend(cfg.render.backend)
    scene = build_scene(cfg)
    _check_before_cutting(folder, checkpoint, scene, step_range(cfg).start)
    return record(scene, cfg, folder, progress, resume=checkpoint)


def _check_before_cutting(
    folder: Path, checkpoint: Checkpoint, scene: SceneSpec, start: int
) -> None:
    """What can be checked before a stream is cut back to the checkpoint, so a refused resume
    leaves the folder as it was: no link or FIFO in it, a state for every stream the metadata
    lists, and the `robot_state` rows the physics replay is checked against."""
    check_plain_folder(folder, "resume")
    listed = set(read_metadata(folder)["streams"])
    if listed != set(checkpoint.writer):
        odd = sorted(listed ^ set(checkpoint.writer))
        raise OutputFolderError(
            f"{folder}: the checkpoint and {METADATA} list different streams ({', '.join(odd)})"
        )
    changed = ledger_problems(folder, checkpoint.contents)
    if changed:
        more = f" (and {len(changed) - 1} more)" if len(changed) > 1 else ""
        raise OutputFolderError(
            f"{folder}/{changed[0]}{more}: cannot resume a folder edited after its checkpoint; "
            "run it again"
        )
    streams = {r.name: scene.stream_prefix(r.name) + "robot_state" for r in scene.robots}
    LoggedStates(folder, streams, start, checkpoint.step)
