"""The case table every language declares: one real program per kind of outcome.

A language lists programs (completions with tests) and the status each must get, one or
more per kind of :data:`CASE_KINDS` (its ``cases()`` method; ``case_kinds`` says which
kinds apply to it). The tables run on every runtime (``verifiers.testing.cases`` collects
them from the registered languages); :func:`missing_kinds` tells which kinds a table does
not cover. This module is a floor of its own (it imports only limits and results), so that
every language module can declare its table.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from verifiers.limits import Limits
from verifiers.results import Status

#: Kinds of outcome every language's table covers.
CASE_KINDS = (
    "ok",
    "wrong_answer",
    "no_code",
    "syntax_error",
    "compile_error",
    "runtime_error",
    "timeout",
    "memory_limit",
    "output_flood",
    "early_exit",
    "kill_self",
    "kill_supervisor",
    "fork_bomb",
)
#: Kinds that apply to languages without processes of their own (queries, patterns): the
#: outcomes up to the output flood; the rest are attacks a query cannot make.
QUERY_KINDS = CASE_KINDS[: CASE_KINDS.index("output_flood") + 1]
PATTERN_KINDS = ("ok", "wrong_answer", "no_code", "syntax_error", "timeout")

#: A stdin/stdout spec with three cases (sum of two numbers) and one with a single case.
SUM_TESTS = {"inputs": ["1 2\n", "10 20\n", "7 0\n"], "outputs": ["3\n", "30\n", "7\n"]}
ONE_TEST = {"inputs": ["1 2\n"], "outputs": ["3\n"]}
#: Limits of the cases: short, and small enough that hostile programs stay cheap.
QUICK = Limits(timeout_s=1, memory_mb=256)
FLOOD = Limits(timeout_s=5, memory_mb=512, max_output_bytes=1 << 20)
BOMB = Limits(timeout_s=3, memory_mb=256, max_processes=32)
#: Filling memory is not a race: time enough for it on a busy machine.
MEMORY = Limits(timeout_s=10, memory_mb=256)


@dataclass(frozen=True)
class Case:
    """One program and the verdict it must get."""

    kind: str
    name: str
    completion: str
    tests: Any
    expected: Status
    limits: Limits = field(default_factory=lambda: Limits(timeout_s=2, memory_mb=256))
    #: Tests that pass when every test runs (``stop_on_failure=False``), when it matters.
    passed: int | None = None


def missing_kinds(cases: list[Case], kinds: tuple[str, ...] = CASE_KINDS) -> set[str]:
    """Kinds (default :data:`CASE_KINDS`) a table has no case for."""
    return set(kinds) - {c.kind for c in cases}


def fenced(lang: str, code: str) -> str:
    """``code`` in a fenced block tagged ``lang``, as a model would write it."""
    return f"```{lang}\n{code}\n```"


def table(lang: str, programs: dict[str, tuple[str, Any, Status]]) -> list[Case]:
    """Cases from ``{"kind:name": (code, tests, expected status)}``; the kind picks the limits.

    ``no_code`` programs are the completion as given; the others are fenced as ``lang``.
    """
    out = []
    for key, (code, tests, expected) in programs.items():
        kind, _, name = key.partition(":")
        limits = {"output_flood": FLOOD, "fork_bomb": BOMB, "memory_limit": MEMORY}.get(
            kind, QUICK if kind == "timeout" else Limits(timeout_s=2, memory_mb=256)
        )
        completion = code if kind == "no_code" else fenced(lang, code)
        out.append(Case(kind, name, completion, tests, expected, limits))
    return out
