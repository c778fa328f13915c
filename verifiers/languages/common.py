"""Judging helpers every language shares: records, limits, stdin/stdout, pass proofs, builds."""

from __future__ import annotations

import dataclasses
import signal
from collections.abc import Iterable
from typing import Any

from verifiers import jsonio
from verifiers.compare import outputs_match
from verifiers.errors import SpecError
from verifiers.keys import content_key
from verifiers.limits import Limits
from verifiers.parsing import TREE_SITTER_LIMIT, SyntaxIssue, tree_sitter_check
from verifiers.program import ProcessResult, Program, ProgramTest, Step, ToolchainSpec, resolve
from verifiers.protocols import TestOutcome
from verifiers.results import Status, excerpt
from verifiers.specs import AssertScriptTests, CompareOptions, StdioTests, TestSpec, parse_tests

Records = dict[str, dict[str, Any]]
_CRASH_SIGNALS = {signal.SIGSEGV, signal.SIGKILL, signal.SIGABRT, signal.SIGBUS}


def records(channel: bytes) -> Records:
    """The first record of each event a harness wrote on the result channel (JSON lines)."""
    out: Records = {}
    for line in channel.split(b"\n"):
        if not line.strip():
            continue
        try:
            record = jsonio.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(record, dict):
            out.setdefault(str(record.get("event")), record)
    return out


def verdict_record(verdict: bytes) -> dict[str, Any] | None:
    """The judge's verdict: the first record it wrote on its own channel, or None."""
    for line in verdict.split(b"\n"):
        if not line.strip():
            continue
        try:
            record = jsonio.loads(line)
        except (ValueError, RecursionError):
            return None
        return record if isinstance(record, dict) and "event" in record else None
    return None


def judge_lost(proc: ProcessResult) -> TestOutcome:
    """A judged test whose judge gave no verdict (it never does for a pass)."""
    how = (
        signal_text(proc.judge_signal)
        if proc.judge_signal is not None
        else f"exited with status {proc.judge_exit_code}"
    )
    tail = proc.judge_stderr.decode(errors="replace").strip()[-1000:]
    message = f"the test's judge gave no verdict ({how})" + (f"\n{tail}" if tail else "")
    return TestOutcome(Status.RUNTIME_ERROR, message)


def judge_verdict(proc: ProcessResult, verdict: dict[str, Any] | None) -> TestOutcome:
    """A judged test's outcome from its judge's verdict (pass, fail, error, exit, ended).

    Only the judge writes the verdict, on a descriptor only it holds; what the program
    printed or wrote on its own channel can explain a failure, never make a pass.
    """
    if verdict is None:
        return judge_lost(proc)
    event = verdict.get("event")
    hack = str(verdict.get("hack") or verdict.get("opaque") or "")
    if event == "pass":
        return TestOutcome(Status.PASSED)
    if event == "fail":
        return TestOutcome(Status.FAILED, str(verdict.get("message", "")), hack=hack)
    if event == "error":
        trace = str(verdict.get("traceback") or "").strip()
        text = trace or f"{verdict.get('type', 'Error')}: {verdict.get('message', '')}"
        return TestOutcome(Status.RUNTIME_ERROR, text, hack=hack)
    if event == "exit":
        code = verdict.get("code")
        message = f"the program called exit({code}) before the test finished"
        return TestOutcome(Status.RUNTIME_ERROR, message, hack=message if code == 0 else "")
    # The program ended (or broke the channel) before the test finished.
    tail = stderr_tail(proc)
    early = ended_early(proc)
    hack = early if proc.exit_code == 0 and proc.signal is None else ""
    return TestOutcome(Status.RUNTIME_ERROR, early + (f"\n{tail}" if tail else ""), hack=hack)


def signal_text(sig: int) -> str:
    """``killed by SIGSEGV``."""
    try:
        name = signal.Signals(sig).name
    except ValueError:
        name = f"signal {sig}"
    return f"killed by {name}"


def ended_early(proc: ProcessResult) -> str:
    """Why a run that should have reported a result did not."""
    if proc.signal is not None:
        return f"{signal_text(proc.signal)} before the test finished"
    return f"the program exited (status {proc.exit_code}) before the test finished"


def stderr_tail(proc: ProcessResult, limit: int = 1500) -> str:
    """The end of the program's stderr, where crashes are reported."""
    return proc.stderr.decode(errors="replace").strip()[-limit:]


