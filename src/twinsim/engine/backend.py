"""Pick a headless OpenGL backend for MuJoCo before it is imported: EGL first, OSMesa second.

MuJoCo reads `MUJOCO_GL` (and PyOpenGL `PYOPENGL_PLATFORM`) once, at import, so the choice is
made by probing each backend in a short subprocess and exporting the winner to this process.
A user's explicit `MUJOCO_GL` is respected.
"""

from __future__ import annotations

import ctypes.util
import os
import subprocess
import sys

from twinsim.errors import RenderBackendError

_PROBE = """
import os, sys
os.environ["MUJOCO_GL"] = os.environ["PYOPENGL_PLATFORM"] = sys.argv[1]
import mujoco
from mujoco.rendering.classic import gl_context
ctx = gl_context.GLContext(8, 8)
ctx.make_current()
ctx.free()
"""

_INSTALL_HINTS = {
    "egl": "libEGL.so.1 with a Mesa driver (Debian: apt-get install libegl1 libgl1 libegl-mesa0 "
    "libgl1-mesa-dri)",
    "osmesa": "libOSMesa.so (Debian: apt-get install libosmesa6)",
}


#: the library each headless backend loads, as `ctypes.util.find_library` names it
_LIBRARIES = {"egl": "EGL", "osmesa": "OSMesa"}


def _check_library(backend: str) -> None:
    """A user's `MUJOCO_GL` backend whose library is not installed fails here in one line
    (PyOpenGL would otherwise end in an AttributeError deep in its import)."""
    library = _LIBRARIES.get(backend)
    if library is not None and ctypes.util.find_library(library) is None:
        raise RenderBackendError(
            f"MUJOCO_GL={backend}: lib{library} is not installed; needs {_INSTALL_HINTS[backend]}"
            ", or unset MUJOCO_GL to let twinsim pick a backend that works"
        )


def _probe(backend: str) -> str | None:
    """Return None when `backend` can create a context, else the last line of its error."""
    env = dict(os.environ, MUJOCO_GL=backend, PYOPENGL_PLATFORM=backend)
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, backend], env=env, capture_output=True, text=True, timeout=60
    )
    if proc.returncode == 0:
        return None
    lines = [ln for ln in proc.stderr.strip().splitlines() if ln.strip()]
    return lines[-1] if lines else f"exit code {proc.returncode}"


def configure_backend(preference: str = "auto") -> str:
    """Export a working headless backend ("egl" or "osmesa") and return its name; then take
    MuJoCo's warnings over (`mujoco_warnings`), before anything compiles or steps a model.

    Must run before `mujoco` is imported. Raises `RenderBackendError` naming the missing
    libraries when no backend works.
    """
    backend = _chosen_backend(preference)
    from twinsim.engine import mujoco_warnings  # imports mujoco: only once the backend is set

    mujoco_warnings.take_over()
    return backend


def _chosen_backend(preference: str) -> str:
    """The backend `configure_backend` exports (a user's `MUJOCO_GL`, or the first that works)."""
    chosen = os.environ.get("MUJOCO_GL", "").lower()
    if chosen and preference == "auto":
        _check_library(chosen)
        os.environ.setdefault("PYOPENGL_PLATFORM", chosen if chosen != "glfw" else "")
        return chosen
    if "mujoco" in sys.modules and chosen:
        return chosen
    candidates = ["egl", "osmesa"] if preference == "auto" else [preference]
    failures = []
    for backend in candidates:
        error = _probe(backend)
        if error is None:
            os.environ["MUJOCO_GL"] = backend
            os.environ["PYOPENGL_PLATFORM"] = backend
            return backend
        failures.append(f"{backend}: {error}; needs {_INSTALL_HINTS[backend]}")
    raise RenderBackendError("no headless OpenGL backend works. " + " | ".join(failures))


def mujoco_version() -> str:
    """The MuJoCo version runs are recorded with (imported here: only `engine/` imports it)."""
    import mujoco

    return mujoco.__version__
