"""veRL reward functions backed by verifiers.

Point veRL at this file::

    reward.custom_reward_function.path=$(verifiers integrations verl-path)
    reward.custom_reward_function.name=compute_score          # naive reward manager
    reward.custom_reward_function.name=compute_score_batch    # batch reward manager
    reward.custom_reward_function.name=compute_score_async    # the async reward loop

(older veRL releases read the top-level ``custom_reward_function.path`` / ``.name``).
Options come from ``extra_info`` (per sample), then from
``custom_reward_function.reward_kwargs`` (keyword arguments), then from the data:

* ``language``: inferred from ``data_source`` (``humaneval_x_go`` is Go, ``spider`` SQL,
  ...) and from the ground truth (a ``database`` means SQL), else Python;
* ``policy`` (default ``binary``), ``max_tests``, ``runtime``, ``max_concurrency``;
* ``executor`` (keyword argument only): where the batch runs, ``local`` (default), ``ray``,
  or a mapping such as ``{"type": "ray", "address": "auto", "num_workers": 64}``, which a
  Hydra config can hold; the workers are started once and reused by every step (see
  ``docs/scaling.md``). Inside veRL, Ray is already initialised and its cluster is used
  (the workers take ``CPU`` resources from it);
* limits: ``timeout_s``, ``memory_mb`` and the other :class:`~verifiers.Limits` fields, or a
  ``limits`` dict.

Ground truths of Eurus-2-RL-Data, PRIME, APPS, TACO and CodeContests (JSON strings of
``inputs``/``outputs``, with ``fn_name`` when call-based) work as they are. Each result is a
dict of numbers veRL logs: ``score`` (the reward), ``pass_rate``, ``format``, ``passed``,
``total``, ``tests_run``, ``reruns``, ``duration_s``, ``infra_error``, ``spec_error`` and one
0/1 ``status_<name>`` per status. An infrastructure fault (our machinery) scores 0 with
``infra_error = 1`` (and a warning in the log), never as a failure of the model; a malformed
ground truth (bad data) scores 0 with ``spec_error = 1`` and ``infra_error = 0`` and an error
in the log, so one bad row never stops a training step and never looks like an outage.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from typing import Any

from verifiers._async import on_engine, run_sync
from verifiers.api import prepare_jobs
from verifiers.core import Job
from verifiers.errors import SpecError
from verifiers.executors import resolve_executor
from verifiers.limits import Limits
from verifiers.results import Result, Status

log = logging.getLogger("verifiers.integrations.verl")

_OPTION_KEYS = ("language", "policy", "max_tests", "runtime", "compare")
_LIMIT_KEYS = tuple(Limits.model_fields)
#: data_source fragments that name a language (checked in order).
_SOURCES = (
    ("humaneval_x_js", "javascript"),
    ("humaneval-x-js", "javascript"),
    ("javascript", "javascript"),
    ("humaneval_x_go", "go"),
    ("humaneval-x-go", "go"),
    ("golang", "go"),
    ("humaneval_x_rust", "rust"),
    ("humaneval-x-rust", "rust"),
    ("rust", "rust"),
    ("humaneval_x_cpp", "cpp"),
    ("humaneval-x-cpp", "cpp"),
    ("humaneval_x_java", "java"),
    ("humaneval-x-java", "java"),
    ("spider", "sql"),
    ("bird", "sql"),
    ("sql", "sql"),
    ("regex", "regex"),
    ("nl_rx", "regex"),
)


def infer_language(data_source: str, ground_truth: Any) -> str:
    """The language a sample's data source and ground truth imply (default Python)."""
    source = str(data_source or "").lower()
    for fragment, language in _SOURCES:
        if fragment in source:
            return language
    if isinstance(ground_truth, Mapping):
        if "database" in ground_truth or "databases" in ground_truth:
            return "sql"
        if "positive" in ground_truth or "negative" in ground_truth:
            return "regex"
    return "python"


def _options(
    data_source: str, ground_truth: Any, extra_info: Any, kwargs: Mapping[str, Any]
) -> dict[str, Any]:
    info = extra_info if isinstance(extra_info, Mapping) else {}
    merged: dict[str, Any] = {k: kwargs[k] for k in kwargs if k in _OPTION_KEYS + _LIMIT_KEYS}
    if isinstance(kwargs.get("limits"), Mapping):
        merged.update(kwargs["limits"])
    merged.update({k: info[k] for k in info if k in _OPTION_KEYS + _LIMIT_KEYS})
    if isinstance(info.get("limits"), Mapping):
        merged.update(info["limits"])
    limits = {k: merged.pop(k) for k in list(merged) if k in _LIMIT_KEYS}
    item = {k: v for k, v in merged.items() if v is not None}
    item.setdefault("language", infer_language(data_source, ground_truth))
    if limits:
        item["limits"] = limits
    return item


