"""`twinsim …`: the typer app, with the commands of every module in `twinsim.commands`."""

from __future__ import annotations

import errno
import importlib
import pkgutil
import sys

import typer

import twinsim.commands

# Modules whose commands lead `twinsim --help` (generation first); the others follow by name.
FIRST = ("run", "sequence", "presets")
# Modules of `twinsim.commands` that hold no command: what the commands share.
SHARED = ("common", "model_options")

app = typer.Typer(
    help="twinsim: physics-enabled dynamic worlds, exact twins, annotated sensor data.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


def _register_commands() -> None:
    """Add the commands of every module in `twinsim.commands` (FIRST, then alphabetical)."""
    found = {m.name for m in pkgutil.iter_modules(twinsim.commands.__path__)} - set(SHARED)
    for module in (*FIRST, *sorted(found - set(FIRST))):
        importlib.import_module(f"twinsim.commands.{module}").register(app)


_register_commands()


#: what the system says when an output cannot be written: the user's to fix, not a bug
_WRITE_ERRORS = frozenset(
    {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EACCES, errno.EPERM}
)


def main() -> None:
    """Run the CLI (the `twinsim` script). A full disk, a read-only file system or a missing
    permission met while writing ends in one line and exit code 2, not a traceback; what was
    being written stays marked partial (its INCOMPLETE marker or temporary name)."""
    try:
        app()
    except OSError as exc:
        if exc.errno not in _WRITE_ERRORS:
            raise
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"error: {where}{exc.strerror}", file=sys.stderr)
        raise SystemExit(2) from None
