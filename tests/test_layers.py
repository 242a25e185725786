"""Layering rules checked on the source: imports go one way, the CLI only assembles commands."""

from __future__ import annotations

import ast
from pathlib import Path

import twinsim
from twinsim.cli import app

SRC = Path(twinsim.__file__).parent


def _imports(path: Path) -> tuple[set[str], set[str]]:
    """twinsim modules `path` imports at module level, and those it imports inside functions."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top, nested = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            names = {node.module}
        elif isinstance(node, ast.Import):
            names = {a.name for a in node.names}
        else:
            continue
        names = {n for n in names if n.startswith("twinsim")}
        (top if node in tree.body else nested).update(names)
    return top, nested


def test_actor_modules_import_each_other_one_way():
    """No module in actors/ imports another inside a function (a hidden cycle) or in a cycle."""
    graph = {}
    for path in sorted((SRC / "actors").rglob("*.py")):
        top, nested = _imports(path)
        assert not {n for n in nested if n.startswith("twinsim.actors")}, path.name
        name = ".".join(path.relative_to(SRC.parent).with_suffix("").parts)
        graph[name] = {n for n in top if n.startswith("twinsim.actors.")}
    done: set[str] = set()

    def visit(module: str, chain: tuple[str, ...]) -> None:
        assert module not in chain, " → ".join((*chain, module))
        if module not in done:
            for dep in graph.get(module, ()):
                visit(dep, (*chain, module))
            done.add(module)

    for module in graph:
        visit(module, ())


def test_sequence_never_imports_replay():
    """The sequence format is below replay: none of its modules imports twinsim.replay."""
    for path in sorted((SRC / "sequence").glob("*.py")):
        top, nested = _imports(path)
        assert not any(n.startswith("twinsim.replay") for n in top | nested), path.name


def test_every_command_lives_in_commands():
    """cli.py only builds the app: each command's function is defined in `twinsim.commands`."""
    modules = {c.callback.__module__ for c in app.registered_commands}
    assert modules and all(m.startswith("twinsim.commands.") for m in modules), modules
    names = [c.name for c in app.registered_commands]
    assert names[:5] == ["run", "validate", "info", "preview", "presets"]


def test_the_floors_in_the_architecture_page_are_the_enforced_ones():
    """docs/architecture.md lists the floors `lint-imports` enforces, in the same order, and
    every top-level module and package of twinsim stands on one of them."""
    import re
    import tomllib

    root = SRC.parent.parent
    contracts = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["importlinter"]
    layers = next(c for c in contracts["contracts"] if c["type"] == "layers")["layers"]
    page = (root / "docs" / "architecture.md").read_text(encoding="utf-8")
    listed = re.search(r"<!-- floors: top to bottom -->\n```\n(.*?)\n```", page, re.S)
    assert listed and listed.group(1).splitlines() == layers
    on_a_floor = {name.strip() for floor in layers for name in floor.split("|")}
    tops = {p.stem for p in SRC.glob("*.py") if p.stem != "__init__"}
    tops |= {p.name for p in SRC.iterdir() if (p / "__init__.py").is_file()}
    assert tops == on_a_floor
