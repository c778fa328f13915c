"""The orchestration entry points: score, ascore, score_batch, ascore_batch, get_verifier."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from verifiers import registry
from verifiers._async import on_engine, run_shutdown_hooks, run_sync
from verifiers.core import CodeVerifier, Job, make_options, with_overrides
from verifiers.engine import Progress, item_fields, require
from verifiers.errors import SpecError
from verifiers.executors import Executor, ExecutorArg, resolve_executor
from verifiers.extraction import MAX_COMPLETION_CHARS, Mode
from verifiers.limits import Limits
from verifiers.protocols import DelegatingRuntime, Runtime
from verifiers.result_cache import ResultCache
from verifiers.results import Result
from verifiers.scoring import Policy
from verifiers.specs import CompareOptions

AnyRuntime = Runtime | DelegatingRuntime[Job]
RuntimeArg = str | AnyRuntime | None
LimitsArg = Limits | Mapping[str, Any] | None
CompareArg = CompareOptions | Mapping[str, Any] | None
PolicyArg = str | Policy | None
#: The options a batch item may set for itself, over the batch's.
ITEM_OPTIONS = (
    "policy",
    "limits",
    "compare",
    "max_tests",
    "extraction",
    "max_completion_chars",
    "stop_on_failure",
)


def resolve_runtime(runtime: RuntimeArg) -> AnyRuntime:
    """A runtime instance from a name, an instance, or None (the default: ``local``)."""
    if runtime is None:
        return registry.get_runtime("local")  # type: ignore[no-any-return]
    if isinstance(runtime, str):
        return registry.get_runtime(runtime)  # type: ignore[no-any-return]
    if isinstance(runtime, Runtime | DelegatingRuntime):
        return runtime
    raise SpecError("runtime", f"expected a runtime name or instance, got {type(runtime).__name__}")


def get_verifier(
    language: str,
    *,
    runtime: RuntimeArg = None,
    policy: PolicyArg = None,
    limits: LimitsArg = None,
    compare: CompareArg = None,
    max_tests: int | None = None,
    extraction: Mode = "auto",
    max_completion_chars: int = MAX_COMPLETION_CHARS,
    stop_on_failure: bool | None = None,
) -> CodeVerifier:
    """A verifier for one language on one runtime (satisfies :class:`~verifiers.Verifier`).

    Args:
        language: Language name or alias (``python``, ``py``).
        runtime: Runtime name or instance (default: ``local``).
        policy: Default scoring policy.
        limits: Default resource limits.
        compare: Default output comparison options.
        max_tests: Default cap on the number of tests run.
        extraction: Default extraction mode (see :func:`score`).
        max_completion_chars: Default size cap of completions (see :func:`score`).
        stop_on_failure: Default early stop (see :func:`score`).

    Raises:
        UnknownNameError: The language or runtime is not registered.
    """
    return CodeVerifier(
        registry.get_language(language),
        resolve_runtime(runtime),
        make_options(
            policy,
            limits,
            compare,
            max_tests,
            extraction=extraction,
            max_completion_chars=max_completion_chars,
            stop_on_failure=stop_on_failure,
        ),
    )


async def ascore(
    language: str,
    completion: str,
    tests: Any,
    *,
    policy: PolicyArg = None,
    limits: LimitsArg = None,
    runtime: RuntimeArg = None,
    compare: CompareArg = None,
    max_tests: int | None = None,
    select: Literal["last", "first"] = "last",
    cache: ResultCache | None = None,
    extraction: Mode = "auto",
    max_completion_chars: int = MAX_COMPLETION_CHARS,
    stop_on_failure: bool | None = None,
) -> Result:
    """Verify one completion against tests (async). See :func:`score`."""
    verifier = CodeVerifier(
        registry.get_language(language),
        resolve_runtime(runtime),
        make_options(
            policy,
            limits,
            compare,
            max_tests,
            select,
            extraction=extraction,
            max_completion_chars=max_completion_chars,
            stop_on_failure=stop_on_failure,
        ),
    )
    return await verifier.ascore(completion, tests, cache=cache)


def score(
    language: str,
    completion: str,
    tests: Any,
    *,
    policy: PolicyArg = None,
    limits: LimitsArg = None,
    runtime: RuntimeArg = None,
    compare: CompareArg = None,
    max_tests: int | None = None,
    select: Literal["last", "first"] = "last",
    cache: ResultCache | None = None,
    extraction: Mode = "auto",
    max_completion_chars: int = MAX_COMPLETION_CHARS,
    stop_on_failure: bool | None = None,
) -> Result:
    """Verify one completion against tests.

    Args:
        language: Language name or alias.
        completion: Raw model output (markdown with a code block) or bare code.
        tests: Test spec: a dict, a list, a JSON string, or a spec model
            (see :func:`verifiers.specs.parse_tests`).
        policy: ``binary`` (default), ``partial``, ``layered``, ``penalized``,
            ``length_penalty``, or a function of :class:`~verifiers.scoring.Tally`.
        limits: :class:`~verifiers.Limits` or a dict of its fields.
        runtime: Runtime name or instance (default ``local``).
        compare: Output comparison options (override the spec's).
        max_tests: Run at most this many tests, chosen deterministically.
        select: Which fenced block to use when there are several (``last``/``first``).
        cache: A :class:`~verifiers.ResultCache` to answer from, and to fill.
        extraction: How code is found when there is no usable fenced block: ``auto``
            (the default: code inside prose, the prose dropped), ``from_def`` (from the
            first definition to the end) or ``whole`` (the whole response). See
            ``docs/extraction.md``.
        max_completion_chars: Longer completions are ``no_code`` at once (default
            1,000,000).
        stop_on_failure: End the program's run at its first failing test, the rest
            ``not_run``; None (the default) lets the policy decide: ``binary`` stops,
            the others run on within the time budget (``Limits.budget_timeouts``).

    Returns:
        The typed :class:`~verifiers.Result`. Failures of the code are statuses.

    Raises:
        SpecError: The tests or an option are malformed (the message names the field).
        UnknownNameError: Unknown language or runtime.
        RuntimeUnavailableError: The runtime cannot run on this host.
    """
    return run_sync(
        ascore(
            language,
            completion,
            tests,
            policy=policy,
            limits=limits,
            runtime=runtime,
            compare=compare,
            max_tests=max_tests,
            select=select,
            cache=cache,
            extraction=extraction,
            max_completion_chars=max_completion_chars,
            stop_on_failure=stop_on_failure,
        )
    )


def prepare_jobs(
    items: Sequence[Any],
    policy: PolicyArg,
    limits: LimitsArg,
    runtime: RuntimeArg,
    compare: CompareArg,
    max_tests: int | None,
) -> list[Job]:
    """Validate batch items into jobs (see :func:`score_batch`).

    Raises:
        SpecError: An item is malformed; the message names it.
    """
    base = make_options(policy, limits, compare, max_tests)
    default_runtime = resolve_runtime(runtime)
    verifiers: dict[tuple[str, int], CodeVerifier] = {}
    parsed: dict[int, Any] = {}
    jobs = []
    for index, item in enumerate(items):
        fields = item_fields(item, index)
        language = require(fields, "language", index)
        completion = require(fields, "completion", index)
        tests = require(fields, "tests", index)
        if not isinstance(completion, str):
            raise SpecError(
                f"items[{index}].completion", f"expected a string, got {type(completion).__name__}"
            )
        item_runtime = (
            resolve_runtime(fields["runtime"]) if fields.get("runtime") else default_runtime
        )
        key = (registry.canonical_language(str(language)), id(item_runtime))
        verifier = verifiers.get(key)
        if verifier is None:
            verifier = verifiers[key] = CodeVerifier(registry.get_language(key[0]), item_runtime)
        options = base
        overrides = {k: fields[k] for k in ITEM_OPTIONS if fields.get(k) is not None}
        if overrides:
            try:
                options = with_overrides(base, overrides)
            except SpecError as err:
                raise SpecError(f"items[{index}].{err.field}", err.problem) from None
        # GRPO groups share one tests object: parse it once.
        spec = parsed.get(id(tests)) if not isinstance(tests, str) else None
        if spec is None:
            try:
                spec = verifier.parse_tests(tests)
            except SpecError as err:
                raise SpecError(f"items[{index}].{err.field}", err.problem) from None
            if not isinstance(tests, str):
                parsed[id(tests)] = spec
        try:
            jobs.append(Job(verifier, completion, spec, options))
        except SpecError as err:  # the runtime cannot take it (a remote one, say)
            raise SpecError(f"items[{index}].{err.field}", err.problem) from None
    return jobs


async def ascore_batch(
    items: Sequence[Any],
    *,
    max_concurrency: int | None = None,
    policy: PolicyArg = None,
    limits: LimitsArg = None,
    runtime: RuntimeArg = None,
    compare: CompareArg = None,
    max_tests: int | None = None,
    progress: Progress | None = None,
    cache: ResultCache | None = None,
    executor: ExecutorArg = None,
) -> list[Result]:
    """Verify many completions concurrently (async). See :func:`score_batch`."""
    runner, jobs = _batch(executor, items, policy, limits, runtime, compare, max_tests)
    return await on_engine(
        runner.run(jobs, max_concurrency=max_concurrency, progress=progress, cache=cache)
    )


def _batch(
    executor: ExecutorArg,
    items: Sequence[Any],
    policy: PolicyArg,
    limits: LimitsArg,
    runtime: RuntimeArg,
    compare: CompareArg,
    max_tests: int | None,
) -> tuple[Executor, list[Job]]:
    """The executor and the validated jobs of a batch (in the caller's thread, before any run)."""
    runner = resolve_executor(executor)
    jobs = prepare_jobs(items, policy, limits, runtime, compare, max_tests)
    runner.validate(jobs)
    return runner, jobs


def score_batch(
    items: Sequence[Any],
    *,
    max_concurrency: int | None = None,
    policy: PolicyArg = None,
    limits: LimitsArg = None,
    runtime: RuntimeArg = None,
    compare: CompareArg = None,
    max_tests: int | None = None,
    progress: Progress | None = None,
    cache: ResultCache | None = None,
    executor: ExecutorArg = None,
) -> list[Result]:
    """Verify many completions concurrently; results come back in input order.

    Args:
        items: Dicts (or models) with ``language``, ``completion`` and ``tests``, and
            optionally ``policy``, ``limits``, ``compare``, ``max_tests``, ``runtime``
            overriding the batch-wide values, and ``extraction``, ``max_completion_chars``,
            ``stop_on_failure`` (see :func:`score`).
        max_concurrency: Verifications at once (default: one per core).
        policy: Default scoring policy.
        limits: Default limits.
        runtime: Default runtime.
        compare: Default comparison options.
        max_tests: Default cap on tests per item.
        progress: Called with (done, total) as results arrive.
        cache: A :class:`~verifiers.ResultCache`: results it holds are not verified
            again (they come back with ``cached=True``), new ones are added.
        executor: Where the verifications run: ``None`` or ``"local"`` (this process),
            ``"ray"`` (a shared :class:`~verifiers.executors.RayExecutor`), a config
            mapping (``{"type": "ray", "num_workers": 8}``) or an
            :class:`~verifiers.executors.Executor` instance. With Ray,
            ``max_concurrency`` counts verifications per worker. See ``docs/scaling.md``.

    Returns:
        One result per item, in order. Identical items are verified once.

    Raises:
        SpecError: An item is malformed (nothing has run yet); the message names it.
        RuntimeUnavailableError: The executor cannot work here (Ray is not installed).
    """
    runner, jobs = _batch(executor, items, policy, limits, runtime, compare, max_tests)
    return run_sync(
        runner.run(jobs, max_concurrency=max_concurrency, progress=progress, cache=cache)
    )


def close_idle_sandboxes() -> None:
    """Stop the warm sandboxes kept between verifications (they also stop on their own).

    Runtimes keep a few sandboxes warm after a verification so that the next one skips
    starting a sandbox; idle ones stop after a while and when the interpreter exits. Call
    this to release them sooner, for example between the phases of a long job.
    """
    run_sync(run_shutdown_hooks())
