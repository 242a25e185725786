"""Headless OpenGL: EGL first, OSMesa second, and a clear error naming the libraries otherwise."""

from __future__ import annotations

import pytest

from twinsim.engine import backend
from twinsim.errors import RenderBackendError


def test_a_backend_works_here(gl_backend):
    assert gl_backend in ("egl", "osmesa")


def test_fallback_order_and_error_names_missing_libraries(monkeypatch):
    tried = []

    def failing_probe(name: str) -> str:
        tried.append(name)
        return f"cannot open {name} library"

    monkeypatch.delenv("MUJOCO_GL", raising=False)
    monkeypatch.setattr(backend, "_probe", failing_probe)
    with pytest.raises(RenderBackendError) as err:
        backend.configure_backend("auto")
    assert tried == ["egl", "osmesa"]
    message = str(err.value)
    assert "libEGL.so.1" in message and "libegl-mesa0" in message
    assert "libOSMesa" in message and "libosmesa6" in message


def test_osmesa_is_used_when_egl_fails(monkeypatch):
    monkeypatch.delenv("MUJOCO_GL", raising=False)
    monkeypatch.delenv("PYOPENGL_PLATFORM", raising=False)
    monkeypatch.setattr(backend, "_probe", lambda name: None if name == "osmesa" else "no EGL")
    assert backend.configure_backend("auto") == "osmesa"
    import os

    assert os.environ["MUJOCO_GL"] == os.environ["PYOPENGL_PLATFORM"] == "osmesa"


def test_probe_reports_a_real_failure():
    # a backend name MuJoCo rejects fails in the subprocess, and the reason comes back
    error = backend._probe("no-such-backend")
    assert error is not None and "MUJOCO_GL" in error


def test_a_users_backend_without_its_library_is_named_in_one_line(monkeypatch):
    """`MUJOCO_GL=osmesa` where libOSMesa is missing: one line naming it and its package,
    not PyOpenGL's AttributeError at import."""
    monkeypatch.setenv("MUJOCO_GL", "osmesa")
    monkeypatch.delenv("PYOPENGL_PLATFORM", raising=False)  # restored after the test
    monkeypatch.setattr(backend.ctypes.util, "find_library", lambda name: None)
    with pytest.raises(RenderBackendError, match=r"MUJOCO_GL=osmesa: libOSMesa is not installed"):
        backend.configure_backend()
    monkeypatch.setattr(backend.ctypes.util, "find_library", lambda name: f"lib{name}.so")
    assert backend.configure_backend() == "osmesa"
