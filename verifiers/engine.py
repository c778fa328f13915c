"""Batch execution: bounded concurrency, deduplication, input order, nothing lost.

Every item of a batch is validated before anything runs (a malformed spec raises
:class:`~verifiers.errors.SpecError` naming the item). Identical work (same language,
completion, tests and options) runs once and its result is shared. Each distinct job goes
through :func:`verifiers.core.verify_one`, the path a single verification takes too, so a
fault inside one verification becomes that item's ``sandbox_error`` result; it never fails
the batch or drops a result.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable, Mapping
from typing import Any

from verifiers.core import Job, infra_result, verify_one
from verifiers.errors import SpecError
from verifiers.protocols import DelegatingRuntime, delegates
from verifiers.result_cache import ResultCache
from verifiers.results import Result

log = logging.getLogger("verifiers.engine")

Progress = Callable[[int, int], None]


def default_concurrency() -> int:
    """One verification per core."""
    return max(1, os.cpu_count() or 1)


class Collector:
    """The results of a batch, filled in any order, with progress reported as they arrive.

    Deduplicated work is delivered once for every index that shares it; :meth:`results`
    checks that every index got exactly one result.
    """

    def __init__(self, jobs: list[Job], progress: Progress | None = None) -> None:
        self.total = len(jobs)
        self.done = 0
        self._progress = progress
        self._results: list[Result | None] = [None] * len(jobs)
        self.groups: dict[str, list[int]] = {}
        for index, job in enumerate(jobs):
            self.groups.setdefault(job.key(), []).append(index)

    def deliver(self, indices: list[int], result: Result) -> None:
        """Put ``result`` in place for every index of one group of identical jobs."""
        for index in indices:
            if self._results[index] is not None:
                raise RuntimeError(f"item {index} got two results")
            self._results[index] = result
        self.done += len(indices)
        if self._progress is not None:
            self._progress(self.done, self.total)

    def results(self) -> list[Result]:
        """Every result, in input order."""
        missing = [i for i, r in enumerate(self._results) if r is None]
        if missing:
            raise RuntimeError(f"items without a result: {missing[:10]}")
        return [r for r in self._results if r is not None]


async def run_jobs(
    jobs: list[Job],
    *,
    max_concurrency: int | None = None,
    progress: Progress | None = None,
    cache: ResultCache | None = None,
) -> list[Result]:
    """Run jobs concurrently (at most ``max_concurrency`` at once), results in input order.

    With a ``cache``, a job whose result it holds does not run, and new results go into it.
    Jobs on a :class:`~verifiers.protocols.DelegatingRuntime` (a verification service) go
    to it in batches of its ``batch_size``; they use no local sandbox, so
    ``max_concurrency`` does not count them (the runtime bounds its own requests).
    """
    limit = max_concurrency or default_concurrency()
    if limit < 1:
        raise SpecError("max_concurrency", f"must be at least 1, got {limit}")
    collector = Collector(jobs, progress)
    delegated: dict[int, tuple[DelegatingRuntime[Job], list[list[int]]]] = {}
    local: list[list[int]] = []
    for indices in collector.groups.values():
        runtime = jobs[indices[0]].verifier.runtime
        if delegates(runtime):
            delegated.setdefault(id(runtime), (runtime, []))[1].append(indices)
        else:
            local.append(indices)
    semaphore = asyncio.Semaphore(limit)

    async def one(indices: list[int]) -> None:
        collector.deliver(indices, await verify_one(jobs[indices[0]], cache, semaphore))

    async def remote(runtime: DelegatingRuntime[Job], groups: list[list[int]]) -> None:
        todo = []
        for group in groups:
            key = jobs[group[0]].result_key(cache) if cache is not None else ""
            hit = cache.get(key) if cache is not None else None
            if hit is not None:
                collector.deliver(group, hit)
            else:
                todo.append((group, key))
        size = max(1, runtime.batch_size)
        chunks = [todo[n : n + size] for n in range(0, len(todo), size)]
        await asyncio.gather(*(remote_chunk(runtime, chunk) for chunk in chunks))

    async def remote_chunk(
        runtime: DelegatingRuntime[Job], chunk: list[tuple[list[int], str]]
    ) -> None:
        batch = [jobs[group[0]] for group, _ in chunk]
        started = time.perf_counter()
        try:
            found = await runtime.verify_jobs(batch)
            if len(found) != len(batch):
                raise RuntimeError(f"{len(found)} results for {len(batch)} jobs")
        except SpecError:
            raise
        except Exception as err:
            log.exception("runtime %s failed a batch", runtime.name)
            elapsed = time.perf_counter() - started
            found = [infra_result(job, f"{type(err).__name__}: {err}", elapsed) for job in batch]
        for (group, key), result in zip(chunk, found, strict=True):
            if cache is not None:
                cache.put(key, result)
            collector.deliver(group, result)

    await asyncio.gather(
        *(one(indices) for indices in local),
        *(remote(runtime, groups) for runtime, groups in delegated.values()),
    )
    return collector.results()


def item_fields(item: Any, index: int) -> Mapping[str, Any]:
    """The fields of one batch item (a mapping or an object with attributes)."""
    if isinstance(item, Mapping):
        return item
    if hasattr(item, "model_dump"):
        return dict(item.model_dump())
    raise SpecError(
        f"items[{index}]",
        f"expected a dict with language, completion and tests, got {type(item).__name__}",
    )


def require(fields: Mapping[str, Any], name: str, index: int) -> Any:
    """A required field of a batch item."""
    if name not in fields or fields[name] is None:
        raise SpecError(f"items[{index}].{name}", "missing")
    return fields[name]
