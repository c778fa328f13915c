"""Batch execution: bounded concurrency, deduplication, input order, nothing lost.

Every item of a batch is validated before anything runs (a malformed spec
raises :class:`~verifiers.errors.SpecError` naming the item). Identical work
(same language, completion, tests and options) runs once and its result is
shared. A fault inside one verification becomes that item's ``sandbox_error``
result; it never fails the batch or drops a result.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from verifiers.errors import SpecError
from verifiers.languages.base import CodeVerifier, Options, spec_key
from verifiers.protocols import DelegatingRuntime
from verifiers.result_cache import ResultCache
from verifiers.results import Result, Status, TestResult
from verifiers.scoring import assemble, resolve_policy
from verifiers.specs import TestSpec

log = logging.getLogger("verifiers.engine")

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Job:
    """One validated item of a batch."""

    verifier: CodeVerifier
    completion: str
    spec: TestSpec
    options: Options

    def key(self) -> str:
        """Content hash of the work: equal keys give equal results."""
        h = hashlib.sha256()
        for part in (
            self.verifier.language.name,
            self.verifier.runtime.name,
            str(id(self.verifier.runtime)),
            self.completion,
            spec_key(self.spec),
            repr(self.options),
        ):
            h.update(part.encode("utf-8", errors="surrogatepass"))
            h.update(b"\0")
        return h.hexdigest()


def default_concurrency() -> int:
    """One verification per core."""
    return max(1, os.cpu_count() or 1)


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
    unique: dict[str, list[int]] = {}
    for index, job in enumerate(jobs):
        unique.setdefault(job.key(), []).append(index)
    delegated: dict[int, tuple[DelegatingRuntime, list[list[int]]]] = {}
    local: list[list[int]] = []
    for indices in unique.values():
        runtime = jobs[indices[0]].verifier.runtime
        if isinstance(runtime, DelegatingRuntime):
            # Before anything runs, as for every other malformed input.
            runtime.validate_job(jobs[indices[0]])
            delegated.setdefault(id(runtime), (runtime, []))[1].append(indices)
        else:
            local.append(indices)
    results: list[Result | None] = [None] * len(jobs)
    semaphore = asyncio.Semaphore(limit)
    done = 0

    def deliver(indices: list[int], result: Result) -> None:
        nonlocal done
        for index in indices:
            results[index] = result
        done += len(indices)
        if progress is not None:
            progress(done, len(jobs))

    async def one(indices: list[int]) -> None:
        job = jobs[indices[0]]
        key = cache.key(job) if cache is not None else ""
        result = cache.get(key) if cache is not None else None
        if result is None:
            async with semaphore:
                result = await _guarded(job)
            if cache is not None:
                cache.put(key, result)
        deliver(indices, result)

    async def remote(runtime: DelegatingRuntime, groups: list[list[int]]) -> None:
        keys = [cache.key(jobs[g[0]]) if cache is not None else "" for g in groups]
        todo = []
        for group, key in zip(groups, keys, strict=True):
            hit = cache.get(key) if cache is not None else None
            if hit is not None:
                deliver(group, hit)
            else:
                todo.append((group, key))
        size = max(1, runtime.batch_size)
        chunks = [todo[n : n + size] for n in range(0, len(todo), size)]
        await asyncio.gather(*(remote_chunk(runtime, chunk) for chunk in chunks))

    async def remote_chunk(runtime: DelegatingRuntime, chunk: list[tuple[list[int], str]]) -> None:
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
            deliver(group, result)

    await asyncio.gather(
        *(one(indices) for indices in local),
        *(remote(runtime, groups) for runtime, groups in delegated.values()),
    )
    assert all(r is not None for r in results)
    return results  # type: ignore[return-value]


async def _guarded(job: Job) -> Result:
    """Verify one job; an unexpected fault becomes a sandbox_error result, never an exception."""
    started = time.perf_counter()
    try:
        runtime = job.verifier.runtime
        if isinstance(runtime, DelegatingRuntime):
            [result] = await runtime.verify_jobs([job])
            return result
        return await job.verifier.verify(job.completion, job.spec, job.options)
    except SpecError:
        raise
    except Exception as err:
        log.exception("verification failed inside the SDK")
        return infra_result(job, f"{type(err).__name__}: {err}", time.perf_counter() - started)


def infra_result(job: Job, reason: str, duration_s: float = 0.0) -> Result:
    """A ``sandbox_error`` result for a job our machinery could not verify."""
    policy_name, policy = resolve_policy(job.options.policy)
    message = f"Infrastructure error (not the program's fault): {reason}"
    tests = [
        TestResult(index=i, status=Status.SANDBOX_ERROR, message=message)
        for i in range(len(job.spec))
    ]
    return assemble(
        tests=tests,
        stage_status=Status.SANDBOX_ERROR,
        stage_message=message,
        tests_available=len(job.spec),
        policy_name=policy_name,
        policy=policy,
        format_ok=False,
        code=None,
        language=job.verifier.language.name,
        runtime=job.verifier.runtime.name,
        duration_s=duration_s,
        completion_chars=len(job.completion),
    )


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
