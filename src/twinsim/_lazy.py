"""Lazy package attributes (PEP 562): a package names what it exports and the submodule that
defines each, and imports that submodule on first use, so importing one small module of a
package (`twinsim.geometry`) does not load the simulator, OpenCV or MuJoCo."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable


def lazy_exports(
    package: str, exports: dict[str, str]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """`__getattr__` and `__dir__` for `package`, whose attribute `name` is `name` of the
    module `exports[name]` (imported, and the value kept on the package, on first access)."""

    def get_attribute(name: str) -> object:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    def list_attributes() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(exports))

    return get_attribute, list_attributes
