"""An asset's collision shape: convex parts from CoACD, cached by content, else its hull.

CoACD (approximate convex decomposition) splits the mesh into convex parts that follow its
concavities (a chair's seat, back and legs apart), which MuJoCo collides with exactly. It runs
in a child process of its own: it can crash on a mesh it cannot cut (a segmentation fault on a
self-intersecting mesh without its manifold pre-pass), which the caller survives as a failure.
It takes seconds, so its parts are kept in the user's cache (`cache_folder()/coacd/<key>.npz`,
the key a sha256 of the mesh, the settings and CoACD's version): a second world with the same
asset reads them back. Where CoACD fails, the asset collides as its convex hull, and a flat
mesh, whose hull has no volume, as its bounding box 1 mm thick at least; `Collision` says which
and why, and the scene records it. A failed decomposition is not cached.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Literal

import numpy as np

from twinsim.meshdata import MeshData
from twinsim.scene.assets.catalogue import CollisionConfig

CACHE_ENV = "TWINSIM_CACHE_DIR"  # the cache folder, instead of $XDG_CACHE_HOME/twinsim
COACD_TIMEOUT_S = 600  # a decomposition running longer has failed
_MIN_THICKNESS_M = 0.001
_MIN_VOLUME_M3 = 1e-9
#: the child process: CoACD on the mesh of argv[1] (NPZ), its parts into argv[2]
_CHILD = """
import sys
import numpy as np
import coacd
with np.load(sys.argv[1], allow_pickle=False) as given:
    mesh = coacd.Mesh(given["vertices"], given["faces"])
    settings = {"threshold": float(given["threshold"]), "preprocess_mode": str(given["preprocess"])}
