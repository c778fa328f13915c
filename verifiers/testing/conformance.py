"""The runtime conformance suite: real programs, real sandbox, no mocks.

Every check is ``async def check(runtime) -> None`` and raises AssertionError
with a reason when the runtime breaks a promise of the
:class:`~verifiers.protocols.Runtime` protocol. Programs are POSIX shell and
Python, so any runtime with ``/bin/sh`` and the Python interpreter passes.
"""

from __future__ import annotations

import ast
import asyncio
import os
import signal
import socket
import time
from collections.abc import Awaitable, Callable
from typing import Any

from verifiers.limits import MIB, Limits
from verifiers.program import ProcessResult, Program, Step
from verifiers.protocols import Runtime, Session

Check = Callable[[Runtime], Awaitable[None]]
RUNTIME_CHECKS: list[Check] = []

#: Slack allowed on top of a time limit before a run counts as not bounded.
TIME_MARGIN_S = 3.0


def check(fn: Check) -> Check:
    """Register a conformance check."""
    RUNTIME_CHECKS.append(fn)
    return fn


def step(argv: tuple[str, ...], limits: Limits | None = None, **kw: Any) -> Step:
    """A step with default (or given) limits."""
    return Step(argv=argv, limits=(limits or Limits(timeout_s=10)).step_limits(), **kw)


def sh(script: str, limits: Limits | None = None, **kw: Any) -> Step:
    """A POSIX shell step."""
    return step(("/bin/sh", "-c", script), limits, **kw)


def py(code: str, limits: Limits | None = None, **kw: Any) -> Step:
    """A Python step on the sandbox's interpreter."""
    return step(("{python}", "-s", "-B", "-c", code), limits, **kw)


async def run_one(
    runtime: Runtime,
    the_step: Step,
    program: Program | None = None,
    limits: Limits | None = None,
) -> ProcessResult:
    """Open a session (with ``limits`` for sandbox-wide settings), run one step, close."""
    program = program or Program(files={}, tests=())
    async with runtime.session(program, limits or Limits()) as session:
        return await session.run(the_step)


async def processes(session: Session) -> list[str]:
    """Command lines of every process the sandbox can see, but the one listing them."""
    listing = py(
        "import os\n"
        "me = os.getpid()\n"
        "for p in os.listdir('/proc'):\n"
        "    if p.isdigit() and int(p) != me:\n"
        "        try:\n"
        "            raw = open(f'/proc/{p}/cmdline', 'rb').read()\n"
        "            print(raw.replace(b'\\0', b' ').decode())\n"
        "        except OSError:\n"
        "            pass\n"
    )
    result = await session.run(listing)
    return [line for line in result.stdout.decode().splitlines() if line.strip()]


def _expect(condition: bool, message: str, result: ProcessResult | None = None) -> None:
    if not condition:
        detail = ""
        if result is not None:
            detail = (
                f" [exit={result.exit_code} signal={result.signal} timed_out={result.timed_out} "
                f"stdout={result.stdout[:300]!r} stderr={result.stderr[:300]!r}]"
            )
        raise AssertionError(message + detail)


@check
async def stdin_reaches_the_program(runtime: Runtime) -> None:
    data = b"line one\nline two\n" * 5000
    r = await run_one(runtime, sh("cat", stdin=data))
    _expect(r.exit_code == 0 and r.stdout == data, "stdin was not passed through intact", r)


@check
async def exit_codes_and_signals_are_reported(runtime: Runtime) -> None:
    r = await run_one(runtime, sh("exit 3"))
    _expect(r.exit_code == 3 and r.signal is None, "exit status 3 not reported", r)
    r = await run_one(runtime, sh("kill -SEGV $$"))
    _expect(r.signal == signal.SIGSEGV and r.exit_code is None, "SIGSEGV not reported", r)


