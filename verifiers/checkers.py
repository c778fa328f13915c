"""Checkers and interactors: how a judge program is run, and what its protocol's exit means.

A spec's ``checker`` or ``interactor`` (:class:`~verifiers.specs.JudgeProgram`) is a program
in any language that can run judges (``Language.executable``). The pipeline builds it once
per distinct source (the build cache), writes it where only judges reach in the program's
sandbox, and runs it there after (checker) or beside (interactor) each test's run, as the
judge uid with limits of its own: it is data from the internet too. Its verdict replaces the
output comparison; its own failure (testlib's ``fail``, a crash, an exit its protocol does
not define, its time limit) is a judge failure: ``sandbox_error``, never the program's,
unless the program's output caused it: a checker that fails on an output (not by its time
limit) runs again on the jury's answer given as the output (:func:`answer_step`, once per
checker, input and answer: :data:`ANSWER_VERDICTS`), and a checker that accepts the
jury's answer failed because of the output, which is then the program's wrong answer
(:func:`blame_output`).
"""

from __future__ import annotations

import dataclasses
import json
import signal
import threading
from collections import OrderedDict
from collections.abc import Mapping

from verifiers.errors import SpecError, UnknownNameError
from verifiers.keys import build_key, content_key
from verifiers.limits import Limits
from verifiers.program import CheckResult, Executable, ProcessResult, Step
from verifiers.protocols import Language, TestOutcome
from verifiers.registry import get_language
from verifiers.results import Status, excerpt
from verifiers.specs import JudgeProgram

#: What a judge failure says in results.
JUDGE_PREFIX = "Judge failure (not the program's fault): "
#: The main file of a ``function`` checker: it calls ``check`` of ``check.py`` beside it.
FUNCTION_MAIN = "checker.py"
FUNCTION_MODULE = "check.py"
#: testlib's exit codes (testlib.h without EJUDGE, CONTESTER or TESTSYS).
TESTLIB_OK, TESTLIB_WA, TESTLIB_PE, TESTLIB_FAIL, TESTLIB_DIRT = 0, 1, 2, 3, 4
TESTLIB_POINTS, TESTLIB_UNEXPECTED_EOF, TESTLIB_PARTIAL = 7, 8, 16
#: Kattis's exit codes.
KATTIS_AC, KATTIS_WA = 42, 43

#: Runs ``check(input, output, answer)`` of the problem's ``check.py``; prints its score as
#: JSON and exits 0. Anything else (an exception, a value that is not a bool or a number in
#: [0, 1]) is the checker's own failure.
FUNCTION_WRAPPER = """\
import importlib.util
import json
import math
import os
import sys


def read(path):
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        return f.read()


def main():
    given, output, answer = (read(p) for p in sys.argv[1:4])
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location("check", os.path.join(here, "check.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    value = module.check(given, output, answer)
    if isinstance(value, bool):
        score = 1.0 if value else 0.0
    elif isinstance(value, (int, float)) and math.isfinite(value) and 0 <= value <= 1:
        score = float(value)
    else:
        sys.stderr.write(f"check() returned {value!r:.200}, not a bool or a number in [0, 1]\\n")
        return 3
    sys.stdout.write(json.dumps({"score": score}))
    return 0


sys.exit(main())
"""


def judge_args(judge: JudgeProgram) -> tuple[str, ...]:
    """The arguments its protocol passes after the command (placeholders the agent fills)."""
    if judge.protocol == "kattis":
        return ("{input}", "{answer}", "{feedback_dir}", *judge.flags)
    return ("{input}", "{output}", "{answer}", *judge.flags)


def judge_sources(judge: JudgeProgram) -> tuple[str | None, dict[str, bytes]]:
    """The main source and the other files the judge's language builds or runs.

    A ``function`` checker's source becomes ``check.py`` beside :data:`FUNCTION_WRAPPER`.
    """
    files = {path: text.encode("utf-8", "surrogateescape") for path, text in judge.files.items()}
    if judge.protocol != "function":
        return judge.source, files
    if FUNCTION_MODULE in files or FUNCTION_MAIN in files:
        raise SpecError(
            "tests.checker.files", f"{FUNCTION_MODULE} and {FUNCTION_MAIN} are the checker's own"
        )
    assert judge.source is not None  # the spec requires it
    files[FUNCTION_MODULE] = judge.source.encode("utf-8", "surrogateescape")
    return FUNCTION_WRAPPER, files


#: The spec a standalone program is built for when it is to be a judge: one stdin/stdout
#: test (its input and output never used: the judge's run takes the protocol's arguments).
_STANDALONE = {"inputs": [""], "outputs": [""]}


