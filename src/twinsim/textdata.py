"""YAML and JSON text that a user or a file gives, parsed with every way it can be wrong (bad
syntax, nesting past what a parser's recursion takes) reported as one `TextDataError` line,
so the caller can name the file or option it came from."""

from __future__ import annotations

import json
from typing import Any

import yaml

#: deeper than any config, plan or metadata twinsim writes; a parser's recursion would
#: otherwise fail at about a thousand levels with a RecursionError
MAX_DEPTH = 64


class TextDataError(ValueError):
    """Text that does not parse, as one line saying why."""


def parse_yaml(text: str) -> Any:
    """The value of a YAML document (`yaml.safe_load`), nested at most `MAX_DEPTH` deep."""
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise TextDataError(_one_line(getattr(exc, "problem", None) or exc)) from None
    except RecursionError:
        raise TextDataError(_too_deep()) from None
    _check_depth(value)
    return value


def parse_json(text: str | bytes) -> Any:
    """The value of a JSON document, nested at most `MAX_DEPTH` deep."""
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise TextDataError(_one_line(exc)) from None
    except RecursionError:
        raise TextDataError(_too_deep()) from None
    _check_depth(value)
    return value


def excerpt(text: str, limit: int = 60) -> str:
    """`text` as a message quotes it: repr, cut to `limit` characters with an ellipsis."""
    return repr(text) if len(text) <= limit else repr(text[:limit]) + f"… ({len(text)} chars)"


def _check_depth(value: Any) -> None:
    """Refuse lists and maps nested past `MAX_DEPTH` (checked without recursion)."""
    level = [value]
    for _ in range(MAX_DEPTH + 1):
        level = [
            child
            for node in level
            if isinstance(node, dict | list)
            for child in (node.values() if isinstance(node, dict) else node)
        ]
        if not level:
            return
    raise TextDataError(_too_deep())


def _too_deep() -> str:
    return f"lists or maps nested more than {MAX_DEPTH} deep"


def _one_line(reason: object) -> str:
    return " ".join(str(reason).split())
