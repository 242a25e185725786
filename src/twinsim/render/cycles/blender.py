"""Importing Blender's Python module lazily, with a one-line install hint when it is missing."""

from __future__ import annotations

import contextlib
import importlib
import io
import os
import sys
from collections.abc import Iterator
from types import ModuleType

from twinsim.errors import TwinsimError

#: bpy 5.0.1 declares numpy<2, which twinsim's numpy 2.4 excludes, so no pip extra can hold it:
#: the hint installs bpy alone (it renders with numpy 2.4; `make install` does the same)
INSTALL_HINT = "pip install --no-deps bpy==5.0.1"


class CyclesUnavailableError(TwinsimError):
    """Blender's `bpy` module is not installed (the `cycles` extra)."""


def import_bpy() -> ModuleType:
    """The `bpy` module; `CyclesUnavailableError` naming the install command if it is missing.

    bpy 5.0.1 is built against NumPy 1.x and prints NumPy 2's compatibility warning (with a
    traceback) and "Unable to initialise audio" when it loads; neither matters to rendering
    (its NumPy C API is unused here), so the import runs `quiet`."""
    try:
        with quiet(), contextlib.redirect_stderr(io.StringIO()):
            return importlib.import_module("bpy")
    except ImportError as exc:
        raise CyclesUnavailableError(
            f"--renderer cycles needs Blender's bpy module ({exc}); install it: {INSTALL_HINT}"
        ) from None


def blender_version() -> str:
    """The version of the Blender whose Cycles renders (e.g. `5.0.1`)."""
    return import_bpy().app.version_string


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """Blender's own log lines (`Saved: ...` for every pass) kept off stdout and stderr: library
    code never prints; Python errors still raise as usual."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1)
        os.dup2(null, 2)
        yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, null):
            os.close(fd)
