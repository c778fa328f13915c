"""The verification pipeline every language shares.

extract code -> prepare -> syntax check (no process) -> build a program ->
one sandbox session: build step once, then each selected test -> the language
judges each run -> the scoring policy gives the reward.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from verifiers._async import on_engine, run_sync
from verifiers.build_cache import DEFAULT_CACHE, BuildCache
from verifiers.errors import RuntimeUnavailableError, SandboxError, SpecError
from verifiers.extraction import MAX_COMPLETION_CHARS, Extraction, Mode, extract_for
from verifiers.languages.common import content_key
from verifiers.limits import Limits
from verifiers.program import ProcessResult, Program, ProgramTest
from verifiers.protocols import Language, Runtime, TestOutcome
from verifiers.results import Result, Status, StepResult, TestResult, excerpt
from verifiers.scoring import Policy, assemble, resolve_policy, select_tests
from verifiers.specs import CompareOptions, TestSpec

log = logging.getLogger("verifiers")

#: Characters kept of each text field of a TestResult (inputs, outputs, stderr).
EXCERPT_CHARS = 600
#: Tests sent to the sandbox in one round trip.
TEST_BATCH = 64
#: Largest build artefact copied out of a sandbox for the build cache.
MAX_ARTEFACT_BYTES = 256 * 1024 * 1024

#: Called with a test's index and its outcome as each test is judged.
Observer = Callable[[int, TestOutcome], None]


@dataclass(frozen=True)
class Options:
    """Per-verification options (all explicit; no global state).

    Attributes:
        policy: Scoring policy name (``binary`` or ``partial``).
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
    """

    policy: str | Policy | None = None
    limits: Limits = field(default_factory=Limits)
    compare: CompareOptions | None = None
    max_tests: int | None = None
    select: Literal["last", "first"] = "last"
    extract: bool = True
    extraction: Mode = "auto"
    max_completion_chars: int = MAX_COMPLETION_CHARS


def spec_key(spec: TestSpec) -> str:
    """A content hash of a test spec."""
    data = json.dumps(spec.model_dump(mode="json"), sort_keys=True, default=repr)
    return hashlib.sha256(data.encode()).hexdigest()


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
        **_proc_fields(proc),
    )


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


_unavailable_logged: set[tuple[str, str, str]] = set()


def _log_unavailable(language: str, runtime: str, err: Exception) -> None:
    """Log a missing runtime or toolchain once per kind, not once per program."""
    key = (language, runtime, str(err))
    if key not in _unavailable_logged:
        _unavailable_logged.add(key)
        log.error("cannot verify %s on %s: %s", language, runtime, err)


class CodeVerifier:
    """A language on a runtime: scores completions (satisfies :class:`~verifiers.Verifier`).

    Args:
        language: The language.
        runtime: The runtime the programs run on.
        options: Defaults for every call; keyword arguments of :meth:`ascore` override them.
        build_cache: Where build artefacts are kept (default: one shared by the process).
    """

    def __init__(
        self,
        language: Language,
        runtime: Runtime,
        options: Options | None = None,
        build_cache: BuildCache | None = None,
    ) -> None:
        self.language = language
        self.runtime = runtime
        self.options = options or Options()
        self.build_cache = build_cache if build_cache is not None else DEFAULT_CACHE
        self.name = language.name

    def __repr__(self) -> str:
        return f"CodeVerifier({self.language.name!r}, runtime={self.runtime.name!r})"

    def parse_tests(self, tests: Any) -> TestSpec:
        """Recognise a test spec for this language (raises SpecError)."""
        return self.language.parse_tests(tests)

    def _options(self, overrides: dict[str, Any]) -> Options:
        if not overrides:
            return self.options
        unknown = set(overrides) - set(Options.__dataclass_fields__)
        if unknown:
            raise TypeError(f"unknown option(s): {', '.join(sorted(unknown))}")
        merged = {**self.options.__dict__, **{k: v for k, v in overrides.items() if v is not None}}
        # Dicts become models and every value is checked, as verifiers.score does.
        from verifiers.api import _options as validated

        checked = validated(
            merged["policy"],
            merged["limits"],
            merged["compare"],
            merged["max_tests"],
            merged["select"],
            merged["extraction"],
            merged["max_completion_chars"],
        )
        return dataclasses.replace(checked, extract=bool(merged["extract"]))

    def score(self, completion: str, tests: Any, **options: Any) -> Result:
        """Verify a completion (blocking); see :meth:`ascore`."""
        return run_sync(self.ascore(completion, tests, **options))

    async def ascore(self, completion: str, tests: Any, **options: Any) -> Result:
        """Verify a completion against tests.

        Args:
            completion: Raw model output (markdown) or bare code.
            tests: A test spec in any recognised format.
            **options: Overrides of :class:`Options` fields.

        Returns:
            The result; model failures are statuses, never exceptions. A runtime or
            toolchain that cannot run here gives ``sandbox_error`` results saying why.

        Raises:
            SpecError: The tests or options are malformed.
        """
        from verifiers.engine import Job, run_jobs  # the engine builds on this module

        opts = self._options(options)
        spec = self.parse_tests(tests)
        if not isinstance(completion, str):
            raise SpecError("completion", f"expected a string, got {type(completion).__name__}")
        # Through the engine: a fault inside the SDK becomes this result's sandbox_error.
        [result] = await on_engine(run_jobs([Job(self, completion, spec, opts)]))
        return result

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
        started = time.perf_counter()
        lang = self.language
        policy_name, policy = resolve_policy(opts.policy)
        if not isinstance(completion, str):
            raise SpecError("completion", f"expected a string, got {type(completion).__name__}")
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
            )

        def every(status: Status, message: str) -> list[TestResult]:
            return [test_result(lang, spec, i, TestOutcome(status, message)) for i in selected]

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
            if issue is not None:
                message = issue.describe()
                return finish(
                    every(Status.SYNTAX_ERROR, message),
                    Status.SYNTAX_ERROR,
                    message,
                    code,
                    found.format_ok,
                )
            program = self._keyed(lang.build_program(code, spec, selected, opts.limits))
            last_error: SandboxError | None = None
            for attempt in range(2):
                try:
                    tests, stage, message, compile_step = await self._execute(
                        program, spec, opts, observe
                    )
                    break
                except (SandboxError, OSError) as err:
                    # OSError: the host could not start or talk to the sandbox (no room for
                    # its work directory, no descriptors left): ours, not the program's.
                    last_error = err if isinstance(err, SandboxError) else SandboxError(str(err))
                    log.warning("sandbox fault (attempt %d): %s", attempt + 1, err)
            else:
                message = f"Infrastructure error (not the program's fault): {last_error}"
                return finish(
                    every(Status.SANDBOX_ERROR, message),
                    Status.SANDBOX_ERROR,
                    message,
                    code,
                    found.format_ok,
                )
            return finish(tests, stage, message, code, found.format_ok, compile_step)
        except RuntimeUnavailableError as err:
            # A missing sandbox, toolchain or grammar is our fault, never the program's:
            # every test gets sandbox_error and the batch goes on.
            _log_unavailable(lang.name, self.runtime.name, err)
            message = f"Infrastructure error (not the program's fault): {err}"
            return finish(every(Status.SANDBOX_ERROR, message), Status.SANDBOX_ERROR, message)

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
        identities = [resolve_tool(name).identity for name in program.toolchains]
        return dataclasses.replace(
            program, build_key=content_key(program.build_key, self.runtime.name, *identities)
        )

    async def _execute(
        self, program: Program, spec: TestSpec, opts: Options, observe: Observer | None = None
    ) -> tuple[list[TestResult], Status | None, str, StepResult | None]:
        limits = opts.limits
        key = program.build_key if program.build is not None else None
        cached = self.build_cache.get(key) if key else None
        claimed = False
        if key and cached is None:
            pending = self.build_cache.claim(key)
            if pending is None:
                claimed = True
            else:
                # The same program is being built right now: wait for it.
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(pending.wait(), limits.build_timeout_s + 30)
                cached = self.build_cache.get(key)
        try:
            return await self._run_session(program, spec, opts, cached, observe)
        finally:
            if claimed and key:
                self.build_cache.release(key)

    async def _run_session(
        self,
        program: Program,
        spec: TestSpec,
        opts: Options,
        cached: dict[str, bytes] | None,
        observe: Observer | None = None,
    ) -> tuple[list[TestResult], Status | None, str, StepResult | None]:
        lang = self.language
        limits = opts.limits
        compare = opts.compare
        results: list[TestResult] = []
        compile_step: StepResult | None = None
        budget_end = time.monotonic() + limits.total_timeout_s if limits.total_timeout_s else None
        if program.build is not None and cached is not None:
            # Built before: the artefacts go in as files and the build is skipped.
            compile_step = StepResult(command=list(program.build.argv), exit_code=0, cached=True)
            program = dataclasses.replace(
                program,
                build=None,
                work_files={**program.work_files, **cached},
                executables=program.executables | frozenset(cached),
            )
        async with self.runtime.session(program, limits) as session:
            if program.build is not None:
                proc = await session.run(program.build)
                compile_step = step_result(list(program.build.argv), proc)
                judged = lang.interpret_build(proc, limits)
                if judged.status is not Status.PASSED:
                    tests = [
                        test_result(lang, spec, t.index, TestOutcome(judged.status, judged.message))
                        for t in program.tests
                    ]
                    return tests, judged.status, judged.message, compile_step
                if program.build_key and program.artefacts:
                    self.build_cache.put(
                        program.build_key,
                        {
                            path: await session.read_file(
                                f"{{work_dir}}/{path}", MAX_ARTEFACT_BYTES
                            )
                            for path in program.artefacts
                        },
                    )
                    self.build_cache.release(program.build_key)
            pending: list[ProgramTest] = list(program.tests)
            # The first test runs alone: a program-wide failure (a compile error found
            # while running it) then costs one run. The rest go in batches, one round
            # trip each.
            batch_size = 1
            while pending:
                left = None if budget_end is None else budget_end - time.monotonic()
                if left is not None and left <= 0:
                    note = "not run: the program's total time budget was used up"
                    results += [
                        test_result(lang, spec, t.index, TestOutcome(Status.TIMEOUT, note))
                        for t in pending
                    ]
                    break
                batch, pending = pending[:batch_size], pending[batch_size:]
                procs = await session.run_many([t.step for t in batch], budget_s=left)
                pending = batch[len(procs) :] + pending
                for test, proc in zip(batch, procs, strict=False):
                    outcome = lang.interpret(test, spec, proc, limits, compare)
                    if observe is not None:
                        observe(test.index, outcome)
                    results.append(test_result(lang, spec, test.index, outcome, proc))
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
                batch_size = TEST_BATCH
        return results, None, "", compile_step
