"""What the judge's call channel costs per call, against the same calls in one process.

A judged test (Python and JavaScript) runs the trusted tests in a judge process that calls
the program's function over a channel of plain tagged data: every call is a request and an
answer, each encoded, written, read and decoded. This bench runs one test whose tests call
the program ``N`` times, in the real local sandbox, for a small and a large ``N``; the
difference of their wall times over the difference of ``N`` is the cost of one call through
the channel (the sandbox, the fork and the test's fixed cost cancel out). The baseline is
the same test code calling the same function in one process, no channel: Python in this
process, JavaScript in a ``node`` started by this bench. Each measurement is the median of
``--repeat`` runs, all in this process run, so the ratios compare like with like.

Payloads: a call with two small integers (the channel's floor) and a call with a list of
1,000 integers (what serialising an argument costs).

Usage: ``.venv/bin/python bench/judge_channel.py [--calls N] [--repeat R] [--json PATH]``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

import verifiers
from verifiers.runtimes import LocalRuntime

console = Console()

#: name -> (Python program, its argument expression, JavaScript program, its argument)
PAYLOADS = {
    "2 ints": (
        "def f(a, b):\n    return a + b\n",
        "i, 1",
        "function f(a, b) { return a + b; }\n",
        "i, 1",
    ),
    "1000-int list": (
        "def f(xs, i):\n    return xs[i % 1000] + i\n",
        "XS, i",
        "function f(xs, i) { return xs[i % 1000] + i; }\n",
        "XS, i",
    ),
}


def python_tests(arg: str, calls: int) -> str:
    return (
        "XS = list(range(1000))\n\n"
        "def check(candidate):\n"
        f"    for i in range({calls}):\n"
        f"        assert candidate({arg}) is not None\n"
    )


def js_tests(arg: str, calls: int) -> str:
    return (
        "const XS = Array.from({ length: 1000 }, (_, i) => i)\n"
        f"for (let i = 0; i < {calls}; i++) console.assert(f({arg}) !== undefined)\n"
    )


def judged_s(language: str, code: str, tests: dict[str, Any], runtime: LocalRuntime) -> float:
    started = time.perf_counter()
    r = verifiers.score(language, code, tests, runtime=runtime, limits={"timeout_s": 120})
    elapsed = time.perf_counter() - started
    if not r.ok:
        raise SystemExit(f"the bench's own {language} test failed: {r.status} {r.feedback}")
    return elapsed


def per_call_judged(
    language: str, code: str, arg: str, calls: int, repeat: int, runtime: LocalRuntime
) -> float:
    """Microseconds per call through the channel: (t(N) - t(N0)) / (N - N0), medians."""
    small = max(1, calls // 20)

    def tests(n: int) -> dict[str, Any]:
        if language == "python":
            return {"test": python_tests(arg, n), "entry_point": "f"}
        return {"test": js_tests(arg, n)}

    judged_s(language, code, tests(small), runtime)  # warm the sandbox and the caches
    few = statistics.median(judged_s(language, code, tests(small), runtime) for _ in range(repeat))
    many = statistics.median(judged_s(language, code, tests(calls), runtime) for _ in range(repeat))
    return max(many - few, 0.0) / (calls - small) * 1e6


def per_call_python_in_process(code: str, arg: str, calls: int, repeat: int) -> float:
    def once() -> float:
        ns: dict[str, Any] = {}
        exec(code, ns)
        exec(python_tests(arg, calls), ns)
        started = time.perf_counter()
        ns["check"](ns["f"])
        return time.perf_counter() - started

    return statistics.median(once() for _ in range(repeat)) / calls * 1e6


def per_call_js_in_process(node: str, code: str, arg: str, calls: int, repeat: int) -> float:
    script = (
        code + "const t0 = process.hrtime.bigint();\n" + js_tests(arg, calls) + "process.stdout."
        "write(String(Number(process.hrtime.bigint() - t0) / 1e9));\n"
    )
    times = []
    for _ in range(repeat):
        done = subprocess.run(
            [node, "-e", script], capture_output=True, text=True, timeout=120, check=True
        )
        times.append(float(done.stdout))
    return statistics.median(times) / calls * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=4000, help="calls in the large test")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement (median)")
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    args = parser.parse_args()
    runtime = LocalRuntime()
    verdict = runtime.check()
    if not verdict.available:
        raise SystemExit(f"the local sandbox is unavailable: {verdict.detail}")
    node = shutil.which("node")
    if node is None:
        # Half a table is not a measurement: say what is missing instead of leaving it out.
        raise SystemExit(
            "node is not installed (the JavaScript half needs it): apt-get install nodejs"
        )
    rows: list[dict[str, Any]] = []
    for payload, (py_code, py_arg, js_code, js_arg) in PAYLOADS.items():
        judged = per_call_judged("python", py_code, py_arg, args.calls, args.repeat, runtime)
        local = per_call_python_in_process(py_code, py_arg, args.calls, args.repeat)
        rows.append(
            {"language": "python", "payload": payload, "judged_us": judged, "local_us": local}
        )
        judged = per_call_judged("javascript", js_code, js_arg, args.calls, args.repeat, runtime)
        local = per_call_js_in_process(node, js_code, js_arg, args.calls, args.repeat)
        rows.append(
            {"language": "javascript", "payload": payload, "judged_us": judged, "local_us": local}
        )
    verifiers.close_idle_sandboxes()

    table = Table(
        title=f"The call channel: {args.calls} calls in one test, median of {args.repeat}"
    )
    for column in ("language", "argument", "judged µs/call", "in-process µs/call", "x in-process"):
        table.add_column(column, justify="left" if column in ("language", "argument") else "right")
    for row in rows:
        ratio = row["judged_us"] / row["local_us"] if row["local_us"] > 0 else float("inf")
        row["ratio"] = ratio
        table.add_row(
            row["language"],
            row["payload"],
            f"{row['judged_us']:.1f}",
            f"{row['local_us']:.2f}",
            f"{ratio:.0f}",
        )
    console.print(table)
    if args.json:
        args.json.write_text(json.dumps({"calls": args.calls, "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
