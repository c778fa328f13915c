"""What a fork and its exit cost as the parent grows: the floor under every forked test.

A forked test's process is a copy of its parent (the zygote for a program, the supervisor
for a judge): the kernel copies the parent's page table at the fork and tears the child's
down at its exit, so the cost grows with the memory the parent has mapped. This measures it
in one process, growing its own heap step by step: the parent's CPU per fork, the child's
(an immediate ``os._exit``), and each as a ratio to the smallest size. It is why the
sandbox agent keeps its forking processes lean (``docs/design.md``).

    .venv/bin/python bench/fork_cost.py [--sizes 0 8 16 32] [--forks 300] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource

from rich.console import Console
from rich.table import Table


def _cpu(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def fork_exit(forks: int) -> tuple[float, float]:
    """Parent and child CPU milliseconds per fork of this process, the child exiting at once."""
    parent, child = _cpu(resource.RUSAGE_SELF), _cpu(resource.RUSAGE_CHILDREN)
    for _ in range(forks):
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            os._exit(0)
        os.waitpid(pid, 0)
    return (
        (_cpu(resource.RUSAGE_SELF) - parent) * 1e3 / forks,
        (_cpu(resource.RUSAGE_CHILDREN) - child) * 1e3 / forks,
    )


def resident_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / (1 << 20)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[0, 8, 16, 32], help="MB added")
    parser.add_argument("--forks", type=int, default=300, help="forks per size")
    parser.add_argument("--json", default=None, help="also write the rows here")
    args = parser.parse_args()
    held: list[bytes] = []
    rows = []
    for size in sorted(args.sizes):
        while sum(len(b) for b in held) < size << 20:
            held.append(os.urandom(1 << 20))  # resident: random bytes are written
        fork_exit(10)  # warm
        rows.append((resident_mb(), *fork_exit(args.forks)))
    base = rows[0][1] + rows[0][2]
    table = Table(title=f"fork and exit of a parent of growing size ({args.forks} forks each)")
    for column in ("resident MB", "parent ms", "child ms", "total ms", "x smallest"):
        table.add_column(column, justify="right")
    for mb, parent, child in rows:
        total = parent + child
        table.add_row(
            f"{mb:.0f}", f"{parent:.3f}", f"{child:.3f}", f"{total:.3f}", f"{total / base:.2f}"
        )
    Console().print(table)
    (mb0, p0, c0), (mb1, p1, c1) = rows[0], rows[-1]
    per_mb = ((p1 + c1) - (p0 + c0)) / (mb1 - mb0) if mb1 > mb0 else None
    if per_mb is not None:
        print(f"cost per MB resident: {per_mb:.4f} ms per fork")
    if args.json:
        keys = ("resident_mb", "parent_ms", "child_ms")
        report = {"rows": [dict(zip(keys, r, strict=True)) for r in rows], "ms_per_mb": per_mb}
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)


if __name__ == "__main__":
    main()
