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


def items(workload: str, problems: int | None = None) -> list[dict[str, Any]]:
    """W1: stdin/stdout samples of ``problems`` (15) CodeContests problems; W2: ``problems``
    (60) HumanEval problems, canonical and broken."""
    if workload == "W1":
        return anchors.stdio_items(problems or 15, 20, anchors.w1_samples)
    out = []
    for row in datasets.rows("humaneval", report=console.print)[: problems or 60]:
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
    title = f"{args.workload}: {len(batch)} programs, {args.workers} workers"
    same, _ = interleaved(runtimes, batch, args.rounds, args.workers, "agent", args.ref, title)
    if not same:
        raise SystemExit("the verdicts differ")


def interleaved(
    runtimes: dict[str, LocalRuntime],
    batch: list[dict[str, Any]],
    rounds: int,
    workers: int,
    label: str,
    base: str,
    title: str,
) -> tuple[bool, dict[str, float]]:
    """Score ``batch`` on each runtime, rounds alternating, and print the medians' table.

    Every runtime scores the batch once first, off the clock (sandboxes warm, builds
    cached); rounds then alternate their order so that each sees the same machine load.
    Returns whether every runtime gave every test the same verdict, and the median wall
    time of each.
    """

    def run(runtime: LocalRuntime) -> tuple[float, list[Any]]:
        started = time.perf_counter()
        results = verifiers.score_batch(
            batch, runtime=runtime, policy="partial", max_concurrency=workers
        )
        return time.perf_counter() - started, [[t.status for t in r.tests] for r in results]

    for runtime in runtimes.values():
        run(runtime)
    walls: dict[str, list[float]] = {name: [] for name in runtimes}
    verdicts: dict[str, list[Any]] = {}
    order = list(runtimes)
    for n in range(rounds):
        for name in order if n % 2 == 0 else order[::-1]:
            wall, verdicts[name] = run(runtimes[name])
            walls[name].append(wall)
    table = Table(title=title)
    for column in (label, "median wall s", "runs", "x " + base):
        table.add_column(column, justify="left" if column == label else "right")
    reference = statistics.median(walls[base])
    for name in order:
        wall = statistics.median(walls[name])
        runs = ", ".join(f"{w:.2f}" for w in walls[name])
        table.add_row(name, f"{wall:.2f}", runs, f"{reference / wall:.2f}")
    console.print(table)
    same = all(v == verdicts[base] for v in verdicts.values())
    console.print(f"verdicts agree on every test: {same}; load average {os.getloadavg()[0]:.1f}")
    verifiers.close_idle_sandboxes()
    return same, {name: statistics.median(walls[name]) for name in order}


if __name__ == "__main__":
    main()
