"""Typer options made from a library model's fields, so no command re-declares a model by hand.

`ModelOptions(Model, ...)` lists the options of one model (a pydantic model or a dataclass):
each field becomes `--field-name`, of the field's type, with its default, and the field's
`description` (pydantic's `Field(description=...)`, a dataclass field's
`metadata={"description": ...}`) as its help. A command names the exceptions: fields it takes
otherwise (`skip`), the names the CLI has always used (`names`), sub-models whose own fields
become options (`expand`). A field added to the model is an option of the command without a
line of the command changed.

`with_model_options(command, changes=ModelOptions(...))` is `command` with its parameter
`changes` replaced by the model's options (typer reads the signature), called with the values
given on the command line gathered back into that one parameter: a dict by field name, nested
under an expanded sub-model's name.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import inspect
import types
import typing
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, Union

import typer
from pydantic import BaseModel

#: what the command receives for a `ModelOptions` parameter: field name → value, nested under
#: an expanded sub-model's name
ModelValues = dict[str, Any]

_SCALARS = (bool, int, float, str, Path)


@dataclass(frozen=True)
class ModelField:
    """One field of a model as an option reads it: its type, default and description."""

    name: str
    annotation: Any
    required: bool
    default: Any
    description: str | None


def model_fields(model: type) -> list[ModelField]:
    """The fields of a pydantic model or a dataclass, in their order."""
    if isinstance(model, type) and issubclass(model, BaseModel):
        return [
            ModelField(
                name,
                info.annotation,
                info.is_required(),
                None if info.is_required() else info.get_default(call_default_factory=True),
                info.description,
            )
            for name, info in model.model_fields.items()
        ]
    if dataclasses.is_dataclass(model):
        hints = typing.get_type_hints(model)
        found = []
        for f in dataclasses.fields(model):
            if not f.init:
                continue
            if f.default is not dataclasses.MISSING:
                required, default = False, f.default
            elif f.default_factory is not dataclasses.MISSING:
                required, default = False, f.default_factory()
            else:
                required, default = True, None
            found.append(
                ModelField(f.name, hints[f.name], required, default, f.metadata.get("description"))
            )
        return found
    raise TypeError(f"{model!r} is neither a pydantic model nor a dataclass")


def _strip(annotation: Any) -> Any:
    """`annotation` without `Annotated` metadata and without `| None` (an option may always be
    left out)."""
    if typing.get_origin(annotation) is Annotated:
        return _strip(typing.get_args(annotation)[0])
    if typing.get_origin(annotation) in (Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return _strip(args[0])
    return annotation


def _is_model(annotation: Any) -> bool:
    inner = _strip(annotation)
    return isinstance(inner, type) and (
        issubclass(inner, BaseModel) or dataclasses.is_dataclass(inner)
    )


def cli_type(annotation: Any, where: str) -> tuple[Any, bool]:
    """The type typer parses a field of this annotation as, and whether it is repeatable:
    scalars and enums as they are, a `Literal` as its values' type (the model checks the
    value, with its own message), `tuple[X, ...]` / `list[X]` as a repeatable `X`."""
    inner = _strip(annotation)
    origin = typing.get_origin(inner)
    if origin is Literal:
        kinds = {type(v) for v in typing.get_args(inner)}
        if len(kinds) == 1 and next(iter(kinds)) in _SCALARS:
            return next(iter(kinds)), False
    elif origin in (tuple, list):
        args = typing.get_args(inner)
        item = args[0] if origin is list or (len(args) == 2 and args[1] is Ellipsis) else None
        if item is not None:
            item_type, repeatable = cli_type(item, where)
            if not repeatable:
                return item_type, True
    elif isinstance(inner, type) and (issubclass(inner, _SCALARS) or issubclass(inner, enum.Enum)):
        return inner, False
    raise TypeError(
        f"{where}: a {annotation!r} field has no command-line form; skip it (the command takes "
        "it otherwise) or expand it (a sub-model)"
    )


@dataclass(frozen=True)
class FieldOption:
    """One option of a model field: where the field is, and the typer parameter."""

    path: tuple[str, ...]  # the field, under the sub-models it was expanded from
    name: str  # the option on the command line, e.g. `--add-flying`
    parameter: inspect.Parameter  # its name, `Annotated[type, typer.Option(...)]`, default
    unset: bool  # not given unless on the command line (its default is None / off)
    flag_value: Any = None  # an unset boolean flag: the value it gives the field


@dataclass(frozen=True)
class ModelOptions:
    """The typer options of one model's fields.

    `names`: a field's option name where it is not `--<prefix>-<field-name>` (nested fields by
    their dotted path, `light.preset`); `skip`: fields the command takes otherwise; `expand`:
    sub-model fields whose own fields become options (`--light-intensity`); `unset`: every
    option (True) or those fields whose option defaults to "not given" (None, a flag off), so
    the field keeps the value it has elsewhere (a file's, the model's); `defaults`: the
    command's own default of a field the model leaves required. `help_prefix` goes before every
    description, `helps` replaces a field's (where the option means more than the field),
    `notes` adds to it (`; comma separated.`; a repeatable option without a note says
    `(repeatable)`).
    """

    model: type
    names: Mapping[str, str] = field(default_factory=dict)
    skip: Collection[str] = ()
    expand: Collection[str] = ()
    unset: bool | Collection[str] = False
    defaults: Mapping[str, Any] = field(default_factory=dict)
    help_prefix: str = ""
    helps: Mapping[str, str] = field(default_factory=dict)
    notes: Mapping[str, str] = field(default_factory=dict)
    prefix: str = ""

    def options(self) -> list[FieldOption]:
        """Every option, in the model's field order (an expanded sub-model's in its place)."""
        return self._options(self.model, ())

    def _options(self, model: type, under: tuple[str, ...]) -> list[FieldOption]:
        found: list[FieldOption] = []
        for f in model_fields(model):
            path = (*under, f.name)
            dotted = ".".join(path)
            if dotted in self.skip:
                continue
            if dotted in self.expand:
                found += self._options(_strip(f.annotation), path)
                continue
            if _is_model(f.annotation):
                raise TypeError(
                    f"{model.__name__}.{f.name}: a sub-model; expand it or skip it in the command"
                )
            found.append(self._option(model, f, path))
        return found

    def _option(self, model: type, f: ModelField, path: tuple[str, ...]) -> FieldOption:
        dotted = ".".join(path)
        where = f"{model.__name__}.{f.name}"
        if not f.description:
            raise ValueError(f"{where} has no description (Field(description=...)) for --help")
        kind, repeatable = cli_type(f.annotation, where)
        name = self.names.get(dotted) or "--" + "-".join(
            p.replace("_", "-") for p in (self.prefix, *path) if p
        )
        unset = self.unset is True or (self.unset is not False and dotted in self.unset)
        default = self.defaults.get(dotted, f.default)
        required = f.required and dotted not in self.defaults
        help_text = self.helps.get(dotted) or _prefixed(self.help_prefix, f.description)
        if dotted in self.notes:
            help_text = f"{help_text.removesuffix('.')}; {self.notes[dotted]}."
        elif repeatable and "repeat" not in help_text:
            help_text = f"{help_text.removesuffix('.')} (repeatable)."
        flag_value = None
        if kind is bool and unset:
            # a flag that sets the field away from its default; off: the field is not given
            flag_value = not default
            if flag_value is False and not name.startswith("--no-"):
                name = "--no-" + name.removeprefix("--")
            decls, default, annotation = (name,), False, bool
        else:
            decls = (f"{name}/--no-{name.removeprefix('--')}",) if kind is bool else (name,)
            annotation = list[kind] if repeatable else kind
            if unset:  # not given: the field keeps the value it has elsewhere
                default, annotation = None, annotation | None
            elif repeatable:
                default = None if required else list(default)
        info = typer.Option(*decls, help=help_text)
        parameter = inspect.Parameter(
            name.removeprefix("--").replace("-", "_"),
            inspect.Parameter.KEYWORD_ONLY,
            default=inspect.Parameter.empty if required else default,
            annotation=Annotated[annotation, info],
        )
        return FieldOption(path, name, parameter, unset, flag_value)

    def values(self, given: Mapping[str, Any]) -> ModelValues:
        """The fields the options set, from the command's keyword arguments: field name → value
        (enum members as their values, nested under an expanded sub-model's name); an unset
        option that was not given is left out."""
        out: ModelValues = {}
        for option in self.options():
            value = given[option.parameter.name]
            if option.unset:
                if option.flag_value is not None:
                    if not value:
                        continue
                    value = option.flag_value
                elif value is None or value == []:
                    continue
            if isinstance(value, enum.Enum):
                value = value.value
            node = out
            for key in option.path[:-1]:
                node = node.setdefault(key, {})
            node[option.path[-1]] = value
        return out


def _prefixed(prefix: str, description: str) -> str:
    """`description` after `prefix` ("Cycles: "), its first word in lower case unless it is a
    name (`OpenImageDenoise`)."""
    if not prefix:
        return description
    first = description.split(" ", 1)[0]
    if first[1:].islower():
        description = description[0].lower() + description[1:]
    return prefix + description


def with_model_options(command: Callable[..., Any], **groups: ModelOptions) -> Callable[..., Any]:
    """`command` with each parameter named in `groups` replaced, in its place, by that model's
    options; typer sees the options, `command` gets each group's `values` in that parameter."""
    own = inspect.signature(command, eval_str=True)
    missing = set(groups) - set(own.parameters)
    if missing:
        raise TypeError(f"{command.__name__} has no parameter {', '.join(sorted(missing))}")
    options = {name: group.options() for name, group in groups.items()}
    parameters: list[inspect.Parameter] = []
    for name, parameter in own.parameters.items():
        if name in groups:
            parameters += [o.parameter for o in options[name]]
        else:
            parameters.append(parameter.replace(kind=inspect.Parameter.KEYWORD_ONLY))
    seen: set[str] = set()
    for parameter in parameters:
        if parameter.name in seen:
            raise TypeError(f"{command.__name__}: two options named {parameter.name!r}")
        seen.add(parameter.name)

    @functools.wraps(command)
    def run(**given: Any) -> Any:
        kwargs = {k: v for k, v in given.items() if k in own.parameters}
        kwargs |= {name: group.values(given) for name, group in groups.items()}
        return command(**kwargs)

    run.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    run.__annotations__ = {p.name: p.annotation for p in parameters}
    del run.__wrapped__  # typer reads the signature above, not the command's
    return run