def program_executable(
    language: Language, source: str | None, files: Mapping[str, bytes], limits: Limits, field: str
) -> Executable:
    """A judge in any language that builds standalone programs, by the language's own build.

    The language builds ``source`` as it builds a stdin/stdout submission (its compiler,
    flags, toolchain and build cache key); the judge runs that program's command with the
    protocol's arguments. Everything the build reads or writes is in the judge's own
    directory (``{program_dir}`` and ``{work_dir}`` become ``{dir}``); ``files`` are written
    beside the source for its build (and its run, when it has no build); building several
    sources is for languages with an ``executable`` of their own (C, C++, Python).

    Raises:
        SpecError: The language runs no standalone programs, the source is missing or does
            not parse, or a file takes one of the build's own names.
    """
    try:
        spec = language.parse_tests(_STANDALONE)
    except SpecError:
        raise SpecError(
            f"{field}.language",
            f"{language.name} programs cannot be checkers or interactors "
            "(the language runs no standalone programs)",
        ) from None
    if source is None:
        raise SpecError(f"{field}.source", f"a {language.name} judge gives its main file")
    issue = language.check_syntax(source, spec)
    if issue is not None and not issue.deferred:
        raise SpecError(f"{field}.source", f"the judge does not parse: {issue.describe()}")
    program = language.build_program(source, spec, [0], limits)
    [test] = program.tests
    step = test.step
    if (
        step.kind != "exec"
        or step.judge is not None
        or program.preload_modules
        or program.preload_entries
        or program.prepare
        or program.host_paths
        or program.files_in_memory
    ):
        raise SpecError(
            f"{field}.language",
            f"{language.name} programs cannot be checkers or interactors "
            "(its programs need more than a command to run)",
        )
    own = {**program.files, **program.work_files}
    taken = sorted(set(files) & set(own))
    if taken:
        raise SpecError(f"{field}.files", f"{taken[0]} is the build's own name")

    def build_side(text: str) -> str:
        return text.replace("{program_dir}", "{work_dir}")

    def run_side(text: str) -> str:
        return text.replace("{program_dir}", "{dir}").replace("{work_dir}", "{dir}")

    build = program.build
    if build is not None:
        build = dataclasses.replace(
            build,
            argv=tuple(build_side(a) for a in build.argv),
            env={k: build_side(v) for k, v in build.env.items()},
            cwd=build_side(build.cwd) if build.cwd else build.cwd,
        )
    return Executable(
        files={**own, **files},
        run=tuple(run_side(a) for a in step.argv),
        build=build,
        artefacts=program.artefacts,
        build_key=build_key("judge", (program.build_key,), files) if program.build_key else None,
        toolchains=program.toolchains,
        env={k: run_side(v) for k, v in step.env.items()},
    )


def _text(data: bytes, limit: int = 1500) -> str:
    return excerpt(data.decode("utf-8", errors="replace").strip(), limit)[0]


def _failure(what: str, result: CheckResult, why: str) -> TestOutcome:
    said = _text(result.stderr) or _text(b"\n".join(result.feedback.values()))
    message = f"{JUDGE_PREFIX}the {what} {why}" + (f"\n{said}" if said else "")
    return TestOutcome(Status.SANDBOX_ERROR, message)


def _how_it_ended(result: CheckResult) -> str | None:
    """Why a judge's run is not a verdict at all (time, output, a signal), or None."""
    if result.timed_out:
        return "did not finish within its time limit"
    if result.output_exceeded:
        return f"wrote more than its output limit on {result.output_exceeded}"
    if result.signal is not None:
        try:
            name = signal.Signals(result.signal).name
        except ValueError:
            name = f"signal {result.signal}"
        return f"was killed by {name}"
    return None


def _message(result: CheckResult) -> str:
    """The judge's words for the feedback: Kattis's message files, else its stderr."""
    parts = [
        _text(result.feedback[name])
        for name in ("teammessage.txt", "judgemessage.txt")
        if result.feedback.get(name, b"").strip()
    ]
    return "\n".join(parts) or _text(result.stderr)


def crash_statuses(judge: JudgeProgram) -> frozenset[int]:
    """The exit statuses a crash of the judge's language gives: no verdict of any protocol.

    Read from the language's ``crash_exit_statuses`` (Rust's panic exits 101).
    """
    try:
        language = get_language(judge.language)
    except UnknownNameError:
        return frozenset()
    return frozenset(getattr(language, "crash_exit_statuses", frozenset()))


