"""The registry of navigation and exploration methods (`NavigatorEntry` by name)."""

from __future__ import annotations

from twinsim.navigation.api import NavigatorEntry
from twinsim.plugins import Registry

NAVIGATORS: Registry[NavigatorEntry] = Registry(
    "navigation method", "method", "twinsim.navigation.builtin", "twinsim.navigators"
)
