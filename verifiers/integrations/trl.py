"""TRL reward functions backed by verifiers (``GRPOTrainer(reward_funcs=[...])``).

    from verifiers.integrations.trl import reward_function
    trainer = GRPOTrainer(model=..., reward_funcs=[reward_function("python", tests_column="tests")],
                          train_dataset=dataset, ...)

The dataset needs a column with each problem's tests (any format :func:`verifiers.parse_tests`
recognises). The reward function verifies the whole batch concurrently and returns one reward
per completion: the verifier's score, or ``None`` for an infrastructure fault (TRL then
ignores that sample instead of punishing the model); a row whose tests are malformed gets
``None`` too, with an error in the log. Where the installed TRL offers it, the share of each
status among the verified samples (``verifiers/status_<name>``), the share of all samples
that were infrastructure faults (``verifiers/infra_error``: our machinery) and malformed
tests (``verifiers/spec_error``: bad data), and the mean tests run and reruns per sample are
logged as metrics, and the status of each sample (``spec_error`` for a malformed row) goes to
the completions table.
TRL is not imported by this module: it only follows TRL's calling convention.

``executor="ray"`` (or a :class:`~verifiers.executors.RayExecutor`) verifies each batch on a
Ray cluster instead of in the trainer's process (see ``docs/scaling.md``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from verifiers._async import run_sync
from verifiers.api import prepare_jobs
from verifiers.core import Job
from verifiers.errors import SpecError
from verifiers.executors import ExecutorArg, resolve_executor
from verifiers.results import Result, Status
from verifiers.scoring import Policy

log = logging.getLogger("verifiers.integrations.trl")

RewardFunc = Callable[..., list[float | None]]


def completion_text(completion: Any) -> str:
    """The text of a completion: a string, or the last assistant message of a conversation."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Sequence) and completion:
        messages = [m for m in completion if isinstance(m, dict)]
        assistant = [m for m in messages if m.get("role") == "assistant"] or messages
        content = assistant[-1].get("content", "") if assistant else ""
        if isinstance(content, list):  # multimodal parts
            return "".join(p.get("text", "") for p in content if isinstance(p, dict))
        return str(content)
    return ""


def reward_function(
    language: str = "python",
    tests_column: str = "tests",
    policy: str | Policy | None = None,
    *,
    language_column: str | None = None,
    max_tests: int | None = None,
    max_concurrency: int | None = None,
    runtime: Any = None,
    executor: ExecutorArg = None,
    **limits: Any,
) -> RewardFunc:
    """A reward function for TRL's ``GRPOTrainer``.

    Args:
        language: Language of every completion (unless ``language_column`` is given).
        tests_column: Dataset column with each problem's tests.
        policy: Scoring policy (``binary`` by default).
        language_column: Dataset column with a language per problem.
        max_tests: Run at most this many tests per problem.
        max_concurrency: Verifications at once (default: one per core).
        runtime: Runtime name or instance (default ``local``).
        executor: Where each batch runs: ``None``/``"local"`` (this process), ``"ray"``,
            a config mapping or an :class:`~verifiers.executors.Executor`. With Ray,
            ``max_concurrency`` counts verifications per worker.
        **limits: :class:`~verifiers.Limits` fields (``timeout_s=2``, ``memory_mb=512``, ...).

    Returns:
        ``reward(prompts, completions, **columns) -> list[float | None]``.

    Raises:
        SpecError: ``executor`` is not a known name, mapping or executor.
    """
    runner = resolve_executor(executor)

    def reward(
        prompts: Sequence[Any] | None = None,
        completions: Sequence[Any] | None = None,
        **kwargs: Any,
    ) -> list[float | None]:
        completions = list(completions or [])
        if tests_column not in kwargs:
            raise SpecError(
                tests_column,
                f"the dataset has no {tests_column!r} column for the "
                f"tests (columns: {sorted(k for k in kwargs if not k.startswith('log'))})",
            )
        tests = kwargs[tests_column]
        languages = kwargs[language_column] if language_column else [language] * len(completions)
        jobs: list[Job] = []
        rewards: list[float | None] = [None] * len(completions)
        slots: list[int] = []
        for n, completion in enumerate(completions):
            item = {
                "language": languages[n],
                "completion": completion_text(completion),
                "tests": tests[n],
            }
            try:
                jobs += prepare_jobs([item], policy, limits or None, runtime, None, max_tests)
                slots.append(n)
            except SpecError as error:
                log.error("row %d: malformed tests, no reward: %s", n, error)
        results = run_sync(runner.run(jobs, max_concurrency=max_concurrency))
        for n, result in zip(slots, results, strict=True):
            rewards[n] = None if result.infra_error else result.score
        _log(kwargs, results, slots, len(completions))
        return rewards

    reward.__name__ = f"verifiers_{language_column or language}"
    return reward


def _log(kwargs: dict[str, Any], results: list[Result], slots: list[int], count: int) -> None:
    log_metric = kwargs.get("log_metric")
    if callable(log_metric) and count:
        if results:
            for status in Status:
                share = sum(r.status is status for r in results) / len(results)
                log_metric(f"verifiers/status_{status.value}", share)
            tests_run = sum(sum(not t.not_run for t in r.tests) for r in results)
            log_metric("verifiers/tests_run", tests_run / len(results))
            log_metric(
                "verifiers/reruns", sum(t.rerun for r in results for t in r.tests) / len(results)
            )
        log_metric("verifiers/infra_error", sum(r.infra_error for r in results) / count)
        log_metric("verifiers/spec_error", (count - len(results)) / count)
    log_extra = kwargs.get("log_extra")
    if callable(log_extra):
        statuses = ["spec_error"] * count
        for n, result in zip(slots, results, strict=True):
            statuses[n] = result.status.value
        log_extra("verifiers_status", statuses)
