"""The registry of benchmark methods (`twinsim bench --methods`): a factory by name."""

from __future__ import annotations

from collections.abc import Callable

from twinsim.eval.methods.base import Method
from twinsim.plugins import Registry

#: a factory of a fresh method by name; the built-ins in `twinsim.eval.methods.builtin`
METHODS: Registry[Callable[[], Method]] = Registry(
    "benchmark method", "--methods", "twinsim.eval.methods.builtin", "twinsim.methods"
)
