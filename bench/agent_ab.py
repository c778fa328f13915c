"""Two versions of the sandbox agent, interleaved in one process: what an agent change buys.

The sandbox's supervisor (``verifiers/runtimes/_agent.py``) is one file the runtime reads
when it starts a sandbox. This bench runs the working copy's agent against the one at a
git revision (``--ref``, default ``HEAD``), each in a ``LocalRuntime`` of its own, on the
same batch, alternating rounds so that both see the same machine load, and prints the
median wall time of each, their ratio, and whether every verdict agrees. Workloads:
``W1`` (anchors.py's stdin/stdout samples for 15 CodeContests problems, at most 20 tests
each) and ``W2`` (60 HumanEval problems, canonical and broken). Usage:
``.venv/bin/python bench/agent_ab.py [--ref HEAD~3] [--workload W2] [--rounds 4]
[--workers 2]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

import verifiers
from verifiers.runtimes.local import LocalRuntime
from verifiers.testing import datasets

sys.path.insert(0, str(Path(__file__).parent))
import anchors

console = Console()
AGENT = Path(verifiers.__file__).parent / "runtimes" / "_agent.py"


def items(workload: str) -> list[dict[str, Any]]:
    if workload == "W1":
        return anchors.stdio_items(15, 20, anchors.w1_samples)
    out = []
    for row in datasets.rows("humaneval", report=console.print)[:60]:
        for body in (row["canonical_solution"], anchors.broken(row["canonical_solution"])):
            tests = {"test": row["test"], "entry_point": row["entry_point"]}
            out.append({"language": "python", "completion": row["prompt"] + body, "tests": tests})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ref", default="HEAD", help="git revision of the other agent")
    parser.add_argument("--workload", choices=["W1", "W2"], default="W2")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    args = parser.parse_args()
    old = subprocess.run(
        ["git", "-C", str(AGENT.parent), "show", f"{args.ref}:verifiers/runtimes/_agent.py"],
        capture_output=True,
        check=True,
    ).stdout
    runtimes = {}
    for name, source in ((args.ref, old), ("working copy", AGENT.read_bytes())):
        runtime = LocalRuntime()
        runtime._agent = source  # the one thing that differs
        runtimes[name] = runtime
    batch = items(args.workload)

    def run(runtime: LocalRuntime) -> tuple[float, list[Any]]:
        started = time.perf_counter()
        results = verifiers.score_batch(
            batch, runtime=runtime, policy="partial", max_concurrency=args.workers
        )
        return time.perf_counter() - started, [[t.status for t in r.tests] for r in results]

    for runtime in runtimes.values():
        run(runtime)  # sandboxes warm, off the clock
    walls: dict[str, list[float]] = {name: [] for name in runtimes}
    verdicts: dict[str, list[Any]] = {}
    order = list(runtimes)
    for n in range(args.rounds):
        for name in order if n % 2 == 0 else order[::-1]:
            wall, verdicts[name] = run(runtimes[name])
            walls[name].append(wall)
    table = Table(title=f"{args.workload}: {len(batch)} programs, {args.workers} workers")
    for column in ("agent", "median wall s", "runs", "x " + args.ref):
        table.add_column(column, justify="left" if column == "agent" else "right")
    base = statistics.median(walls[args.ref])
    for name in order:
        wall = statistics.median(walls[name])
        runs = ", ".join(f"{w:.2f}" for w in walls[name])
        table.add_row(name, f"{wall:.2f}", runs, f"{base / wall:.2f}")
    console.print(table)
    same = verdicts[args.ref] == verdicts["working copy"]
    console.print(f"verdicts agree on every test: {same}")
    verifiers.close_idle_sandboxes()
    if not same:
        raise SystemExit("the verdicts differ")


if __name__ == "__main__":
    main()