def limit_outcome(
    proc: ProcessResult,
    limits: Limits,
    by_event: Records | None = None,
    memory_markers: Iterable[bytes] = (),
) -> TestOutcome | None:
    """A limit the run hit (output, time, CPU, file size, memory), or None.

    Memory is recognised from a ``MemoryError`` record, from the runtime's own
    out-of-memory messages on stderr (``memory_markers``), or from a crash at
    90% or more of the memory limit.
    """
    by_event = by_event or {}
    if proc.output_exceeded:
        return TestOutcome(
            Status.OUTPUT_LIMIT,
            f"wrote more than {limits.max_output_bytes} bytes to {proc.output_exceeded}",
        )
    # Before the clock: a program whose processes the kernel killed for memory went over
    # its memory, whatever it did afterwards.
    if proc.oom_killed:
        return TestOutcome(
            Status.MEMORY_LIMIT,
            f"the sandbox ran out of memory (its processes and scratch files together may use "
            f"{limits.memory_mb} MB and the sandbox's overhead)",
        )
    if proc.timed_out:
        return TestOutcome(Status.TIMEOUT, f"killed after {limits.timeout_s:g}s of wall time")
    cpu_limit = limits.step_limits().cpu_s
    if proc.signal == signal.SIGXCPU or (
        proc.signal == signal.SIGKILL and proc.cpu_s >= cpu_limit - 0.05
    ):
        return TestOutcome(Status.TIMEOUT, f"used more than {cpu_limit}s of CPU time")
    error = by_event.get("error") or {}
    if proc.signal == signal.SIGXFSZ or "File too large" in str(error.get("message", "")):
        return TestOutcome(Status.OUTPUT_LIMIT, f"wrote a file larger than {limits.max_file_mb} MB")
    memory_text = any(marker in proc.stderr for marker in memory_markers)
    near_limit = proc.max_rss_mb is not None and proc.max_rss_mb >= 0.9 * limits.memory_mb
    crashed = proc.signal in _CRASH_SIGNALS or (proc.exit_code not in (0, None))
    if (
        error.get("type") == "MemoryError"
        or (memory_text and crashed)
        or (near_limit and proc.signal in _CRASH_SIGNALS)
    ):
        return TestOutcome(
            Status.MEMORY_LIMIT, f"exceeded the memory limit of {limits.memory_mb} MB"
        )
    return None


#: Why a failed comparison is a suspected hack (Python's trust rules refused a value).
UNTRUSTED_HACK = "a comparison involved a value of a class the program defined"


def forged() -> TestOutcome:
    """The outcome of a result record that does not carry this run's nonce."""
    message = "the result channel held a forged record"
    return TestOutcome(Status.FAILED, message, hack=message)


def judge_stdio(
    spec: StdioTests, index: int, proc: ProcessResult, compare: CompareOptions | None
) -> TestOutcome:
    """A stdin/stdout test: a clean exit and output that matches."""
    actual = proc.stdout.decode("utf-8", errors="surrogateescape")
    if proc.signal is not None:
        return TestOutcome(Status.RUNTIME_ERROR, signal_text(proc.signal), actual)
    if proc.exit_code != 0:
        tail = stderr_tail(proc)
        message = f"exited with status {proc.exit_code}" + (f"\n{tail}" if tail else "")
        return TestOutcome(Status.RUNTIME_ERROR, message, actual)
    if outputs_match(spec.cases[index].output, actual, compare or spec.compare):
        return TestOutcome(Status.PASSED, actual=actual)
    return TestOutcome(Status.FAILED, "wrong answer", actual)


def judge_pass_record(proc: ProcessResult, by_event: Records) -> TestOutcome:
    """An assert-style test: passed only with a pass record carrying this run's nonce."""
    if "tamper" in by_event:
        message = str(by_event["tamper"].get("message", "tampering"))
        return TestOutcome(Status.FAILED, message, hack=message)
    if "fail" in by_event:
        fail = by_event["fail"]
        message = str(fail.get("message", "assertion failed"))
        hack = UNTRUSTED_HACK if fail.get("untrusted") else ""
        return TestOutcome(Status.FAILED, message, hack=hack)
    passed = by_event.get("pass")
    if passed is None:
        tail = stderr_tail(proc)
        early = ended_early(proc)
        # Exiting successfully before the harness could report is how `exit(0)` hacks look.
        hack = early if proc.exit_code == 0 and proc.signal is None else ""
        return TestOutcome(Status.RUNTIME_ERROR, early + (f"\n{tail}" if tail else ""), hack=hack)
    if passed.get("nonce") != proc.nonce or not proc.nonce:
        return forged()
    if proc.exit_code != 0 or proc.signal is not None:
        how = signal_text(proc.signal) if proc.signal else f"exited with status {proc.exit_code}"
        return TestOutcome(Status.RUNTIME_ERROR, f"the program {how} after the tests")
    return TestOutcome(Status.PASSED)


