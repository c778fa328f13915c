"""Host side of the sandbox agent protocol, shared by every runtime that runs the agent."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import fcntl
import json
import os
import shutil
import signal
import stat
import struct
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from importlib import resources
from typing import Any, Generic, Protocol, TypeVar

from verifiers.errors import SandboxError
from verifiers.jsonio import INT_DIGITS
from verifiers.program import CheckResult, ProcessResult, Program, Step, resolve
from verifiers.protocols import RuntimeCheck


class _Verdict(Protocol):
    @property
    def ok(self) -> bool: ...

    @property
    def detail(self) -> str: ...


P = TypeVar("P", bound=_Verdict)


class AvailabilityCheck(Generic[P]):
    """A runtime's availability check: run once while it passes, again after a pause when not.

    A working sandbox is checked once; a broken one again after ``retry_s`` seconds, so
    that verification resumes by itself once the fault is fixed (bubblewrap installed, the
    Docker daemon back), without checking on every verification meanwhile.
    """

    def __init__(self, run: Callable[[], P], retry_s: float = 5.0) -> None:
        self._run = run
        #: Seconds before a failed check is tried again.
        self.retry_s = retry_s
        self._verdict: P | None = None
        self._at = 0.0
        self._lock = threading.Lock()

    def get(self) -> P:
        """The verdict, running the check when there is none or a failed one went stale."""
        with self._lock:
            stale = (
                self._verdict is not None
                and not self._verdict.ok
                and time.monotonic() - self._at >= self.retry_s
            )
            if self._verdict is None or stale:
                self._verdict = self._run()
                self._at = time.monotonic()
            return self._verdict


class ProbedRuntime(Generic[P]):
    """``check()`` and ``probe_retry_s`` for a runtime with an :class:`AvailabilityCheck`.

    The runtime's ``__init__`` sets ``self._availability = AvailabilityCheck(self._run_probe)``.
    """

    name: str
    _availability: AvailabilityCheck[P]

    def check(self) -> RuntimeCheck:
        """Whether this runtime can run here (a real sandbox is started the first time)."""
        probe = self._ensure_probe()
        return RuntimeCheck(self.name, probe.ok, probe.detail)

    def _ensure_probe(self) -> P:
        return self._availability.get()

    @property
    def probe_retry_s(self) -> float:
        """Seconds before a failed availability check is tried again."""
        return self._availability.retry_s

    @probe_retry_s.setter
    def probe_retry_s(self, value: float) -> None:
        self._availability.retry_s = value


MAX_HEADER = 1 << 20
#: Slack beyond the per-stream output cap that a reply may carry.
BLOB_SLACK = 1 << 16
#: Extra seconds the host waits beyond a step's own timeout before declaring the agent lost.
HOST_GRACE_S = 10.0
#: Once a round trip's outputs reach this, the agent runs no further test in it: what the
#: host holds per sandbox is this plus one test's capped streams, whatever programs print.
REPLY_BYTES = 32 * 1024 * 1024


def sandbox_environment(python: str, work_dir: str) -> dict[str, str]:
    """The whole environment of a sandboxed process, before a step adds its own.

    Every runtime gives programs the same one: the interpreter's directory first on
    ``PATH``, the work directory as ``HOME``, a UTF-8 locale, a fixed hash seed so that
    a Python program's set and dict order is the same in every run, and Python's limit on
    integer digits raised to :data:`~verifiers.jsonio.INT_DIGITS`.
    """
    return {
        "PATH": f"{os.path.dirname(python)}:/usr/local/bin:/usr/bin:/bin",
        "HOME": work_dir,
        "TMPDIR": "/tmp",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        # Big integers convert to text as in the host's pipeline (verifiers.jsonio).
        "PYTHONINTMAXSTRDIGITS": str(INT_DIGITS),
    }


def agent_source() -> bytes:
    """The agent script, read from the installed package."""
    return resources.files("verifiers.runtimes").joinpath("_agent.py").read_bytes()


def encode_frame(header: Mapping[str, Any], blobs: list[bytes] | None = None) -> bytes:
    """One protocol frame: header length, JSON header (with blob lengths), blobs."""
    blobs = blobs or []
    data = json.dumps({**header, "blobs": [len(b) for b in blobs]}).encode()
    return b"".join([struct.pack(">I", len(data)), data, *blobs])


async def read_frame(
    reader: asyncio.StreamReader, max_blob: int
) -> tuple[dict[str, Any], list[bytes]]:
    """Read one frame, refusing sizes a well-behaved agent never sends."""
    (size,) = struct.unpack(">I", await reader.readexactly(4))
    if size > MAX_HEADER:
        raise SandboxError(f"sandbox agent sent a {size}-byte header")
    header = json.loads(await reader.readexactly(size))
    if not isinstance(header, dict):
        raise SandboxError("sandbox agent sent a malformed header")
    blobs = []
    for n in header.get("blobs", []):
        if not isinstance(n, int) or n < 0 or n > max_blob:
            raise SandboxError(f"sandbox agent sent a blob of {n!r} bytes")
        blobs.append(await reader.readexactly(n))
    return header, blobs


async def _within(
    awaitable: Coroutine[Any, Any, tuple[dict[str, Any], list[bytes]]], timeout: float
) -> tuple[dict[str, Any], list[bytes]]:
    """``asyncio.wait_for`` without the task it makes (Python 3.11+ has ``timeout``).

    Every request of every test waits so, and that task cost a fifth of a request's time
    on the host.
    """
    if sys.version_info < (3, 11):
        return await asyncio.wait_for(awaitable, timeout)
    async with asyncio.timeout(timeout):
        return await awaitable


class SandboxOutOfMemory(SandboxError):
    """The sandbox as a whole ran out of memory, and the agent with it.

    Its memory bound is the sandbox's (:meth:`~verifiers.Limits.sandbox_memory_mb`) and
    only programs can fill it, so the runs of the request are the program's
    ``memory_limit``, not a fault of ours. Under gVisor this is how memory ends: the
    container's group holds the gVisor kernel too, which the host kills when it is full.
    """


class AgentConnection:
    """Request/response over the agent's stdin/stdout, with bounded waits.

    Owns the diagnostics from the sandbox's stderr (last 64 KiB) so that a
    failure message can say what bubblewrap or the agent printed.

    Either ``proc`` (the local runtime: the sandbox is a child process whose pipes
    are the agent's stdin and stdout) or ``reader``, ``writer`` and ``killer`` (a
    runtime that reaches the agent another way, such as a container's attached
    stream; it feeds stderr through :meth:`add_diagnostics`).

    ``out_of_memory``, when given, is asked after the agent stopped whether its sandbox
    ran out of memory as a whole (given the kills the agent reported before): the
    request then raises :class:`SandboxOutOfMemory` and its runs are memory limits.
    """

    def __init__(
        self,
        proc: asyncio.subprocess.Process | None,
        placeholders: Mapping[str, str],
        *,
        reader: asyncio.StreamReader | None = None,
        writer: asyncio.StreamWriter | None = None,
        killer: Callable[[], Awaitable[None]] | None = None,
        out_of_memory: Callable[[int], Awaitable[bool]] | None = None,
    ) -> None:
        self.placeholders = dict(placeholders)
        self._killer = killer
        self._out_of_memory = out_of_memory
        #: The most out-of-memory kills the agent has reported in its sandbox so far.
        self.oom_kills_seen = 0
        self._stderr: collections.deque[bytes] = collections.deque(maxlen=64)
        self._stderr_task: asyncio.Future[None] | None = None
        if proc is not None:
            assert proc.stdin is not None and proc.stdout is not None
            self._writer: asyncio.StreamWriter = proc.stdin
            self._reader: asyncio.StreamReader = proc.stdout
            if proc.stderr is not None:
                self._stderr_task = asyncio.ensure_future(self._drain_stderr(proc.stderr))
        else:
            if reader is None or writer is None or killer is None:
                raise ValueError("AgentConnection: give a process, or a reader, writer and killer")
            self._writer, self._reader = writer, reader
        self._proc = proc
        self._next_id = 0
        self.broken = False
        #: The files the agent keeps across programs, by content, with the names it knows
        #: them by, least recently used first (it holds exactly these: the host tells it
        #: what to keep and what to forget). Keyed by the bytes themselves: a bytes object
        #: caches its hash, and a language hands every program the same harness object.
        self.kept: collections.OrderedDict[bytes, str] = collections.OrderedDict()
        self._kept_names = 0
        #: A pidfd of the sandbox's PID 1, when the runtime knows it (immune to pid reuse).
        self.sandbox_pidfd: int | None = None
        #: Process group of the sandbox's processes on the host, when it has its own.
        self.process_group: int | None = None

    def kept_name(self, content: bytes) -> str | None:
        """The name the agent keeps ``content`` by (now its most recently used), or None."""
        name = self.kept.get(content)
        if name is not None:
            self.kept.move_to_end(content)
        return name

    def keep(self, content: bytes) -> str:
        """A new name for ``content``, which the agent is about to keep."""
        self._kept_names += 1
        name = self.kept[content] = f"k{self._kept_names}"
        return name

    def forget_beyond(self, most: int) -> list[str]:
        """The names the agent is to forget so that it keeps at most ``most`` files."""
        out = []
        while len(self.kept) > most:
            out.append(self.kept.popitem(last=False)[1])
        return out

    @property
    def proc(self) -> asyncio.subprocess.Process:
        """The sandbox process (runtimes that started one)."""
        assert self._proc is not None
        return self._proc

    async def _drain_stderr(self, stream: asyncio.StreamReader) -> None:
        while True:
            chunk = await stream.read(1024)
            if not chunk:
                return
            self._stderr.append(chunk)

    def add_diagnostics(self, chunk: bytes) -> None:
        """Record what the sandbox printed on its stderr."""
        self._stderr.append(chunk)

    def diagnostics(self) -> str:
        """What the sandbox printed on its own stderr (bubblewrap or agent errors)."""
        return b"".join(self._stderr).decode(errors="replace").strip()[-2000:]

    async def wait_ready(self, timeout: float) -> dict[str, Any]:
        """Wait for the agent's greeting."""
        try:
            header, _ = await asyncio.wait_for(read_frame(self._reader, 0), timeout)
        except (asyncio.IncompleteReadError, asyncio.TimeoutError, ConnectionError) as err:
            await self.kill()
            detail = self.diagnostics() or type(err).__name__
            code = self.proc.returncode if self.proc is not None else None
            if code is not None:
                detail += f" (exit status {code})"
            raise SandboxError(f"the sandbox did not start: {detail}") from None
        if header.get("event") != "ready":
            await self.kill()
            raise SandboxError(f"unexpected greeting from the sandbox agent: {header!r:.200}")
        return header

    async def request(
        self,
        header: dict[str, Any],
        blobs: list[bytes] | None = None,
        *,
        timeout: float,
        max_blob: int = 0,
    ) -> tuple[dict[str, Any], list[bytes]]:
        """Send one request and wait for its reply."""
        if self.broken:
            raise SandboxError("the sandbox session is no longer usable")
        self._next_id += 1
        header = {**header, "id": self._next_id}
        try:
            self._writer.write(encode_frame(header, blobs))
            await self._writer.drain()
            reply, out = await _within(read_frame(self._reader, max_blob), timeout)
        except (asyncio.IncompleteReadError, ConnectionError, BrokenPipeError) as err:
            self.broken = True
            # Asked before the kill: a container must still be there to be inspected.
            oom = False
            if self._out_of_memory is not None:
                with contextlib.suppress(Exception):
                    oom = await self._out_of_memory(self.oom_kills_seen)
            await self.kill()
            detail = self.diagnostics() or type(err).__name__
            if oom:
                raise SandboxOutOfMemory(f"the sandbox ran out of memory: {detail}") from None
            raise SandboxError(f"the sandbox agent stopped: {detail}") from None
        except asyncio.TimeoutError:
            self.broken = True
            await self.kill()
            raise SandboxError(f"the sandbox agent did not answer within {timeout:.0f}s") from None
        if reply.get("id") != header["id"] and "id" in reply:
            self.broken = True
            raise SandboxError("the sandbox agent answered out of order")
        if not reply.get("ok"):
            raise SandboxError(f"sandbox agent error: {reply.get('error', 'unknown')}")
        return reply, out

    def _step_header(
        self, step: Step, base_env: Mapping[str, str], blobs: list[bytes]
    ) -> dict[str, Any]:
        """A step as the agent reads it; its stdin (and its judge's) appended to ``blobs``."""
        ph = self.placeholders
        env = {k: resolve(v, ph) for k, v in {**base_env, **step.env}.items()}
        blobs.append(step.stdin)
        header: dict[str, Any] = {
            "kind": step.kind,
            "argv": [resolve(a, ph) for a in step.argv],
            "env": env,
            "cwd": resolve(step.cwd, ph) if step.cwd else ph["{work_dir}"],
            "limits": step.limits.model_dump(),
            "stdin": len(blobs) - 1,
        }
        if step.kind == "call":
            if not step.module:
                raise ValueError("a call step needs a module")
            header["module"] = resolve(step.module, ph)
            header["function"] = step.function
        if step.warm_argv is not None:
            header["warm_argv"] = [resolve(a, ph) for a in step.warm_argv]
        if step.judge is not None:
            header["judge"] = {**self._step_header(step.judge, base_env, blobs), "role": "judge"}
        if step.check is not None:
            check = step.check
            checker = self._step_header(check.step, base_env, blobs)
            blobs += [check.input, check.answer]
            header["check"] = {
                "step": checker,
                "input": len(blobs) - 2,
                "answer": len(blobs) - 1,
                "output_on_stdin": check.output_on_stdin,
                "interactive": check.interactive,
            }
        return header

    @staticmethod
    def _result(
        header: Mapping[str, Any], reply: Mapping[str, Any], out: list[bytes]
    ) -> ProcessResult:
        if reply.get("exec_error"):
            raise SandboxError(f"could not start {header['argv'][:1]}: {reply['exec_error']}")
        judged = "judge" in header
        checked = isinstance(reply.get("check"), dict)
        if len(out) != (5 if judged else 3) + (3 if checked else 0):
            raise SandboxError("sandbox agent sent a malformed run reply")
        check = AgentConnection._check_result(reply["check"], out[-3:]) if checked else None
        rss_kb = reply.get("maxrss_kb") or 0
        return ProcessResult(
            exit_code=reply.get("exit_code"),
            signal=reply.get("signal"),
            stdout=out[0],
            stderr=out[1],
            channel=out[2],
            nonce=str(reply.get("nonce", "")),
            wall_s=float(reply.get("wall_s", 0.0)),
            cpu_s=float(reply.get("cpu_s", 0.0)),
            max_rss_mb=round(rss_kb / 1024, 2) if rss_kb else None,
            timed_out=bool(reply.get("timed_out")),
            output_exceeded=reply.get("output_exceeded"),
            stdout_truncated=bool(reply.get("stdout_truncated")),
            stderr_truncated=bool(reply.get("stderr_truncated")),
            stderr_bytes=int(reply.get("stderr_bytes") or len(out[1])),
            verdict=out[3] if judged else b"",
            judge_stderr=out[4] if judged else b"",
            judge_exit_code=reply.get("judge_exit_code"),
            judge_signal=reply.get("judge_signal"),
            oom_killed=bool(reply.get("oom_killed")),
            run_delay_s=(
                float(reply["run_delay_s"])
                if isinstance(reply.get("run_delay_s"), (int, float))
                else None
            ),
            budget_cut=bool(reply.get("budget_cut")),
            check=check,
        )

    @staticmethod
    def _check_result(reply: Mapping[str, Any], out: list[bytes]) -> CheckResult:
        """A checker's or interactor's facts from the agent's reply (its streams, its files)."""
        if reply.get("exec_error"):
            raise SandboxError(f"could not start the checker: {reply['exec_error']}")
        feedback: dict[str, bytes] = {}
        offset = 0
        for item in reply.get("feedback") or ():
            if not (isinstance(item, list) and len(item) == 2 and isinstance(item[1], int)):
                raise SandboxError("sandbox agent sent a malformed checker reply")
            feedback[str(item[0])] = out[2][offset : offset + item[1]]
            offset += item[1]
        return CheckResult(
            exit_code=reply.get("exit_code"),
            signal=reply.get("signal"),
            stdout=out[0],
            stderr=out[1],
            feedback=feedback,
            timed_out=bool(reply.get("timed_out")),
            output_exceeded=reply.get("output_exceeded"),
            wall_s=float(reply.get("wall_s", 0.0)),
            cpu_s=float(reply.get("cpu_s", 0.0)),
            first=str(reply.get("first") or "program"),
        )

    @staticmethod
    def _reply_cap(step: Step) -> int:
        """The largest blob a run of ``step`` may bring back (stdout, the verdict)."""
        checker = step.check.step.limits.max_output_bytes if step.check is not None else 0
        return max(step.limits.max_output_bytes, checker) + BLOB_SLACK

    @staticmethod
    def _step_time(step: Step) -> float:
        """The longest a run of ``step`` may take (its checker's time included)."""
        return step.limits.timeout_s + (step.check.step.limits.timeout_s if step.check else 0.0)

    async def run(self, step: Step, base_env: Mapping[str, str]) -> ProcessResult:
        """Run one step through the agent."""
        return (await self.run_many([step], base_env))[0]

    async def run_many(
        self,
        steps: Sequence[Step],
        base_env: Mapping[str, str],
        budget_s: float | None = None,
        stop_after_timeout: bool = False,
    ) -> list[ProcessResult]:
        """Run steps one after the other in one round trip.

        Fewer come back when the time budget runs out, or when the outputs already
        collected reach :data:`REPLY_BYTES` (the caller sends the rest again): the memory a
        round trip costs here is bounded whatever the programs print.
        """
        if not steps:
            return []
        blobs: list[bytes] = []
        headers = [self._step_header(s, base_env, blobs) for s in steps]
        cap = max(self._reply_cap(s) for s in steps)
        timeout = sum(self._step_time(s) for s in steps) + HOST_GRACE_S
        if budget_s is not None:
            # The agent stops the step running when the budget runs out; a checker after
            # it runs on its own limits.
            checker = max((s.check.step.limits.timeout_s if s.check else 0.0) for s in steps)
            timeout = min(timeout, budget_s + checker + HOST_GRACE_S)
        started = time.monotonic()
        try:
            reply, out = await self.request(
                {
                    "op": "run_many",
                    "steps": headers,
                    "budget_s": budget_s,
                    "stop_after_timeout": stop_after_timeout,
                    "max_reply_bytes": REPLY_BYTES,
                },
                blobs,
                timeout=timeout,
                max_blob=cap,
            )
        except SandboxOutOfMemory:
            # Which run filled the sandbox is lost with it: each is a memory limit.
            wall = time.monotonic() - started
            lost = ProcessResult(
                exit_code=None, signal=signal.SIGKILL, oom_killed=True, wall_s=wall
            )
            return [lost] * len(steps)
        for result in reply.get("results") or ():
            if isinstance(result, dict) and isinstance(result.get("oom_kills"), int):
                self.oom_kills_seen = max(self.oom_kills_seen, result["oom_kills"])
        results = reply.get("results")
        counts = reply.get("streams")
        if (
            not isinstance(results, list)
            or not isinstance(counts, list)
            or len(counts) != len(results)
            or len(results) > len(steps)
            or sum(c for c in counts if isinstance(c, int)) != len(out)
            or any(not isinstance(c, int) or c < 0 for c in counts)
        ):
            raise SandboxError("sandbox agent sent a malformed run_many reply")
        found = []
        offset = 0
        for n, (result, count) in enumerate(zip(results, counts, strict=True)):
            found.append(self._result(headers[n], result, out[offset : offset + count]))
            offset += count
        return found

    async def close(self, graceful: bool = False) -> None:
        """End the session.

        Args:
            graceful: Ask the agent to exit first (an idle sandbox, just reset): it kills
                and reaps what it holds, so that all of the sandbox's CPU time reaches
                this process's account of its children (a killed sandbox's zygote ends
                unreaped, its time lost to the host's init). Otherwise, and whenever the
                agent does not end within a second, the sandbox is killed.
        """
        if graceful and not self.broken and self.proc is not None:
            with contextlib.suppress(SandboxError, OSError):
                await self.request({"op": "exit"}, timeout=1.0)
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(asyncio.shield(self.proc.wait()), 1.0)
        self.broken = True
        await self.kill()

    async def kill(self) -> None:
        """Kill the sandbox (its PID namespace dies with its PID 1) and reap it."""
        if self._killer is not None:
            with contextlib.suppress(Exception):
                self._writer.close()
            await self._killer()
            return
        if self.sandbox_pidfd is not None:
            with contextlib.suppress(OSError):
                signal.pidfd_send_signal(self.sandbox_pidfd, signal.SIGKILL)
            os.close(self.sandbox_pidfd)
            self.sandbox_pidfd = None
            # bubblewrap reaps its child and exits by itself. Killed at the same moment, it
            # would leave the sandbox's PID 1 a zombie for the host's init to collect (one
            # per sandbox, forever, in a container whose init does not reap).
            with contextlib.suppress(asyncio.TimeoutError, Exception):
                await asyncio.wait_for(asyncio.shield(self.proc.wait()), 2)
        if self.proc.returncode is None:
            if self.process_group is not None:
                # The group leader is our unreaped child, so the group id cannot have
                # been reused. (Not Process.kill(): it polls, which reaps the child
                # behind the event loop's back.)
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(self.process_group, signal.SIGKILL)
            else:
                with contextlib.suppress(ProcessLookupError):
                    self.proc.kill()
        self.process_group = None
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.proc.wait(), 10)
        if self._stderr_task is not None:
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(self._stderr_task, 1)
        with contextlib.suppress(Exception):
            self._writer.close()
        # Close the pipes now rather than when the transport is collected, which
        # may be after its event loop has closed (asyncio then complains).
        transport = getattr(self.proc, "_transport", None)
        if transport is not None:
            transport.close()


