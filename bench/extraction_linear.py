"""Extraction and the syntax check are linear in the completion's size: a table of ratios.

For every family of :data:`verifiers.testing.strategies.PATHOLOGICAL_UNITS` and every
language: the CPU time (this thread's) of extraction (``extract_for``, code inside prose
searched) plus the language's ``prepare`` and syntax check, on the unit repeated ``n``
and ``4n`` times. A linear cost gives a ratio near 4, a quadratic one near 16. The
microseconds per character of the larger size are shown too, and the parser work
extraction asked for (calls / characters handed to the syntax check).

The baseline, run in this process, is the reasoning removal this SDK used before (one
regular expression, ``<think>.*?</think>``), on the same ``<think>`` family: it rescans the
text from every opening tag, so its ratio is near 16. Usage::

    .venv/bin/python bench/extraction_linear.py [--chars 15000] [--languages python,sql]
"""

from __future__ import annotations

import argparse
import functools
import gc
import json
import re
import sys
import time
from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.table import Table

from verifiers import registry
from verifiers.extraction import extract_for
from verifiers.parsing import SyntaxIssue, forget_checks
from verifiers.testing.strategies import PATHOLOGICAL_UNITS, pathological

LANGUAGES = ("python", "javascript", "go", "rust", "sql", "regex")
_OLD_THINK = re.compile(r"<think>.*?</think>", re.IGNORECASE | re.DOTALL)


def timings(
    work: Callable[[str], Any], small: str, large: str, repeats: int
) -> tuple[float, float]:
    """The best of ``repeats`` timings of ``work`` on each text.

    CPU time of this thread (other work on the machine does not count), the runs
    alternating, the collector paused.
    """
    best = {small: float("inf"), large: float("inf")}
    gc.disable()
    try:
        for _ in range(repeats):
            for text in (small, large):
                started = time.thread_time()
                work(text)
                best[text] = min(best[text], time.thread_time() - started)
    finally:
        gc.enable()
    return best[small], best[large]


def pipeline(language: Any, text: str, counts: list[int]) -> None:
    """What a verification does before any process starts: extract, prepare, check.

    The syntax checks' caches are emptied first: every run pays for its parsing.
    """
    forget_checks()

    def check(code: str) -> SyntaxIssue | None:
        counts[0] += 1
        counts[1] += len(code)
        issue: SyntaxIssue | None = language.check_syntax(code)
        return issue

    found = extract_for(language, text, check=check)
    if found.code is not None:
        spec = _spec(language)
        language.check_syntax(language.prepare(found.code, spec), spec)


def _spec(language: Any) -> Any:
    raw: dict[str, Any] = {"inputs": ["1 2\n"], "outputs": ["3\n"]}
    if language.name == "sql":
        raw = {"database": {"schema": "CREATE TABLE t(x INT);"}, "gold_query": "SELECT 1"}
    if language.name == "regex":
        raw = {"positive": ["a"], "negative": ["b"]}
    return language.parse_tests(raw)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chars", type=int, default=15_000, help="size of the smaller input")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--languages", default=",".join(LANGUAGES))
    parser.add_argument("--families", default=",".join(PATHOLOGICAL_UNITS))
    parser.add_argument("--json", help="write the rows here")
    args = parser.parse_args(argv)
    languages = [registry.get_language(n) for n in args.languages.split(",")]
    rows: list[dict[str, Any]] = []
    table = Table(title=f"extraction + syntax check, {args.chars} and {4 * args.chars} chars")
    for column in ("family", "language", "small ms", "large ms", "ratio", "us/char", "checks"):
        table.add_column(column, justify="left" if column in ("family", "language") else "right")
    for family in args.families.split(","):
        unit = PATHOLOGICAL_UNITS[family]
        repeat = max(1, args.chars // len(unit))
        small, large = pathological(family, repeat), pathological(family, 4 * repeat)
        for language in languages:
            counts = [0, 0]
            pipeline(language, large, counts)  # warm: grammars loaded, counts of the large run
            work = functools.partial(pipeline, language, counts=[0, 0])
            t_small, t_large = timings(work, small, large, args.repeats)
            row = {
                "family": family,
                "language": language.name,
                "small_s": t_small,
                "large_s": t_large,
                "ratio": t_large / max(t_small, 1e-9),
                "us_per_char": t_large / len(large) * 1e6,
                "check_calls": counts[0],
                "check_chars": counts[1],
                "chars": len(large),
            }
            rows.append(row)
            table.add_row(
                family,
                language.name,
                f"{t_small * 1000:.1f}",
                f"{t_large * 1000:.1f}",
                f"{row['ratio']:.1f}",
                f"{row['us_per_char']:.2f}",
                f"{counts[0]} / {counts[1]}",
            )
    # The baseline: the old reasoning removal on the <think> family.
    unit = PATHOLOGICAL_UNITS["think_open"]
    repeat = max(1, args.chars // len(unit) // 8)  # quadratic: kept small to stay quick
    t_small, t_large = timings(
        functools.partial(_OLD_THINK.sub, ""), unit * repeat, unit * 4 * repeat, args.repeats
    )
    baseline = {
        "family": "think_open",
        "small_s": t_small,
        "large_s": t_large,
        "ratio": t_large / max(t_small, 1e-9),
        "chars": 4 * repeat * len(unit),
    }
    table.add_row(
        "think_open (old regex)",
        "baseline",
        f"{t_small * 1000:.1f}",
        f"{t_large * 1000:.1f}",
        f"{baseline['ratio']:.1f}",
        f"{t_large / baseline['chars'] * 1e6:.2f}",
        "",
    )
    Console(width=120).print(table)
    worst = max(rows, key=lambda r: r["ratio"])
    slowest = max(rows, key=lambda r: r["large_s"])
    print(
        f"worst ratio {worst['ratio']:.1f} ({worst['family']}, {worst['language']}); "
        f"slowest {slowest['large_s'] * 1000:.0f} ms ({slowest['family']}, {slowest['language']}, "
        f"{slowest['us_per_char']:.2f} us/char); old <think> removal ratio {baseline['ratio']:.1f}"
    )
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"rows": rows, "baseline": baseline}, out, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