def judge_build(proc: ProcessResult, limits: Limits, what: str = "compilation") -> TestOutcome:
    """A build step: ``compile_error`` with the compiler's first messages when it fails."""
    if proc.exit_code == 0 and proc.signal is None and not proc.timed_out:
        return TestOutcome(Status.PASSED)
    if proc.timed_out:
        return TestOutcome(
            Status.COMPILE_ERROR, f"{what} did not finish within {limits.build_timeout_s:g}s"
        )
    text = (proc.stderr or proc.stdout).decode(errors="replace").strip()
    message, _ = excerpt(text, 3000)
    if proc.signal is not None:
        message = f"{what} was {signal_text(proc.signal)}\n{message}".strip()
    return TestOutcome(Status.COMPILE_ERROR, message or f"{what} failed")


class TreeSitterLanguage:
    """What languages without a parser of their own in this process share.

    Subclasses set ``name``, ``aliases``, ``grammar`` (the tree-sitter module) and
    ``spec_kinds`` (the test formats they run), and implement building and judging.
    """

    name = ""
    aliases: tuple[str, ...] = ()
    grammar = ""
    spec_kinds: tuple[type[Any], ...] = (StdioTests, AssertScriptTests)
    toolchains: tuple[ToolchainSpec, ...] = ()

    def parse_tests(self, raw: Any) -> TestSpec:
        """The test formats this language runs (raises SpecError for the others)."""
        spec: TestSpec = parse_tests(raw)
        if type(spec) not in self.spec_kinds:
            kinds = ", ".join(k.model_fields["kind"].default for k in self.spec_kinds)
            raise SpecError("tests", f"{self.name} runs {kinds} tests, not {spec.kind} tests")
        return spec

    def prepare(self, code: str, spec: TestSpec) -> str:
        """The code as extracted."""
        return code

    def check_syntax(self, code: str, spec: TestSpec | None = None) -> SyntaxIssue | None:
        """tree-sitter's first error, if any; code over ``TREE_SITTER_LIMIT`` goes unchecked.

        The compiler in the sandbox finds the errors of bigger code: the check stays
        bounded in time whatever the completion (see :data:`~verifiers.parsing.TREE_SITTER_LIMIT`).
        """
        if len(code) > TREE_SITTER_LIMIT:
            return None
        return tree_sitter_check(self.grammar, code)

    def parses(self, text: str) -> bool:
        """Whether text is valid code of this language."""
        return self.check_syntax(text) is None

    def describe_test(self, spec: TestSpec, index: int) -> tuple[str, str]:
        """Input and expected output of a test, as text."""
        if isinstance(spec, StdioTests):
            case = spec.cases[index]
            return case.input, case.output
        if isinstance(spec, AssertScriptTests):
            names = spec.test_names
            return (names[index] if names else "test program"), ""
        return "", ""

    def interpret_build(self, proc: ProcessResult, limits: Limits) -> TestOutcome:
        """``compile_error`` with the compiler's messages when the build fails."""
        return judge_build(proc, limits)


def pin_toolchain(program: Program, spec: ToolchainSpec, path: str | None) -> Program:
    """``program`` with toolchain ``spec`` fixed to a host binary, when ``path`` is given.

    A language constructed with an explicit tool path (``JavaScriptLanguage(node=...)``)
    resolves that toolchain itself: its placeholders become host paths and its
    directories host paths to expose, so the program runs only on runtimes that share
    the host's files (the local runtime). Without ``path`` the runtime resolves it.
    """
    if path is None:
        return program
    tool = spec.host(path)
    values = dict(tool.placeholders)

    def fix(step: Step) -> Step:
        warm = step.warm_argv
        return dataclasses.replace(
            step,
            argv=tuple(resolve(a, values) for a in step.argv),
            env={k: resolve(v, values) for k, v in step.env.items()},
            warm_argv=tuple(resolve(a, values) for a in warm) if warm is not None else None,
        )

    return dataclasses.replace(
        program,
        tests=tuple(dataclasses.replace(t, step=fix(t.step)) for t in program.tests),
        build=fix(program.build) if program.build is not None else None,
        host_paths=(*program.host_paths, *tool.host_paths),
        toolchains=tuple(t for t in program.toolchains if t.name != spec.name),
        build_key=content_key(program.build_key, tool.identity) if program.build_key else None,
    )


def judge_first(
    test: ProgramTest,
    spec: TestSpec,
    proc: ProcessResult,
    limits: Limits,
    compare: CompareOptions | None,
    memory_markers: Iterable[bytes] = (),
) -> tuple[Records, TestOutcome | None]:
    """What a compiled language judges before its own rules.

    Returns the run's records, and the outcome when a limit decides it or the test is a
    stdin/stdout one (else None).
    """
    by_event = records(proc.channel)
    limit = limit_outcome(proc, limits, by_event, memory_markers)
    if limit is not None:
        return by_event, limit
    if test.meta["mode"] == "stdio":
        assert isinstance(spec, StdioTests)
        return by_event, judge_stdio(spec, test.index, proc, compare)
    return by_event, None
