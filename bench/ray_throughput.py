"""Throughput of the Ray executor against the local engine, and the costs of one Ray task.

Workload: every HumanEval problem of ``../shared/datasets`` twice, its canonical solution and
a broken variant (the W2 workload of ``anchors.py``), repeated ``--repeat`` times with the
completions made distinct (a comment), so that deduplication does not shrink it.

Systems, each warmed on a few items before the clock starts (sandboxes up, actors started),
interleaved over ``--rounds`` rounds (the table shows medians):

* ``local``: ``score_batch`` in this process, ``max_concurrency=--workers``;
* ``ray 1 worker``: one actor, ``CPU: 1`` (one verification at once);
* ``ray 1 worker x N``: one actor holding N CPUs (N verifications at once in one engine);
* ``ray N workers``: N actors of ``CPU: 1``.

The local cluster has as many logical CPUs as this machine has cores. Then the costs a
projection to many nodes needs: a round trip of an empty chunk to an actor (alone and
pipelined), bytes sent per item and per chunk, bytes of a result, and what the driver
spends per item (validation, dedup keys, the checks of the Ray executor, its CPU time during
a Ray run). Usage::

    .venv/bin/python bench/ray_throughput.py [--problems 132] [--repeat 2] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

import verifiers
from verifiers.api import prepare_jobs
from verifiers.executors import RayExecutor

sys.path.insert(0, str(Path(__file__).resolve().parent))
from anchors import broken, load

console = Console(width=150)


def workload(problems: int | None, repeat: int) -> list[dict[str, Any]]:
    items = []
    for copy in range(repeat):
        for row in load("humaneval")[:problems]:
            tests = {"test": row["test"], "entry_point": row["entry_point"]}
            for body in (row["canonical_solution"], broken(row["canonical_solution"])):
                completion = row["prompt"] + body + (f"\n# copy {copy}\n" if copy else "")
                items.append({"language": "python", "completion": completion, "tests": tests})
    return items


@dataclass
class Run:
    """One system over every round."""

    name: str
    items: int
    walls: list[float] = field(default_factory=list)
    cpus: list[float] = field(default_factory=list)
    starts: list[float] = field(default_factory=list)
    verdicts: list[tuple[str, int, int]] = field(default_factory=list)

    @property
    def wall_s(self) -> float:
        return statistics.median(self.walls)

    @property
    def per_s(self) -> float:
        return self.items / self.wall_s


def measure(run: Run, items: list[dict[str, Any]], **kwargs: Any) -> None:
    executor = kwargs.get("executor")
    started = time.perf_counter()
    if isinstance(executor, RayExecutor):
        executor.start()
    run.starts.append(time.perf_counter() - started)
    verifiers.score_batch(items[:8], **kwargs)  # warm: sandboxes up, imports done
    cpu, started = time.process_time(), time.perf_counter()
    results = verifiers.score_batch(items, **kwargs)
    run.walls.append(time.perf_counter() - started)
    run.cpus.append(time.process_time() - cpu)
    run.verdicts = [(r.status.value, r.passed, r.total) for r in results]


def rss_mb(pid: int) -> float:
    """Resident memory of one process (a worker, without its sandboxes)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def round_trips(executor: RayExecutor, n: int = 200) -> dict[str, float]:
    """An empty chunk to one actor and back: one after the other, then n at once."""
    import ray

    actor = executor.actors[0]
    ray.get(actor.verify.remote([], None))
    serial = []
    for _ in range(n):
        started = time.perf_counter()
        ray.get(actor.verify.remote([], None))
        serial.append(time.perf_counter() - started)
    started = time.perf_counter()
    ray.get([actor.verify.remote([], None) for _ in range(n)])
    pipelined = (time.perf_counter() - started) / n
    started = time.perf_counter()
    refs = [actor.verify.remote([], None) for _ in range(n)]
    submit = (time.perf_counter() - started) / n
    ray.get(refs)
    return {
        "rtt_p50_ms": statistics.median(serial) * 1e3,
        "rtt_p99_ms": sorted(serial)[int(0.99 * len(serial))] * 1e3,
        "pipelined_ms_per_task": pipelined * 1e3,
        "submit_ms_per_task": submit * 1e3,
    }


def sizes(items: list[dict[str, Any]], executor: RayExecutor) -> dict[str, float]:
    """Bytes on the wire: a payload alone, per item in a chunk of 16, and a result."""
    import ray

    jobs = prepare_jobs(items, None, None, None, None, None)
    payloads = executor._payloads(jobs)
    alone = [len(ray.cloudpickle.dumps(p)) for p in payloads]
    chunks = [payloads[n : n + 16] for n in range(0, len(payloads), 16)]
    chunked = sum(len(ray.cloudpickle.dumps(c)) for c in chunks) / len(payloads)
    results = verifiers.score_batch(items[:32], executor=executor)
    result_bytes = [len(pickle.dumps(r)) for r in results]
    completion = [len(i["completion"].encode()) for i in items]
    return {
        "completion_bytes": statistics.mean(completion),
        "payload_bytes": statistics.mean(alone),
        "payload_bytes_in_chunk_of_16": chunked,
        "result_bytes": statistics.mean(result_bytes),
        "result_bytes_max": max(result_bytes),
    }


