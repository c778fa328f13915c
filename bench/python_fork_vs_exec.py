"""Python test execution: fork per test vs interpreter per test, and the cost of the sandbox.

Workloads come from the public benchmark sets (the shared copy when present, else the
bundled sample: ``verifiers.testing.datasets``, which the run names):

* humaneval: every canonical solution (one assert-script test each);
* mbpp: every reference solution (one test per assert);
* stdio: CodeContests problems run by a program that reads all of stdin and
  prints it (wrong, but every test runs), up to 20 tests per problem.

Modes, all measured in this process on the same workload:

* ``bare``: the baseline floor, ``python -c`` per test as a plain subprocess, no
  sandbox and no harness (what an unsandboxed verifier pays for starting a process);
* ``exec``: the sandbox, a fresh interpreter per test (``PythonLanguage(fork=False)``);
* ``fork``: the sandbox, the running interpreter forked per test (the default).

Prints a table with tests per second and ratios against ``bare`` and ``exec``.
Usage: ``.venv/bin/python bench/python_fork_vs_exec.py [--limit N] [--concurrency C]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from typing import Any

from rich.console import Console
from rich.table import Table

import verifiers
from verifiers.languages.python import PythonLanguage
from verifiers.runtimes import LocalRuntime
from verifiers.testing import datasets

ECHO = "import sys\nsys.stdout.write(sys.stdin.read())\n"


def load(name: str) -> list[dict[str, Any]]:
    return datasets.rows(name, report=print)


def workloads(limit: int | None) -> dict[str, list[dict[str, Any]]]:
    he = load("humaneval")[:limit]
    mbpp = load("mbpp_sanitized")[:limit]
    cc = load("codecontests_test_stdio")[: (limit or 60)]
    return {
        "humaneval": [
            {
                "language": "python",
                "completion": r["prompt"] + r["canonical_solution"],
                "tests": {"test": r["test"], "entry_point": r["entry_point"]},
            }
            for r in he
        ],
        "mbpp": [
            {
                "language": "python",
                "completion": r["code"],
                "tests": {"test_list": r["test_list"], "test_imports": r["test_imports"]},
            }
            for r in mbpp
        ],
        "stdio": [{"language": "python", "completion": ECHO, "tests": r["tests"][:20]} for r in cc],
    }


def bare_programs(items: list[dict[str, Any]]) -> list[tuple[str, bytes]]:
    """One (program, stdin) per test, as an unsandboxed verifier would run them."""
    out = []
    for item in items:
        spec = verifiers.parse_tests(item["tests"])
        code = item["completion"]
        if isinstance(spec, verifiers.StdioTests):
            out += [(code, c.input.encode()) for c in spec.cases]
        elif isinstance(spec, verifiers.AssertListTests):
            head = "\n".join(spec.imports)
            out += [(f"{code}\n{head}\n{a}\n", b"") for a in spec.asserts]
        elif isinstance(spec, verifiers.AssertScriptTests):
            out.append((f"{code}\n{spec.test}\ncheck({spec.entry_point})\n", b""))
    return out


async def run_bare(programs: list[tuple[str, bytes]], concurrency: int) -> float:
    semaphore = asyncio.Semaphore(concurrency)

    async def one(code: str, stdin: bytes) -> None:
        async with semaphore:
            proc = await asyncio.create_subprocess_exec(
                sys.executable,
                "-s",
                "-B",
                "-c",
                code,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
            await proc.communicate(stdin)

    started = time.perf_counter()
    await asyncio.gather(*(one(c, s) for c, s in programs))
    return time.perf_counter() - started


def run_sandbox(
    items: list[dict[str, Any]], fork: bool, concurrency: int, runtime: LocalRuntime
) -> tuple[float, int, int]:
    verifier = verifiers.CodeVerifier(PythonLanguage(fork=fork), runtime)

    async def main() -> list[verifiers.Result]:
        semaphore = asyncio.Semaphore(concurrency)

        async def one(item: dict[str, Any]) -> verifiers.Result:
            async with semaphore:
                return await verifier.ascore(item["completion"], item["tests"])

        return await asyncio.gather(*(one(i) for i in items))

    started = time.perf_counter()
    results = asyncio.run(main())
    elapsed = time.perf_counter() - started
    return elapsed, sum(r.total for r in results), sum(r.passed for r in results)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="problems per workload")
    parser.add_argument("--concurrency", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    runtime = LocalRuntime()
    if not runtime.check().available:
        sys.exit(f"sandbox unavailable: {runtime.check().detail}")
    table = Table(title=f"Python test execution ({args.concurrency} at once)")
    for col in (
        "workload",
        "mode",
        "programs",
        "tests",
        "passed",
        "wall s",
        "tests/s",
        "vs bare",
        "vs exec",
    ):
        table.add_column(col, justify="right" if col not in ("workload", "mode") else "left")
    for name, items in workloads(args.limit).items():
        programs = bare_programs(items)
        bare = asyncio.run(run_bare(programs, args.concurrency))
        exec_s, total, passed_exec = run_sandbox(items, False, args.concurrency, runtime)
        fork_s, total_fork, passed_fork = run_sandbox(items, True, args.concurrency, runtime)
        assert total == total_fork == len(programs) and passed_exec == passed_fork
        rows = [("bare", bare, "-"), ("exec", exec_s, passed_exec), ("fork", fork_s, passed_fork)]
        for mode, seconds, passed in rows:
            table.add_row(
                name,
                mode,
                str(len(items)),
                str(total),
                str(passed),
                f"{seconds:.2f}",
                f"{total / seconds:.0f}",
                f"{seconds / bare:.2f}x",
                f"{seconds / exec_s:.2f}x",
            )
        table.add_section()
    Console().print(table)
    print("ratios are wall-time ratios (lower is faster); 'bare' runs no sandbox and no harness")


if __name__ == "__main__":
    main()
