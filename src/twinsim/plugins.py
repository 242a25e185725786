"""Registries of plug-ins (robot and sensor kinds, world generators, navigators, export formats,
benchmark methods) and the config unions keyed by them.

A plug-in is one module plus one `registry.register(...)` line, or, from a user's own installed
package, one entry point in the registry's group (`[project.entry-points."twinsim.robots"]`
`toy = "my_pkg.toy:TOY"` names the entry object). Built-in entries and entry points are loaded
lazily, on the first look-up, so a registry module imports nothing heavy and anything (a test,
a user's package) can add an entry before a config is validated. A config field whose model
depends on a key (`robot.kind`, `scene.generator`, a sensor's `kind`) is a `keyed_config`: the
key picks the registered model and pydantic validates the rest against it, with errors located
as usual (`robot.mass_kg: ...`).
"""

from __future__ import annotations

import importlib
import importlib.metadata
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Annotated, Any, Generic, TypeVar

from pydantic import BaseModel, BeforeValidator, SerializeAsAny

from twinsim.configmodel import KeyedModel
from twinsim.errors import ConfigError

T = TypeVar("T")


class Registry(Generic[T]):
    """Named entries of one plug-in family; unknown names fail listing the registered ones."""

    def __init__(self, what: str, key: str, builtins: str | tuple[str, ...], group: str) -> None:
        """`what` names an entry in errors ("robot kind"), `key` the config field that picks one
        ("robot.kind"), `builtins` the module (or modules, in order) whose import registers the
        built-in entries, `group` the entry-point group installed packages add entries through."""
        self.what, self.key, self.group = what, key, group
        self._builtins = (builtins,) if isinstance(builtins, str) else builtins
        self._entries: dict[str, T] = {}
        self._origins: dict[str, str] = {}
        self._loaded = False

    def _load(self) -> None:
        if not self._loaded:
            self._loaded = True
            for module in self._builtins:
                importlib.import_module(module)
            for point in importlib.metadata.entry_points(group=self.group):
                self._load_entry_point(point)

    def _load_entry_point(self, point: importlib.metadata.EntryPoint) -> None:
        """Register the object an installed package's entry point names; one line if it fails."""
        package = point.dist.name if point.dist is not None else "an installed package"
        where = f"{self.group} entry point {point.name!r} of {package} ({point.value})"
        try:
            entry = point.load()
        except Exception as exc:  # any failure of a third party's import is reported as one line
            raise ConfigError(f"{where}: cannot be loaded ({type(exc).__name__}: {exc})") from None
        if point.name in self._entries:
            raise ConfigError(f"{where}: {self.what} {point.name!r} is already registered")
        self._entries[point.name] = entry
        version = point.dist.version if point.dist is not None else ""
        self._origins[point.name] = f"{package} {version}".strip()

    def register(self, name: str, entry: T) -> T:
        """Add an entry under `name` (a name may be registered once); returns the entry."""
        self._load()
        if name in self._entries:
            raise ValueError(f"{self.what} {name!r} is already registered")
        self._entries[name] = entry
        return entry

    def unregister(self, name: str) -> None:
        """Remove an entry (tests that register toys clean up with this)."""
        self._entries.pop(name, None)
        self._origins.pop(name, None)

    def origin(self, name: str) -> str:
        """Where entry `name` came from: the installed package (and version) of its entry
        point, else "twinsim" for a built-in or one registered in code."""
        self._load()
        return self._origins.get(name, "twinsim")

    @contextmanager
    def registered(self, name: str, entry: T) -> Iterator[T]:
        """Register `entry` for the duration of a `with` block."""
        self.register(name, entry)
        try:
            yield entry
        finally:
            self.unregister(name)

    def names(self) -> list[str]:
        self._load()
        return list(self._entries)

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __getitem__(self, name: str) -> T:
        return self.get(name)

    def values(self) -> list[T]:
        self._load()
        return list(self._entries.values())

    def __contains__(self, name: object) -> bool:
        self._load()
        return name in self._entries

    def unknown(self, name: object) -> str:
        """What is wrong with a name that is not registered, and which ones are."""
        return f"unknown {self.what} {name!r}; registered: {', '.join(self.names())}"

    def get(self, name: str) -> T:
        """The entry registered as `name`; `ConfigError` listing the registered names if none."""
        self._load()
        try:
            return self._entries[name]
        except (KeyError, TypeError):
            raise ConfigError(f"{self.key}: {self.unknown(name)}") from None


def keyed_config(
    registry: Registry[Any],
    field: str,
    default: str | None,
    model_of: Callable[[Any], type[BaseModel]] = lambda entry: entry.config_model,
    unknown: type[BaseModel] | None = None,
) -> Any:
    """An annotation for a config field whose model is picked by its `field` key in `registry`.

    A mapping without the key gets `default` (with none, the key is required); an unknown key
    fails with the registered names, or, given `unknown`, is validated with that model (what a
    file written with a plug-in that is not installed is read as).
    Dumps keep the subclass fields (`SerializeAsAny`).
    """

    def model_for(value: Any) -> type[BaseModel] | None:
        name = value.get(field, default) if isinstance(value, dict) else default
        return model_of(registry.get(name)) if name in registry else unknown

    def pick(value: Any) -> Any:
        if isinstance(value, BaseModel):
            return value
        if not isinstance(value, dict):
            raise ValueError(f"must be a mapping with a {field!r} field")
        name = value.get(field, default)
        if name is None:
            raise ValueError(f"needs a {field!r}: one of {', '.join(registry.names())}")
        if name not in registry:
            if unknown is None:
                raise ValueError(registry.unknown(name))
            return unknown.model_validate({**value, field: name})
        return model_of(registry.get(name)).model_validate({**value, field: name})

    return Annotated[SerializeAsAny[BaseModel], BeforeValidator(pick), KeyedModel(model_for)]
