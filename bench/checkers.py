"""What a checker costs per test: a plain compare against built-in and program checkers.

The workload is Library Checker's problems (the shared copy when present, else the bundled
sample: ``verifiers.testing.datasets``, which the run names): for each problem a Python
program prints the jury's answer of each test (a dictionary from input to answer), so
every test runs and passes, and only the judging differs. Modes, measured in this process
on the same workload, after one warm-up that fills the build cache:

* ``compare``: the default text compare (the baseline);
* ``builtin``: the ``unordered_tokens`` built-in checker (a comparison in the parent);
* ``function``: a Python ``check`` function, run sandboxed after each test;
* ``testlib``: the problem's own testlib checker (C++, built once), run after each test.

Prints tests per second and the ratio to ``compare``.
Usage: ``.venv/bin/python bench/checkers.py [--problems N] [--json FILE]``.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from rich.console import Console
from rich.table import Table

import verifiers
from verifiers.testing import datasets

CHECK = "def check(input, output, answer):\n    return output.split() == answer.split()\n"


def program(tests: list[dict[str, Any]]) -> str:
    answers = {t["input"]: t["answer"] for t in tests}
    return (
        "import sys\nANSWERS = " + repr(answers) + "\nsys.stdout.write(ANSWERS[sys.stdin.read()])\n"
    )


def items(problems: list[dict[str, Any]], mode: str) -> list[dict[str, Any]]:
    out = []
    for p in problems:
        spec: dict[str, Any] = {
            "tests": [{"input": t["input"], "output": t["answer"]} for t in p["tests"]]
        }
        if mode == "builtin":
            spec["checker"] = "unordered_tokens"
        elif mode == "function":
            spec["checker"] = {"language": "python", "source": CHECK, "protocol": "function"}
        elif mode == "testlib":
            spec["checker"] = {
                "language": p["checker_language"],
                "source": p["checker_source"],
                "files": p["support_files"],
                "protocol": "testlib",
            }
        completion = f"```python\n{program(p['tests'])}\n```"
        out.append({"language": "python", "completion": completion, "tests": spec})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", type=int, default=None)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    # A completion holds every answer: problems whose program would pass the completion cap
    # (Options.max_completion_chars) are left out.
    problems = [
        p
        for p in datasets.rows("library_checker", report=print)
        if len(program(p["tests"])) < 900_000
    ][: args.problems]
    tests = sum(len(p["tests"]) for p in problems)
    report: dict[str, Any] = {"problems": len(problems), "tests": tests, "modes": {}}
    for mode in ("compare", "builtin", "function", "testlib"):
        batch = items(problems, mode)
        verifiers.score_batch(batch)  # warm: builds the checkers, starts sandboxes
        started = time.perf_counter()
        results = verifiers.score_batch(batch)
        took = time.perf_counter() - started
        passed = sum(r.passed for r in results)
        report["modes"][mode] = {"s": took, "tests_per_s": tests / took, "passed": passed}
    base = report["modes"]["compare"]["tests_per_s"]
    table = Table(title=f"{len(problems)} Library Checker problems, {tests} tests")
    for column in ("judging", "tests/s", "x compare", "passed"):
        table.add_column(column, justify="right")
    for mode, row in report["modes"].items():
        row["ratio"] = row["tests_per_s"] / base
        table.add_row(
            mode, f"{row['tests_per_s']:.1f}", f"{row['ratio']:.2f}", f"{row['passed']}/{tests}"
        )
    Console().print(table)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)


if __name__ == "__main__":
    main()