coacd.set_log_level("off")
parts = coacd.run_coacd(mesh, seed=0, **settings)
vertices = [np.empty((0, 3))] + [np.asarray(v, float) for v, _ in parts]
faces = [np.empty((0, 3), np.int32)] + [np.asarray(f, np.int32) for _, f in parts]
sizes = np.array([[len(v), len(f)] for v, f in parts], np.int64).reshape(-1, 2)
np.savez(sys.argv[2], sizes=sizes, vertices=np.concatenate(vertices), faces=np.concatenate(faces))
"""

Part = tuple[np.ndarray, np.ndarray]  # a convex part: vertices (k, 3) float64, faces (j, 3)


@dataclass(frozen=True)
class Collision:
    """The convex parts an asset collides as, how they were made, and why not by CoACD where
    it was asked for and failed."""

    parts: tuple[Part, ...]
    method: Literal["coacd", "hull", "box"]
    note: str | None = None


def cache_folder() -> Path:
    """twinsim's cache: `$TWINSIM_CACHE_DIR`, else `$XDG_CACHE_HOME/twinsim`, else
    `~/.cache/twinsim`."""
    own = os.environ.get(CACHE_ENV)
    if own:
        return Path(own)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "twinsim"


def collision_parts(mesh: MeshData, cfg: CollisionConfig) -> Collision:
    """The convex parts `mesh` collides as (see the module docstring)."""
    if cfg.method == "hull":
        return _hull(mesh, None)
    file = cache_folder() / "coacd" / f"{_cache_key(mesh, cfg)}.npz"
    cached = _read_parts(file)
    if cached is not None:
        return Collision(cached, "coacd")
    try:
        parts = decompose(mesh, cfg)
    except Exception as exc:  # CoACD raises RuntimeError, ValueError, … on meshes it cannot cut
        reason = " ".join(str(exc).split()) or type(exc).__name__
        return _hull(mesh, f"coacd failed: {reason}; collides as its convex hull")
    _write_parts(file, parts)
    return Collision(parts, "coacd")


def decompose(mesh: MeshData, cfg: CollisionConfig) -> tuple[Part, ...]:
    """CoACD's convex parts of `mesh` (its vertices merged first: an STL repeats them per
    face), seeded, so equal input gives equal parts; computed in a child process, whose crash
    or error is a `RuntimeError` here."""
    import trimesh  # when a catalogue is read: a world without one does not load it

    merged = trimesh.Trimesh(mesh.vertices, mesh.faces, process=True)
    with tempfile.TemporaryDirectory(prefix="twinsim-coacd-") as tmp:
        given, parts_file = Path(tmp) / "mesh.npz", Path(tmp) / "parts.npz"
        np.savez(
            given,
            vertices=np.asarray(merged.vertices, np.float64),
            faces=np.asarray(merged.faces, np.int32),
            threshold=cfg.threshold,
            preprocess=cfg.preprocess,
        )
        env = os.environ | {"PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        try:
            done = subprocess.run(
                [sys.executable, "-c", _CHILD, str(given), str(parts_file)],
                capture_output=True,
                env=env,
                timeout=COACD_TIMEOUT_S,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"it ran longer than {COACD_TIMEOUT_S} s") from None
        if done.returncode != 0:
            last = (done.stderr.decode(errors="replace").strip().splitlines() or [""])[-1]
            why = f"it crashed (signal {-done.returncode})" if done.returncode < 0 else last
            raise RuntimeError(why or f"it exited with status {done.returncode}")
        parts = _read_parts(parts_file)
    if not parts or any(len(v) < 4 or len(f) < 4 for v, f in parts):
        raise RuntimeError("it returned no parts, or a flat one")
    return parts


def _hull(mesh: MeshData, note: str | None) -> Collision:
    """The convex hull as the one part; the bounding box where the hull has no volume."""
    import trimesh

    with np.errstate(invalid="ignore", divide="ignore"):  # a flat hull's centre of mass
        hull = trimesh.Trimesh(mesh.vertices, mesh.faces, process=False).convex_hull
        solid = hull.is_volume and hull.volume > _MIN_VOLUME_M3
    if solid:
        part = (np.asarray(hull.vertices, np.float64), np.asarray(hull.faces, np.int32))
        return Collision((part,), "hull", note)
    lo, hi = mesh.bounds()
    mid, size = (lo + hi) / 2, np.maximum(hi - lo, _MIN_THICKNESS_M)
    box = trimesh.creation.box(extents=size)
    part = (np.asarray(box.vertices, np.float64) + mid, np.asarray(box.faces, np.int32))
    flat = "the mesh is flat; collides as its bounding box"
    return Collision((part,), "box", flat if note is None else f"{note}; {flat}")


def _cache_key(mesh: MeshData, cfg: CollisionConfig) -> str:
    """sha256 of what the decomposition depends on: the mesh, the settings, CoACD's version."""
    digest = hashlib.sha256()
    settings = {"coacd": version("coacd"), **cfg.model_dump(exclude={"method"})}
    digest.update(json.dumps(settings, sort_keys=True).encode())
    digest.update(np.ascontiguousarray(mesh.vertices, np.float64).tobytes())
    digest.update(np.ascontiguousarray(mesh.faces, np.int64).tobytes())
    return digest.hexdigest()


def _read_parts(file: Path) -> tuple[Part, ...] | None:
    """The parts cached in `file`; None where there is none or it does not read whole."""
    try:
        with np.load(file, allow_pickle=False) as npz:
            sizes, verts, faces = npz["sizes"], npz["vertices"], npz["faces"]
    except (OSError, ValueError, KeyError, EOFError):
        return None
    ends = np.cumsum(sizes, axis=0)
    if len(sizes) == 0 or ends[-1, 0] != len(verts) or ends[-1, 1] != len(faces):
        return None
    return tuple(
        (verts[ve - nv : ve].astype(np.float64), faces[fe - nf : fe].astype(np.int32))
        for (nv, nf), (ve, fe) in zip(sizes.tolist(), ends.tolist(), strict=True)
    )


def _write_parts(file: Path, parts: tuple[Part, ...]) -> None:
    """Cache `parts` in `file`, whole or not at all (a temporary sibling renamed); a cache
    that cannot be written is only a slower next run."""
    buffer = io.BytesIO()
    np.savez(
        buffer,
        sizes=np.array([[len(v), len(f)] for v, f in parts], np.int64),
        vertices=np.concatenate([v for v, _ in parts]),
        faces=np.concatenate([f for _, f in parts]),
    )
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=file.parent, prefix=".", suffix=".tmp")
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(buffer.getvalue())
        os.replace(tmp, file)
    except OSError:
        Path(tmp).unlink(missing_ok=True)