#: Files of this size are kept by a warm sandbox's agent across programs, at most
#: :data:`KEPT_FILES` of them (the least recently used is forgotten first).
KEEP_MIN_BYTES = 4096
KEEP_MAX_BYTES = 1 << 20
KEPT_FILES = 8


def join_inside(base: str, rel: str) -> str:
    """``base/rel``, refusing a relative path that leaves ``base`` (``../x``, ``/etc``)."""
    path = os.path.normpath(os.path.join(base, rel))
    if not path.startswith(base.rstrip("/") + "/"):
        raise ValueError(f"program file path {rel!r} leaves {base}")
    return path


class AgentSession:
    """One running sandbox reached through its agent (see :class:`~verifiers.protocols.Session`).

    The local and the Docker runtime both give sessions of this class; ``cleanup`` is a host
    directory removed when the session closes (the unsafe mode's scratch space).
    """

    def __init__(
        self,
        conn: AgentConnection,
        program_dir: str,
        work_dir: str,
        env: Mapping[str, str],
        info: Mapping[str, object],
        cleanup: str | None = None,
    ) -> None:
        self.conn = conn
        self.program_dir = program_dir
        self.work_dir = work_dir
        self.env = dict(env)
        self.info = dict(info)
        self._cleanup = cleanup
        #: Programs this sandbox has served (warm sandboxes serve several).
        self.uses = 0
        #: A warm local sandbox's program directory on the host (bound read-only inside).
        self.host_program_dir: str | None = None
        #: The CPU every process of the sandbox runs on, where the runtime placed it on one.
        self.cpu: int | None = None
        #: Called once the sandbox is gone (releasing what it held: its uid).
        self.on_close: list[Callable[[], None]] = []

    async def setup(self, program: Program) -> None:
        """Write the writable files and preload what forked tests share."""
        await self.write_work_files(program)
        if (
            program.preload_modules
            or program.preload_entries
            or program.prepare
            or program.judge_files
            or program.judge_entries
            or program.judge_dir_files
        ):
            blobs: list[bytes] = []
            reply, _ = await self.conn.request(
                {"op": "preload", **self._preload(program, blobs)}, blobs, timeout=60
            )
            # A module the interpreter lacks is the program's business; our own entry is not.
            if reply.get("failed_entries"):
                raise SandboxError(f"could not load {reply['failed_entries'][0]}")

    async def write_work_files(self, program: Program) -> None:
        """Write the program's writable files into the work directory."""
        if program.work_files:
            items = sorted(program.work_files.items())
            files = [
                {
                    "path": join_inside(self.work_dir, rel),
                    "mode": 0o755 if rel in program.executables else 0o644,
                    "blob": n,
                }
                for n, (rel, _) in enumerate(items)
            ]
            await self.conn.request(
                {"op": "write", "files": files}, [c for _, c in items], timeout=30
            )

    async def load(self, program: Program) -> None:
        """Give a warm sandbox its next program: files into memory, then preload.

        A large file the agent already keeps from an earlier program (the Python harness,
        95 KB, in every program) is named by the name the host gave it instead of sent again.
        """
        files: list[dict[str, Any]] = []
        blobs: list[bytes] = []
        for rel, content in sorted(program.files.items()):
            item: dict[str, Any] = {"path": join_inside(self.program_dir, rel)}
            keepable = KEEP_MIN_BYTES <= len(content) <= KEEP_MAX_BYTES
            name = self.conn.kept_name(content) if keepable else None
            if name is not None:
                item["kept"] = name
            else:
                item["blob"] = len(blobs)
                blobs.append(content)
                if keepable:
                    item["keep"] = self.conn.keep(content)
            files.append(item)
        forget = self.conn.forget_beyond(KEPT_FILES)
        reply, _ = await self.conn.request(
            {"op": "load", "files": files, "forget": forget, **self._preload(program, blobs)},
            blobs,
            timeout=60,
        )
        if reply.get("failed_entries"):
            raise SandboxError(f"could not load {reply['failed_entries'][0]}")

    def _preload(self, program: Program, blobs: list[bytes]) -> dict[str, Any]:
        """The preload part of a request; the judge files are appended to ``blobs``."""
        ph = self.conn.placeholders
        calls = [
            {
                "module": resolve(step.module or "", ph),
                "function": step.function,
                "argv": [resolve(a, ph) for a in step.argv],
                "role": role,
            }
            for role, steps in (("program", program.prepare), ("judge", program.judge_prepare))
            for step in steps
            if step.kind == "call" and step.module
        ]
        judge_files = []
        for name, content in sorted(program.judge_files.items()):
            blobs.append(content)
            judge_files.append({"name": name, "blob": len(blobs) - 1})
        judge_dir_files = []
        for path, content in sorted(program.judge_dir_files.items()):
            blobs.append(content)
            judge_dir_files.append({"path": path, "blob": len(blobs) - 1})
        return {
            "judge_dir_files": judge_dir_files,
            "modules": list(program.preload_modules),
            "entries": [resolve(e, ph) for e in program.preload_entries],
            "judge_modules": list(program.judge_modules),
            "judge_entries": [resolve(e, ph) for e in program.judge_entries],
            "judge_files": judge_files,
            "calls": calls,
        }

    async def run(self, step: Step) -> ProcessResult:
        """Run one step (see :class:`~verifiers.protocols.Session`)."""
        return await self.conn.run(step, self.env)

    async def run_many(
        self, steps: Sequence[Step], budget_s: float | None = None, stop_after_timeout: bool = False
    ) -> list[ProcessResult]:
        """Run steps in one round trip (see :class:`~verifiers.protocols.Session`)."""
        return await self.conn.run_many(steps, self.env, budget_s, stop_after_timeout)

    async def read_file(self, path: str, max_bytes: int, written: bool = False) -> bytes:
        """A file from the sandbox (see :class:`~verifiers.protocols.Session`)."""
        path = resolve(path, self.conn.placeholders)
        header: dict[str, Any] = {"op": "read", "path": path, "max_bytes": max_bytes}
        if written:
            header["within"] = [self.work_dir, "/tmp"]
        _, blobs = await self.conn.request(header, timeout=60, max_blob=max_bytes)
        if len(blobs) != 1 or len(blobs[0]) > max_bytes:
            raise SandboxError(f"the sandbox sent a malformed copy of {path}")
        return blobs[0]

    async def close(self, graceful: bool = False) -> None:
        """Stop the sandbox and remove what it left (``graceful``: see AgentConnection)."""
        await self.conn.close(graceful)
        if self._cleanup:
            force_rmtree(self._cleanup)
        hooks, self.on_close = self.on_close, []
        if hooks:
            try:
                # Off the loop: removing a cgroup waits for the kernel to let its tasks go.
                await asyncio.to_thread(lambda: [hook() for hook in hooks])
            except RuntimeError:  # the interpreter is exiting: no more threads
                for hook in hooks:
                    hook()


