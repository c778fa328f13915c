"""The case tables of the registered languages, for test suites (yours and ours).

Each language declares its own table (``Language.cases()``, the contract in
:mod:`verifiers.cases`); this module collects them through the registry, so a language
added by a plug-in is covered without a line here.
"""

from __future__ import annotations

from verifiers import registry
from verifiers.cases import (
    CASE_KINDS,
    PATTERN_KINDS,
    QUERY_KINDS,
    Case,
    missing_kinds,
)


def case_tables() -> dict[str, list[Case]]:
    """Every registered language's case table, by language name."""
    out = {}
    for name in registry.language_names():
        cases = getattr(registry.get_language(name), "cases", None)
        if callable(cases):
            out[name] = list(cases())
    return out


def table_kinds() -> dict[str, tuple[str, ...]]:
    """The kinds each registered language's table must cover (default: every kind)."""
    return {
        name: tuple(getattr(registry.get_language(name), "case_kinds", CASE_KINDS))
        for name in registry.language_names()
    }


__all__ = [
    "CASE_KINDS",
    "PATTERN_KINDS",
    "QUERY_KINDS",
    "Case",
    "case_tables",
    "missing_kinds",
    "table_kinds",
]