@check
async def wall_timeout_kills_the_whole_tree(runtime: Runtime) -> None:
    limits = Limits(timeout_s=1)
    async with runtime.session(Program(files={}, tests=()), limits) as session:
        started = time.monotonic()
        r = await session.run(sh("sleep 60 & sleep 60 & sleep 60", limits))
        elapsed = time.monotonic() - started
        _expect(r.timed_out, "a sleeping program was not timed out", r)
        _expect(elapsed < 1 + TIME_MARGIN_S, f"timeout took {elapsed:.1f}s", r)
        left = [p for p in await processes(session) if "sleep" in p]
        _expect(not left, f"processes survived the timeout: {left}")


@check
async def daemons_do_not_outlive_their_test(runtime: Runtime) -> None:
    async with runtime.session(Program(files={}, tests=()), Limits()) as session:
        daemon = py(
            "import os, time\n"
            "if os.fork() == 0:\n"
            "    os.setsid()\n"
            "    if os.fork() == 0:\n"
            "        time.sleep(120)\n"
            "    os._exit(0)\n"
            "print('parent done')\n"
        )
        r = await session.run(daemon)
        _expect(r.exit_code == 0 and not r.timed_out, "the daemonising program failed", r)
        left = [p for p in await processes(session) if "-c" in p and "fork" in p]
        _expect(not left, f"a daemon survived its test: {left}")


@check
async def ignoring_sigterm_does_not_help(runtime: Runtime) -> None:
    # CPU time is generous here, so that the wall-clock limit is what stops it.
    limits = Limits(timeout_s=1, cpu_time_s=30)
    code = "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nwhile True: pass\n"
    started = time.monotonic()
    r = await run_one(runtime, py(code, limits))
    _expect(
        r.timed_out and time.monotonic() - started < 1 + TIME_MARGIN_S,
        "a busy loop ignoring SIGTERM was not stopped in time",
        r,
    )


@check
async def cpu_time_is_limited(runtime: Runtime) -> None:
    limits = Limits(timeout_s=20, cpu_time_s=1)
    r = await run_one(runtime, py("while True: pass", limits))
    _expect(
        r.signal in (signal.SIGXCPU, signal.SIGKILL) and not r.timed_out,
        "CPU limit not enforced by a signal",
        r,
    )
    # Not the whole second: on a virtual machine with steal time, the CPU time a process
    # is charged (its rusage) trails what the limit counts by up to a quarter or so.
    _expect(r.cpu_s >= 0.5, f"only {r.cpu_s:.2f}s of CPU were used", r)


@check
async def output_is_capped(runtime: Runtime) -> None:
    limits = Limits(max_output_bytes=64 * 1024)
    r = await run_one(runtime, sh("yes", limits))
    _expect(r.output_exceeded == "stdout", "stdout flood not flagged", r)
    _expect(len(r.stdout) == 64 * 1024, f"kept {len(r.stdout)} bytes instead of the cap", r)
    r = await run_one(runtime, sh("yes >&2", limits))
    _expect(r.output_exceeded == "stderr", "stderr flood not flagged", r)


@check
async def memory_is_limited(runtime: Runtime) -> None:
    limits = Limits(memory_mb=128)
    r = await run_one(runtime, py("x = bytearray(512 * 1024 * 1024)", limits))
    _expect(r.exit_code != 0 and b"MemoryError" in r.stderr, "a 512 MB allocation succeeded", r)


@check
async def processes_are_limited(runtime: Runtime) -> None:
    limits = Limits(max_processes=8)
    code = (
        "import os, time\n"
        "n = 0\n"
        "try:\n"
        "    for _ in range(100):\n"
        "        if os.fork() == 0:\n"
        "            time.sleep(5); os._exit(0)\n"
        "        n += 1\n"
        "except OSError:\n"
        "    pass\n"
        "print(n)\n"
    )
    r = await run_one(runtime, py(code, limits))
    forked = int(r.stdout.decode().strip() or -1)
    _expect(0 <= forked <= 8, f"forked {forked} processes with max_processes=8", r)


@check
async def file_size_is_limited(runtime: Runtime) -> None:
    limits = Limits(max_file_mb=1)
    r = await run_one(runtime, sh("head -c 5000000 /dev/zero > big", limits))
    _expect(r.signal == signal.SIGXFSZ or r.exit_code != 0, "a 5 MB file was written", r)


