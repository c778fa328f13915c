"""Code policies: what a program of a function-style task may use, checked on its syntax tree.

Why this exists: where tests are compiled into the same binary as the candidate's code (Go,
Rust, C, C++ and Java), nothing at run time can tell the harness's actions from the
candidate's. Whatever the process may do, the candidate may do to the harness: run code
before ``main``, read the proof token, exit early, rewrite the arguments, shadow the names
the tests use. So the candidate's code is checked before it is built, and a program that
reaches for a process-level escape hatch never runs: it is ``failed``, its result's
``hack_suspected`` names the rule, and its feedback says what is not allowed and what is,
so that an honest model can repair it.

The open-ended namespaces (imports, paths, macros, attributes) are allow-lists: what is
not named is refused, so a module nobody thought of is refused too. Syntax constructs are a
closed set, so the few that are escape hatches (``unsafe``, ``extern``, directives) are
refused by name.

This module holds what the languages share; each language writes its rules as functions
over the tree (see :mod:`verifiers.languages.go`, :mod:`verifiers.languages.rust`,
:mod:`verifiers.languages.cpp` and :mod:`verifiers.languages.java`):

* :class:`Source`: the parsed code, text and positions of nodes;
* :func:`walk` and :func:`leaves`: iterative traversals (deeply nested code cannot
  exhaust the stack);
* :class:`AllowList`: paths allowed by prefix (``std::collections`` allows
  ``std::collections::HashMap``; ``fmt.Sprintf`` allows one member of a package);
* :class:`Refusal`: the rule, where, why and what to do instead, and the outcome it gives;
* :func:`normalized`: a node's tokens without comments or layout, to compare declared
  signatures.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

import tree_sitter

from verifiers.parsing import grammar
from verifiers.protocols import TestOutcome
from verifiers.results import Status

#: Node types that are comments, in the grammars the policies read.
COMMENTS = frozenset({"comment", "line_comment", "block_comment"})
#: Longest excerpt of the offending code a refusal quotes.
EXCERPT_CHARS = 120


@dataclass(frozen=True)
class Refusal:
    """Why a program was refused before it was run (and, unless its parse failed, built).

    Attributes:
        rule: A stable name of the rule (``rust/unsafe``, ``go/import``), for dashboards.
        reason: What is not allowed, in one sentence.
        line: 1-based line of the offending code (0 when it is not in the code).
        column: 1-based column.
        excerpt: The offending code.
        hint: What is allowed instead.
    """

    rule: str
    reason: str
    line: int = 0
    column: int = 0
    excerpt: str = ""
    hint: str = ""

    def describe(self) -> str:
        """The feedback: where, what is not allowed, and what to do instead."""
        where = f"line {self.line}, column {self.column}: " if self.line else ""
        text = f"The code was refused before it was run (rule {self.rule}): {where}{self.reason}"
        if self.excerpt:
            text += f"\n    {self.excerpt}"
        if self.hint:
            text += f"\n{self.hint}"
        return text

    def outcome(self) -> TestOutcome:
        """The outcome of every test: failed, with the rule as the suspected hack."""
        return TestOutcome(
            Status.FAILED, self.describe(), hack=f"code policy {self.rule}: {self.reason}"
        )


class Source:
    """Code parsed with one tree-sitter grammar.

    Args:
        grammar_module: The grammar's module (``tree_sitter_rust``).
        code: The code.
    """

    def __init__(self, grammar_module: str, code: str) -> None:
        self.data = code.encode("utf-8", errors="surrogatepass")
        self.root = tree_sitter.Parser(grammar(grammar_module)).parse(self.data).root_node

    def text(self, node: tree_sitter.Node | None) -> str:
        """The source text of a node ("" for None)."""
        if node is None:
            return ""
        return self.data[node.start_byte : node.end_byte].decode("utf-8", errors="replace")

    def refuse(
        self, node: tree_sitter.Node | None, rule: str, reason: str, hint: str = ""
    ) -> Refusal:
        """A refusal that points at ``node`` (its first line, shortened)."""
        if node is None:
            return Refusal(rule, reason, hint=hint)
        line, column = node.start_point
        first = self.text(node).strip().split("\n", 1)[0]
        if len(first) > EXCERPT_CHARS:
            first = first[: EXCERPT_CHARS - 3] + "..."
        return Refusal(rule, reason, line + 1, column + 1, first, hint)


def walk(
    node: tree_sitter.Node, prune: Callable[[tree_sitter.Node], bool] | None = None
) -> Iterator[tree_sitter.Node]:
    """Every node below ``node`` (itself included), in source order, anonymous tokens too.

    Args:
        node: Where to start.
        prune: Nodes for which it returns true are yielded but not entered.
    """
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        if prune is None or not prune(current):
            stack.extend(reversed(current.children))


def leaves(node: tree_sitter.Node, skip: frozenset[str] = COMMENTS) -> list[tree_sitter.Node]:
    """The tokens below ``node`` in source order, without the node types in ``skip``."""
    out = []
    for current in walk(node, lambda n: n.type in skip):
        if current.child_count == 0 and current.type not in skip:
            out.append(current)
    return out


def unparsed(source: Source, rule: str) -> Iterator[Refusal]:
    """A refusal of a tree with parse errors.

    What the parser could not read, a policy's rules cannot see (code over the syntax
    check's size limit reaches them unchecked).
    """
    if source.root.has_error:
        yield source.refuse(
            None,
            rule,
            "the code does not parse completely, so it cannot be checked",
            "Write code the parser reads whole.",
        )


def normalized(source: Source, node: tree_sitter.Node | None) -> str:
    """A node's tokens joined by single spaces: the same for layouts and comments that differ."""
    if node is None:
        return ""
    return " ".join(source.text(leaf) for leaf in leaves(node))


class AllowList:
    """Paths allowed by prefix: an entry allows itself and everything below it.

    Args:
        entries: The allowed paths, each a sequence of segments (``("std", "collections")``
            or ``("fmt", "Sprintf")``).
    """

    def __init__(self, entries: Iterable[Sequence[str]]) -> None:
        self.entries = frozenset(tuple(e) for e in entries)
        self._lengths = sorted({len(e) for e in self.entries})

    def allows(self, path: Sequence[str]) -> bool:
        """Whether ``path`` or one of its prefixes is an entry."""
        segments = tuple(path)
        return any(segments[:n] in self.entries for n in self._lengths if n <= len(segments))

    def below(self, prefix: Sequence[str]) -> list[str]:
        """The next segments of the entries under ``prefix``, sorted (for hints)."""
        head = tuple(prefix)
        return sorted(
            {e[len(head)] for e in self.entries if len(e) > len(head) and e[: len(head)] == head}
        )


def first(checks: Iterable[Iterator[Refusal]]) -> Refusal | None:
    """The first refusal any of the checks yields, or None (later checks do not run)."""
    for check in checks:
        for refusal in check:
            return refusal
    return None
