"""JavaScript stdin/stdout tests: a warm Node (a worker thread per test) against a Node per test.

The programs are W1's (``anchors.py``) written in JavaScript, for the first N CodeContests
problems with up to T tests each: a table-lookup program that answers every test, its
exact duplicate, one wrong on every other test, and an echo. Both systems are ours, in this
process, on the same sandbox runtime, with partial credit (every test runs):

* ``node per test``: ``JavaScriptLanguage(warm=False)``, one ``node`` started per test;
* ``warm node``: the default, one Node per program whose tests run in worker threads.

It prints the wall time, tests/s, the cost per test, the speed-up, and whether every
verdict agrees. Usage: ``.venv/bin/python bench/js_stdio.py [--problems 10] [--tests 10]
[--workers 2] [--repeat 2]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import time
from typing import Any

from rich.console import Console
from rich.table import Table

import verifiers
from verifiers._async import run_sync
from verifiers.core import CodeVerifier
from verifiers.languages.javascript import JavaScriptLanguage
from verifiers.runtimes import LocalRuntime
from verifiers.testing import datasets

console = Console()

LOOKUP = """const answers = {answers};
const data = require('fs').readFileSync(0, 'utf8');
process.stdout.write(answers[data.split(/\\s+/).filter(Boolean).join(' ')] || '');
"""
ECHO = "process.stdin.on('data', (c) => process.stdout.write(c));\n"


def _key(text: str) -> str:
    return " ".join(text.split())


def programs(problems: int, tests: int) -> list[tuple[str, dict[str, Any]]]:
    """(code, tests) pairs: four samples of each problem, as W1 has them."""
    out = []
    for problem in datasets.rows("codecontests_test_stdio", report=console.print)[:problems]:
        cases = problem["tests"][:tests]
        spec = {"inputs": [c["input"] for c in cases], "outputs": [c["output"] for c in cases]}
        right = {_key(c["input"]): c["output"] for c in cases}
        wrong = {
            _key(c["input"]): (c["output"] if n % 2 == 0 else "0\n") for n, c in enumerate(cases)
        }
        good = LOOKUP.format(answers=json.dumps(right))
        for code in (good, good, LOOKUP.format(answers=json.dumps(wrong)), ECHO):
            out.append((code, spec))
    return out


def run(
    warm: bool, items: list[tuple[str, dict[str, Any]]], workers: int
) -> tuple[float, list[list[str]]]:
    """Every item through one verifier, ``workers`` programs at a time."""
    verifier = CodeVerifier(JavaScriptLanguage(warm=warm), RUNTIME)

    async def all_items() -> list[verifiers.Result]:
        gate = asyncio.Semaphore(workers)

        async def one(code: str, tests: dict[str, Any]) -> verifiers.Result:
            async with gate:
                return await verifier.ascore(code, tests, policy="partial")

        return await asyncio.gather(*(one(code, tests) for code, tests in items))

    started = time.perf_counter()
    results = run_sync(all_items())
    wall = time.perf_counter() - started
    return wall, [[t.status.value for t in r.tests] for r in results]


RUNTIME = LocalRuntime()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--problems", type=int, default=10)
    parser.add_argument("--tests", type=int, default=10)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    items = programs(args.problems, args.tests)
    n_tests = sum(len(t["inputs"]) for _, t in items)
    run(True, items[: args.workers], args.workers)  # sandboxes and Node warm, off the clock
    walls: dict[bool, list[float]] = {True: [], False: []}
    verdicts: dict[bool, list[list[str]]] = {}
    for n in range(args.repeat):
        for warm in (False, True) if n % 2 == 0 else (True, False):
            wall, verdicts[warm] = run(warm, items, args.workers)
            walls[warm].append(wall)
    table = Table(
        title=f"JavaScript stdin/stdout: {len(items)} programs, {n_tests} tests, "
        f"{args.workers} workers (median of {args.repeat})"
    )
    for column in ("system", "wall s", "tests/s", "ms per test", "x node per test"):
        table.add_column(column, justify="left" if column == "system" else "right")
    base = statistics.median(walls[False])
    for warm, name in ((False, "node per test"), (True, "warm node")):
        wall = statistics.median(walls[warm])
        table.add_row(
            name,
            f"{wall:.2f}",
            f"{n_tests / wall:.0f}",
            f"{wall / n_tests * 1000 * args.workers:.1f}",
            f"{base / wall:.2f}",
        )
    console.print(table)
    same = verdicts[True] == verdicts[False]
    console.print(f"verdicts agree on every test: {same}")
    console.print("ms per test: wall time x workers / tests (the cost of a test on one core)")
    if not same:
        raise SystemExit("the verdicts differ")
    verifiers.close_idle_sandboxes()


if __name__ == "__main__":
    main()
