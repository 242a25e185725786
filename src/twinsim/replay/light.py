"""Lighting and atmosphere of a twin: `twinsim.adversity.light`, which a run recording with a
`light:` or `weather:` section uses too (presets, relighting, the engine's `Look`)."""

from twinsim.adversity.light import FOG_VISIBILITY_M, LAMP_RGB, PRESETS, look_for, relight

__all__ = ["FOG_VISIBILITY_M", "LAMP_RGB", "PRESETS", "look_for", "relight"]