def _testlib(what: str, result: CheckResult, crashes: frozenset[int] = frozenset()) -> TestOutcome:
    code = result.exit_code
    message = _message(result)
    if code in crashes:
        return _failure(what, result, f"crashed (exit status {code}, its language's crash)")
    if code == TESTLIB_OK:
        return TestOutcome(Status.PASSED, message)
    if code == TESTLIB_WA:
        return TestOutcome(Status.FAILED, f"wrong answer ({what}): {message}")
    if code in (TESTLIB_PE, TESTLIB_DIRT, TESTLIB_UNEXPECTED_EOF):
        return TestOutcome(Status.FAILED, f"presentation error ({what}): {message}")
    if code == TESTLIB_POINTS:
        # testlib's quitp: "points <value> <message>"; the value is this test's share.
        words = message.split()
        try:
            value = float(words[1]) if words[:1] == ["points"] else float(words[0])
        except (IndexError, ValueError):
            return _failure(what, result, "reported points without a value")
        return _partial(what, min(1.0, max(0.0, value)), message)
    if code is not None and TESTLIB_PARTIAL <= code <= TESTLIB_PARTIAL + 100:
        # _pc(n): partially correct, n out of 100.
        return _partial(what, (code - TESTLIB_PARTIAL) / 100, message)
    if code == TESTLIB_FAIL:
        return _failure(what, result, "failed (testlib's fail: the jury's data or the checker)")
    return _failure(what, result, f"exited with status {code}, which testlib does not define")


def _partial(what: str, share: float, message: str) -> TestOutcome:
    if share >= 1.0:
        return TestOutcome(Status.PASSED, message)
    return TestOutcome(
        Status.FAILED, f"partially correct ({what}: {share:g}): {message}", score=share
    )


def _kattis(what: str, result: CheckResult) -> TestOutcome:
    code = result.exit_code
    message = _message(result)
    if code == KATTIS_AC:
        return TestOutcome(Status.PASSED, message)
    if code == KATTIS_WA:
        return TestOutcome(Status.FAILED, f"wrong answer ({what}): {message}")
    return _failure(what, result, f"exited with status {code}, not 42 or 43")


def _function(result: CheckResult) -> TestOutcome:
    if result.exit_code != 0:
        return _failure(
            "check function", result, f"raised or exited with status {result.exit_code}"
        )
    try:
        score = float(json.loads(result.stdout)["score"])
    except (ValueError, KeyError, TypeError):
        return _failure("check function", result, "did not report a score")
    message = _text(result.stderr)
    if score >= 1.0:
        return TestOutcome(Status.PASSED, message)
    credit = score if score > 0 else None
    return TestOutcome(Status.FAILED, f"wrong answer (check function): {message}", score=credit)


def checker_outcome(judge: JudgeProgram, proc: ProcessResult, outcome: TestOutcome) -> TestOutcome:
    """A test's outcome once its checker ran: the checker's verdict replaces the comparison.

    ``outcome`` is the language's judgement of the run. A run that did not end cleanly
    (a crash, a limit) keeps it: its checker never ran.
    """
    if outcome.status not in (Status.PASSED, Status.FAILED) or outcome.hack:
        return outcome
    result = proc.check
    if result is None:
        if proc.exit_code != 0 or proc.signal is not None:
            return outcome
        return TestOutcome(Status.SANDBOX_ERROR, f"{JUDGE_PREFIX}the checker did not run")
    ended = _how_it_ended(result)
    if ended is not None:
        return _failure("checker", result, ended)
    if judge.protocol == "function":
        verdict = _function(result)
    elif judge.protocol == "kattis":
        verdict = _kattis("output validator", result)
    else:
        verdict = _testlib("checker", result, crash_statuses(judge))
    return _with_actual(verdict, outcome.actual)


