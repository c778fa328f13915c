"""The verification pipeline: options, jobs, and the verifier that turns a completion into a Result.

extract code -> prepare -> syntax check (no process) -> code policy of languages that have
one (no process; a refused program is failed) -> build a program -> one sandbox
session: build step once, then each selected test -> the language judges each run -> the
scoring policy gives the reward. Where the syntax check is not the language's authority
(C and C++: a ``deferred`` issue), the build in the sandbox decides: a failed build is a
``syntax_error``, and a code policy's refusal waits for the build to pass; without a build
(SQL, regex: no engine reads an answer in this process) the run decides.

This module is the floor everything that runs verifications stands on: the engine (batches),
the executors, the API, the service and the integrations import it; it imports none of
them. A single verification goes through :func:`verify_one`, which the engine also uses for
every job of a batch, so there is one path from a completion to a result, and one place
(:func:`infra_result`) where a fault of our machinery becomes a ``sandbox_error`` result.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar, cast

from pydantic import BaseModel, ValidationError

from verifiers._async import on_engine, run_sync
from verifiers.build_cache import DEFAULT_CACHE, BuildCache
from verifiers.checkers import (
    ANSWER_VERDICTS,
    JUDGE_PREFIX,
    accepts_answer,
    answer_key,
    answer_step,
    blame_output,
    checker_outcome,
    failed_on_output,
    interactor_outcome,
    judge_args,
    judge_sources,
    program_executable,
)
from verifiers.errors import RuntimeUnavailableError, SandboxError, SpecError, UnknownNameError
from verifiers.extraction import MAX_COMPLETION_CHARS, MODES, Extraction, Mode, extract_for
from verifiers.jsonio import big_ints, check_depth
from verifiers.keys import SDK_VERSION, content_key, json_key
from verifiers.limits import MIB, Limits
from verifiers.parsing import SyntaxIssue
from verifiers.program import Check, Executable, ProcessResult, Program, ProgramTest, Step, resolve
from verifiers.protocols import (
    BuildAudit,
    CodeCheck,
    DelegatingRuntime,
    Language,
    Runtime,
    Session,
    TestOutcome,
    delegates,
)
from verifiers.registry import get_language
from verifiers.result_cache import UNCACHED, ResultCache
from verifiers.results import Result, Status, StepResult, TestResult, excerpt
from verifiers.scoring import (
    Policy,
    assemble,
    resolve_policy,
    select_tests,
    stops_at_first_failure,
)
from verifiers.specs import CompareOptions, JudgeProgram, StdioTests, TestSpec

log = logging.getLogger("verifiers")

#: Characters kept of each text field of a TestResult (inputs, outputs, stderr).
EXCERPT_CHARS = 600
#: Tests sent to the sandbox in one round trip.
TEST_BATCH = 64
#: Largest build artefact copied out of a sandbox for the build cache.
MAX_ARTEFACT_BYTES = 256 * 1024 * 1024
#: What an infrastructure fault says in results.
INFRA_PREFIX = "Infrastructure error (not the program's fault): "
#: A timed-out run whose main thread waited for a CPU this share of its wall time or more
#: ran on a saturated host: it was starved, not slow, and is run again.
SATURATED_WAIT_SHARE = 0.25
#: Tests of one program run again after a starved timeout (the first such ones).
MAX_RERUNS = 1

#: Called with a test's index and its outcome as each test is judged.
Observer = Callable[[int, TestOutcome], None]
M = TypeVar("M", bound=BaseModel)


# --- options ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Workspace:
    """Files a program starts with in its work directory, and files read back after its tests.

    SandboxFusion's ``files`` and ``fetch_files`` (the service's ``/run_code``). Paths are
    relative to the work directory (``fetch`` may also name a file under ``/tmp``); a file
    to fetch that is missing, not a regular file the program wrote, or over what is left
    of ``max_fetch_bytes`` is left out of ``fetched`` (and named in ``skipped``).

    Attributes:
        files: Contents by relative path, written before the program runs.
        fetch: Paths to read back after the tests.
        max_fetch_bytes: The most bytes read back in all.
        fetched: Filled after the tests: contents by path, as asked.
        skipped: Filled after the tests: the paths not read back, and why.
    """

    files: Mapping[str, bytes] = field(default_factory=dict)
    fetch: tuple[str, ...] = ()
    max_fetch_bytes: int = 16 * 1024 * 1024
    fetched: dict[str, bytes] = field(default_factory=dict, repr=False, compare=False)
    skipped: dict[str, str] = field(default_factory=dict, repr=False, compare=False)


@dataclass(frozen=True)
class Options:
    """Per-verification options (all explicit; no global state).

    Attributes:
        policy: Scoring policy name (``binary`` or ``partial``) or a callable.
        limits: Resource limits.
        compare: Output comparison options; overrides the spec's own.
        max_tests: Run at most this many tests (chosen deterministically).
        select: Which code block to use when there are several.
        extract: Pull the code out of the completion (the default). False when the
            completion is the code itself, as a code-execution service receives it: a
            fence or a ``<think>`` inside a string of the program must stay as it is.
        extraction: How code is found without a usable fenced block: ``auto`` (code
            inside prose), ``from_def`` or ``whole`` (see ``docs/extraction.md``).
        max_completion_chars: Longer completions are ``no_code`` without being read.
        stop_on_failure: End a program's run at its first failing test (the rest are
            ``not_run``); None lets the policy decide (``binary`` does). A run that goes on
            past failures has a time budget instead (``Limits.budget_s``).
        workspace: Files to give the program and to read back (the service's ``/run_code``).
    """

    policy: str | Policy | None = None
    limits: Limits = field(default_factory=Limits)
    compare: CompareOptions | None = None
    max_tests: int | None = None
    select: Literal["last", "first"] = "last"
    extract: bool = True
    extraction: Mode = "auto"
    max_completion_chars: int = MAX_COMPLETION_CHARS
    stop_on_failure: bool | None = None
    workspace: Workspace | None = None


def as_model(cls: type[M], value: Any, field_name: str) -> M | None:
    """``value`` as a ``cls`` model (a dict is validated); SpecError naming the field."""
    if value is None or isinstance(value, cls):
        return value
    if isinstance(value, Mapping):
        try:
            return cls.model_validate(dict(value))
        except ValidationError as err:
            first = err.errors()[0]
            loc = ".".join(str(p) for p in first["loc"])
            raise SpecError(f"{field_name}.{loc}" if loc else field_name, first["msg"]) from None
    raise SpecError(field_name, f"expected {cls.__name__} or a dict, got {type(value).__name__}")


def make_options(
    policy: str | Policy | None = None,
    limits: Limits | Mapping[str, Any] | None = None,
    compare: CompareOptions | Mapping[str, Any] | None = None,
    max_tests: int | None = None,
    select: str = "last",
    extract: bool = True,
    extraction: str = "auto",
    max_completion_chars: int = MAX_COMPLETION_CHARS,
    stop_on_failure: bool | None = None,
    workspace: Workspace | None = None,
) -> Options:
    """Validated :class:`Options`: dicts become models, every value is checked.

    Raises:
        SpecError: A value is malformed (the message names the field).
    """
    if max_tests is not None and (
        isinstance(max_tests, bool) or not isinstance(max_tests, int) or max_tests < 1
    ):
        raise SpecError("max_tests", f"expected a positive integer, got {max_tests!r}")
    if select not in ("last", "first"):
        raise SpecError("select", f"expected 'last' or 'first', got {select!r}")
    if not isinstance(extract, bool):
        raise SpecError("extract", f"expected true or false, got {extract!r}")
    if extraction not in MODES:
        raise SpecError("extraction", f"expected one of {', '.join(MODES)}, got {extraction!r}")
    if (
        isinstance(max_completion_chars, bool)
        or not isinstance(max_completion_chars, int)
        or max_completion_chars < 1
    ):
        raise SpecError(
            "max_completion_chars", f"expected a positive integer, got {max_completion_chars!r}"
        )
    if stop_on_failure is not None and not isinstance(stop_on_failure, bool):
        raise SpecError("stop_on_failure", f"expected true, false or null, got {stop_on_failure!r}")
    if workspace is not None and not isinstance(workspace, Workspace):
        raise SpecError("workspace", f"expected a Workspace, got {type(workspace).__name__}")
    resolve_policy(policy)
    return Options(
        policy=policy,
        limits=as_model(Limits, limits, "limits") or Limits(),
        compare=as_model(CompareOptions, compare, "compare"),
        max_tests=max_tests,
        select=select,  # type: ignore[arg-type]  # checked above
        extract=extract,
        extraction=extraction,  # type: ignore[arg-type]  # checked above
        max_completion_chars=max_completion_chars,
        stop_on_failure=stop_on_failure,
        workspace=workspace,
    )


def with_overrides(base: Options, overrides: Mapping[str, Any]) -> Options:
    """``base`` with some fields replaced (``None`` keeps the base value), validated."""
    unknown = set(overrides) - {f.name for f in dataclasses.fields(Options)}
    if unknown:
        raise TypeError(f"unknown option(s): {', '.join(sorted(unknown))}")
    merged = {**base.__dict__, **{k: v for k, v in overrides.items() if v is not None}}
    return make_options(**merged)


# --- jobs --------------------------------------------------------------------------------------


def spec_key(spec: TestSpec) -> str:
    """A content hash of a test spec, with its values' types.

    Of the spec's Python values, not of their JSON form: JSON writes ``Decimal("1.5")``
    as ``"1.5"`` (and bytes as text), which the comparison tells apart, and a result cache
    keyed so gave one spec's verdict to the other. Values JSON has no form for are hashed
    by their ``repr`` (type and value); keys JSON cannot hold or sort (a tuple, an integer
    beside a string) make the whole spec hashed so.
    """
    data = spec.model_dump()
    try:
        return json_key(data)
    except (TypeError, ValueError):
        with big_ints():
            return content_key("repr", repr(data))


@dataclass(frozen=True)
class Job:
    """One validated verification: a completion, its parsed tests and options, and its verifier."""

    verifier: CodeVerifier
    completion: str
    spec: TestSpec
    options: Options

    def __post_init__(self) -> None:
        runtime = self.verifier.runtime
        if delegates(runtime):
            # What cannot be sent is refused before anything runs, like any malformed input.
            runtime.validate_job(self)

    def key(self) -> str:
        """Content hash of the work: equal keys give equal results (deduplication in a batch)."""
        return content_key(
            self.verifier.language.name,
            self.verifier.runtime.name,
            str(id(self.verifier.runtime)),
            self.completion,
            spec_key(self.spec),
            repr(self.options),
        )

    def result_key(self, cache: ResultCache) -> str:
        """The key of this job's result in ``cache``.

        It covers the SDK version, the language and its toolchain (the interpreter or
        compiler version), the runtime and what its results depend on (an image), the
        completion, the tests, every option, and the contents of the files the tests name
        (a SQL database: its digest, not its path). A result that depends on what no key
        can hold (a PostgreSQL server's data) gets a key the cache never keeps.
        """
        paths, cacheable = self.verifier.external_inputs(self.spec)
        key = content_key(
            SDK_VERSION,
            self.verifier.language.name,
            self.verifier.toolchain_identity(),
            self.verifier.runtime_identity(),
            self.completion,
            spec_key(self.spec),
            repr(self.options),
            *(cache.file_digest(path) for path in paths),
        )
        # A workspace's fetched files live in the job's options, not in a result.
        cacheable = cacheable and self.options.workspace is None
        return key if cacheable else UNCACHED + key


def infra_tests(spec: TestSpec, indices: list[int], message: str) -> list[TestResult]:
    """``sandbox_error`` results for the given tests."""
    return [TestResult(index=i, status=Status.SANDBOX_ERROR, message=message) for i in indices]


def infra_result(job: Job, reason: str, duration_s: float = 0.0) -> Result:
    """A ``sandbox_error`` result for a job our machinery could not verify."""
    policy_name, policy = resolve_policy(job.options.policy)
    message = INFRA_PREFIX + reason
    return assemble(
        tests=infra_tests(job.spec, list(range(len(job.spec))), message),
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
        subtasks=job.spec.subtasks,
    )


async def guarded(job: Job) -> Result:
    """Verify one job; an unexpected fault becomes a sandbox_error result, never an exception.

    Raises:
        SpecError: The job is malformed (validation happens before this, so only a bug of
            a language's own checks gets here).
    """
    started = time.perf_counter()
    try:
        runtime = job.verifier.runtime
        if delegates(runtime):
            [result] = await runtime.verify_jobs([job])
            return result
        return await job.verifier.verify(job.completion, job.spec, job.options)
    except SpecError:
        raise
    except Exception as err:
        log.exception("verification failed inside the SDK")
        return infra_result(job, f"{type(err).__name__}: {err}", time.perf_counter() - started)


async def verify_one(
    job: Job, cache: ResultCache | None = None, slot: asyncio.Semaphore | None = None
) -> Result:
    """A job's result: from ``cache`` when it holds one, else verified (and then kept).

    ``slot`` bounds verifications at once (a batch's concurrency); a cached result does
    not wait for one.
    """
    key = job.result_key(cache) if cache is not None else ""
    if cache is not None:
        hit = cache.get(key)
        if hit is not None:
            return hit
    async with slot or contextlib.nullcontext():
        result = await guarded(job)
    if cache is not None:
        cache.put(key, result)
    return result


# --- checkers and interactors -----------------------------------------------------------------


class JudgeBroken(Exception):
    """A checker or interactor that cannot be used (it does not build): no test can be judged."""


def judge_of(spec: TestSpec) -> tuple[JudgeProgram, bool] | None:
    """The spec's checker or interactor program, and whether it is an interactor."""
    if isinstance(spec, StdioTests):
        if spec.checker is not None:
            return spec.checker, False
        if spec.interactor is not None:
            return spec.interactor, True
    return None


def judge_executable(judge: JudgeProgram, field: str, limits: Limits) -> Executable:
    """The judge program as its language runs it (sources, build, command).

    Raises:
        SpecError: The language is unknown, cannot run judges, or refuses the files.
    """
    try:
        language = get_language(judge.language)
    except UnknownNameError as err:
        raise SpecError(f"{field}.language", str(err)) from None
    if judge.protocol == "function" and language.name != "python":
        raise SpecError(f"{field}.protocol", "a check function is Python")
    source, files = judge_sources(judge)
    # Built for the judge's own memory limit (a JVM's heap, Node's old space follow it).
    memory = limits.checker_limits(judge.time_limit_s, judge.memory_limit_mb).memory_bytes
    own = limits.model_copy(update={"memory_mb": memory // MIB})
    make = getattr(language, "executable", None)
    if callable(make):
        # The language's own (several sources, include paths, a runner).
        exe = make(source, files, own, field)
    else:
        exe = program_executable(language, source, files, own, field)
    assert isinstance(exe, Executable)
    return exe


# --- results of tests and builds -------------------------------------------------------------


def _proc_fields(proc: ProcessResult | None) -> dict[str, Any]:
    if proc is None:
        return {}
    stderr, stderr_cut = excerpt(proc.stderr.decode(errors="replace"), EXCERPT_CHARS)
    return {
        "stderr": stderr,
        "stderr_truncated": stderr_cut or proc.stderr_truncated,
        "exit_code": proc.exit_code,
        "signal": proc.signal,
        "wall_s": round(proc.wall_s, 6),
        "cpu_s": round(proc.cpu_s, 6),
        "memory_mb": proc.max_rss_mb,
    }


def test_result(
    language: Language,
    spec: TestSpec,
    index: int,
    outcome: TestOutcome,
    proc: ProcessResult | None = None,
    rerun: bool = False,
) -> TestResult:
    """A :class:`TestResult` from a language's judgement and the raw run."""
    given, expected = language.describe_test(spec, index)
    given_text, given_cut = excerpt(given, EXCERPT_CHARS)
    expected_text, expected_cut = excerpt(expected, EXCERPT_CHARS)
    actual_text, actual_cut = excerpt(outcome.actual, EXCERPT_CHARS)
    message, _ = excerpt(outcome.message, 2000)
    return TestResult(
        index=index,
        status=outcome.status,
        input=given_text,
        expected=expected_text,
        actual=actual_text,
        message=message,
        input_truncated=given_cut,
        expected_truncated=expected_cut,
        actual_truncated=actual_cut or bool(proc and proc.stdout_truncated),
        hack_suspected=outcome.hack or None,
        score=outcome.score if outcome.status is not Status.PASSED else None,
        rerun=rerun,
        **_proc_fields(proc),
    )


test_result.__test__ = False  # type: ignore[attr-defined]  # not a pytest test


def step_result(command: list[str], proc: ProcessResult) -> StepResult:
    """A :class:`StepResult` for a build step."""
    stdout, _ = excerpt(proc.stdout.decode(errors="replace"), 4000)
    stderr, _ = excerpt(proc.stderr.decode(errors="replace"), 4000)
    return StepResult(
        command=command,
        exit_code=proc.exit_code,
        signal=proc.signal,
        stdout=stdout,
        stderr=stderr,
        stdout_truncated=proc.stdout_truncated,
        stderr_truncated=proc.stderr_truncated,
        wall_s=proc.wall_s,
        cpu_s=proc.cpu_s,
        memory_mb=proc.max_rss_mb,
        timed_out=proc.timed_out,
    )


async def fetch_files(session: Session, workspace: Workspace) -> None:
    """Read ``workspace.fetch`` back from the sandbox into ``workspace.fetched``."""
    left = workspace.max_fetch_bytes
    for path in workspace.fetch:
        where = path if path.startswith("/") else f"{{work_dir}}/{path}"
        try:
            data = await session.read_file(where, left, written=True)
        except SandboxError as err:
            workspace.skipped[path] = str(err).removeprefix("sandbox agent error: ")
            continue
        workspace.fetched[path] = data
        left -= len(data)


def host_saturated(proc: ProcessResult) -> bool:
    """Whether a timed-out run was starved of CPU by a saturated host, not slow itself.

    Measured by the run's wait for a CPU while runnable (``run_delay_s``, from the
    kernel's schedstat): at least :data:`SATURATED_WAIT_SHARE` of its wall time. Where the
    kernel does not say (gVisor), the host's one-minute load average at or above its CPU
    count. A program that sleeps or blocks waits for no CPU, so it is never run again.
    """
    if proc.run_delay_s is not None:
        return proc.run_delay_s >= SATURATED_WAIT_SHARE * proc.wall_s
    try:
        load = os.getloadavg()[0]
    except OSError:
        return False
    return load >= (os.cpu_count() or 1)


_unavailable_logged: set[tuple[str, str, str]] = set()


def _log_unavailable(language: str, runtime: str, err: Exception) -> None:
    """Log a missing runtime or toolchain once per kind, not once per program."""
    key = (language, runtime, str(err))
    if key not in _unavailable_logged:
        _unavailable_logged.add(key)
        log.error("cannot verify %s on %s: %s", language, runtime, err)


# --- the verifier ----------------------------------------------------------------------------

#: What one sandbox session found: test results, a program-wide status and message, the build.
Ran = tuple[list[TestResult], Status | None, str, StepResult | None]


@dataclass(frozen=True)
class _BuildDecides:
    """What waits for the program's build (in the sandbox) to be decided.

    Attributes:
        issue: The parser's deferred syntax error: a failed build becomes ``syntax_error``
            with its location and the compiler's message.
        refused: The code policy's refusal: it stands once the build passes (a program that
            does not build is a syntax error, not a refusal); no test then runs.
    """

    issue: SyntaxIssue | None = None
    refused: TestOutcome | None = None


class CodeVerifier:
    """A language on a runtime: scores completions (satisfies :class:`~verifiers.Verifier`).

    Args:
        language: The language.
        runtime: The runtime the programs run on (a sandbox runtime, or a delegating one
            such as a verification service).
        options: Defaults for every call; keyword arguments of :meth:`ascore` override them.
        build_cache: Where build artefacts are kept (default: one shared by the process).
    """

    def __init__(
        self,
        language: Language,
        runtime: Runtime | DelegatingRuntime[Job],
        options: Options | None = None,
        build_cache: BuildCache | None = None,
    ) -> None:
        self.language = language
        self.runtime = runtime
        self.options = options or Options()
        self.build_cache = build_cache if build_cache is not None else DEFAULT_CACHE
        self.name = language.name
        self._toolchain: str | None = None
        # Reruns of starved tests go one at a time (see host_saturated).
        self._rerun_lock = asyncio.Lock()

    def __repr__(self) -> str:
        return f"CodeVerifier({self.language.name!r}, runtime={self.runtime.name!r})"

    def parse_tests(self, tests: Any) -> TestSpec:
        """Recognise a test spec for this language (raises SpecError)."""
        with big_ints():  # expected values may be big integers (a factorial)
            spec = self.language.parse_tests(tests)
        too_deep = check_depth(spec)
        if too_deep is not None:
            raise SpecError("tests", f"a value is {too_deep}")
        return spec

    def job(self, completion: str, tests: Any, **options: Any) -> Job:
        """A validated job: the tests parsed, the options (overriding the defaults) checked.

        Raises:
            SpecError: The tests, an option or the completion is malformed.
        """
        opts = with_overrides(self.options, options) if options else self.options
        spec = self.parse_tests(tests)
        judged = judge_of(spec)
        if judged is not None:  # a judge the SDK cannot run is malformed input
            field = "tests.interactor" if judged[1] else "tests.checker"
            judge_executable(judged[0], field, opts.limits)
        if not isinstance(completion, str):
            raise SpecError("completion", f"expected a string, got {type(completion).__name__}")
        return Job(self, completion, spec, opts)

    def score(
        self, completion: str, tests: Any, *, cache: ResultCache | None = None, **options: Any
    ) -> Result:
        """Verify a completion (blocking); see :meth:`ascore`."""
        return run_sync(self.ascore(completion, tests, cache=cache, **options))

    async def ascore(
        self, completion: str, tests: Any, *, cache: ResultCache | None = None, **options: Any
    ) -> Result:
        """Verify a completion against tests.

        Args:
            completion: Raw model output (markdown) or bare code.
            tests: A test spec in any recognised format.
            cache: A :class:`~verifiers.ResultCache` to answer from, and to fill.
            **options: Overrides of :class:`Options` fields.

        Returns:
            The result; model failures are statuses, never exceptions. A runtime or
            toolchain that cannot run here gives ``sandbox_error`` results saying why.

        Raises:
            SpecError: The tests or options are malformed.
        """
        job = self.job(completion, tests, **options)
        # On the engine loop, where sandboxes stay warm between calls.
        return await on_engine(verify_one(job, cache))

    def toolchain_identity(self) -> str:
        """What this verifier's language runs with (cached): part of result cache keys."""
        if self._toolchain is None:
            probe = getattr(self.language, "toolchain", None)
            try:
                self._toolchain = str(probe()) if callable(probe) else ""
            except Exception as err:  # an unusable toolchain fails its verifications anyway
                self._toolchain = f"unavailable: {err}"
        return self._toolchain

    def external_inputs(self, spec: TestSpec) -> tuple[list[str], bool]:
        """The files a spec's results depend on, and whether they can be cached at all.

        Asked of the language (``external_inputs``, optional): SQL names its database files,
        and a server's database makes results uncacheable.
        """
        probe = getattr(self.language, "external_inputs", None)
        if not callable(probe):
            return [], True
        paths, cacheable = probe(spec)
        return [str(p) for p in paths], bool(cacheable)

    def runtime_identity(self) -> str:
        """The runtime's name, and what else its results depend on when it says (an image)."""
        runtime = self.runtime
        identity = getattr(runtime, "cache_identity", None)
        if not callable(identity):
            return str(runtime.name)
        try:
            return f"{runtime.name} {identity()}"
        except Exception as err:  # an unusable runtime fails its verifications anyway
            return f"{runtime.name} unavailable: {err}"

    async def verify(
        self,
        completion: str,
        spec: TestSpec,
        opts: Options,
        observe: Observer | None = None,
    ) -> Result:
        """The pipeline on an already parsed spec.

        ``observe`` is called with each test's index and the language's outcome for the
        tests that ran (differential testing reads the values a reference returned).
        """
        with big_ints():  # expected and returned values may be big integers
            return await self._verify(completion, spec, opts, observe)

    async def _verify(
        self,
        completion: str,
        spec: TestSpec,
        opts: Options,
        observe: Observer | None = None,
    ) -> Result:
        started = time.perf_counter()
        lang = self.language
        policy_name, policy = resolve_policy(opts.policy)
        if not isinstance(completion, str):
            raise SpecError("completion", f"expected a string, got {type(completion).__name__}")
        # The problem's own limits (from its data) take the place of the per-test ones.
        problem = opts.limits.for_problem(spec.time_limit_s, spec.memory_limit_mb)
        if problem is not opts.limits:
            opts = dataclasses.replace(opts, limits=problem)
        available = len(spec)
        selected = select_tests(available, opts.max_tests, spec_key(spec))

        def finish(
            tests: list[TestResult],
            stage: Status | None = None,
            message: str = "",
            code: str | None = None,
            format_ok: bool = False,
            compile_step: StepResult | None = None,
        ) -> Result:
            return assemble(
                tests=tests,
                stage_status=stage,
                stage_message=message,
                tests_available=available,
                policy_name=policy_name,
                policy=policy,
                format_ok=format_ok,
                code=code,
                language=lang.name,
                runtime=self.runtime.name,
                duration_s=time.perf_counter() - started,
                compile_step=compile_step,
                completion_chars=len(completion),
                subtasks=spec.subtasks,
            )

        def every(status: Status, message: str) -> list[TestResult]:
            return [test_result(lang, spec, i, TestOutcome(status, message)) for i in selected]

        def infra(reason: object, code: str | None = None, format_ok: bool = False) -> Result:
            message = INFRA_PREFIX + str(reason)
            tests = infra_tests(spec, selected, message)
            return finish(tests, Status.SANDBOX_ERROR, message, code, format_ok)

        try:
            found = (
                extract_for(
                    lang,
                    completion,
                    opts.select,
                    opts.extraction,
                    opts.max_completion_chars,
                    check=lambda text: lang.check_syntax(text, spec),
                )
                if opts.extract
                else Extraction(code=completion, format_ok=False, source="whole_text")
            )
            if found.code is None:
                message = f"No {lang.name} code found: {found.reason}."
                return finish(every(Status.NO_CODE, message), Status.NO_CODE, message)
            code = lang.prepare(found.code, spec)
            issue = lang.check_syntax(code, spec)
            if issue is not None and not issue.deferred:
                message = issue.describe()
                return finish(
                    every(Status.SYNTAX_ERROR, message),
                    Status.SYNTAX_ERROR,
                    message,
                    code,
                    found.format_ok,
                )
            refused = lang.check_code(code, spec) if isinstance(lang, CodeCheck) else None
            if refused is not None and issue is None:
                tests = [test_result(lang, spec, i, refused) for i in selected]
                return finish(tests, refused.status, refused.message, code, found.format_ok)
            program = self._keyed(lang.build_program(code, spec, selected, opts.limits))
            decides = _BuildDecides(issue, refused)
            if issue is not None and program.build is None and refused is not None:
                # No build to ask, and a refusal waiting on one: the parser's error stands.
                # Without a refusal the run decides (SQL and regex engines report their
                # own syntax errors in the sandbox: the first test's fatal outcome).
                message = issue.describe()
                tests = every(Status.SYNTAX_ERROR, message)
                return finish(tests, Status.SYNTAX_ERROR, message, code, found.format_ok)
            judged = judge_of(spec)
            if judged is not None:
                try:
                    program = await self._with_judge(program, spec, *judged, opts.limits)
                except JudgeBroken as err:
                    message = JUDGE_PREFIX + str(err)
                    tests = every(Status.SANDBOX_ERROR, message)
                    return finish(tests, Status.SANDBOX_ERROR, message, code, found.format_ok)
            last_error: SandboxError | None = None
            for attempt in range(2):
                try:
                    tests, stage, message, compile_step = await self._execute(
                        program, spec, opts, observe, decides
                    )
                    break
                except (SandboxError, OSError) as err:
                    # OSError: the host could not start or talk to the sandbox (no room for
                    # its work directory, no descriptors left): ours, not the program's.
                    last_error = err if isinstance(err, SandboxError) else SandboxError(str(err))
                    log.warning("sandbox fault (attempt %d): %s", attempt + 1, err)
            else:
                return infra(last_error, code, found.format_ok)
            return finish(tests, stage, message, code, found.format_ok, compile_step)
        except RuntimeUnavailableError as err:
            # A missing sandbox, toolchain or grammar is our fault, never the program's:
            # every test gets sandbox_error and the batch goes on.
            _log_unavailable(lang.name, self.runtime.name, err)
            return infra(err)

    def _keyed(self, program: Program) -> Program:
        """``program`` with its runtime's toolchain identities in its build key.

        Languages name toolchains, runtimes provide them: an artefact built with one
        runtime's toolchain (the host's rustc, an image's) is never run on another's.
        """
        if not program.toolchains or program.build_key is None:
            return program
        resolve_tool = getattr(self.runtime, "toolchain", None)
        if not callable(resolve_tool):
            return program
        identities = [resolve_tool(tool).identity for tool in program.toolchains]
        return dataclasses.replace(
            program, build_key=content_key(program.build_key, self.runtime.name, *identities)
        )

    def _judge_build(self, exe: Executable) -> Program:
        """A judge program's build alone (no tests), keyed with the runtime's toolchains."""
        return self._keyed(
            Program(
                files={},
                tests=(),
                work_files=exe.files,
                build=exe.build,
                toolchains=exe.toolchains,
                build_key=exe.build_key,
                artefacts=exe.artefacts,
            )
        )

    async def _with_judge(
        self,
        program: Program,
        spec: TestSpec,
        judge: JudgeProgram,
        interactive: bool,
        limits: Limits,
    ) -> Program:
        """``program`` with its checker (or interactor) on every test, built once.

        The judge's files go where only judges reach (``{judge_dir}``); each test's step
        carries the judge's run with the test's input and answer.
        """
        assert isinstance(spec, StdioTests)
        field = "tests.interactor" if interactive else "tests.checker"
        exe = judge_executable(judge, field, limits)
        files = await self._judge_files(exe, limits)
        argv = (
            *(resolve(a, {"{dir}": "{judge_dir}/judge"}) for a in exe.run),
            *judge_args(judge),
        )
        step_limits = limits.checker_limits(judge.time_limit_s, judge.memory_limit_mb)
        env = {k: resolve(v, {"{dir}": "{judge_dir}/judge"}) for k, v in exe.env.items()}
        if interactive:
            # An interactor that writes to a program that has ended: the protocol's wrong
            # answer.
            env["VERIFIERS_BROKEN_PIPE_EXIT"] = "43" if judge.protocol == "kattis" else "1"
        tests = []
        for test in program.tests:
            case = spec.cases[test.index]
            check = Check(
                step=Step(argv=argv, limits=step_limits, env=env),
                input=case.input.encode("utf-8", "surrogateescape"),
                answer=case.output.encode("utf-8", "surrogateescape"),
                output_on_stdin=judge.protocol == "kattis" and not interactive,
                interactive=interactive,
            )
            tests.append(
                dataclasses.replace(test, step=dataclasses.replace(test.step, check=check))
            )
        extra = tuple(t for t in exe.toolchains if t not in program.toolchains)
        return dataclasses.replace(
            program,
            tests=tuple(tests),
            judge_dir_files={f"judge/{path}": data for path, data in files.items()},
            toolchains=program.toolchains + extra,
        )

    async def _judge_files(self, exe: Executable, limits: Limits) -> dict[str, bytes]:
        """What a judge needs in the sandbox: its sources, or its build's artefacts (cached).

        Raises:
            JudgeBroken: It does not build.
        """
        if exe.build is None:
            return dict(exe.files)
        program = self._judge_build(exe)
        key = program.build_key or ""
        assert not delegates(self.runtime)  # guarded() delegates whole jobs
        runtime = cast(Runtime, self.runtime)
        async with self.build_cache.slot(key, limits.build_timeout_s + 30) as cached:
            if cached is not None:
                return cached
            async with runtime.session(program, limits) as session:
                proc = await session.run(exe.build)
                if proc.exit_code != 0 or proc.signal is not None or proc.timed_out:
                    text = (proc.stderr or proc.stdout).decode(errors="replace").strip()
                    raise JudgeBroken(
                        f"the judge program does not build:\n{excerpt(text, 3000)[0]}"
                    )
                artefacts = {
                    path: await session.read_file(f"{{work_dir}}/{path}", MAX_ARTEFACT_BYTES)
                    for path in exe.artefacts
                }
            if key:
                self.build_cache.put(key, artefacts)
            return artefacts

    async def _blame_checker(
        self,
        session: Session,
        test: ProgramTest,
        judge: JudgeProgram,
        limits: Limits,
        failure: TestOutcome,
    ) -> tuple[TestOutcome, float]:
        """A checker that failed on the program's output, run on the jury's answer.

        If it accepts the answer, the output made it fail: the program's wrong answer
        (:func:`~verifiers.checkers.blame_output`). That it accepts the answer is kept per
        checker, input and answer (:data:`~verifiers.checkers.ANSWER_VERDICTS`). Returns the
        outcome and the seconds the run took.
        """
        step = answer_step(test.step)
        if step is None:
            return failure, 0.0
        exe = judge_executable(judge, "tests.checker", limits)
        built = self._judge_build(exe)
        identity = built.build_key or content_key(
            self.runtime_identity(), json_key(judge.model_dump(mode="json"))
        )
        key = answer_key(identity, step)
        if ANSWER_VERDICTS.get(key):
            return blame_output(failure, True), 0.0
        [proc] = await session.run_many([step])
        accepted = accepts_answer(judge, proc)
        if accepted:  # a refusal is asked again: the sandbox may have been at fault
            ANSWER_VERDICTS.put(key, accepted)
        log.info(
            "test %d: the checker failed on the output; answer accepted: %s", test.index, accepted
        )
        return blame_output(failure, accepted), proc.wall_s

    async def _rerun(
        self,
        session: Session,
        test: ProgramTest,
        spec: TestSpec,
        opts: Options,
        first: ProcessResult,
    ) -> tuple[ProcessResult, TestOutcome]:
        """Run a test that timed out on a saturated host once more, by itself."""
        log.info(
            "test %d timed out on a saturated host (waited %.2f s of %.2f s for a CPU): "
            "running it again alone",
            test.index,
            first.run_delay_s or 0.0,
            first.wall_s,
        )
        async with self._rerun_lock:
            [proc] = await session.run_many([test.step])
        outcome = self.language.interpret(test, spec, proc, opts.limits, opts.compare)
        log.info("test %d run again: %s", test.index, outcome.status.value)
        return proc, outcome

    async def _execute(
        self,
        program: Program,
        spec: TestSpec,
        opts: Options,
        observe: Observer | None = None,
        decides: _BuildDecides | None = None,
    ) -> Ran:
        key = (program.build_key or "") if program.build is not None else ""
        # The same program being built right now is waited for, not built twice.
        async with self.build_cache.slot(key, opts.limits.build_timeout_s + 30) as cached:
            return await self._run_session(program, spec, opts, cached, observe, decides)

    async def _run_session(
        self,
        program: Program,
        spec: TestSpec,
        opts: Options,
        cached: dict[str, bytes] | None,
        observe: Observer | None = None,
        decides: _BuildDecides | None = None,
    ) -> Ran:
        if delegates(self.runtime):  # pragma: no cover - guarded() delegates
            raise SandboxError(f"the runtime {self.runtime.name} does not open sessions")
        runtime = cast(Runtime, self.runtime)
        lang = self.language
        limits = opts.limits
        compare = opts.compare
        results: list[TestResult] = []
        compile_step: StepResult | None = None
        judging = judge_of(spec)
        stop = opts.stop_on_failure
        if stop is None:
            stop = stops_at_first_failure(resolve_policy(opts.policy)[1])
        budget = limits.budget_s(stop)
        refused = decides.refused if decides is not None else None

        def every(outcome: TestOutcome) -> list[TestResult]:
            return [test_result(lang, spec, t.index, outcome) for t in program.tests]

        if program.build is not None and cached is not None:
            # Built before: the artefacts go in as files and the build is skipped.
            compile_step = StepResult(command=list(program.build.argv), exit_code=0, cached=True)
            if refused is not None:
                return every(refused), refused.status, refused.message, compile_step
            program = dataclasses.replace(
                program,
                build=None,
                work_files={**program.work_files, **cached},
                executables=program.executables | frozenset(cached),
            )
        workspace = opts.workspace
        if workspace is not None and workspace.files:
            program = dataclasses.replace(
                program, work_files={**program.work_files, **workspace.files}
            )
        async with runtime.session(program, limits) as session:
            if program.build is not None:
                proc = await session.run(program.build)
                compile_step = step_result(list(program.build.argv), proc)
                judged = lang.interpret_build(proc, limits)
                issue = decides.issue if decides is not None else None
                if judged.status is Status.COMPILE_ERROR and issue is not None:
                    # The parser and the compiler agree that it is broken.
                    message = f"{issue.describe()}\nThe compiler:\n{judged.message}"
                    judged = TestOutcome(Status.SYNTAX_ERROR, message)
                if judged.status is not Status.PASSED:
                    outcome = TestOutcome(judged.status, judged.message, hack=judged.hack)
                    return every(outcome), judged.status, judged.message, compile_step
                built: dict[str, bytes] = {}
                if program.artefacts and (program.build_key or isinstance(lang, BuildAudit)):
                    built = {
                        path: await session.read_file(f"{{work_dir}}/{path}", MAX_ARTEFACT_BYTES)
                        for path in program.artefacts
                    }
                # What the binary defines, read before any test runs; a refused build is
                # neither run nor cached.
                audited = lang.audit_build(spec, built) if isinstance(lang, BuildAudit) else None
                if audited is not None:
                    return every(audited), audited.status, audited.message, compile_step
                if program.build_key and built:
                    self.build_cache.put(program.build_key, built)
                    self.build_cache.release(program.build_key)
                if refused is not None:
                    return every(refused), refused.status, refused.message, compile_step
            # The budget's clock starts after the build: it bounds the tests.
            budget_end = time.monotonic() + budget if budget is not None else None
            pending: list[ProgramTest] = list(program.tests)
            reruns_left = MAX_RERUNS
            ended = ""  # why the tests still pending are not run
            # The first test runs alone: a program-wide failure (a compile error found
            # while running it) then costs one run. The rest go in batches, one round
            # trip each.
            batch_size = 1
            while pending and not ended:
                left = None if budget_end is None else budget_end - time.monotonic()
                if left is not None and left <= 0:
                    ended = f"the program's time budget ({budget:g} s) was used up"
                    break
                batch, pending = pending[:batch_size], pending[batch_size:]
                procs = await session.run_many(
                    [t.step for t in batch], budget_s=left, stop_after_timeout=stop
                )
                pending = batch[len(procs) :] + pending
                for test, ran in zip(batch, procs, strict=False):
                    proc = ran
                    outcome = lang.interpret(test, spec, proc, limits, compare)
                    rerun = False
                    if (
                        reruns_left
                        and outcome.status is Status.TIMEOUT
                        and proc.timed_out
                        and not proc.budget_cut
                        and host_saturated(proc)
                    ):
                        reruns_left -= 1
                        rerun = True
                        proc, outcome = await self._rerun(session, test, spec, opts, proc)
                        if budget_end is not None:
                            budget_end += proc.wall_s  # the host's fault, not the program's
                    if proc.budget_cut and outcome.status is Status.TIMEOUT:
                        note = f"stopped when the program's time budget ({budget:g} s) ran out"
                        outcome = dataclasses.replace(outcome, message=note)
                    if judging is not None:
                        judge, interactive = judging
                        decide = interactor_outcome if interactive else checker_outcome
                        outcome = decide(judge, proc, outcome)
                        if not interactive and failed_on_output(outcome, proc):
                            outcome, spent = await self._blame_checker(
                                session, test, judge, limits, outcome
                            )
                            if budget_end is not None:
                                budget_end += spent  # the checker's business, not the program's
                    if observe is not None:
                        observe(test.index, outcome)
                    results.append(test_result(lang, spec, test.index, outcome, proc, rerun))
                    if outcome.fatal:
                        done = {r.index for r in results}
                        results += [
                            test_result(
                                lang, spec, t.index, TestOutcome(outcome.status, outcome.message)
                            )
                            for t in program.tests
                            if t.index not in done
                        ]
                        return results, outcome.status, outcome.message, compile_step
                    if proc.budget_cut:
                        ended = f"the program's time budget ({budget:g} s) was used up"
                    elif stop and outcome.status is not Status.PASSED:
                        ended = f"the run ended at the first failing test (test {test.index + 1})"
                    if ended:
                        # Tests of this batch that ran after it are reported as not run
                        # too: a result never depends on how tests were batched.
                        break
                batch_size = TEST_BATCH
            if ended:
                done = {r.index for r in results}
                results += [
                    test_result(
                        lang, spec, t.index, TestOutcome(Status.NOT_RUN, "not run: " + ended)
                    )
                    for t in program.tests
                    if t.index not in done
                ]
            if workspace is not None and workspace.fetch:
                await fetch_files(session, workspace)
        return results, None, "", compile_step
