"""Generate, verify, record: ``verifiers eval``.

Generation runs in a worker thread, a batch of prompts at a time; each batch's completions
are verified as soon as they arrive (``ascore_batch``, with the engine's concurrency bound)
while the next batch is generated. Every completion and its full :class:`~verifiers.Result`
go to a JSON-lines file, one row per sample, in the order results arrive.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Any

import verifiers
from verifiers import jsonio
from verifiers.eval.backends import Backend, Sampling, template_id
from verifiers.eval.passk import pass_at_ks
from verifiers.eval.problems import Problem
from verifiers.results import Result
from verifiers.rows import read_rows

#: Failure categories of the breakdown, by status.
CATEGORIES: dict[str, str] = {
    "passed": "passed",
    "no_code": "no code",
    "syntax_error": "syntax",
    "compile_error": "compile",
    "runtime_error": "runtime",
    "failed": "wrong answer",
    "timeout": "timeout",
    "memory_limit": "limits",
    "output_limit": "limits",
    "sandbox_error": "sandbox error",
}
CATEGORY_ORDER = (
    "passed",
    "wrong answer",
    "no code",
    "syntax",
    "compile",
    "runtime",
    "timeout",
    "limits",
    "sandbox error",
)


@dataclass(frozen=True)
class GroupSummary:
    """pass@k and the failure breakdown of one dataset and language."""

    dataset: str
    language: str
    problems: int
    samples: int
    infra_errors: int
    pass_at_k: dict[int, float]
    breakdown: dict[str, int]


def _verdicts(rows: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], dict[str, list[str]]]:
    """Statuses by (dataset, language), then by task."""
    out: dict[tuple[str, str], dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for row in rows:
        out[(row["dataset"], row["language"])][row["task_id"]].append(row["result"]["status"])
    return out


def counts(statuses: Sequence[str]) -> tuple[int, int]:
    """(n, c) of one problem; samples our machinery failed on are not counted against it."""
    n = sum(s != "sandbox_error" for s in statuses)
    return n, sum(s == "passed" for s in statuses)


def summarize(rows: Iterable[Mapping[str, Any]], ks: Sequence[int]) -> list[GroupSummary]:
    """pass@k (unbiased, over problems) and the breakdown per dataset and language.

    pass@k is computed for the ``k`` every problem has enough samples for; samples with a
    ``sandbox_error`` are left out of ``n`` (an infrastructure fault is not a failure).
    """
    groups = []
    for (dataset, language), tasks in sorted(_verdicts(rows).items()):
        per_task = {t: counts(s) for t, s in tasks.items()}
        usable = {t: nc for t, nc in per_task.items() if nc[0] > 0}
        statuses = [s for ss in tasks.values() for s in ss]
        breakdown = Counter(CATEGORIES.get(s, s) for s in statuses)
        groups.append(
            GroupSummary(
                dataset=dataset,
                language=language,
                problems=len(tasks),
                samples=len(statuses),
                infra_errors=breakdown.get("sandbox error", 0),
                pass_at_k=pass_at_ks(usable, ks),
                breakdown={c: breakdown[c] for c in CATEGORY_ORDER if breakdown.get(c)},
            )
        )
    return groups


@dataclass(frozen=True)
class EvalRun:
    """What ``evaluate`` did."""

    out: Path
    rows: int
    generate_s: float
    verify_s: float
    wall_s: float
    summary: list[GroupSummary]


def evaluate(
    problems: Sequence[Problem],
    backend: Backend,
    sampling: Sampling,
    out: Path,
    *,
    ks: Sequence[int] = (1,),
    batch_size: int = 8,
    max_concurrency: int | None = None,
    limits: Mapping[str, Any] | None = None,
    runtime: Any = None,
    progress: Callable[[int, int], None] | None = None,
) -> EvalRun:
    """Generate ``sampling.n`` completions per problem, verify them as they arrive, record.

    Args:
        problems: From :func:`~verifiers.eval.problems.load_problems`.
        backend: From :func:`~verifiers.eval.backends.make_backend`.
        sampling: Sampling parameters.
        out: The JSON-lines file to write (replaced).
        ks: The k of pass@k.
        batch_size: Prompts per generation batch.
        max_concurrency: Verifications at once (default: one per core).
        limits: Limits of every verification.
        runtime: Runtime of every verification.
        progress: Called with (samples verified, samples in all).
    """
    if batch_size < 1:
        raise verifiers.SpecError("batch_size", f"expected a positive number, got {batch_size}")
    return asyncio.run(
        _evaluate(
            problems,
            backend,
            sampling,
            out,
            ks,
            batch_size,
            max_concurrency,
            limits,
            runtime,
            progress,
        )
    )


async def _evaluate(
    problems: Sequence[Problem],
    backend: Backend,
    sampling: Sampling,
    out: Path,
    ks: Sequence[int],
    batch_size: int,
    max_concurrency: int | None,
    limits: Mapping[str, Any] | None,
    runtime: Any,
    progress: Callable[[int, int], None] | None,
) -> EvalRun:
    started = time.perf_counter()
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[list[Problem], list[list[str]]] | BaseException | None] = (
        asyncio.Queue()
    )
    generate_s = 0.0

    def produce() -> None:
        nonlocal generate_s
        try:
            for start in range(0, len(problems), batch_size):
                batch = list(problems[start : start + batch_size])
                t = time.perf_counter()
                completions = backend.generate([p.messages for p in batch], sampling)
                generate_s += time.perf_counter() - t
                if len(completions) != len(batch):
                    raise RuntimeError(f"{backend.name} answered {len(completions)} prompts")
                loop.call_soon_threadsafe(queue.put_nowait, (batch, completions))
        except BaseException as err:  # reported to the caller, not lost in the thread
            loop.call_soon_threadsafe(queue.put_nowait, err)
            return
        loop.call_soon_threadsafe(queue.put_nowait, None)

    meta = {
        "model": backend.model,
        "backend": backend.name,
        "sampling": {**asdict(sampling), "stop": list(sampling.stop)},
    }
    total = len(problems) * sampling.n
    done = 0
    verify_s = 0.0
    rows: list[dict[str, Any]] = []
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as sink:

        async def verify(batch: list[Problem], completions: list[list[str]]) -> None:
            nonlocal done, verify_s
            items = [
                {"language": p.language, "completion": c, "tests": p.tests}
                for p, cs in zip(batch, completions, strict=True)
                for c in cs
            ]
            t = time.perf_counter()
            try:
                results = await verifiers.ascore_batch(
                    items, max_concurrency=max_concurrency, limits=limits, runtime=runtime
                )
            except verifiers.SpecError as err:
                # A malformed problem: say which (its tests are the dataset's, not the model's).
                raise verifiers.SpecError(f"{batch[0].dataset}.{err.field}", err.problem) from None
            verify_s += time.perf_counter() - t
            it = iter(results)
            # The template is known once the backend has loaded its model.
            row_meta = {**meta, "template": template_id(backend.template)}
            for p, cs in zip(batch, completions, strict=True):
                for j, c in enumerate(cs):
                    _write(sink, rows, p, j, c, next(it), row_meta)
            done += len(items)
            if progress is not None:
                progress(done, total)

        thread = threading.Thread(target=produce, name="verifiers-eval-generate", daemon=True)
        thread.start()
        tasks: list[asyncio.Task[None]] = []
        try:
            while True:
                item = await queue.get()
                if item is None:
                    break
                if isinstance(item, BaseException):
                    raise item
                tasks.append(asyncio.ensure_future(verify(*item)))
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()
            thread.join(timeout=1)
    return EvalRun(
        out=out,
        rows=len(rows),
        generate_s=generate_s,
        verify_s=verify_s,
        wall_s=time.perf_counter() - started,
        summary=summarize(rows, ks),
    )


def _write(
    sink: IO[str],
    rows: list[dict[str, Any]],
    problem: Problem,
    sample: int,
    completion: str,
    result: Result,
    meta: Mapping[str, Any],
) -> None:
    row = {
        "task_id": problem.task_id,
        "dataset": problem.dataset,
        "language": problem.language,
        "sample": sample,
        "completion": completion,
        "result": result.model_dump(mode="json"),
        **meta,
    }
    sink.write(jsonio.dumps(row, ensure_ascii=False) + "\n")
    sink.flush()
    rows.append({k: row[k] for k in ("task_id", "dataset", "language", "result")})


__all__ = [
    "CATEGORIES",
    "CATEGORY_ORDER",
    "EvalRun",
    "GroupSummary",
    "counts",
    "evaluate",
    "read_rows",
    "summarize",
]
