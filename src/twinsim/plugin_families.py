"""Every plug-in family, by the name `twinsim plugins` shows it under, and its registry.

The registries live beside what they hold (a robot kind's in `robots/`, an export format's in
`export/`); this table only lists them, imported lazily so listing costs one family at a time.
"""

from __future__ import annotations

import importlib

from twinsim.plugins import Registry

#: family → (module, registry attribute)
FAMILIES: dict[str, tuple[str, str]] = {
    "robots": ("twinsim.robots.registry", "ROBOTS"),
    "sensors": ("twinsim.sensors.registry", "SENSORS"),
    "generators": ("twinsim.scene.generators", "GENERATORS"),
    "navigators": ("twinsim.navigation.registry", "NAVIGATORS"),
    "exports": ("twinsim.export.registry", "FORMATS"),
    "methods": ("twinsim.eval.methods.registry", "METHODS"),
}


def family_registry(family: str) -> Registry:
    """The registry of one family (its entry-point group is `twinsim.<family>`)."""
    module, attribute = FAMILIES[family]
    return getattr(importlib.import_module(module), attribute)
