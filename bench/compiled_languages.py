"""JavaScript, Go and Rust on HumanEval-X: compile and run times, the build cache on a GRPO batch.

For each language, a GRPO-like batch is built from the first N problems of HumanEval-X
(the shared copy when present, else the bundled sample: ``verifiers.testing.datasets``,
which the run names): 8 samples per problem, of which 4 are the same
canonical solution, 2 the canonical solution with different formatting (a
distinct program), and 2 broken. Three runs, all in this process:

* ``baseline``: every sample verified on its own, no deduplication and no build cache;
* ``batch cold``: ``score_batch`` (identical samples verified once) with an empty cache;
* ``batch warm``: the same batch again, with the cache filled by the cold run;
* ``warm, no reuse``: ``batch warm`` with ``LocalRuntime(warm=False)``: a new sandbox per
  program, as before warm sandboxes served programs with files on disk (what reusing a
  sandbox saves per program).

It also prints the median compile time and run time per test. Usage:
``.venv/bin/python bench/compiled_languages.py [--problems N] [--concurrency C]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
from typing import Any

from rich.console import Console
from rich.table import Table

import verifiers
from verifiers import registry
from verifiers.api import resolve_runtime
from verifiers.build_cache import BuildCache
from verifiers.core import CodeVerifier, Job, Options
from verifiers.engine import run_jobs
from verifiers.protocols import Runtime
from verifiers.runtimes import LocalRuntime
from verifiers.testing import datasets

FILES = {"javascript": "js", "go": "go", "rust": "rust"}
BROKEN = {
    "javascript": "  return undefined;\n",
    "go": '    panic("broken")\n',
    "rust": '    panic!("broken");\n',
}


def batch(language: str, problems: int) -> list[dict[str, Any]]:
    stem = f"humaneval_x_{FILES[language]}"
    rows = datasets.rows("humaneval_x", stem, report=print)[:problems]
    items = []
    for row in rows:
        head = row["declaration"] if language == "rust" else row["prompt"]
        good = head + row["canonical_solution"]
        tests = {"test": row["test"]}
        if language == "go":
            tests["test_setup"] = row["test_setup"]
        samples = [good] * 4 + [good + "\n\n", good + "\n\n\n"]
        samples += [head + BROKEN[language] + row["canonical_solution"]] * 2
        items += [{"language": language, "completion": s, "tests": tests} for s in samples]
    return items


def jobs(
    items: list[dict[str, Any]], cache: BuildCache, runtime: Runtime | None = None
) -> list[Job]:
    runtime = runtime or resolve_runtime(None)
    out = []
    for item in items:
        verifier = CodeVerifier(registry.get_language(item["language"]), runtime, build_cache=cache)
        spec = verifier.parse_tests(item["tests"])
        out.append(Job(verifier, item["completion"], spec, Options()))
    return out


async def baseline(items: list[dict[str, Any]], concurrency: int) -> list[verifiers.Result]:
    """Every sample on its own: no dedup, no cache."""
    semaphore = asyncio.Semaphore(concurrency)
    no_cache = BuildCache(max_bytes=0)

    async def one(job: Job) -> verifiers.Result:
        async with semaphore:
            return await job.verifier.verify(job.completion, job.spec, job.options)

    return await asyncio.gather(*(one(j) for j in jobs(items, no_cache)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", type=int, default=12)
    parser.add_argument("--concurrency", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    table = Table(title=f"HumanEval-X, 8 samples per problem ({args.concurrency} at once)")
    for column in (
        "language",
        "run",
        "samples",
        "compiles",
        "wall s",
        "vs baseline",
        "compile s (median)",
        "run s per test (median)",
    ):
        table.add_column(column, justify="left" if column in ("language", "run") else "right")
    for language in FILES:
        items = batch(language, args.problems)
        started = time.perf_counter()
        base = asyncio.run(baseline(items, args.concurrency))
        base_s = time.perf_counter() - started
        cache = BuildCache()
        runs: list[tuple[str, float, list[verifiers.Result]]] = [("baseline", base_s, base)]
        cold_sandboxes = LocalRuntime(warm=False)
        for name, runtime in (
            ("batch cold", None),
            ("batch warm", None),
            ("warm, no reuse", cold_sandboxes),
        ):
            started = time.perf_counter()
            results = asyncio.run(
                run_jobs(jobs(items, cache, runtime), max_concurrency=args.concurrency)
            )
            runs.append((name, time.perf_counter() - started, results))
        statuses = [[r.status for r in results] for _, _, results in runs]
        assert all(s == statuses[0] for s in statuses), "verdicts differ between runs"
        for name, seconds, results in runs:
            built = [r.compile for r in results if r.compile is not None and not r.compile.cached]
            compiles = len({id(r) for r in results if r.compile and not r.compile.cached})
            compile_s = statistics.median([c.wall_s for c in built]) if built else 0.0
            per_test = [t.wall_s for r in results for t in r.tests if t.wall_s]
            table.add_row(
                language,
                name,
                str(len(results)),
                str(compiles if name != "baseline" else len(built)),
                f"{seconds:.2f}",
                f"{seconds / base_s:.2f}x",
                f"{compile_s:.3f}",
                f"{statistics.median(per_test) if per_test else 0:.3f}",
            )
        table.add_section()
    Console(width=150).print(table)
    print("ratios are wall-time ratios (lower is faster); verdicts are identical in all runs")


if __name__ == "__main__":
    main()
