"""The package's structure, read from its own imports: no circle, floors only import down.

Every import counts, wherever it is written: at module level, inside a function (a lazy
import) or under ``TYPE_CHECKING``. The floors are the ones ``docs/design.md`` draws.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "verifiers"

#: Floors from the bottom; a module imports only from its own floor or below. A name ending
#: in ``.*`` covers a package's modules.
FLOORS: list[tuple[str, ...]] = [
    (
        "verifiers.errors",
        "verifiers.jsonio",
        "verifiers.keys",
        "verifiers.limits",
        "verifiers.results",
    ),
    ("verifiers._async", "verifiers.registry", "verifiers.program", "verifiers.specs"),
    (
        "verifiers.compare",
        "verifiers.parsing",
        "verifiers.extraction",
        "verifiers.build_cache",
        "verifiers.result_cache",
        "verifiers.scoring",
        "verifiers.cases",
        "verifiers.rows",
    ),
    ("verifiers.protocols",),
    ("verifiers.core", "verifiers.toolchains", "verifiers.images"),
    ("verifiers.languages.*", "verifiers.runtimes.*"),
    ("verifiers.engine",),
    ("verifiers.executors.*",),
    ("verifiers.api",),
    (
        "verifiers",
        "verifiers.difftest",
        "verifiers.demo",
        "verifiers.cli",
        "verifiers.integrations.*",
        "verifiers.service.*",
        "verifiers.eval.*",
        "verifiers.testing.*",
        "verifiers.data.*",
    ),
]


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _owner(name: str) -> str | None:
    """The module of ours that ``name`` (a module, or a name inside one) lives in."""
    while name:
        if name in MODULES:
            return name
        name = name.rpartition(".")[0]
    return None


def _imports(module: str, path: Path) -> set[tuple[str, str | None]]:
    """(module imported, name imported from it or None), for every import in the file."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[tuple[str, str | None]] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            for alias in node.names:
                owner = _owner(alias.name)
                if owner:
                    found.add((owner, None))
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            for alias in node.names:
                full = f"{base}.{alias.name}"
                if full in MODULES:
                    found.add((full, None))
                elif _owner(base):
                    found.add((_owner(base) or base, alias.name))
    return {(m, n) for m, n in found if m != module}


GRAPH = {module: _imports(module, path) for module, path in MODULES.items()}


def _floor(module: str) -> int:
    for level, members in enumerate(FLOORS):
        for member in members:
            if module == member or (member.endswith(".*") and module.startswith(member[:-2] + ".")):
                return level
            if member.endswith(".*") and module == member[:-2]:
                return level
    raise AssertionError(f"{module} is on no floor: add it to FLOORS and to docs/design.md")


def test_every_module_is_on_a_floor() -> None:
    for module in MODULES:
        _floor(module)


def test_no_import_circle() -> None:
    edges = {m: {t for t, _ in targets} for m, targets in GRAPH.items()}
    state: dict[str, int] = defaultdict(int)  # 0 new, 1 on the stack, 2 done
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for target in sorted(edges[node]):
            if state[target] == 1:
                circle = [*stack[stack.index(target) :], target]
                pytest.fail("import circle: " + " -> ".join(circle))
            if state[target] == 0:
                visit(target)
        stack.pop()
        state[node] = 2

    for module in sorted(edges):
        if state[module] == 0:
            visit(module)


def test_floors_import_only_downwards() -> None:
    upward = [
        f"{module} (floor {_floor(module)}) -> {target} (floor {_floor(target)})"
        for module, targets in sorted(GRAPH.items())
        for target, _ in sorted(targets, key=lambda t: (t[0], t[1] or ""))
        if _floor(target) > _floor(module)
    ]
    assert not upward, "imports that climb a floor:\n" + "\n".join(upward)


def test_no_private_name_is_imported_from_another_module() -> None:
    private = [
        f"{module} imports {name} from {target}"
        for module, targets in sorted(GRAPH.items())
        for target, name in sorted(targets, key=lambda t: (t[0], t[1] or ""))
        if name and name.startswith("_") and not name.startswith("__")
    ]
    assert not private, "\n".join(private)


def test_languages_are_named_only_by_their_registry_line() -> None:
    """No module outside a language's own names another language's module."""
    languages = {m for m in MODULES if m.startswith("verifiers.languages.") and "._" not in m}
    shared = {"verifiers.languages.common"}
    for module, targets in GRAPH.items():
        if module.startswith("verifiers.languages.") or module.startswith("verifiers.testing"):
            continue
        named = {t for t, _ in targets if t in languages - shared}
        assert not named, f"{module} imports the language module(s) {sorted(named)}"
