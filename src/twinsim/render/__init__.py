"""Other renderer views of a `SceneSpec` than MuJoCo's (Blender Cycles); optional extras."""

from __future__ import annotations

from twinsim.errors import ConfigError

#: the renderers a twin's colour images can come from
RENDERERS = ("mujoco", "cycles")


def check_renderer(name: str) -> str:
    """`name` if it is a renderer twinsim has; else a `ConfigError` listing those it has."""
    if name not in RENDERERS:
        raise ConfigError(f"--renderer: unknown renderer {name!r}; valid: {', '.join(RENDERERS)}")
    return name