def interactor_outcome(
    judge: JudgeProgram, proc: ProcessResult, outcome: TestOutcome
) -> TestOutcome:
    """A test's outcome after an interaction, by the Kattis rules (testlib's likewise).

    In order: the interactor's own failure is a judge failure (unless it was stopped
    because the program hit a limit); a wrong answer the interactor gave before the program
    ended stands, whatever the program did next; the program's limits and crashes; then the
    interactor's exit.
    """
    result = proc.check
    if result is None:
        return TestOutcome(Status.SANDBOX_ERROR, f"{JUDGE_PREFIX}the interactor did not run")
    program_limit = proc.timed_out or proc.output_exceeded is not None or proc.oom_killed
    ended = _how_it_ended(result)
    if ended is not None and not (program_limit and result.signal == signal.SIGKILL):
        return _failure("interactor", result, ended)
    verdict = (
        _kattis("interactor", result)
        if judge.protocol == "kattis"
        else _testlib("interactor", result, crash_statuses(judge))
    )
    if verdict.status is Status.SANDBOX_ERROR and not program_limit:
        return verdict
    # The interactor ended first: it said so, or the program died writing to its closed
    # pipe (both may be reaped in one pass, so the order alone can miss it).
    judge_first = result.first == "judge" or proc.signal == signal.SIGPIPE
    if judge_first and verdict.status is Status.FAILED:
        return verdict
    if outcome.status not in (Status.PASSED, Status.FAILED):
        return outcome  # a limit, a crash: the language's judgement of the program's run
    return verdict


def _with_actual(outcome: TestOutcome, actual: str) -> TestOutcome:
    return TestOutcome(
        outcome.status, outcome.message, actual, outcome.fatal, outcome.hack, score=outcome.score
    )


# --- a checker that fails on the program's output ----------------------------------------


def failed_on_output(outcome: TestOutcome, proc: ProcessResult) -> bool:
    """Whether a checker's judge failure may be the output's doing: worth asking the answer.

    The checker ran on the program's output and crashed, exited outside its protocol,
    called testlib's ``fail``, raised (a check function) or wrote past its output cap. Not
    when it did not run, nor at its time limit: how long a checker takes depends on the
    machine's load as well as on its input, so its time limit stays a judge failure.
    """
    result = proc.check
    return (
        outcome.status is Status.SANDBOX_ERROR
        and outcome.message.startswith(JUDGE_PREFIX)
        and result is not None
        and not result.timed_out
    )


#: What prints the jury's answer as a program's output would be (every sandbox has it).
_PRINT_ANSWER = ("/bin/cat",)


def answer_step(step: Step) -> Step | None:
    """The test's checker, run on the jury's answer as the output (None: not a checker)."""
    check = step.check
    if check is None or check.interactive:
        return None
    return Step(argv=_PRINT_ANSWER, limits=step.limits, stdin=check.answer, check=check)


def answer_key(judge_identity: str, step: Step) -> str:
    """What a checker's verdict on the jury's answer depends on.

    The checker's build (or files) and toolchain, its command, environment and limits, the
    test's input and answer.
    """
    check = step.check
    assert check is not None
    env = sorted(check.step.env.items())
    return content_key(
        judge_identity,
        build_key("answer", check.step.argv, {k: v.encode() for k, v in env}),
        repr(check.step.limits),
        "stdin" if check.output_on_stdin else "file",
        check.input,
        check.answer,
    )


class _Verdicts:
    """A bounded map (least recently used out) from :func:`answer_key` to acceptance."""

    def __init__(self, size: int = 8192) -> None:
        self.size = size
        self._items: OrderedDict[str, bool] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> bool | None:
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
            return found

    def put(self, key: str, accepted: bool) -> None:
        with self._lock:
            self._items[key] = accepted
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def __len__(self) -> int:
        return len(self._items)


#: The checkers that accept the jury's answer, per :func:`answer_key`: the samples of one
#: problem (a GRPO group) pay for the run once. (A refusal is not kept: the run is asked
#: again, should the sandbox rather than the checker have failed it.)
ANSWER_VERDICTS = _Verdicts()


def accepts_answer(judge: JudgeProgram, proc: ProcessResult) -> bool:
    """Whether the checker accepted the jury's answer (the run of :func:`answer_step`)."""
    if proc.exit_code != 0 or proc.signal is not None or proc.timed_out:
        return False
    return checker_outcome(judge, proc, TestOutcome(Status.PASSED)).status is Status.PASSED


def blame_output(failure: TestOutcome, accepted: bool) -> TestOutcome:
    """A checker's failure on the program's output, once its verdict on the answer is known.

    It accepts the jury's answer: the output made it fail, so the test is the program's
    wrong answer (with the checker's words, and ``hack`` noting the crash: an output that
    crashes the checker would otherwise have been a dropped sample). Else the checker is
    broken on the jury's own data: the judge failure stands.
    """
    if not accepted:
        return failure
    said = failure.message.removeprefix(JUDGE_PREFIX)
    message = (
        "wrong answer (checker): the checker failed on this output and accepts the jury's "
        f"answer: {said}"
    )
    hack = "the output made the checker fail (it accepts the jury's answer)"
    return TestOutcome(Status.FAILED, message, failure.actual, hack=hack)
