"""Warm runners for stdin/stdout tests (Python, JavaScript, Java) against a process per test.

The programs are W1's (``anchors.py``) written in each language, for the first N
CodeContests problems with up to T tests each: a table-lookup program that answers every
test, its exact duplicate, one wrong on every other test, and an echo. Both systems are
ours, in this process, on the same sandbox runtime, with partial credit (every test runs):

* ``process per test``: ``PythonLanguage(warm=False)`` (a process forked from the zygote
  per test), ``JavaScriptLanguage(warm=False)`` / ``JavaLanguage(warm=False)`` (one
  ``node`` or ``java`` started per test);
* ``warm runner``: one forked Python process (a new ``__main__`` per test), one Node (the
  program's module function called again per test) or one JVM (a class loader per test)
  per program.

Each system scores the batch once off the clock first (sandboxes started, every program
built into the build cache), so the runs measured are the tests' execution. It prints the
wall time, tests/s, the cost per test, the speed-up, and whether every verdict agrees.
Usage: ``.venv/bin/python bench/warm_runners.py [--problems 10]
[--tests 10] [--workers 2] [--repeat 2] [--language python --language java]
[--js-runner FILE]``; ``--js-runner`` measures another warm Node (an earlier revision's
``_js_runner.js``, say: ``git show REV:verifiers/languages/_js_runner.js > old.js``).
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
from verifiers.languages.java import JavaLanguage
from verifiers.languages.javascript import JavaScriptLanguage
from verifiers.languages.python import PythonLanguage
from verifiers.runtimes import LocalRuntime
from verifiers.testing import datasets

console = Console()

PY_LOOKUP = """import sys
answers = {answers}
sys.stdout.write(answers.get(" ".join(sys.stdin.read().split()), ""))
"""
PY_ECHO = "import sys\nsys.stdout.write(sys.stdin.read())\n"
JS_LOOKUP = """const answers = {answers};
const data = require('fs').readFileSync(0, 'utf8');
process.stdout.write(answers[data.split(/\\s+/).filter(Boolean).join(' ')] || '');
"""
JS_ECHO = "process.stdin.on('data', (c) => process.stdout.write(c));\n"
JAVA_LOOKUP = """import java.util.*;
public class Main {
    public static void main(String[] args) throws Exception {
        Map<String, String> answers = new HashMap<>();
%s
        String data = new String(System.in.readAllBytes(), "UTF-8").trim();
        String key = String.join(" ", data.split("\\\\s+"));
        System.out.print(answers.getOrDefault(key, ""));
    }
}
"""
JAVA_ECHO = """public class Main {
    public static void main(String[] args) throws Exception {
        System.out.write(System.in.readAllBytes());
        System.out.flush();
    }
}
"""


def _java_lookup(answers: dict[str, str]) -> str:
    puts = "\n".join(
        f"        answers.put({json.dumps(k)}, {json.dumps(v)});" for k, v in answers.items()
    )
    return JAVA_LOOKUP % puts


def _py_lookup(answers: dict[str, str]) -> str:
    return PY_LOOKUP.format(answers=repr(answers))


def _js_lookup(answers: dict[str, str]) -> str:
    return JS_LOOKUP.format(answers=json.dumps(answers))


LANGUAGES: dict[str, tuple[Any, Any, str, str]] = {
    "python": (PythonLanguage, _py_lookup, PY_ECHO, "python"),
    "javascript": (JavaScriptLanguage, _js_lookup, JS_ECHO, "node"),
    "java": (JavaLanguage, _java_lookup, JAVA_ECHO, "jvm"),
}


def _key(text: str) -> str:
    return " ".join(text.split())


def programs(language: str, problems: int, tests: int) -> list[tuple[str, dict[str, Any]]]:
    """(code, tests) pairs: four samples of each problem, as W1 has them."""
    out = []
    for problem in datasets.rows("codecontests_test_stdio", report=console.print)[:problems]:
        cases = problem["tests"][:tests]
        spec = {"inputs": [c["input"] for c in cases], "outputs": [c["output"] for c in cases]}
        right = {_key(c["input"]): c["output"] for c in cases}
        wrong = {
            _key(c["input"]): (c["output"] if n % 2 == 0 else "0\n") for n, c in enumerate(cases)
        }
        _, lookup, echo, _ = LANGUAGES[language]
        good = lookup(right)
        for code in (good, good, lookup(wrong), echo):
            out.append((code, spec))
    return out


#: The warm Node to measure instead of the package's (``--js-runner``).
JS_RUNNER: bytes | None = None


def run(
    language: str, warm: bool, items: list[tuple[str, dict[str, Any]]], workers: int
) -> tuple[float, list[list[str]]]:
    """Every item through one verifier, ``workers`` programs at a time."""
    lang = LANGUAGES[language][0](warm=warm)
    if JS_RUNNER is not None and isinstance(lang, JavaScriptLanguage):
        lang._runner = JS_RUNNER
    verifier = CodeVerifier(lang, RUNTIME)

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
    parser.add_argument("--language", choices=sorted(LANGUAGES), action="append")
    parser.add_argument("--json", default=None, help="also write the rows here")
    parser.add_argument("--js-runner", default=None, help="a warm Node to measure instead")
    args = parser.parse_args()
    if args.js_runner:
        global JS_RUNNER
        with open(args.js_runner, "rb") as f:
            JS_RUNNER = f.read()
    rows: list[dict[str, Any]] = []
    table = Table(
        title=f"stdin/stdout tests, {args.workers} workers (median of {args.repeat} runs)"
    )
    for column in (
        "language",
        "system",
        "programs",
        "tests",
        "wall s",
        "tests/s",
        "ms per test",
        "x process per test",
        "verdicts agree",
    ):
        table.add_column(column, justify="left" if column in ("language", "system") else "right")
    differ = []
    for language in args.language or list(LANGUAGES):
        items = programs(language, args.problems, args.tests)
        n_tests = sum(len(t["inputs"]) for _, t in items)
        # Off the clock: sandboxes started, and every program built once for each system (the
        # build cache then serves both: what is measured is running the tests).
        run(language, True, items, args.workers)
        run(language, False, items, args.workers)
        walls: dict[bool, list[float]] = {True: [], False: []}
        verdicts: dict[bool, list[list[str]]] = {}
        for n in range(args.repeat):
            for warm in (False, True) if n % 2 == 0 else (True, False):
                wall, verdicts[warm] = run(language, warm, items, args.workers)
                walls[warm].append(wall)
        same = verdicts[True] == verdicts[False]
        if not same:
            differ.append(language)
        base = statistics.median(walls[False])
        runner = LANGUAGES[language][3]
        for warm, name in ((False, "process per test"), (True, f"warm {runner}")):
            wall = statistics.median(walls[warm])
            rows.append(
                {
                    "language": language,
                    "warm": warm,
                    "tests": n_tests,
                    "wall_s": wall,
                    "speed_up": base / wall,
                    "verdicts_agree": same,
                }
            )
            table.add_row(
                language,
                name,
                str(len(items)),
                str(n_tests),
                f"{wall:.2f}",
                f"{n_tests / wall:.0f}",
                f"{wall / n_tests * 1000 * args.workers:.1f}",
                f"{base / wall:.2f}",
                str(same),
            )
    console.print(table)
    console.print("ms per test: wall time x workers / tests (the cost of a test on one core)")
    verifiers.close_idle_sandboxes()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    if differ:
        raise SystemExit(f"the verdicts differ: {', '.join(differ)}")


if __name__ == "__main__":
    main()