def write_program_files(directory: str, program: Program) -> None:
    """The program's read-only files into a host directory a sandbox binds read-only."""
    for rel, content in program.files.items():
        target = join_inside(directory, rel)
        os.makedirs(os.path.dirname(target), mode=0o755, exist_ok=True)
        with open(target, "wb") as f:
            f.write(content)
        os.chmod(target, 0o444)


def empty_directory(directory: str) -> None:
    """Remove everything inside ``directory`` (kept itself; nothing when it is missing)."""
    if not os.path.isdir(directory):
        return
    for entry in os.scandir(directory):
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path)
        else:
            os.unlink(entry.path)


def force_rmtree(path: str) -> None:
    """Remove a directory tree even where the program made parts of it read-only."""
    for dirpath, _, _ in os.walk(path):
        with contextlib.suppress(OSError):
            os.chmod(dirpath, stat.S_IRWXU)
    shutil.rmtree(path, ignore_errors=True)


class UidPool:
    """User ids for sandbox slots, unique on this host while a sandbox holds one.

    Every process of the host that runs sandboxes (several SDK processes, service workers)
    takes its uids from the same range; a lock file per uid (``flock``, released when its
    holder closes it or dies) says which are in use. A uid per live sandbox makes per-user
    kernel quotas (``RLIMIT_NPROC``, inotify instances, message queues) per sandbox.

    Args:
        base: The first uid of the range.
        size: How many uids the range holds.
        directory: Where the lock files are (root-owned by default).
    """

    def __init__(self, base: int, size: int, directory: str = "/run/verifiers-uids") -> None:
        if base < 1 or size < 1:
            raise ValueError("UidPool: base and size must be positive")
        self.base = base
        self.size = size
        self.directory = directory
        self._next = 0
        self._lock = threading.Lock()

    def take(self) -> tuple[int, int]:
        """A free uid and the descriptor that holds it (give it back with :meth:`give`).

        Raises:
            SandboxError: Every uid of the range is in use.
        """
        os.makedirs(self.directory, mode=0o700, exist_ok=True)
        with self._lock:
            start = self._next
            for step in range(self.size):
                offset = (start + step) % self.size
                uid = self.base + offset
                path = os.path.join(self.directory, f"{uid}.lock")
                fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    os.close(fd)
                    continue
                self._next = offset + 1
                return uid, fd
        raise SandboxError(
            f"every sandbox uid of {self.base}..{self.base + self.size - 1} is in use"
        )

    @staticmethod
    def give(fd: int) -> None:
        """Release a uid (closing its lock)."""
        with contextlib.suppress(OSError):
            os.close(fd)
