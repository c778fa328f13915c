"""The protocols that keep languages, runtimes and verifiers apart.

Languages never call a runtime's internals; runtimes know nothing about
languages. Both meet in :mod:`verifiers.program`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any, Protocol, TypeGuard, TypeVar, runtime_checkable

from verifiers.limits import Limits
from verifiers.parsing import SyntaxIssue
from verifiers.program import ProcessResult, Program, ProgramTest, Step
from verifiers.results import Result, Status
from verifiers.specs import CompareOptions, TestSpec

#: The jobs a delegating runtime receives (:class:`verifiers.core.Job`).
JobT_contra = TypeVar("JobT_contra", contravariant=True)


@dataclass(frozen=True)
class RuntimeCheck:
    """Whether a runtime works on this host, and why not."""

    name: str
    available: bool
    detail: str


@runtime_checkable
class Session(Protocol):
    """An open sandbox holding one program; runs its steps one at a time."""

    program_dir: str
    work_dir: str

    async def run(self, step: Step) -> ProcessResult:
        """Run one step and return the raw facts. Raises SandboxError on machinery faults."""
        ...

    async def run_many(
        self, steps: Sequence[Step], budget_s: float | None = None, stop_after_timeout: bool = False
    ) -> list[ProcessResult]:
        """Run steps one after the other; none starts after ``budget_s`` seconds.

        A step running when the budget runs out is stopped there (``budget_cut``); with
        ``stop_after_timeout`` no step starts after one that timed out.

        Returns the results of the steps that ran, in order (all of them without a budget).
        """
        ...

    async def read_file(self, path: str, max_bytes: int, written: bool = False) -> bytes:
        """A file from the sandbox; raises SandboxError if missing or bigger.

        A build artefact, or with ``written`` a file a program wrote: then only a regular
        file inside the work directory or ``/tmp``, links resolved.
        """
        ...


@runtime_checkable
class Runtime(Protocol):
    """Executes programs inside a sandbox."""

    name: str

    def check(self) -> RuntimeCheck:
        """Whether this runtime can run here (used by ``verifiers doctor``)."""
        ...

    def session(self, program: Program, limits: Limits) -> AbstractAsyncContextManager[Session]:
        """Open a sandbox with the program's files in place."""
        ...


@runtime_checkable
class DelegatingRuntime(Protocol[JobT_contra]):
    """A runtime that verifies whole jobs somewhere else (a verification service).

    It has no sessions of its own: the engine hands it validated jobs
    (:class:`verifiers.core.Job`), ``batch_size`` at a time, and it returns one
    :class:`~verifiers.Result` per job. Faults of the machinery (the service is down,
    answers garbage, times out) are ``sandbox_error`` results, never exceptions.
    :class:`~verifiers.runtimes.RemoteRuntime` is one.
    """

    name: str
    batch_size: int

    def validate_job(self, job: JobT_contra) -> None:
        """Raise :class:`~verifiers.SpecError` if the job cannot be sent (before anything runs)."""
        ...

    async def verify_jobs(self, jobs: Sequence[JobT_contra]) -> list[Result]:
        """One result per job, in order; never raises for an infrastructure fault."""
        ...


def delegates(runtime: object) -> TypeGuard[DelegatingRuntime[Any]]:
    """Whether ``runtime`` is a :class:`DelegatingRuntime`, ruled out once per class.

    The engine asks several times per job, and a protocol check costs tens of microseconds
    (it lists the protocol's members each time): a class without the protocol's methods
    is known not to delegate.
    """
    cls = type(runtime)
    possible = _MAY_DELEGATE.get(cls)
    if possible is None:
        possible = all(callable(getattr(cls, n, None)) for n in ("validate_job", "verify_jobs"))
        _MAY_DELEGATE[cls] = possible
    return possible and isinstance(runtime, DelegatingRuntime)


_MAY_DELEGATE: dict[type, bool] = {}


