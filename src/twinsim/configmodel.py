"""The base of every config model, and the one formatter of pydantic errors into one line.

Plug-ins (robot kinds, sensor kinds, world generators) define their config models on
`ConfigModel` in their own modules; `twinsim.config` assembles them. Every place that validates
user input with pydantic reports the first error through `format_validation_error`, so a bad
field reads the same everywhere: `robot.mass_kg: Input should be greater than 0`, or
`unknown config field 'robot.mas_kg'; allowed here: kind, mass_kg, ...`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from twinsim.textdata import TextDataError, parse_yaml

M = TypeVar("M", bound=BaseModel)

#: the largest seed: a signed 64-bit integer, which every reader of a sequence's metadata
#: (C++, ROS, NumPy's int64) can hold
MAX_SEED = 2**63 - 1
#: a seed in a config, a plan or a variation: 0 to `MAX_SEED`
Seed = Annotated[int, Field(ge=0, le=MAX_SEED)]


class ConfigModel(BaseModel):
    """A user-facing config section: unknown fields are errors, assignments are validated."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)


@dataclass(frozen=True)
class KeyedModel:
    """Annotation marker of a field whose model a key in its value picks (see `plugins`)."""

    model_for: Any  # (value: Any) -> type[BaseModel] | None


def _annotation_model(annotation: Any, value: Any) -> type[BaseModel] | None:
    """The model class an annotation validates `value` with (keyed, plain, or dict values)."""
    for meta in getattr(annotation, "__metadata__", ()):
        if isinstance(meta, KeyedModel):
            return meta.model_for(value)
    args = getattr(annotation, "__args__", ())
    if getattr(annotation, "__origin__", None) is dict and args:
        return None  # a mapping: the next part of the location is a key
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in args:  # Optional[Model]
        if isinstance(arg, type) and issubclass(arg, BaseModel):
            return arg
    return None


def _model_at(root: type[BaseModel], data: Any, loc: tuple) -> type[BaseModel] | None:
    """The model owning the field at `loc` (to list the allowed keys), following the input."""
    model: type[BaseModel] | None = root
    annotation: Any = None
    for part in loc[:-1]:
        data = data.get(part) if isinstance(data, dict) else None
        if model is not None:
            field = model.model_fields.get(str(part))
            if field is None:
                return None
            annotation = field.rebuild_annotation()
            model = _annotation_model(annotation, data)
            continue
        # inside a dict[str, X]: `part` is a key and the value model comes from X
        args = getattr(annotation, "__args__", ())
        if not args:
            return None
        annotation = args[-1]
        model = _annotation_model(annotation, data)
    return model


def format_validation_error(
    exc: ValidationError,
    root: type[BaseModel] | None = None,
    data: Any = None,
    prefix: str = "",
    what: str = "config field",
) -> str:
    """The first error of `exc` as one line: where (dotted path after `prefix`) and what.

    With the validated model class `root` and its input `data`, an unknown field lists the
    fields allowed at that place.
    """
    err = exc.errors()[0]
    loc = tuple(err["loc"])
    where = ".".join(str(p) for p in (*([prefix] if prefix else []), *loc)) or "config"
    if err["type"] == "extra_forbidden":
        owner = _model_at(root, data, loc) if root is not None else None
        names = [f.alias or name for name, f in owner.model_fields.items()] if owner else []
        allowed = f"; allowed here: {', '.join(names)}" if owner else ""
        return f"unknown {what} {where!r}{allowed}"
    msg = err["msg"].removeprefix("Value error, ")
    return f"{where}: {msg}" if loc or prefix else msg


def load_yaml_model(path: Path, model: type[M], what: str, error: type[Exception]) -> M:
    """Read the YAML file `path` as a `model`: any problem is one `error` line naming the file
    and, for a bad field, the field (`what` says what a field is: "method field", …)."""
    try:
        data = parse_yaml(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, TextDataError) as exc:
        reason = " ".join(str(exc).split())
        raise error(f"{path}: cannot read the {what.split()[0]} YAML ({reason})") from None
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise error(f"{path}: {format_validation_error(exc, model, data, what=what)}") from None
