"""Pick a headless OpenGL backend for MuJoCo before it is imported: EGL first, OSMesa second.

MuJoCo reads `MUJOCO_GL` (and PyOpenGL `PYOPENGL_PLATFORM`) once, at import, so the choice is
made by probing each backend in a short subprocess and exporting the winner to this process.
A user's explicit `MUJOCO_GL` is respected.
"""

from __future__ import annotations

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
    """Export a working headless backend ("egl" or "osmesa") and return its name.

    Must run before `mujoco` is imported. Raises `RenderBackendError` naming the missing
    libraries when no backend works.
    """
    chosen = os.environ.get("MUJOCO_GL", "").lower()
    if chosen and preference == "auto":
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