def driver_costs(items: list[dict[str, Any]], executor: RayExecutor) -> dict[str, float]:
    """Microseconds per item the driver spends before sending anything."""
    n = len(items)
    started = time.perf_counter()
    jobs = prepare_jobs(items, None, None, None, None, None)
    validate = time.perf_counter() - started
    started = time.perf_counter()
    for job in jobs:
        job.key()
    keys = time.perf_counter() - started
    started = time.perf_counter()
    executor.validate(jobs)
    checks = time.perf_counter() - started
    cache = verifiers.ResultCache()
    started = time.perf_counter()
    for job in jobs:
        cache.get(job.result_key(cache))
    lookups = time.perf_counter() - started
    return {
        "prepare_jobs_us": validate / n * 1e6,
        "dedup_key_us": keys / n * 1e6,
        "ray_checks_us": checks / n * 1e6,
        "cache_lookup_us": lookups / n * 1e6,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", type=int, default=None, help="HumanEval problems (all)")
    parser.add_argument("--repeat", type=int, default=2, help="copies of the workload")
    parser.add_argument("--workers", type=int, default=2, help="local concurrency, Ray workers")
    parser.add_argument("--rounds", type=int, default=3, help="rounds (medians are shown)")
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    args = parser.parse_args()
    import ray

    items = workload(args.problems, args.repeat)
    verifiers.score("python", "print(1)", [{"input": "", "output": "1"}])  # probe the sandbox
    cpus = os.cpu_count() or 1
    started = time.perf_counter()
    ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False)
    cluster_s = time.perf_counter() - started
    w = args.workers
    report: dict[str, Any] = {"cpus": cpus, "items": len(items), "cluster_start_s": cluster_s}
    systems: list[tuple[str, Callable[[], RayExecutor | None]]] = [
        ("local", lambda: None),
        ("ray 1 worker", lambda: RayExecutor(num_workers=1)),
        (f"ray 1 worker x {w}", lambda: RayExecutor(num_workers=1, resources={"CPU": w})),
        (f"ray {w} workers", lambda: RayExecutor(num_workers=w)),
    ]
    runs = {name: Run(name, len(items)) for name, _ in systems}
    # Rounds interleave the systems, so that a noisy neighbour hurts them alike.
    for round_ in range(args.rounds):
        for name, make in systems:
            executor = make()
            if executor is None:
                measure(runs[name], items, max_concurrency=w)
                continue
            measure(runs[name], items, executor=executor)
            if round_ == 0 and name == f"ray {w} workers":
                report["worker_rss_mb"] = max(rss_mb(pid) for pid in executor.worker_pids())
                report["round_trip"] = round_trips(executor)
                report["sizes"] = sizes(items, executor)
                report["driver"] = driver_costs(items, executor)
            executor.shutdown()
    base = runs["local"]
    t = Table(
        title=f"HumanEval canonical + broken, {len(items)} verifications, {cpus} cores, "
        f"median of {args.rounds} rounds"
    )
    for column in (
        "system",
        "start s",
        "wall s",
        "wall s min-max",
        "verif/s",
        "x local",
        "driver CPU ms/item",
    ):
        t.add_column(column, justify="left" if column == "system" else "right")
    for run in runs.values():
        t.add_row(
            run.name,
            f"{statistics.median(run.starts):.2f}" if run is not base else "-",
            f"{run.wall_s:.2f}",
            f"{min(run.walls):.2f}-{max(run.walls):.2f}",
            f"{run.per_s:.1f}",
            f"{run.per_s / base.per_s:.2f}",
            f"{statistics.median(run.cpus) / run.items * 1e3:.2f}",
        )
    console.print(t)
    for run in list(runs.values())[1:]:
        differ = sum(a != b for a, b in zip(run.verdicts, base.verdicts, strict=True))
        console.print(f"{run.name}: {differ} verdicts differ from local")
        report.setdefault("differences", {})[run.name] = differ
    o = Table(title="Per-task costs (ray, one actor, this machine)")
    o.add_column("quantity")
    o.add_column("value", justify="right")
    rt, sz, dr = report["round_trip"], report["sizes"], report["driver"]
    rows = [
        ("local cluster start (ray.init)", f"{cluster_s:.2f} s"),
        ("worker process memory (RSS, warm)", f"{report['worker_rss_mb']:.0f} MB"),
        (
            "empty chunk round trip, p50 / p99",
            f"{rt['rtt_p50_ms']:.2f} / {rt['rtt_p99_ms']:.2f} ms",
        ),
        ("empty chunks pipelined, per task", f"{rt['pipelined_ms_per_task']:.3f} ms"),
        ("driver submit, per task", f"{rt['submit_ms_per_task']:.3f} ms"),
        ("completion, per item", f"{sz['completion_bytes']:.0f} B"),
        ("payload alone, per item", f"{sz['payload_bytes']:.0f} B"),
        ("payload in a chunk of 16, per item", f"{sz['payload_bytes_in_chunk_of_16']:.0f} B"),
        ("result, per item (mean / max)", f"{sz['result_bytes']:.0f} / {sz['result_bytes_max']} B"),
        ("driver: prepare_jobs, per item", f"{dr['prepare_jobs_us']:.1f} us"),
        ("driver: dedup key, per item", f"{dr['dedup_key_us']:.1f} us"),
        ("driver: Ray checks, per item", f"{dr['ray_checks_us']:.1f} us"),
        ("driver: cache key + lookup (miss), per item", f"{dr['cache_lookup_us']:.1f} us"),
    ]
    for row in rows:
        o.add_row(*row)
    console.print(o)
    report["runs"] = [
        {
            "name": r.name,
            "wall_s": r.wall_s,
            "per_s": r.per_s,
            "ratio": r.per_s / base.per_s,
            "walls": r.walls,
            "start_s": statistics.median(r.starts),
            "driver_cpu_ms_per_item": statistics.median(r.cpus) / r.items * 1e3,
        }
        for r in runs.values()
    ]
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    ray.shutdown()
    console.print("ratios are throughput ratios against local in this process (higher is faster)")


if __name__ == "__main__":
    main()