@check
async def scratch_space_is_bounded(runtime: Runtime) -> None:
    limits = Limits(disk_mb=8, max_file_mb=64)
    script = "head -c 20000000 /dev/zero > big; echo rc=$?"
    r = await run_one(runtime, sh(script, limits), limits=limits)
    _expect(b"rc=0" not in r.stdout, "20 MB were written into an 8 MB work directory", r)


@check
async def no_network(runtime: Runtime) -> None:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.setblocking(False)
    port = listener.getsockname()[1]
    try:
        code = (
            "import socket\n"
            f"for host, port in (('127.0.0.1', {port}), ('1.1.1.1', 53), ('8.8.8.8', 443)):\n"
            "    s = socket.socket(); s.settimeout(2)\n"
            "    try:\n"
            "        s.connect((host, port)); print('CONNECTED', host)\n"
            "    except OSError as e:\n"
            "        print('refused', host, e.errno)\n"
        )
        r = await run_one(runtime, py(code))
        _expect(b"CONNECTED" not in r.stdout, "the sandbox reached the network", r)
        try:
            conn, _ = listener.accept()
            conn.close()
            raise AssertionError("the host listener saw a connection from the sandbox")
        except BlockingIOError:
            pass
    finally:
        listener.close()


@check
async def environment_is_clean(runtime: Runtime) -> None:
    os.environ["VERIFIERS_CANARY_SECRET"] = "s3cret-canary"
    try:
        r = await run_one(runtime, py("import os; print(sorted(os.environ.items()))"))
    finally:
        del os.environ["VERIFIERS_CANARY_SECRET"]
    _expect(b"s3cret-canary" not in r.stdout, "a host environment variable leaked", r)
    r = await run_one(runtime, sh("cat /proc/1/environ | tr '\\0' '\\n'"))
    _expect(b"s3cret" not in r.stdout, "PID 1's environment shows host secrets", r)


@check
async def host_files_are_invisible(runtime: Runtime) -> None:
    canary_dir = os.path.expanduser("~")
    canary = os.path.join(os.getcwd(), ".verifiers-canary")
    with open(canary, "w") as f:
        f.write("host canary")
    try:
        code = (
            "import os\n"
            f"secrets = ({canary!r}, {canary_dir!r} + '/.ssh', '/etc/shadow')\n"
            "for p in secrets + ('/root/.bash_history',):\n"
            "    try:\n"
            "        print('READ', p, open(p).read()[:20])\n"
            "    except OSError as e:\n"
            "        print('no', p, e.errno)\n"
        )
        r = await run_one(runtime, py(code))
        _expect(b"READ" not in r.stdout, "host files are readable in the sandbox", r)
    finally:
        os.unlink(canary)


@check
async def system_is_read_only(runtime: Runtime) -> None:
    program = Program(files={"data.txt": b"original"}, tests=())
    script = (
        "for p in /usr/x /etc/x /x {program_dir}/data.txt {program_dir}/new; do "
        "(echo hacked > $p) 2>/dev/null && echo WROTE $p; done; "
        "echo ok > {work_dir}/scratch && cat {work_dir}/scratch; cat {program_dir}/data.txt"
    )
    r = await run_one(runtime, sh(script), program)
    _expect(b"WROTE" not in r.stdout, "the program wrote outside its work directory", r)
    _expect(r.stdout.endswith(b"ok\noriginal"), "work directory or program files wrong", r)


@check
async def sandbox_user_is_unprivileged(runtime: Runtime) -> None:
    r = await run_one(runtime, sh("id -u; grep CapEff /proc/self/status"))
    lines = r.stdout.decode().split()
    _expect(lines[0] != "0", "the program runs as root", r)
    _expect(lines[-1].strip("0") == "", "the program has capabilities", r)


@check
async def the_supervisor_survives_the_program(runtime: Runtime) -> None:
    async with runtime.session(Program(files={}, tests=()), Limits()) as session:
        await session.run(sh("kill -KILL -1; kill -KILL 1; kill -STOP 1; kill -TERM 1"))
        r = await session.run(sh("echo still here"))
        _expect(r.stdout == b"still here\n", "the sandbox did not survive the program's signals", r)


