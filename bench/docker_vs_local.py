"""Docker runtime against the local runtime: wall time per verification, one at a time.

The workload is the first N HumanEval problems (canonical solutions, so every
verification runs all of its tests and passes) from the shared copy when present, else the
bundled sample (``verifiers.testing.datasets``, which the run names), verified one after
the other in this process on:

* ``local``: the default bubblewrap runtime (warm sandboxes for Python);
* ``docker pooled``: :class:`DockerRuntime` with its pool of pre-started containers
  (started before timing, then kept topped up in the background);
* ``docker cold``: ``DockerRuntime(pool_size=0)``, a new container per verification.

Ratios are against ``local`` measured in the same run. Every verdict must be a pass.
Usage: ``.venv/bin/python bench/docker_vs_local.py [--problems N] [--image IMAGE]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from typing import Any

from rich.console import Console
from rich.table import Table

import verifiers
from verifiers._async import run_sync
from verifiers.images import DEFAULT_IMAGE
from verifiers.runtimes import DockerRuntime, LocalRuntime
from verifiers.testing import datasets


def workload(problems: int) -> list[tuple[str, dict[str, Any]]]:
    rows = datasets.rows("humaneval", report=print)[:problems]
    return [
        (
            row["prompt"] + row["canonical_solution"],
            {"test": row["test"], "entry_point": row["entry_point"]},
        )
        for row in rows
    ]


def measure(runtime: Any, items: list[tuple[str, dict[str, Any]]]) -> list[float]:
    times = []
    for completion, tests in items:
        started = time.perf_counter()
        result = verifiers.score("python", completion, tests, runtime=runtime)
        times.append(time.perf_counter() - started)
        if result.status is not verifiers.Status.PASSED:
            sys.exit(f"{runtime!r}: {result.status.value}: {result.feedback[:500]}")
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--problems", type=int, default=50)
    parser.add_argument("--image", default=DEFAULT_IMAGE)
    parser.add_argument("--pool-size", type=int, default=2)
    args = parser.parse_args()
    console = Console()
    items = workload(args.problems)

    local = LocalRuntime()
    pooled = DockerRuntime(image=args.image, pool_size=args.pool_size)
    cold = DockerRuntime(image=args.image, pool_size=0)
    for rt in (local, pooled, cold):
        check = rt.check()
        if not check.available:
            sys.exit(f"{rt.name} unavailable: {check.detail}")
    # One untimed verification each: imports, probes and (pooled) the first containers.
    for rt in (local, pooled, cold):
        measure(rt, items[:1])
    run_sync(pooled.warm_up())

    runs = {
        "local": measure(local, items),
        "docker pooled": measure(pooled, items),
        "docker cold": measure(cold, items),
    }
    verifiers.close_idle_sandboxes()

    base = statistics.median(runs["local"])
    table = Table(
        title=f"HumanEval canonical solutions, {len(items)} verifications one at a time "
        f"({os.cpu_count()} CPUs)"
    )
    for column in ("runtime", "median ms", "mean ms", "p90 ms", "x local (median)"):
        table.add_column(column, justify="right" if column != "runtime" else "left")
    for name, times in runs.items():
        ordered = sorted(times)
        table.add_row(
            name,
            f"{statistics.median(times) * 1000:.0f}",
            f"{statistics.mean(times) * 1000:.0f}",
            f"{ordered[int(0.9 * (len(ordered) - 1))] * 1000:.0f}",
            f"{statistics.median(times) / base:.1f}",
        )
    console.print(table)
    console.print(f"pool: {pooled.stats}; cold: {cold.stats}")


if __name__ == "__main__":
    main()