def to_metrics(result: Result) -> dict[str, float]:
    """The numbers veRL logs for a result; ``score`` is the reward."""
    metrics = {
        "score": result.score,
        "pass_rate": result.pass_rate,
        "format": float(result.format_ok),
        "passed": float(result.passed),
        "total": float(result.total),
        "duration_s": result.duration_s,
        "tests_run": float(sum(not t.not_run for t in result.tests)),
        "reruns": float(sum(t.rerun for t in result.tests)),
        "infra_error": float(result.infra_error),
        "spec_error": 0.0,
    }
    for status in Status:
        metrics[f"status_{status.value}"] = float(result.status is status)
    if result.infra_error:
        log.warning(
            "reward infrastructure fault (scored 0, not the model's fault): %s",
            result.feedback[:300],
        )
    return metrics


def _spec_error(error: SpecError) -> dict[str, float]:
    log.error("malformed ground truth (scored 0, skipped): %s", error)
    metrics = {
        "score": 0.0,
        "pass_rate": 0.0,
        "format": 0.0,
        "passed": 0.0,
        "total": 0.0,
        "duration_s": 0.0,
        "tests_run": 0.0,
        "reruns": 0.0,
        # Bad data, not an outage of our machinery: dashboards keep the two apart.
        "infra_error": 0.0,
        "spec_error": 1.0,
    }
    for status in Status:
        metrics[f"status_{status.value}"] = 0.0
    return metrics


def _item(
    data_source: str, solution: str, ground_truth: Any, extra_info: Any, kwargs: Mapping[str, Any]
) -> dict[str, Any]:
    options = _options(data_source, ground_truth, extra_info, kwargs)
    return {**options, "completion": solution or "", "tests": ground_truth}


def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: Any = None,
    **kwargs: Any,
) -> dict[str, float]:
    """The per-sample reward function (veRL's naive reward manager)."""
    return compute_score_batch(
        [data_source], [solution_str], [ground_truth], [extra_info], **kwargs
    )[0]


def compute_score_batch(
    data_sources: Sequence[str],
    solution_strs: Sequence[str],
    ground_truths: Sequence[Any],
    extra_infos: Sequence[Any] | None = None,
    **kwargs: Any,
) -> list[dict[str, float]]:
    """The batch reward function: the whole batch verified concurrently, in order."""
    return run_sync(
        compute_score_batch_async(data_sources, solution_strs, ground_truths, extra_infos, **kwargs)
    )


async def compute_score_async(
    data_source: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: Any = None,
    **kwargs: Any,
) -> dict[str, float]:
    """The async reward function (veRL's reward loop awaits it per sample)."""
    results = await compute_score_batch_async(
        [data_source], [solution_str], [ground_truth], [extra_info], **kwargs
    )
    return results[0]


async def compute_score_batch_async(
    data_sources: Sequence[str],
    solution_strs: Sequence[str],
    ground_truths: Sequence[Any],
    extra_infos: Sequence[Any] | None = None,
    **kwargs: Any,
) -> list[dict[str, float]]:
    """The batch reward function for async callers."""
    count = len(solution_strs)
    if not (len(data_sources) == len(ground_truths) == count):
        raise ValueError(
            f"data_sources, solution_strs and ground_truths differ in length "
            f"({len(data_sources)}, {count}, {len(ground_truths)})"
        )
    infos = list(extra_infos) if extra_infos is not None else [None] * count
    executor = resolve_executor(kwargs.get("executor"))
    out: list[dict[str, float]] = []
    jobs: list[Job] = []
    positions: list[int] = []
    for n in range(count):
        item = _item(data_sources[n], solution_strs[n], ground_truths[n], infos[n], kwargs)
        try:
            # Validated row by row: one malformed row must not stop the batch.
            jobs += prepare_jobs([item], None, None, kwargs.get("runtime"), None, None)
            positions.append(n)
            out.append({})
        except SpecError as error:
            out.append(_spec_error(SpecError(f"rows[{n}].{error.field}", error.problem)))
    concurrency = kwargs.get("max_concurrency") or int(os.environ.get("VERIFIERS_CONCURRENCY", "0"))
    results = await on_engine(executor.run(jobs, max_concurrency=concurrency or None))
    for n, result in zip(positions, results, strict=True):
        out[n] = to_metrics(result)
    return out
