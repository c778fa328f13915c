"""What the Go and Rust code policies cost per program, against what a program costs anyway.

Programs: every HumanEval-X canonical solution (the shared copy when present, else the
bundled sample: ``verifiers.testing.datasets``, which the run names; the whole tree is
walked: the worst case, an allowed program) and a variant of each that the policy refuses
(an ``os`` / ``std::process`` call first thing in the function). For each program, in this
process:

* ``syntax``: the tree-sitter syntax check every program gets already (the baseline);
* ``policy``: ``check_code``: for the first sample of a problem (it parses the program, the
  tests and the declaration, then applies the rules), for the next samples of the same
  problem (the tests' facts are cached), and for the refused variants;
* ``verify``: with ``--builds N``, a whole verification (build and every test in the
  sandbox, build cache off) of N allowed programs, to show the policy's share.

Times are per program in milliseconds (median and p95 over the programs; each time the best
of 3 repetitions, but the first sample's, which is one call). Usage::

    .venv/bin/python bench/code_policy.py [--problems N] [--builds 4] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from verifiers import registry
from verifiers.api import resolve_runtime
from verifiers.build_cache import BuildCache
from verifiers.core import CodeVerifier
from verifiers.protocols import CodeCheck
from verifiers.testing import datasets

FILES = {"go": "go", "rust": "rust"}
#: A first statement the policy refuses (a process-level escape hatch).
REFUSED = {"go": "    os.Exit(0)\n", "rust": "    std::process::exit(0);\n"}


def programs(language: str, problems: int | None) -> list[tuple[str, str, dict[str, Any]]]:
    """(allowed code, refused code, tests) per problem."""
    stem = f"humaneval_x_{FILES[language]}"
    rows = datasets.rows("humaneval_x", stem, report=print)[:problems]
    out = []
    for row in rows:
        head = row["declaration"] if language == "rust" else row["prompt"]
        tests = {"test": row["test"], "declaration": row["declaration"]}
        if language == "go":
            tests["test_setup"] = row["test_setup"]
        good = head + row["canonical_solution"]
        out.append((good, head + REFUSED[language] + row["canonical_solution"], tests))
    return out


def per_program_ms(run: Callable[[], object], repeat: int = 3) -> float:
    """The best of ``repeat`` timings of one call, in milliseconds."""
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - started)
    return best * 1000


def summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "median": statistics.median(ordered),
        "p95": ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))],
        "max": ordered[-1],
    }


def measure(language: str, problems: int | None, builds: int) -> dict[str, Any]:
    lang = registry.get_language(language)
    checked = lang
    assert isinstance(checked, CodeCheck), f"{language} has no code policy"
    syntax, first, allowed, refused = [], [], [], []
    for good, bad, raw in programs(language, problems):
        spec = lang.parse_tests(raw)
        # The first sample of a problem parses its tests and declaration; the next ones
        # (GRPO's other samples of the problem) find them cached.
        started = time.perf_counter()
        assert checked.check_code(good, spec) is None, "a canonical solution was refused"
        first.append((time.perf_counter() - started) * 1000)
        assert checked.check_code(bad, spec) is not None, "the refused variant was allowed"
        syntax.append(per_program_ms(partial(lang.check_syntax, good, spec)))
        allowed.append(per_program_ms(partial(checked.check_code, good, spec)))
        refused.append(per_program_ms(partial(checked.check_code, bad, spec)))
    report: dict[str, Any] = {
        "programs": len(allowed),
        "syntax_ms": summary(syntax),
        "policy_first_ms": summary(first),
        "policy_allowed_ms": summary(allowed),
        "policy_refused_ms": summary(refused),
    }
    if builds:
        verifier = CodeVerifier(lang, resolve_runtime(None), build_cache=BuildCache(max_bytes=0))
        verify = []
        for good, _, raw in programs(language, builds):
            started = time.perf_counter()
            result = verifier.score(good, raw)
            verify.append((time.perf_counter() - started) * 1000)
            assert result.ok, result.feedback
        report["verify_ms"] = summary(verify)
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", type=int, default=None, help="default: all")
    parser.add_argument("--builds", type=int, default=4)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    reports = {language: measure(language, args.problems, args.builds) for language in FILES}
    table = Table(title="Code policy cost per program, ms: median (p95)")
    columns = [
        "language",
        "programs",
        "syntax check",
        "policy, first sample",
        "policy, next samples",
        "policy, refused",
    ]
    for column in (*columns, "policy / syntax", "verify", "policy / verify"):
        table.add_column(column, justify="left" if column == "language" else "right")

    def cell(s: dict[str, float]) -> str:
        return f"{s['median']:.2f} ({s['p95']:.2f})"

    for language, r in reports.items():
        policy = r["policy_first_ms"]["median"]
        verify = r.get("verify_ms")
        table.add_row(
            language,
            str(r["programs"]),
            cell(r["syntax_ms"]),
            cell(r["policy_first_ms"]),
            cell(r["policy_allowed_ms"]),
            cell(r["policy_refused_ms"]),
            f"{policy / r['syntax_ms']['median']:.1f}x",
            f"{verify['median']:.0f} ({verify['p95']:.0f})" if verify else "-",
            f"{policy / verify['median']:.2%}" if verify else "-",
        )
    Console(width=140).print(table)
    print("verify: a whole verification (build and every test in the sandbox, no build cache);")
    print("policy / syntax and policy / verify use the first sample's time")
    if args.json:
        args.json.write_text(json.dumps(reports, indent=2))


if __name__ == "__main__":
    main()
