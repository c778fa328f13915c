"""Typed results: what a verification found, test by test.

``Status`` is the verdict taxonomy. ``Result.status`` is ``passed`` only when
every selected test passed; otherwise it is the highest-ranked status among the
failing tests, in the order of :data:`STATUS_PRECEDENCE` (documented in
``docs/concepts.md``).
"""

from __future__ import annotations

from enum import Enum

from pydantic import BaseModel, ConfigDict, Field


class Status(str, Enum):
    """Outcome of a test or of a whole program."""

    PASSED = "passed"
    FAILED = "failed"
    NO_CODE = "no_code"
    SYNTAX_ERROR = "syntax_error"
    COMPILE_ERROR = "compile_error"
    RUNTIME_ERROR = "runtime_error"
    TIMEOUT = "timeout"
    MEMORY_LIMIT = "memory_limit"
    OUTPUT_LIMIT = "output_limit"
    SANDBOX_ERROR = "sandbox_error"
    #: A test the program's run ended before (only ever a test's status): the first
    #: failure under ``binary``, or the program's time budget. It counts as failed.
    NOT_RUN = "not_run"

    def __str__(self) -> str:
        return self.value


#: Which status a failing program reports when its tests failed in different
#: ways: the first in this tuple that occurs wins. Infrastructure faults come
#: first so that they are never hidden behind a model failure; problems of the
#: whole program (no code, syntax, compile) come before per-test outcomes; and a
#: crash says more about a program than a limit, a limit more than a wrong answer.
STATUS_PRECEDENCE: tuple[Status, ...] = (
    Status.SANDBOX_ERROR,
    Status.NO_CODE,
    Status.SYNTAX_ERROR,
    Status.COMPILE_ERROR,
    Status.RUNTIME_ERROR,
    Status.MEMORY_LIMIT,
    Status.OUTPUT_LIMIT,
    Status.TIMEOUT,
    Status.FAILED,
    Status.NOT_RUN,
)


def overall_status(statuses: list[Status]) -> Status:
    """The program status for the given per-test statuses (see ``STATUS_PRECEDENCE``).

    Tests are not run only after a failure or when the time budget ran out, so a program
    whose only failures are tests not run spent its budget: ``timeout``.
    """
    failing = {s for s in statuses if s is not Status.PASSED}
    if not failing:
        return Status.PASSED
    if failing == {Status.NOT_RUN}:
        return Status.TIMEOUT
    for status in STATUS_PRECEDENCE:
        if status in failing:
            return status
    raise AssertionError("unreachable")  # pragma: no cover


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class StepResult(_Frozen):
    """What one process run did: a build step, or the raw facts of a test."""

    command: list[str] = Field(default_factory=list)
    exit_code: int | None = None
    signal: int | None = None
    stdout: str = ""
    stderr: str = ""
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    wall_s: float = 0.0
    cpu_s: float = 0.0
    memory_mb: float | None = None
    timed_out: bool = False
    cached: bool = False


class TestResult(_Frozen):
    """The outcome of one test.

    Text fields are excerpts (bounded in size); the ``*_truncated`` flags say when
    an excerpt is shorter than the real text.
    """

    __test__ = False  # not a pytest test class

    index: int
    status: Status
    input: str = ""
    expected: str = ""
    actual: str = ""
    stderr: str = ""
    message: str = ""
    exit_code: int | None = None
    signal: int | None = None
    wall_s: float = 0.0
    cpu_s: float = 0.0
    memory_mb: float | None = None
    input_truncated: bool = False
    expected_truncated: bool = False
    actual_truncated: bool = False
    stderr_truncated: bool = False
    hack_suspected: str | None = None
    #: It timed out while the host was saturated and was run again alone; this is the
    #: second run's outcome.
    rerun: bool = False

    @property
    def passed(self) -> bool:
        """Whether this test passed."""
        return self.status is Status.PASSED

    @property
    def not_run(self) -> bool:
        """Whether the program's run ended before this test (it counts as failed)."""
        return self.status is Status.NOT_RUN


