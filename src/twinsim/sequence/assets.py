"""A sequence's mesh assets: `assets/<sha256>.npz`, one per `SceneSpec.mesh_assets` entry.

The writer puts them beside `scene.json` when a run starts; readers attach their bytes to the
scene they parse (`with_assets`), so every consumer of a recorded world (replays, twins,
exports, the scene graph) builds it from the folder alone; `validate` checks each file is
there, hashes to its name and (decoding) holds a mesh, and that the folder holds nothing else.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

from twinsim.errors import SequenceError
from twinsim.meshdata import decode_mesh_data
from twinsim.model.layout import ASSETS
from twinsim.model.scene import SceneSpec


def write_assets(root: Path, files: Mapping[str, bytes]) -> None:
    """Write each `assets/<name>` file of `files` into the sequence folder `root`."""
    for relpath, blob in files.items():
        parts = PurePosixPath(relpath).parts
        if len(parts) != 2 or parts[0] != ASSETS or parts[1] in ("", ".", ".."):
            raise ValueError(f"asset file {relpath!r} must be {ASSETS}/<name>")
        (root / ASSETS).mkdir(exist_ok=True)
        (root / relpath).write_bytes(blob)


def with_assets(root: Path, scene: SceneSpec) -> SceneSpec:
    """`scene` (read from `root`'s scene.json) with its mesh assets' bytes from `root`."""
    if not scene.mesh_assets:
        return scene
    blobs = {}
    for asset in scene.mesh_assets:
        file = root / asset.file
        try:
            blobs[asset.sha256] = file.read_bytes()
        except OSError as exc:
            raise SequenceError(f"{file}: mesh asset cannot be read ({exc.strerror})") from None
    try:
        return scene.with_asset_bytes(blobs)
    except ValueError as exc:
        raise SequenceError(f"{root}/{exc}") from None


def asset_problems(root: Path, scene: SceneSpec, decode: bool) -> list[str]:
    """What is wrong with the sequence's mesh assets, one line each (nothing when right)."""
    problems = []
    listed = {a.file for a in scene.mesh_assets}
    folder = root / ASSETS
    if folder.is_dir():
        for child in sorted(folder.iterdir()):
            if f"{ASSETS}/{child.name}" not in listed:
                problems.append(f"{ASSETS}/{child.name}: not a mesh asset of scene.json")
    for asset in scene.mesh_assets:
        try:
            blob = (root / asset.file).read_bytes()
        except OSError:
            problems.append(f"{asset.file}: mesh asset {asset.name!r} is missing")
            continue
        if hashlib.sha256(blob).hexdigest() != asset.sha256:
            problems.append(f"{asset.file}: its content does not hash to its name")
        elif decode:
            try:
                decode_mesh_data(blob)
            except ValueError as exc:
                problems.append(f"{asset.file}: {exc}")
    return problems
