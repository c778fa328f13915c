"""Sandboxes on one CPU each against sandboxes free to move: what ``pin_cpus`` buys.

A judged test hands work from process to process many times (the host asks the supervisor,
the supervisor the zygote and the judge, the judge calls the program and waits for its
answer). Each hand-off wakes a process; one asleep on another CPU costs a cross-CPU wake-up.
This bench measures that floor first (two processes passing a byte back and forth over
pipes, on one CPU and on two), then runs the same batch through a ``LocalRuntime`` with
``pin_cpus=True`` (every process of a sandbox that builds nothing on one CPU, the one with
the fewest sandboxes at work) and one with ``pin_cpus=False``, alternating rounds so that
both see the same machine load, and prints the median wall time of each, their ratio, and
whether every verdict agrees. Workloads: ``W2`` (HumanEval canonical and broken, judged
Python), ``W1`` (anchors.py's stdin/stdout samples) and ``JS`` (HumanEval-X JavaScript,
judged). Usage: ``.venv/bin/python bench/pinning.py [--workload W2] [--rounds 4]
[--workers 2] [--problems 60]``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from verifiers.runtimes.local import LocalRuntime
from verifiers.testing import datasets

sys.path.insert(0, str(Path(__file__).parent))
import agent_ab

console = Console()


def hand_off_us(same_cpu: bool, rounds: int = 20_000) -> tuple[float, float]:
    """Microseconds per round trip between two processes over pipes, and the parent's CPU."""
    cpus = sorted(os.sched_getaffinity(0))
    there = cpus[0] if same_cpu else cpus[-1]
    to_child, from_parent = os.pipe()
    to_parent, from_child = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.sched_setaffinity(0, {there})
        for _ in range(rounds):
            os.read(to_child, 1)
            os.write(from_child, b"x")
        os._exit(0)
    saved = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {cpus[0]})
    started, cpu = time.perf_counter(), time.process_time()
    for _ in range(rounds):
        os.write(from_parent, b"x")
        os.read(to_parent, 1)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    os.waitpid(pid, 0)
    os.sched_setaffinity(0, saved)
    for fd in (to_child, from_parent, to_parent, from_child):
        os.close(fd)
    return wall / rounds * 1e6, cpu / rounds * 1e6


def items(workload: str, problems: int) -> list[dict[str, Any]]:
    if workload != "JS":
        return agent_ab.items(workload, problems)
    rows = datasets.rows("humaneval_x", "humaneval_x_js", report=console.print)[:problems]
    return [
        {
            "language": "javascript",
            "completion": row["declaration"] + row["canonical_solution"],
            "tests": {"test": row["test"], "declaration": row["declaration"]},
        }
        for row in rows
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workload", choices=["W1", "W2", "JS"], default="W2")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--problems", type=int, default=60)
    parser.add_argument("--json", type=Path, help="write the numbers here")
    args = parser.parse_args()
    if len(os.sched_getaffinity(0)) < 2:
        raise SystemExit("pinning needs at least two CPUs to choose from")

    floor = Table(title="a hand-off between two processes (a byte each way over pipes)")
    for column in ("where", "µs per round trip", "parent CPU µs"):
        floor.add_column(column, justify="left" if column == "where" else "right")
    report: dict[str, Any] = {"hand_off_us": {}}
    for label, same_cpu in (("one CPU", True), ("two CPUs", False)):
        wall, cpu = hand_off_us(same_cpu)
        floor.add_row(label, f"{wall:.1f}", f"{cpu:.1f}")
        report["hand_off_us"][label] = {"wall": wall, "cpu": cpu}
    console.print(floor)

    runtimes = {"pinned": LocalRuntime(pin_cpus=True), "free": LocalRuntime(pin_cpus=False)}
    batch = items(args.workload, args.problems)
    title = f"{args.workload}: {len(batch)} programs, {args.workers} workers"
    same, medians = agent_ab.interleaved(
        runtimes, batch, args.rounds, args.workers, "sandboxes", "free", title
    )
    report.update(workload=args.workload, programs=len(batch), median_wall_s=medians, same=same)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    if not same:
        raise SystemExit("the verdicts differ")


if __name__ == "__main__":
    main()