class Result(_Frozen):
    """The verdict on one completion.

    Attributes:
        status: ``passed`` only if every selected test passed; otherwise the
            program's failure (see ``STATUS_PRECEDENCE``).
        score: The reward under the scoring policy: in [0, 1] for ``binary``, ``partial``
            and ``layered``; shaping policies with penalties may go down to -1.
        pass_rate: ``passed / total`` (0 when there are no tests to run).
        passed: Number of selected tests that passed.
        total: Number of selected tests (every one counts, run or not).
        tests_available: Number of tests in the spec before ``max_tests``.
        tests: Per-test results, in the order of the spec.
        compile: The build step, for languages that have one.
        format_ok: Whether the code came from a fenced code block.
        code: The code that was run (after extraction and preparation).
        language: Language name.
        runtime: Runtime name.
        policy: Scoring policy name.
        duration_s: Wall time of the whole verification.
        feedback: A short text a model could use to repair its code.
        cached: The result came from a :class:`~verifiers.ResultCache`, not a new run.
        hack_suspected: Why a test run looked like an attempt to forge a pass (an exit
            before the tests finished, a forged result record, tampering with the
            harness or builtins, a comparison with a value of the program's own class),
            as ``"test N: reason"`` for the first such test; None otherwise. It never
            raises a score: those tests already fail.
        infra_error: True when our machinery failed (status ``sandbox_error``);
            never the model's fault.
    """

    status: Status
    score: float = Field(ge=-1.0, le=1.0)
    pass_rate: float = Field(ge=0.0, le=1.0)
    passed: int = Field(ge=0)
    total: int = Field(ge=0)
    tests_available: int = Field(ge=0)
    tests: list[TestResult] = Field(default_factory=list)
    compile: StepResult | None = None
    format_ok: bool = False
    code: str | None = None
    language: str = ""
    runtime: str = ""
    policy: str = ""
    duration_s: float = 0.0
    feedback: str = ""
    infra_error: bool = False
    cached: bool = False
    hack_suspected: str | None = None

    @property
    def ok(self) -> bool:
        """Whether every selected test passed."""
        return self.status is Status.PASSED

    def to_dict(self) -> dict[str, float]:
        """Flat numbers for training logs: scores, counts, timings and one 0/1 key per status.

        ``tests_run`` counts the tests that ran (``total`` less those not run), ``reruns``
        the tests run a second time after a timeout on a saturated host.
        """
        out: dict[str, float] = {
            "score": self.score,
            "pass_rate": self.pass_rate,
            "passed": float(self.passed),
            "total": float(self.total),
            "tests_run": float(sum(not t.not_run for t in self.tests)),
            "reruns": float(sum(t.rerun for t in self.tests)),
            "format_ok": float(self.format_ok),
            "infra_error": float(self.infra_error),
            "cached": float(self.cached),
            "hack_suspected": float(self.hack_suspected is not None),
            "duration_s": self.duration_s,
            "max_test_wall_s": max((t.wall_s for t in self.tests), default=0.0),
            "compile_s": self.compile.wall_s if self.compile is not None else 0.0,
        }
        for status in Status:
            out[f"status_{status.value}"] = float(self.status is status)
        return out

    def summary(self) -> str:
        """One line: status, passed/total, score."""
        return f"{self.status.value}: {self.passed}/{self.total} tests, score {self.score:.3f}"


def excerpt(text: str, limit: int = 2000) -> tuple[str, bool]:
    """Cut ``text`` to at most ``limit`` characters, keeping head and tail.

    Returns the excerpt and whether anything was cut.
    """
    if len(text) > limit:
        head = limit * 2 // 3
        tail = limit - head
        dropped = len(text) - head - tail
        return clean_text(f"{text[:head]}\n…[{dropped} characters omitted]…\n{text[-tail:]}"), True
    return clean_text(text), False


def clean_text(text: str) -> str:
    r"""``text`` as valid Unicode: bytes a program wrote that are not UTF-8 become ``\xff``.

    Output is decoded with ``surrogateescape`` so that comparisons see the real bytes; a
    result must still serialise to JSON (training logs, result files), which lone
    surrogates would break.
    """
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    try:
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # surrogates that are not escaped bytes
        raw = text.encode("utf-8", "backslashreplace")
    return raw.decode("utf-8", "backslashreplace")
