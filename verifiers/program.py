"""What flows between a language and a runtime.

A language turns (code, tests) into a :class:`Program`: read-only files, optional
writable files, an optional build step, and one run :class:`Step` per test. A
runtime executes steps inside a sandbox and answers each with a
:class:`ProcessResult`: raw process facts, no verdicts.

Paths inside steps may use the placeholders ``{program_dir}`` (where the
program's read-only files are), ``{work_dir}`` (the writable working directory)
and ``{python}`` (the sandbox's Python interpreter); the session resolves them,
so a language never hard-codes a runtime's layout.

Toolchains are logical too: a language declares each one it needs as a
:class:`ToolchainSpec` (its placeholders, how this host resolves it, how the Docker images
install it, what to build once at set-up), a program lists them in
:attr:`Program.toolchains`, and its steps use their placeholders; each runtime resolves
them to its own paths (the local runtime to the host's tools, the Docker runtime to its
image's), so that runtimes can be swapped without touching a language, and a language is
one module.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from verifiers.limits import StepLimits


@dataclass(frozen=True)
class Toolchain:
    """A logical toolchain as one runtime provides it.

    Attributes:
        name: The :class:`ToolchainSpec` it resolves.
        placeholders: Value of each of its placeholders (``{rustc}`` -> a path).
        identity: What distinguishes its artefacts from those of another toolchain
            (versions, an image id): build caches key on it.
        host_paths: Host directories a runtime that shares the host's files must expose.
        description: One line for ``verifiers doctor``.
    """

    name: str
    placeholders: Mapping[str, str]
    identity: str
    host_paths: tuple[str, ...] = ()
    description: str = ""


@dataclass(frozen=True)
class ImageRecipe:
    """How the Docker runtime's images install a toolchain (Debian bookworm packages).

    ``verifiers images build`` makes one image per family (``FROM`` the base image with the
    agent's Python) and an all-in-one image holding every family.

    Attributes:
        family: The image's name (``verifiers/<family>``); toolchains of one family share it.
        packages: Debian package -> pinned version, installed with ``apt-get``.
        run: Shell commands run as root after the install (``set -eux``), in a directory
            holding ``files``: warming caches, building vendored libraries. The host's CA
            bundle, when there is one, is at ``$VERIFIERS_BUILD_CA``.
        files: Files the commands use (name -> content).
        keep: Directories the all-in-one image copies from this family's image.
        labels: Placeholder -> its path inside the image (``{"{go}": "/usr/bin/go"}``).
    """

    family: str
    packages: Mapping[str, str]
    labels: Mapping[str, str]
    run: str = ""
    files: Mapping[str, bytes] = field(default_factory=dict)
    keep: tuple[str, ...] = ()


@dataclass(frozen=True)
class ToolchainSpec:
    """A logical toolchain as a language declares it.

    Attributes:
        name: ``node``, ``go``, ``rust``, ``cc``...; unique among the registered languages.
        placeholders: What its steps write (``{go}``, ``{go_cache}``).
        host: Resolves it on this host (the local runtime): the main binary's path, or
            None to search ``PATH``. Raises :class:`~verifiers.errors.RuntimeUnavailableError`
            saying what to install.
        image: How the Docker images install it.
        setup: Builds what it needs once, with the network, at set-up time (vendored
            libraries, warm caches); returns one line saying what it built.
    """

    name: str
    placeholders: tuple[str, ...]
    host: Callable[[str | None], Toolchain]
    image: ImageRecipe | None = None
    setup: Callable[[], str] | None = None


@dataclass(frozen=True)
class Check:
    """A judge program on one test: a checker after the program's run, or an interactor beside it.

    It is untrusted data like the program, so it runs sandboxed with limits of its own, as
    the judge uid, in the program's sandbox (the program's output never leaves it for the
    checker's sake). Its argv may use ``{input}``, ``{output}`` and ``{answer}`` (memory
    files only it holds: the test's input, the program's output, the jury's answer),
    ``{feedback_dir}`` (an empty directory only judges reach; its files come back) and
    ``{judge_dir}`` (where :attr:`Program.judge_dir_files` are).

    Attributes:
        step: The checker's process (``exec``).
        input: The test's input.
        answer: The jury's answer.
        output_on_stdin: The program's output is its stdin as well (Kattis validators).
        interactive: An interactor: it runs beside the program, its stdout on the program's
            stdin and the program's stdout on its stdin; ``{output}`` is then empty.
    """

    step: Step
    input: bytes = b""
    answer: bytes = b""
    output_on_stdin: bool = False
    interactive: bool = False


@dataclass(frozen=True)
class CheckResult:
    """What a checker or interactor did (raw facts; the protocol gives them a meaning).

    Attributes:
        exit_code: Its exit status, or None when a signal ended it.
        signal: The signal that ended it, or None.
        stdout: What it printed (a checker; an interactor's stdout went to the program).
        stderr: The end of what it wrote on stderr (testlib's message).
        feedback: The files it left in its feedback directory (name -> head of the file).
        timed_out: It was killed at its own time limit.
        output_exceeded: It wrote more than its output cap.
        wall_s: Wall time.
        cpu_s: CPU time.
        first: ``judge`` when an interactor ended before the program, else ``program``.
    """

    exit_code: int | None
    signal: int | None
    stdout: bytes = b""
    stderr: bytes = b""
    feedback: Mapping[str, bytes] = field(default_factory=dict)
    timed_out: bool = False
    output_exceeded: str | None = None
    wall_s: float = 0.0
    cpu_s: float = 0.0
    first: str = "program"


@dataclass(frozen=True)
class Executable:
    """A program a language can run as a judge (a checker or interactor), before its build.

    Attributes:
        files: Its sources, by path relative to its directory.
        run: Its command line, with ``{dir}`` where its directory (or its build's) is.
        build: A build step (run in a sandbox's work directory holding ``files``), or None.
        artefacts: What the build leaves that ``run`` needs (relative paths).
        build_key: Content hash of the sources, flags and toolchain of the build.
        toolchains: The toolchains its build and run use.
        env: Environment variables of its run (``{dir}`` may appear in them).
    """

    files: Mapping[str, bytes]
    run: tuple[str, ...]
    build: Step | None = None
    artefacts: tuple[str, ...] = ()
    build_key: str | None = None
    toolchains: tuple[ToolchainSpec, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Step:
    """One process to run.

    Attributes:
        argv: Command line (``exec``) or arguments passed to the function (``call``).
        limits: Resource limits of this run.
        kind: ``exec`` runs a program; ``call`` forks an already running Python
            interpreter and calls ``function`` of the Python file ``module`` in the
            child, with ``argv`` as its argument (a program's call runs in a process that
            never held a judge's data; a judge's, in the supervisor's).
        module: Path of the Python file for ``call`` steps.
        function: Function name for ``call`` steps.
        stdin: Bytes on the process's standard input.
        env: Extra environment variables (the sandbox's base environment is minimal).
        cwd: Working directory (default: the work directory).
        judge: Trusted test code run at the same time, in a process of its own that the
            program cannot read, write, signal or trace: the program's descriptors 5
            (in) and 6 (out) are a call channel to the judge's 6 and 5, and the judge's
            verdict comes back on its descriptor 3 (:attr:`ProcessResult.verdict`). The
            run ends when the judge does. A judge's ``call`` entries and data are the
            program's ``judge_entries`` and ``judge_files``.
        check: A checker run after the process when it ended cleanly, or an interactor
            run beside it (:class:`Check`); :attr:`ProcessResult.check` reports it.
        warm_argv: The command line of a *runner* that can serve this step and the
            program's other steps with the same runner in one process, kept between them
            (a warm Node, say: no interpreter start per test). The runner reads each test
            on descriptor 5 and replies on 6 (see ``runtimes/_agent.py``); it is the
            program's own process, so its replies are the program's output and nothing
            more, under the same limits. ``argv`` still runs the step alone, as a runtime
            does where a step has a judge or a checker.
    """

    argv: tuple[str, ...]
    limits: StepLimits
    kind: Literal["exec", "call"] = "exec"
    module: str | None = None
    function: str = "main"
    stdin: bytes = b""
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    judge: Step | None = None
    check: Check | None = None
    warm_argv: tuple[str, ...] | None = None


@dataclass(frozen=True)
class ProcessResult:
    """Raw facts about one run, as the sandbox observed them.

    Attributes:
        exit_code: Exit status, or None when killed by a signal.
        signal: The terminating signal, or None.
        stdout: Standard output (at most the output cap).
        stderr: Standard error (at most the output cap).
        channel: What the process wrote on descriptor 3, the harness result channel.
        nonce: A random token the sandbox generated after starting the process
            and offered on descriptor 4; a harness echoes it to prove it ran to its end.
        wall_s: Wall time.
        cpu_s: CPU time (user + system).
        max_rss_mb: Peak resident memory, when measurable.
        timed_out: The wall-clock limit was hit and the process was killed.
        output_exceeded: Which stream went over the cap (``stdout``, ``stderr``,
            ``channel``), or None.
        exec_error: The sandbox could not start the program (for example, the
            executable is missing).
        stderr_bytes: How much the program wrote to stderr (``stderr`` keeps its head and
            tail).
        verdict: What the step's judge wrote on its descriptor 3 (empty without a judge).
        judge_stderr: The end of what the judge printed.
        judge_exit_code: The judge's exit status, or None (no judge, or a signal).
        judge_signal: The signal that ended the judge, or None.
        oom_killed: The sandbox's memory (all its processes together, its scratch files
            included) ran out during the run and the kernel killed a process.
        check: What the step's checker or interactor did (None: it has none, or a checker
            was not run because the program did not end cleanly).
        run_delay_s: For a run that timed out, the longest any of its threads had waited
            for a CPU while runnable (the kernel's schedstat), when the kernel says.
        budget_cut: The program's time budget ran out during the run and stopped it
            before its own time limit.
    """

    exit_code: int | None
    signal: int | None
    stdout: bytes = b""
    stderr: bytes = b""
    channel: bytes = b""
    nonce: str = ""
    wall_s: float = 0.0
    cpu_s: float = 0.0
    max_rss_mb: float | None = None
    timed_out: bool = False
    output_exceeded: str | None = None
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    exec_error: str | None = None
    stderr_bytes: int = 0
    verdict: bytes = b""
    judge_stderr: bytes = b""
    judge_exit_code: int | None = None
    judge_signal: int | None = None
    oom_killed: bool = False
    check: CheckResult | None = None
    run_delay_s: float | None = None
    budget_cut: bool = False


@dataclass(frozen=True)
class ProgramTest:
    """The run step of one selected test, and what the language needs to judge it."""

    index: int
    step: Step
    meta: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Program:
    """Everything a runtime needs to run one candidate program.

    Attributes:
        files: Read-only files, by path relative to the program directory.
        work_files: Writable files, by path relative to the work directory.
        build: Optional build step, run once before the tests.
        tests: One run step per selected test.
        preload_modules: Python modules the sandbox imports once before the tests
            so that forked children share them.
        preload_entries: Python files (in the program directory) loaded once for ``call`` steps.
        host_paths: Host directories the program needs read-only (data such as a
            large SQLite database; toolchains go through ``toolchains``).
        executables: Work files to make executable.
        build_key: Content hash of everything the build depends on (sources, flags,
            toolchain); equal keys give interchangeable artefacts.
        artefacts: Work files the build produces that tests need; with a build key they
            are cached, and a later program with the same key skips its build.
        prepare: ``call`` steps run once, after the preload and before the tests, in the
            process that forks the program's ``call`` steps (no fork, no limits, output
            discarded), so that forked tests share their work: compiling the program, say
            (compiling runs none of it). Failures are ignored (each test meets them).
        judge_files: Files only judges see, by name (tests, expected values): kept in the
            supervisor's memory, never in the program's file system or processes.
        judge_entries: Python files loaded once for judges' ``call`` steps.
        judge_modules: Modules imported once for judges (the tests' imports).
        judge_prepare: Like ``prepare``, for judges (compiling the tests), run where judges
            are forked.
        toolchains: Logical toolchains the steps use through their placeholders; the
            runtime resolves them.
        judge_dir_files: Files of checkers and interactors (a built checker, a script),
            written before any test into ``{judge_dir}``, a directory only judges reach.
        files_in_memory: Every step is a ``call`` whose entry reads the program's files
            through ``PROGRAM_FILES`` (the agent's in-memory copy, by absolute path)
            before the disk. Such a program needs nothing written into the sandbox's
            file system: a warm sandbox gets it in memory.
    """

    files: Mapping[str, bytes]
    tests: tuple[ProgramTest, ...]
    work_files: Mapping[str, bytes] = field(default_factory=dict)
    build: Step | None = None
    preload_modules: tuple[str, ...] = ()
    preload_entries: tuple[str, ...] = ()
    host_paths: tuple[str, ...] = ()
    executables: frozenset[str] = frozenset()
    build_key: str | None = None
    artefacts: tuple[str, ...] = ()
    prepare: tuple[Step, ...] = ()
    files_in_memory: bool = False
    toolchains: tuple[ToolchainSpec, ...] = ()
    judge_files: Mapping[str, bytes] = field(default_factory=dict)
    judge_entries: tuple[str, ...] = ()
    judge_modules: tuple[str, ...] = ()
    judge_prepare: tuple[Step, ...] = ()
    judge_dir_files: Mapping[str, bytes] = field(default_factory=dict)


def resolve(text: str, values: Mapping[str, str]) -> str:
    """Replace the path placeholders in ``text``."""
    if "{" not in text:
        return text  # most arguments hold none (this runs for every step of every test)
    for key, value in values.items():
        text = text.replace(key, value)
    return text