@dataclass(frozen=True)
class TestOutcome:
    """A language's judgement of one test run.

    ``fatal`` marks an outcome of the whole program (a syntax error found while
    running the first test): the remaining tests are not run and take this status.
    ``hack`` says why the run looks like an attempt to forge a pass, when it does.
    ``returned`` holds the decoded value a value test (call, expression) got back, as a
    one-element tuple, so that ``None`` returned is told apart from nothing returned.
    ``score`` is the partial credit (in [0, 1]) a checker gave a test that did not pass.
    """

    __test__ = False

    status: Status
    message: str = ""
    actual: str = ""
    fatal: bool = False
    hack: str = ""
    returned: tuple[Any] | None = None
    score: float | None = None


@runtime_checkable
class Language(Protocol):
    """Turns code and tests into a program, and process facts into test outcomes."""

    name: str
    aliases: tuple[str, ...]

    def parse_tests(self, raw: Any) -> TestSpec:
        """Recognise this language's test formats (raises SpecError)."""
        ...

    def prepare(self, code: str, spec: TestSpec) -> str:
        """The code to run, from the extracted code (for example, a prompt prepended)."""
        ...

    def check_syntax(self, code: str, spec: TestSpec | None = None) -> SyntaxIssue | None:
        """A fast syntax check without running anything (the spec may pick a dialect)."""
        ...

    def parses(self, text: str) -> bool:
        """Whether text is code of this language (used by extraction)."""
        ...

    def build_program(
        self, code: str, spec: TestSpec, selected: list[int], limits: Limits
    ) -> Program:
        """The program that runs the selected tests."""
        ...

    def interpret(
        self,
        test: ProgramTest,
        spec: TestSpec,
        proc: ProcessResult,
        limits: Limits,
        compare: CompareOptions | None,
    ) -> TestOutcome:
        """Judge one test from the raw process facts (comparison happens here)."""
        ...

    def interpret_build(self, proc: ProcessResult, limits: Limits) -> TestOutcome:
        """Judge the build step (``compile_error`` with the compiler's messages on failure)."""
        ...

    def describe_test(self, spec: TestSpec, index: int) -> tuple[str, str]:
        """The input and the expected output of a test, as text for results and feedback."""
        ...


@runtime_checkable
class CodeCheck(Protocol):
    """A language that checks a program's code before building it (a code policy).

    Where the tests share one binary with the candidate's code (Go, Rust), the sandbox
    cannot tell the harness's actions from the candidate's, so the code itself is checked:
    a refused program is never built nor run.
    """

    def check_code(self, code: str, spec: TestSpec) -> TestOutcome | None:
        """The outcome every test gets when the code is refused, or None to build it."""
        ...


@runtime_checkable
class BuildAudit(Protocol):
    """A language that checks what its build produced before any test runs.

    Where the program and the tests share one binary (C, C++), what a name binds to is
    the compiler's and the linker's decision: the binary is read (the functions it
    defines) after a successful build, and a refused one is never run nor cached.
    """

    def audit_build(self, spec: TestSpec, artefacts: Mapping[str, bytes]) -> TestOutcome | None:
        """The outcome every test gets when the build is refused, or None to run it.

        ``artefacts`` are the build's files (:attr:`Program.artefacts`) by path.
        """
        ...


@runtime_checkable
class Verifier(Protocol):
    """Scores completions for one language on one runtime."""

    name: str

    def parse_tests(self, tests: Any) -> TestSpec:
        """Recognise a test spec (raises SpecError)."""
        ...

    async def ascore(self, completion: str, tests: Any, **options: Any) -> Result:
        """Verify a completion against tests."""
        ...

    def score(self, completion: str, tests: Any, **options: Any) -> Result:
        """Verify a completion against tests (blocking)."""
        ...


__all__ = [
    "CodeCheck",
    "DelegatingRuntime",
    "Language",
    "Runtime",
    "RuntimeCheck",
    "Session",
    "TestOutcome",
    "Verifier",
]
