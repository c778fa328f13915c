"""Fast syntax checks with tree-sitter (official per-language grammar wheels).

Grammars load lazily, once per process. A check returns the first error's
line and column (1-based) or None; it never runs the code.
"""

from __future__ import annotations

import functools
import importlib
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import tree_sitter

from verifiers.errors import RuntimeUnavailableError


@dataclass(frozen=True)
class SyntaxIssue:
    """A syntax error: where it is and what the parser says.

    ``native`` is the error as the language's own tool prints it (Python: the interpreter's
    ``File ..., line N`` lines and ``SyntaxError: ...``), when the check was that tool's.
    ``deferred`` marks a check that is not the language's authority (tree-sitter-cpp
    misreads some valid C++): the program is built in the sandbox all the same, and only
    a failed build makes it a ``syntax_error`` (see ``docs/security.md``).
    """

    line: int
    column: int
    message: str
    text: str = ""
    native: str = ""
    deferred: bool = False

    def describe(self) -> str:
        """The message of this error.

        The language's own text when there is one, else a compiler-style message with
        the offending line and a caret.
        """
        if self.native:
            return self.native.rstrip("\n")
        where = f"line {self.line}, column {self.column}"
        out = f"SyntaxError at {where}: {self.message}"
        if self.text:
            out += f"\n    {self.text.rstrip()}\n    {' ' * max(self.column - 1, 0)}^"
        return out


@functools.cache
def grammar(module_name: str) -> tree_sitter.Language:
    """The tree-sitter language from an official grammar wheel (for example ``tree_sitter_python``).

    Raises:
        RuntimeUnavailableError: The grammar package is not installed.
    """
    try:
        module: Any = importlib.import_module(module_name)
    except ImportError as err:
        package = module_name.replace("_", "-")
        raise RuntimeUnavailableError(
            f"the tree-sitter grammar {module_name!r} is not installed: pip install {package}"
        ) from err
    return tree_sitter.Language(module.language())


#: Largest code (characters) a tree-sitter grammar checks in this process. On token soup
#: tree-sitter's error recovery costs up to about 5 microseconds of CPU a character (0.3 s
#: for this limit; 5 s for a megabyte, more on a loaded core), so bigger code is left to
#: the language's compiler in the sandbox (a ``compile_error`` rather than a
#: ``syntax_error``). Real solutions are far smaller.
TREE_SITTER_LIMIT = 64 * 1024

_local = threading.local()
_check_caches: list[Any] = []
F = TypeVar("F", bound=Callable[..., Any])


def cached_check(check: F) -> F:
    """A syntax check that keeps its last few answers.

    Extraction checks the code it picks, and the pipeline checks the same text right after.
    """
    cached = functools.lru_cache(maxsize=8)(check)
    _check_caches.append(cached)
    return cast(F, cached)


def forget_checks() -> None:
    """Empty the caches of :func:`cached_check` (for measurements of the checks' cost)."""
    for cache in _check_caches:
        cache.cache_clear()


def _parser(module_name: str) -> tree_sitter.Parser:
    parsers: dict[str, tree_sitter.Parser] = _local.__dict__.setdefault("parsers", {})
    parser = parsers.get(module_name)
    if parser is None:
        parser = parsers[module_name] = tree_sitter.Parser(grammar(module_name))
    return parser


def _first_error(node: tree_sitter.Node) -> tree_sitter.Node | None:
    """Depth-first search for the first ERROR or MISSING node."""
    stack = [node]
    while stack:
        current = stack.pop()
        if current.is_error or current.is_missing:
            return current
        if current.has_error:
            stack.extend(reversed(current.children))
    return None


@cached_check
def tree_sitter_check(module_name: str, code: str) -> SyntaxIssue | None:
    """Parse ``code`` with the grammar in ``module_name``; the first error, or None."""
    data = code.encode("utf-8", errors="surrogatepass")
    tree = _parser(module_name).parse(data)
    root = tree.root_node
    if not root.has_error:
        return None
    node = _first_error(root) or root
    row, col_bytes = node.start_point
    lines = data.split(b"\n")
    line_bytes = lines[row] if row < len(lines) else b""
    column = len(line_bytes[:col_bytes].decode("utf-8", errors="replace")) + 1
    if node.is_missing:
        message = f"missing {node.type!r}"
    else:
        snippet = data[node.start_byte : node.end_byte][:40].decode("utf-8", errors="replace")
        message = f"unexpected {snippet!r}" if snippet.strip() else "invalid syntax"
    return SyntaxIssue(
        line=row + 1,
        column=column,
        message=message,
        text=line_bytes.decode("utf-8", errors="replace"),
    )