@check
async def result_channel_and_nonce(runtime: Runtime) -> None:
    code = "import os\nnonce = os.read(4, 100)\nos.write(3, b'ok ' + nonce)\n"
    async with runtime.session(Program(files={}, tests=()), Limits()) as session:
        first = await session.run(py(code))
        second = await session.run(py(code))
    _expect(first.channel == b"ok " + first.nonce.encode(), "fd 3/4 protocol broken", first)
    _expect(len(first.nonce) >= 32 and first.nonce != second.nonce, "nonces are not fresh")


@check
async def call_steps_fork_the_interpreter(runtime: Runtime) -> None:
    module = (
        b"import os, sys\n"
        b"def main(argv):\n"
        b"    print('called', argv, sys.stdin.read())\n"
        b"    return 7\n"
    )
    program = Program(
        files={"entry.py": module}, tests=(), preload_entries=("{program_dir}/entry.py",)
    )
    call = Step(
        argv=("a", "b"),
        limits=Limits().step_limits(),
        kind="call",
        module="{program_dir}/entry.py",
        stdin=b"input",
    )
    async with runtime.session(program, Limits()) as session:
        r = await session.run(call)
    _expect(r.exit_code == 7 and r.stdout == b"called ['a', 'b'] input\n", "call step failed", r)


@check
async def each_step_has_exactly_its_environment(runtime: Runtime) -> None:
    # Steps of one session with different variables, exec'd and forked, in turns: none
    # sees another's variables, and none the sandbox's own (a supervisor adopts a step's
    # environment before it forks, so the next step's must replace it).
    module = b"import os\ndef main(argv):\n    print(sorted(os.environ))\n    return 0\n"
    program = Program(
        files={"entry.py": module}, tests=(), preload_entries=("{program_dir}/entry.py",)
    )
    show = "import os; print(sorted(os.environ))"

    def call(env: dict[str, str]) -> Step:
        limits = Limits().step_limits()
        return Step(argv=(), limits=limits, kind="call", module="{program_dir}/entry.py", env=env)

    runs = [
        ("exec", py(show, env={"VF_FIRST": "1"}), "VF_FIRST"),
        ("call", call({"VF_SECOND": "2"}), "VF_SECOND"),
        ("exec", py(show), None),
        ("call", call({"VF_THIRD": "3"}), "VF_THIRD"),
    ]
    async with runtime.session(program, Limits()) as session:
        seen = [(kind, await session.run(s), own) for kind, s, own in runs]
    base: set[str] | None = None
    for kind, r, own in seen:
        _expect(r.exit_code == 0, f"a {kind} step failed", r)
        names = set(ast.literal_eval(r.stdout.decode().strip()))
        mine = {own} if own else set()
        _expect(mine <= names, f"a {kind} step lacks its own variable {own}", r)
        others = {n for n in names if n.startswith("VF_")} - mine
        _expect(not others, f"a {kind} step sees another step's variables {sorted(others)}", r)
        _expect("PWD" not in names, f"a {kind} step sees the sandbox's PWD", r)
        base = names - mine if base is None else base
        _expect(names - mine == base, f"a {kind} step's base environment differs", r)


@check
async def work_files_are_writable(runtime: Runtime) -> None:
    program = Program(files={}, tests=(), work_files={"src/main.txt": b"draft"})
    script = "cat src/main.txt; echo final > src/main.txt; cat src/main.txt"
    r = await run_one(runtime, sh(script), program)
    _expect(r.stdout == b"draftfinal\n", "work files missing or not writable", r)


@check
async def sessions_run_concurrently(runtime: Runtime) -> None:
    async def one(n: int) -> bytes:
        r = await run_one(runtime, sh(f"sleep 0.5; echo {n}"))
        return r.stdout

    outputs = await asyncio.gather(*(one(n) for n in range(6)))
    _expect(outputs == [f"{n}\n".encode() for n in range(6)], f"wrong outputs {outputs}")


__all__ = ["MIB", "RUNTIME_CHECKS", "Check"]
