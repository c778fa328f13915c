"""Differential testing: batched search against running every generated input on its own.

``verifiers.differential`` runs the reference and the candidate on all generated inputs in
one sandbox session per batch; the baseline, measured in the same process, is the naive
loop a user would write with ``@given``: every input is a verification of its own (the
reference, then the candidate). Workloads: HumanEval/52 in Python (call mode, arguments
from the type hints) and a maximum-of-an-array program in Go and Rust (stdin mode), each
with a right candidate (the whole search runs) and a wrong one (search, then shrinking).

Usage: ``.venv/bin/python bench/differential.py [--examples N]``.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from rich.console import Console
from rich.table import Table

import verifiers
from verifiers.core import Options
from verifiers.difftest import _Pair
from verifiers.testing import datasets
from verifiers.testing.inputs import strategy_from_signature

ARRAYS = st.lists(st.integers(-50, 50), max_size=6).map(
    lambda xs: f"{len(xs)}\n{' '.join(map(str, xs))}\n"
)
GO_MAX = (
    'package main\n\nimport "fmt"\n\nfunc main() {{\n\tvar n int\n\tfmt.Scan(&n)\n'
    "\tbest := 0\n\tfor i := 0; i < n; i++ {{\n\t\tvar x int\n\t\tfmt.Scan(&x)\n"
    "\t\tif {cond} {{\n\t\t\tbest = x\n\t\t}}\n\t}}\n\tfmt.Println(best)\n}}\n"
)
RUST_MAX = (
    "use std::io::Read;\nfn main() {{\n    let mut s = String::new();\n"
    "    std::io::stdin().read_to_string(&mut s).unwrap();\n"
    "    let v: Vec<i64> = s.split_whitespace().map(|x| x.parse().unwrap()).collect();\n"
    "    let xs = &v[1..1 + v[0] as usize];\n"
    '    println!("{{}}", {expr});\n}}\n'
)


def workloads() -> list[dict[str, Any]]:
    # HumanEval/52 is in the bundled sample too.
    rows = datasets.rows("humaneval", report=print)
    problem = next(r for r in rows if r["task_id"] == "HumanEval/52")
    reference = problem["prompt"] + problem["canonical_solution"]
    python = {"language": "python", "fn_name": "below_threshold", "reference": reference}
    go = {"language": "go", "inputs": ARRAYS, "reference": GO_MAX.format(cond="i == 0 || x > best")}
    rust = {
        "language": "rust",
        "inputs": ARRAYS,
        "reference": RUST_MAX.format(expr="xs.iter().copied().max().unwrap_or(0)"),
    }
    return [
        {
            **python,
            "name": "right",
            "candidate": problem["prompt"] + "    return all(x < t for x in l)\n",
        },
        {**python, "name": "wrong", "candidate": problem["prompt"] + "    return max(l) < t\n"},
        {**go, "name": "right", "candidate": GO_MAX.format(cond="i == 0 || best < x")},
        {**go, "name": "wrong", "candidate": GO_MAX.format(cond="x > best")},
        {
            **rust,
            "name": "right",
            "candidate": RUST_MAX.format(expr="xs.iter().copied().reduce(i64::max).unwrap_or(0)"),
        },
        {
            **rust,
            "name": "wrong",
            "candidate": RUST_MAX.format(expr="xs.iter().copied().fold(0, i64::max)"),
        },
    ]


def naive(work: dict[str, Any], examples: int) -> tuple[float, int, str]:
    """The @given loop: each input a verification of its own, hypothesis shrinking."""
    mode = "call" if work.get("fn_name") else "stdio"
    options = Options()
    pair = _Pair(
        work["language"],
        mode,
        work.get("fn_name"),
        work["reference"],
        work["candidate"],
        options,
        None,
        5.0,
        1.0,
    )
    strategy = work.get("inputs") or strategy_from_signature(work["reference"], work["fn_name"])
    runs = 0
    found = ""

    @settings(
        max_examples=examples,
        database=None,
        deadline=None,
        phases=[Phase.generate, Phase.shrink],
        report_multiple_bugs=False,
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def check(value: Any) -> None:
        nonlocal runs
        value = value if mode == "stdio" or isinstance(value, tuple) else (value,)
        runs += 1
        [verdict] = verifiers._async.run_sync(pair.compare([value]))
        assert verdict.agree, pair.shown(value)

    started = time.perf_counter()
    try:
        check()
    except AssertionError as err:
        found = str(err)
    return time.perf_counter() - started, runs, found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=100)
    args = parser.parse_args()
    table = Table(title=f"differential testing, {args.examples} examples (both programs sandboxed)")
    for column in (
        "language",
        "candidate",
        "run",
        "wall s",
        "vs per-input",
        "runs",
        "smallest input",
    ):
        table.add_column(
            column,
            justify="left"
            if column in ("language", "candidate", "run", "smallest input")
            else "right",
        )
    for work in workloads():
        # Warm the build cache and the sandbox pool for both, so neither pays it alone.
        verifiers.differential(
            work["language"],
            work["reference"],
            work["reference"],
            fn_name=work.get("fn_name"),
            inputs=work.get("inputs"),
            max_examples=2,
        )
        base_s, base_runs, base_found = naive(work, args.examples)
        started = time.perf_counter()
        report = verifiers.differential(
            work["language"],
            work["candidate"],
            work["reference"],
            fn_name=work.get("fn_name"),
            inputs=work.get("inputs"),
            max_examples=args.examples,
        )
        ours_s = time.perf_counter() - started
        shown = report.counterexample.shown if report.counterexample else "-"
        table.add_row(
            work["language"],
            work["name"],
            "per input (@given)",
            f"{base_s:.2f}",
            "1.00x",
            str(base_runs),
            repr(base_found) if base_found else "-",
        )
        table.add_row(
            work["language"],
            work["name"],
            "differential()",
            f"{ours_s:.2f}",
            f"{ours_s / base_s:.2f}x",
            f"{report.batches + report.shrink_runs}",
            repr(shown) if report.counterexample else "-",
        )
        table.add_section()
    Console().print(table)
    print("runs: sandbox sessions per program (per input: one per generated or shrunk input;")
    print("differential(): one per batch of the search plus one per input tried while shrinking)")


if __name__ == "__main__":
    main()
