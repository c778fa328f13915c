"""The executor contract, and the executor of this process (the default)."""

from __future__ import annotations

from abc import ABC, abstractmethod

from verifiers._async import on_engine
from verifiers.core import Job
from verifiers.engine import Progress, run_jobs
from verifiers.result_cache import ResultCache
from verifiers.results import Result


class Executor(ABC):
    """Runs the jobs of a batch and returns their results in input order.

    Subclasses implement :meth:`run`; :meth:`validate` and :meth:`start` are optional hooks
    that the batch entry points call before anything runs.
    """

    name = "executor"

    def validate(self, jobs: list[Job]) -> None:  # noqa: B027 (optional hook)
        """Raise :class:`~verifiers.SpecError` if a job cannot run on this executor."""

    def start(self) -> None:  # noqa: B027 (optional hook)
        """Acquire what the executor needs (blocking); calling it again does nothing."""

    @abstractmethod
    async def run(
        self,
        jobs: list[Job],
        *,
        max_concurrency: int | None = None,
        progress: Progress | None = None,
        cache: ResultCache | None = None,
    ) -> list[Result]:
        """Verify ``jobs``; one result per job, in order, identical jobs verified once.

        Args:
            jobs: Validated jobs (see :func:`verifiers.api.prepare_jobs`).
            max_concurrency: Verifications at once (the executor says per what).
            progress: Called with (done, total) as results arrive.
            cache: Results it holds are not verified again; new ones are added.
        """


class LocalExecutor(Executor):
    """The engine of this process: bounded concurrency on the SDK's event loop."""

    name = "local"

    async def run(
        self,
        jobs: list[Job],
        *,
        max_concurrency: int | None = None,
        progress: Progress | None = None,
        cache: ResultCache | None = None,
    ) -> list[Result]:
        """Verify ``jobs`` here; ``max_concurrency`` counts verifications in this process."""
        return await on_engine(
            run_jobs(jobs, max_concurrency=max_concurrency, progress=progress, cache=cache)
        )
