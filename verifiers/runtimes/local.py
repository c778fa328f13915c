"""The local runtime: a bubblewrap sandbox per program (the default; no daemon).

Each session is one ``bwrap`` process with new user, PID, mount, network, IPC,
UTS and cgroup namespaces. Inside:

* the root filesystem is a read-only tmpfs holding read-only binds of ``/usr``
  (and the ``/bin``, ``/lib`` links), a few files of ``/etc`` needed by the
  dynamic linker, the Python interpreter's own directories, and the toolchain
  directories a language asks for: nothing else of the host (no home, no
  project, no ``/etc/shadow``, no secrets in the environment);
* the program's files are read-only under ``/opt/program`` (in a warm sandbox, a
  host directory bound read-only that the host fills per program); the working
  directory ``/sandbox`` and ``/tmp`` are size-limited tmpfs mounts;
* there is no network (a private loopback only);
* the sandbox agent (``_agent.py``) runs as PID 1 and as an unprivileged user
  (uid 65534 by default), runs each test with resource limits, and kills every
  leftover process after each test.

When the host runs as root, bubblewrap creates the user namespace and the host
maps only root (for bubblewrap's own set-up) and the sandbox uid into it; the
agent then drops to the sandbox uid, so that sandboxed processes are never root
on the host and ``RLIMIT_NPROC`` applies to them. Without root, bubblewrap's
unprivileged user namespace is used.

If bubblewrap is missing or cannot create namespaces, :class:`LocalRuntime`
raises :class:`~verifiers.errors.RuntimeUnavailableError` saying what to install.
An unsandboxed mode exists only behind ``isolation="none"`` together with the
environment variable ``VERIFIERS_ALLOW_UNSAFE_EXECUTION=1``, and warns loudly.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import importlib.util
import json
import logging
import marshal
import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import AsyncIterator, Coroutine, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from verifiers import registry
from verifiers._async import in_engine, on_shutdown, run_in_thread
from verifiers.errors import RuntimeUnavailableError, SandboxError
from verifiers.limits import MIB, SANDBOX_OVERHEAD_PIDS, SHM_MB, Limits
from verifiers.program import Program, Toolchain, ToolchainSpec
from verifiers.runtimes import cgroups as cgroups_module
from verifiers.runtimes.base import (
    AgentConnection,
    AgentSession,
    AvailabilityCheck,
    ProbedRuntime,
    UidPool,
    agent_source,
    empty_directory,
    join_inside,
    sandbox_environment,
    write_program_files,
)
from verifiers.runtimes.python_env import SandboxPython, discover
from verifiers.runtimes.seccomp import seccomp_program

log = logging.getLogger("verifiers.runtimes.local")

PROGRAM_DIR = "/opt/program"
WORK_DIR = "/sandbox"
AGENT_PATH = "/opt/agent/agent.py"
UNSAFE_ENV = "VERIFIERS_ALLOW_UNSAFE_EXECUTION"
_ETC_FILES = (
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/alternatives",
    "/etc/localtime",
    "/etc/ssl",
)
_ROOT_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# Warm sandboxes: how many programs one sandbox serves, how long it may sit idle, and
# how much the agent may grow (its size is what every forked test copies).
WARM_MAX_USES = 256
WARM_IDLE_S = 30.0
WARM_MAX_AGENT_KB = 192 * 1024
WARM_MAX_FILE_BYTES = 64 * MIB
_INSTALL_HINT = (
    "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install "
    "bubblewrap; Arch: pacman -S bubblewrap)"
)


def _outermost(paths: Iterable[str]) -> list[str]:
    """Drop paths that lie under ``/usr`` or under another path of the set."""
    unique = sorted({os.path.normpath(p) for p in paths})
    out: list[str] = []
    for path in unique:
        if path == "/usr" or path.startswith("/usr/"):
            continue
        if any(path == o or path.startswith(o + "/") for o in out):
            continue
        out.append(path)
    return out


@dataclass(frozen=True)
class _Probe:
    ok: bool
    detail: str
    mode: Literal["root", "user", "none"] = "user"


class LocalRuntime(ProbedRuntime[_Probe]):
    """Runs programs in a bubblewrap sandbox on this machine.

    Args:
        isolation: ``auto`` or ``bwrap`` (the sandbox; the same thing today), or
            ``none`` (no sandbox: only with ``VERIFIERS_ALLOW_UNSAFE_EXECUTION=1``).
        bwrap: Path of the bubblewrap binary (default: found on ``PATH``).
        python: Interpreter that runs the sandbox agent and Python programs
            (default: the current interpreter, with its virtual environment).
        sandbox_uid: User id of sandboxed processes when only one uid can be mapped (a
            host that is not root); every process of the sandbox then shares it.
        sandbox_gid: Group id of sandboxed processes in that case.
        uid_base: With root, each live sandbox's programs run as a uid of their own from
            ``uid_base`` .. ``uid_base + uid_slots - 1`` (unique on the host), so that
            per-user kernel quotas are per sandbox.
        uid_slots: How many such uids there are (the most sandboxes alive at once).
        supervisor_uid: With root, the uid of every sandbox's supervisor (the agent).
        judge_uid: With root, the uid of trusted test code (judges).
        extra_ro_paths: More host directories to expose read-only.
        python_packages: More Python distributions programs may import (besides those the
            registered languages offer: ``python_packages`` of each language), with what
            they require.
        start_timeout_s: How long a sandbox may take to start.
        warm: Keep sandboxes between programs made for the same limits and host paths:
            a program gets its files in the supervisor's memory (see
            :attr:`~verifiers.program.Program.files_in_memory`) or in the sandbox's
            program directory (a host directory bound read-only); a used sandbox is
            emptied and checked (no process, file, IPC object or key left), and
            discarded instead when the check fails, after ``WARM_MAX_USES`` programs,
            or when idle for ``WARM_IDLE_S`` seconds.
        max_idle: Most warm sandboxes kept idle (default: the number of CPUs).
        seccomp: Refuse the system calls no test program needs (new namespaces, mounts,
            keyrings, eBPF, io_uring, ptrace, ...; see :mod:`verifiers.runtimes.seccomp`).
        cgroups: Give each sandbox a control group of its own (memory of all its processes,
            processes, CPU weight; see :mod:`verifiers.runtimes.cgroups`) when the host
            allows it (root, or a delegated subtree).
        pin_cpus: Run every process of a sandbox that builds nothing on one CPU, the one
            with the fewest sandboxes at work (where this process may use several). A
            judged test hands work between the sandbox's processes dozens of times (the
            supervisor, the zygote, the judge and the program, each waking the next), and a
            hand-off to another CPU costs a cross-CPU wake-up, six to ten times one on the
            same CPU in a VM (``bench/pinning.py``). A sandbox that builds keeps every CPU
            (compilers run threads), and so does any program it runs; so does a sandbox
            started while the machine is oversubscribed (a load average over
            :data:`PIN_MAX_LOAD` times its CPUs), where a pinned sandbox could not move
            away from a CPU that other work keeps busy.
    """

    name = "local"

    def __init__(
        self,
        *,
        isolation: Literal["auto", "bwrap", "none"] = "auto",
        bwrap: str | None = None,
        python: str | None = None,
        sandbox_uid: int = 65534,
        sandbox_gid: int = 65534,
        uid_base: int = 3_000_000,
        uid_slots: int = 4096,
        supervisor_uid: int = 2_999_998,
        judge_uid: int = 2_999_999,
        extra_ro_paths: Sequence[str] = (),
        python_packages: Sequence[str] = (),
        start_timeout_s: float = 30.0,
        warm: bool = True,
        max_idle: int | None = None,
        seccomp: bool = True,
        cgroups: bool = True,
        pin_cpus: bool = True,
    ) -> None:
        if isolation not in ("auto", "bwrap", "none"):
            raise ValueError(f"isolation: expected auto, bwrap or none, got {isolation!r}")
        self.isolation = isolation
        self.bwrap = bwrap
        self.python = python or sys.executable
        self.sandbox_uid = sandbox_uid
        self.sandbox_gid = sandbox_gid
        if supervisor_uid == judge_uid or any(
            uid_base <= uid < uid_base + uid_slots for uid in (supervisor_uid, judge_uid)
        ):
            raise ValueError("supervisor_uid, judge_uid and the slot uids must all differ")
        self.supervisor_uid = supervisor_uid
        self.judge_uid = judge_uid
        self.uids = UidPool(uid_base, uid_slots)
        self.extra_ro_paths = tuple(extra_ro_paths)
        self.start_timeout_s = start_timeout_s
        self._availability = AvailabilityCheck(self._run_probe)
        self._python_env: SandboxPython | None = None
        self.python_packages = tuple(python_packages)
        self._agent = agent_source()
        self._agent_image: tuple[bytes, tuple[bytes, str]] | None = None
        self.warm = warm
        self.seccomp = seccomp
        self.cgroups = cgroups
        self._hierarchy: cgroups_module.Hierarchy | str | None = None
        self.max_idle = max_idle if max_idle is not None else (os.cpu_count() or 1)
        self._idle: list[tuple[float, _WarmKey, AgentSession]] = []
        self._trim_handle: asyncio.TimerHandle | None = None
        self._tasks: set[asyncio.Future[None]] = set()
        self._resetting: dict[_WarmKey, int] = {}
        #: Programs waiting for a sandbox being reset, by key: no more than are resetting.
        self._waiters: dict[_WarmKey, list[asyncio.Future[None]]] = {}
        self._shutdown_hook = False
        #: Whether this runtime removed the program directories of dead processes yet.
        self._tidied = False
        #: Counters of the warm pool: started, reused, discarded (with reasons in the log).
        self.warm_stats = {"started": 0, "reused": 0, "discarded": 0}
        allowed = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
        self._cpus = CpuPlacement(allowed) if pin_cpus and len(allowed) > 1 else None

    def __repr__(self) -> str:
        return f"LocalRuntime(isolation={self.isolation!r}, python={self.python!r})"

    # --- availability ----------------------------------------------------------------------

    def _bwrap_path(self) -> str | None:
        if self.bwrap:
            return self.bwrap if os.access(self.bwrap, os.X_OK) else None
        return shutil.which("bwrap")

    def _run_probe(self) -> _Probe:
        if self.isolation == "none":
            if os.environ.get(UNSAFE_ENV) != "1":
                return _Probe(
                    False,
                    f"isolation='none' runs model code without a sandbox and needs {UNSAFE_ENV}=1",
                    "none",
                )
            return _Probe(True, "UNSAFE: no sandbox (isolation='none')", "none")
        path = self._bwrap_path()
        if path is None:
            return _Probe(False, f"bubblewrap (bwrap) not found: {_INSTALL_HINT}")
        mode: Literal["root", "user"] = "root" if os.geteuid() == 0 else "user"
        try:
            result = run_in_thread(self._trial(mode))
        except SandboxError as err:
            text = str(err)
            if any(s in text for s in ("namespace", "uid map", "Operation not permitted")):
                text += (
                    "; bubblewrap could not create namespaces: check that user namespaces are "
                    "enabled (sysctl kernel.unprivileged_userns_clone=1, user.max_user_namespaces"
                    " > 0; on Ubuntu 24.04+ also kernel.apparmor_restrict_unprivileged_userns=0 "
                    "or an AppArmor profile for bwrap)"
                )
            return _Probe(False, text, mode)
        version = subprocess.run(
            [path, "--version"], capture_output=True, text=True, check=False
        ).stdout
        detail = (
            f"{version.strip() or 'bubblewrap'}; user namespaces ({mode} mode), "
            + (
                f"a uid per sandbox ({self.uids.base}..{self.uids.base + self.uids.size - 1}), "
                f"supervisor uid {self.supervisor_uid}, judge uid {self.judge_uid}"
                if mode == "root"
                else f"one uid for every process ({self.sandbox_uid}: per-sandbox uids need root)"
            )
            + f"; {self._cgroup_detail()}, Python {result}"
        )
        return _Probe(True, detail, mode)

    def _cgroup_detail(self) -> str:
        found = self.hierarchy()
        if isinstance(found, str):
            return f"no cgroup per sandbox ({found}): per-process limits only"
        return f"a cgroup per sandbox ({found.detail})"

    async def _trial(self, mode: str) -> str:
        async with self._open(Program(files={}, tests=()), Limits(), mode) as session:
            return str(session.info.get("python", "?"))

    def hierarchy(self) -> cgroups_module.Hierarchy | str:
        """Where this runtime's sandboxes get their cgroups, or why they get none."""
        if not self.cgroups:
            return "turned off (LocalRuntime(cgroups=False))"
        if os.geteuid() != 0:
            return "not root: per-sandbox cgroups need root or a delegated subtree"
        if self._hierarchy is None:
            self._hierarchy = cgroups_module.probe()
        return self._hierarchy

    def _require(self) -> _Probe:
        probe = self._ensure_probe()
        if not probe.ok:
            raise RuntimeUnavailableError(f"local runtime unavailable: {probe.detail}")
        return probe

    # --- sessions --------------------------------------------------------------------------

    def toolchain(self, spec: ToolchainSpec) -> Toolchain:
        """A language's toolchain as found on this host.

        Raises:
            RuntimeUnavailableError: It is not installed (the message says what to install).
        """
        return spec.host(None)

    def session(
        self, program: Program, limits: Limits
    ) -> contextlib.AbstractAsyncContextManager[AgentSession]:
        """Open a sandbox holding ``program`` (see :class:`~verifiers.protocols.Runtime`)."""
        mode = self._require().mode
        return self._open(program, limits, mode, self._toolchains(program))

    def _toolchains(self, program: Program) -> tuple[dict[str, str], tuple[str, ...]]:
        """Placeholders and host directories of the program's toolchains."""
        values: dict[str, str] = {}
        paths: list[str] = []
        for spec in program.toolchains:
            tool = self.toolchain(spec)
            values.update(tool.placeholders)
            paths += tool.host_paths
        return values, tuple(paths)

    @contextlib.asynccontextmanager
    async def _open(
        self,
        program: Program,
        limits: Limits,
        mode: str,
        tools: tuple[dict[str, str], tuple[str, ...]] = ({}, ()),
    ) -> AsyncIterator[AgentSession]:
        values, tool_paths = tools
        if tool_paths:
            program = dataclasses.replace(program, host_paths=(*program.host_paths, *tool_paths))
        # Warm sandboxes live on the engine loop, which outlives any one call.
        if mode != "none" and self.warm and _warm_eligible(program) and in_engine():
            key = _warm_key(mode, limits, program)
            warm = await self._take_warm(program, limits, key, values)
            finished = False
            self._working(warm, 1)
            try:
                yield warm
                finished = True
            finally:
                self._working(warm, -1)
                await self._give_back(warm, key, finished)
            return
        if mode == "none":
            session: AgentSession = await self._start_unsafe(program, limits)
        else:
            session = await self._start_bwrap(program, limits, mode)
        session.conn.placeholders.update(values)
        self._working(session, 1)
        try:
            await session.setup(program)
            yield session
        finally:
            self._working(session, -1)
            await session.close()

    def _working(self, session: AgentSession, change: int) -> None:
        if self._cpus is not None and session.cpu is not None:
            self._cpus.busy[session.cpu] += change

    # --- warm sandboxes ----------------------------------------------------------------------

    async def _take_warm(
        self, program: Program, limits: Limits, key: _WarmKey, values: dict[str, str]
    ) -> AgentSession:
        if not self._shutdown_hook:
            self._shutdown_hook = True
            on_shutdown(self.close_idle)
        waiting = self._waiters.setdefault(key, [])
        while True:
            session = self._pop_idle(key)
            # A sandbox being reset comes back in a millisecond or two: wait for one, if
            # not every one of them is already promised to an earlier waiter.
            if session is None and len(waiting) < self._resetting.get(key, 0):
                waiter = asyncio.get_running_loop().create_future()
                waiting.append(waiter)
                try:
                    await waiter
                finally:
                    waiting.remove(waiter)
                continue
            if session is None:
                break
            try:
                await self._load_warm(session, program, values)
            except SandboxError as err:
                # An idle sandbox that died or cannot load is replaced, not reported.
                log.info("discarding a warm sandbox that could not load a program: %s", err)
                self.warm_stats["discarded"] += 1
                await session.close()
                continue
            self.warm_stats["reused"] += 1
            session.uses += 1
            return session
        # What the sandbox is made for (its mounts and its cgroup), none of the program yet.
        shell = Program(files={}, tests=(), host_paths=program.host_paths, build=program.build)
        session = await self._start_bwrap(shell, limits, key[0], warm=True)
        self.warm_stats["started"] += 1
        try:
            await self._load_warm(session, program, values)
        except BaseException:
            await session.close()
            raise
        session.uses = 1
        return session

    async def _load_warm(
        self, session: AgentSession, program: Program, values: dict[str, str]
    ) -> None:
        """Give a warm sandbox its next program.

        A program whose steps read their files from the agent's memory gets them there;
        any other gets them in the sandbox's program directory: a host directory that the
        sandbox binds read-only (no process in the sandbox can change it), written here
        while no program runs, emptied by the reset.
        """
        session.conn.placeholders.update(values)
        if program.files_in_memory:
            await session.load(program)
            await session.write_work_files(program)  # a workspace's files, say
            return
        directory = session.host_program_dir
        assert directory is not None
        try:
            write_program_files(directory, program)
        except OSError as err:
            raise SandboxError(f"could not write the program's files: {err}") from err
        await session.setup(program)

    def _pop_idle(self, key: _WarmKey) -> AgentSession | None:
        """The idle sandbox for ``key`` on the CPU with the least work, the newest of them."""
        best = -1
        for n in range(len(self._idle) - 1, -1, -1):
            if self._idle[n][1] == key and (
                best < 0 or self._load_of(self._idle[n][2]) < self._load_of(self._idle[best][2])
            ):
                best = n
        return self._idle.pop(best)[2] if best >= 0 else None

    def _load_of(self, session: AgentSession) -> int:
        if self._cpus is None or session.cpu is None:
            return 0
        return self._cpus.busy[session.cpu]

    async def _give_back(self, session: AgentSession, key: _WarmKey, finished: bool) -> None:
        if not finished or session.conn.broken:
            await self._discard(session, "the program did not finish normally")
            return
        # Cleaning up is off the caller's path: the result is ready, and the next program
        # waits the millisecond or two it takes rather than starting a sandbox (~50 ms).
        self._resetting[key] = self._resetting.get(key, 0) + 1
        self._background(self._reset(session, key))

    async def _reset(self, session: AgentSession, key: _WarmKey) -> None:
        try:
            await self._reset_once(session, key)
        finally:
            self._resetting[key] -= 1
            # Every waiter of the key looks again: one takes the sandbox (if it came back
            # clean), the others wait for another reset or start a sandbox of their own.
            for waiter in self._waiters.get(key, ()):
                if not waiter.done():
                    waiter.set_result(None)

    async def _reset_once(self, session: AgentSession, key: _WarmKey) -> None:
        try:
            reply, _ = await session.conn.request({"op": "reset"}, timeout=10)
        except SandboxError as err:
            await self._discard(session, str(err))
            return
        except BaseException:
            await session.close()
            raise
        rss = int(reply.get("rss_kb") or 0)
        emptied = None
        if session.host_program_dir is not None:
            # After the agent's reset: no process of the sandbox is left to see it change.
            try:
                empty_directory(session.host_program_dir)
            except OSError as err:
                emptied = f"could not empty its program directory: {err}"
        if not reply.get("clean"):
            reason = str(reply.get("reason") or "not clean")
        elif emptied is not None:
            reason = emptied
        elif rss > WARM_MAX_AGENT_KB:
            reason = f"the agent grew to {rss // 1024} MiB"
        elif session.uses >= WARM_MAX_USES:
            reason = f"served {session.uses} programs"
        elif len(self._idle) >= self.max_idle:
            reason = "enough idle sandboxes"
        else:
            self._idle.append((time.monotonic(), key, session))
            self._schedule_trim()
            return
        await self._discard(session, reason)

    async def _discard(self, session: AgentSession, reason: str) -> None:
        log.debug("closing a warm sandbox: %s", reason)
        self.warm_stats["discarded"] += 1
        await session.close()

    def _background(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _schedule_trim(self) -> None:
        if self._trim_handle is None:
            loop = asyncio.get_running_loop()
            self._trim_handle = loop.call_later(WARM_IDLE_S, self._trim)

    def _trim(self) -> None:
        self._trim_handle = None
        now = time.monotonic()
        stale = [s for t, _, s in self._idle if now - t >= WARM_IDLE_S]
        self._idle = [e for e in self._idle if now - e[0] < WARM_IDLE_S]
        for session in stale:
            self._background(session.close(graceful=True))
        if self._idle:
            self._schedule_trim()

    async def close_idle(self) -> None:
        """Stop every idle warm sandbox (they are also stopped when idle too long)."""
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        idle, self._idle = self._idle, []
        if self._trim_handle is not None:
            self._trim_handle.cancel()
            self._trim_handle = None
        await asyncio.gather(*(s.close(graceful=True) for _, _, s in idle), return_exceptions=True)
        cgroups_module.tidy()

    def readable_paths(self, toolchains: Sequence[ToolchainSpec] = ()) -> dict[str, list[str]]:
        """Exactly what a sandbox of programs with ``toolchains`` can read of the host.

        Everything is read-only; scratch space (``/sandbox``, ``/tmp``, ``/dev/shm``) and
        the program's own files are the sandbox's, not the host's. ``verifiers doctor
        --paths`` prints it for every language.

        Returns:
            ``system`` (``/usr``, the root links, a few files of ``/etc``), ``python`` (the
            interpreter: binary, shared library, standard library), ``python packages``
            (the entries of ``site-packages`` the languages offer; the rest of it is
            hidden), ``toolchains`` and ``extra`` (``extra_ro_paths``); paths that do not
            exist here are left out.
        """
        env = self.sandbox_python()
        tool_paths = [path for spec in toolchains for path in self.toolchain(spec).host_paths]
        links = [link for link in _ROOT_LINKS if os.path.isdir(link) and not os.path.islink(link)]
        return {
            "system": ["/usr", *links, *(p for p in _ETC_FILES if os.path.exists(p))],
            "python": _outermost(env.binds),
            "python packages": list(env.entries),
            "toolchains": _outermost(tool_paths),
            "extra": _outermost(self.extra_ro_paths),
        }

    def sandbox_python(self) -> SandboxPython:
        """What sandboxes see of the interpreter (see :mod:`verifiers.runtimes.python_env`).

        Itself, its standard library, and the packages the registered languages offer to
        programs (and ``python_packages``), with what they require: nothing else.

        Raises:
            SandboxError: The interpreter could not be asked where its parts are.
        """
        if self._python_env is None:
            wanted = set(self.python_packages)
            for name in registry.language_names():
                wanted.update(getattr(registry.get_language(name), "python_packages", ()))
            try:
                self._python_env = discover(self.python, wanted)
            except (OSError, subprocess.SubprocessError, ValueError) as err:
                raise SandboxError(
                    f"could not inspect the interpreter {self.python}: {err}"
                ) from err
        return self._python_env

    def _bwrap_args(
        self,
        program: Program,
        limits: Limits,
        mode: str,
        data_fds: list[tuple[int, str]],
        program_uid: int,
        memory_view: str | None = None,
        program_dir: str | None = None,
        cpu: int | None = None,
    ) -> list[str]:
        path = self._bwrap_path()
        assert path is not None
        args = [
            path,
            "--unshare-all",
            "--unshare-user",
            "--die-with-parent",
            "--as-pid-1",
            "--hostname",
            "sandbox",
        ]
        if mode == "user":
            args += ["--uid", str(self.sandbox_uid), "--gid", str(self.sandbox_gid)]
            args += ["--disable-userns"]
        # Kernel file systems and scratch space first, so that a host path bound
        # below (a virtual environment under /tmp, say) lands on top of them.
        disk = str(limits.disk_mb * MIB)
        args += ["--proc", "/proc", "--dev", "/dev", "--mqueue", "/dev/mqueue"]
        args += ["--perms", "1777", "--size", disk, "--tmpfs", "/tmp"]
        args += ["--perms", "1777", "--size", str(SHM_MB * MIB), "--tmpfs", "/dev/shm"]
        args += ["--perms", "0755", "--size", disk, "--tmpfs", WORK_DIR]
        args += ["--ro-bind", "/usr", "/usr"]
        for link in _ROOT_LINKS:
            if os.path.islink(link):
                args += ["--symlink", os.readlink(link), link]
            elif os.path.isdir(link):
                args += ["--ro-bind", link, link]
        env = self.sandbox_python()
        ro = _outermost([*env.binds, *program.host_paths, *self.extra_ro_paths])
        entries = env.entries
        # Directories bubblewrap creates on the way to a mount point would be
        # private to root: create them world-traversable first.
        targets = [*ro, *_ETC_FILES, *(dest for _, dest in data_fds), *env.hidden, *entries]
        targets += [link for link, _ in env.links]
        if memory_view:
            targets.append(cgroups_module.MEMORY_VIEW)
        if program_dir:
            targets.append(PROGRAM_DIR)
        parents = {os.path.dirname(p) for p in targets}
        for parent in sorted(_ancestors(parents) - {"/tmp", "/dev", "/proc", WORK_DIR}):
            args += ["--perms", "0755", "--dir", parent]
        for etc in _ETC_FILES:
            args += ["--ro-bind-try", etc, etc]
        for host_path in ro:
            args += ["--ro-bind", host_path, host_path]
        # The interpreter's own site-packages hidden, then only the offered packages on it.
        for hidden in env.hidden:
            args += ["--perms", "0755", "--tmpfs", hidden]
        for entry in entries:
            args += ["--ro-bind", entry, entry]
        for link, target in env.links:
            args += ["--symlink", target, link]
        for fd, dest in data_fds:
            args += ["--perms", "0444", "--ro-bind-data", str(fd), dest]
        if memory_view:
            # The agent reads its group's out-of-memory kills there (read-only).
            args += ["--ro-bind", memory_view, cgroups_module.MEMORY_VIEW]
        if program_dir:
            args += ["--ro-bind", program_dir, PROGRAM_DIR]
        args += ["--remount-ro", "/", "--chdir", WORK_DIR, "--clearenv"]
        for key, value in sandbox_environment(self.python, WORK_DIR).items():
            args += ["--setenv", key, value]
        agent_path = self._agent_file()[1]
        args += ["--", self.python, "-s", "-B", agent_path, "--uid", str(program_uid)]
        if mode == "root":
            args += ["--supervisor-uid", str(self.supervisor_uid)]
            args += ["--judge-uid", str(self.judge_uid)]
        args += ["--workdir", WORK_DIR]
        if cpu is not None:
            args += ["--cpu", str(cpu)]
        return args

    def _agent_file(self) -> tuple[bytes, str]:
        """The agent as sandboxes run it, and where.

        Compiled here when they run this interpreter (the same version, so its bytecode),
        else its source.

        Compiling 2,700 lines in the sandbox left about 3 MB of the compiler's memory in the
        supervisor and in the zygote it forks, which every forked test then copies the page
        tables of and tears down again; loaded compiled, the agent adds a tenth of that.
        """
        source = self._agent
        if self._agent_image is None or self._agent_image[0] is not source:
            image = (source, AGENT_PATH)
            if os.path.realpath(self.python) == os.path.realpath(sys.executable):
                code = compile(source, AGENT_PATH, "exec", dont_inherit=True)
                # A pyc header (magic, flags, mtime, size) that no source is checked against.
                header = importlib.util.MAGIC_NUMBER + bytes(12)
                image = (header + marshal.dumps(code), AGENT_PATH + "c")
            self._agent_image = (source, image)
        return self._agent_image[1]

    def _data_files(self, program: Program, ids: dict[str, int]) -> list[tuple[bytes, str]]:
        users = "root:x:0:0:root:/root:/usr/sbin/nologin\n" + "".join(
            f"{name}:x:{uid}:{uid}:{name}:{WORK_DIR}:/usr/sbin/nologin\n"
            for name, uid in ids.items()
        )
        groups = "root:x:0:\n" + "".join(f"{name}:x:{uid}:\n" for name, uid in ids.items())
        files = [
            self._agent_file(),
            (users.encode(), "/etc/passwd"),
            (groups.encode(), "/etc/group"),
            (b"127.0.0.1 localhost sandbox\n::1 localhost\n", "/etc/hosts"),
        ]
        for rel, content in sorted(program.files.items()):
            files.append((content, join_inside(PROGRAM_DIR, rel)))
        return files

    async def _start_bwrap(
        self, program: Program, limits: Limits, mode: str, warm: bool = False
    ) -> AgentSession:
        # With root: a uid of this sandbox's own for its programs, held until it closes.
        if mode == "root":
            program_uid, slot = self.uids.take()
            ids = {
                "sandbox": program_uid,
                "supervisor": self.supervisor_uid,
                "judge": self.judge_uid,
            }
        else:
            program_uid, slot = self.sandbox_uid, -1
            ids = {"sandbox": self.sandbox_uid}
        group = self._group(program, limits) if mode == "root" else None
        # A warm sandbox's program directory: bound read-only, filled per program by the host.
        program_dir = _program_directory(tidy=not self._tidied) if warm else None
        self._tidied = self._tidied or warm
        placement = self._cpus if program.build is None and not _oversubscribed() else None
        cpu = placement.place() if placement is not None else None
        try:
            session = await self._start_with(
                program, limits, mode, program_uid, ids, group, program_dir, cpu
            )
        except BaseException:
            if placement is not None and cpu is not None:
                placement.release(cpu)
            UidPool.give(slot)
            if group is not None:
                await asyncio.to_thread(group.remove)
            if program_dir is not None:
                shutil.rmtree(program_dir, ignore_errors=True)
            raise
        if program_dir is not None:
            session.host_program_dir = program_dir
            session.on_close.append(lambda: shutil.rmtree(program_dir, ignore_errors=True))
        session.on_close.append(lambda: UidPool.give(slot))
        if group is not None:
            session.on_close.append(group.remove)
        if placement is not None and cpu is not None:
            session.cpu = cpu
            session.on_close.append(lambda: placement.release(cpu))
        return session

    def _group(self, program: Program, limits: Limits) -> cgroups_module.SandboxGroup | None:
        """A cgroup for a new sandbox (None when the host allows none)."""
        found = self.hierarchy()
        if isinstance(found, str):
            return None
        try:
            return cgroups_module.SandboxGroup(
                found,
                limits.sandbox_memory_mb(build=program.build is not None) * MIB,
                limits.max_processes + SANDBOX_OVERHEAD_PIDS,
            )
        except OSError as err:
            raise SandboxError(f"could not create the sandbox's cgroup: {err}") from err

    async def _start_with(
        self,
        program: Program,
        limits: Limits,
        mode: str,
        program_uid: int,
        ids: dict[str, int],
        group: cgroups_module.SandboxGroup | None,
        program_dir: str | None = None,
        cpu: int | None = None,
    ) -> AgentSession:
        fds: list[int] = []
        try:
            data_fds = []
            for content, dest in self._data_files(program, ids):
                fd = _memfd(content)
                fds.append(fd)
                data_fds.append((fd, dest))
            view = str(group.memory_dir) if group is not None else None
            args = self._bwrap_args(
                program, limits, mode, data_fds, program_uid, view, program_dir, cpu
            )
            if self.seccomp:
                filter_program = seccomp_program()
                if filter_program is not None:
                    fd = _memfd(filter_program)
                    fds.append(fd)
                    args[1:1] = ["--seccomp", str(fd)]
            # bubblewrap reports the host pid of the sandbox's PID 1 on the info pipe:
            # killing it takes down the whole sandbox, whatever the agent became.
            info_r, info_w = os.pipe()
            fds.append(info_w)
            args[1:1] = ["--info-fd", str(info_w)]
            block_w = -1
            if mode == "root":
                block_r, block_w = os.pipe()
                fds.append(block_r)
                args[1:1] = ["--userns-block-fd", str(block_r)]
            try:
                proc = await asyncio.create_subprocess_exec(
                    *args,
                    stdin=asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.PIPE,
                    pass_fds=fds,
                    limit=1 << 20,
                    # A session of its own: no controlling terminal, and a process
                    # group that takes bubblewrap's children down with it.
                    start_new_session=True,
                )
            except OSError as err:
                os.close(info_r)
                if block_w >= 0:
                    os.close(block_w)
                raise SandboxError(f"could not start bubblewrap: {err}") from err
        finally:
            for fd in fds:
                os.close(fd)
        conn = AgentConnection(
            proc,
            self._placeholders(PROGRAM_DIR, WORK_DIR),
            out_of_memory=group.exhausted if group is not None else None,
        )
        conn.process_group = proc.pid
        try:
            pid = await self._read_child_pid(info_r)
            with contextlib.suppress(OSError):
                conn.sandbox_pidfd = os.pidfd_open(pid)
            if mode == "root":
                if group is not None:
                    # Before the sandbox runs anything: all of it is in the group.
                    try:
                        group.add(pid)
                    except OSError as err:
                        raise SandboxError(
                            f"could not put the sandbox in its cgroup: {err}"
                        ) from err
                self._map_user_namespace(pid, sorted(set(ids.values())))
                os.write(block_w, b"1")
        except SandboxError as err:
            await conn.kill()
            said = await _stderr_excerpt(proc)
            if said:
                raise SandboxError(f"{err}; bubblewrap said: {said}") from None
            raise
        finally:
            if block_w >= 0:
                os.close(block_w)
        info = await conn.wait_ready(self.start_timeout_s)
        return AgentSession(
            conn, PROGRAM_DIR, WORK_DIR, sandbox_environment(self.python, WORK_DIR), info
        )

    async def _read_child_pid(self, info_r: int) -> int:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader()
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(info_r, "rb", 0)
        )
        try:
            data = await asyncio.wait_for(reader.readuntil(b"}"), self.start_timeout_s)
            return int(json.loads(data)["child-pid"])
        except (
            asyncio.IncompleteReadError,
            asyncio.TimeoutError,
            asyncio.LimitOverrunError,
            ValueError,
            KeyError,
        ):
            raise SandboxError("bubblewrap did not report its sandbox process") from None
        finally:
            transport.close()

    def _map_user_namespace(self, pid: int, ids: list[int]) -> None:
        """Root mode: map root (for bubblewrap's set-up) and the sandbox's ids, to themselves."""
        lines = "0 0 1\n" + "".join(f"{i} {i} 1\n" for i in ids if i != 0)
        try:
            with open(f"/proc/{pid}/uid_map", "w") as f:
                f.write(lines)
            with open(f"/proc/{pid}/gid_map", "w") as f:
                f.write(lines)
        except OSError as err:
            raise SandboxError(f"could not map the sandbox user namespace: {err}") from err

    async def _start_unsafe(self, program: Program, limits: Limits) -> AgentSession:
        _warn_unsafe()
        root = tempfile.mkdtemp(prefix="verifiers-unsafe-")
        program_dir = os.path.join(root, "program")
        work_dir = os.path.join(root, "work")
        os.makedirs(work_dir)
        for rel, content in program.files.items():
            target = join_inside(program_dir, rel)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "wb") as f:
                f.write(content)
            os.chmod(target, 0o444)
        agent = os.path.join(root, "agent.py")
        with open(agent, "wb") as f:
            f.write(self._agent)
        env = sandbox_environment(self.python, work_dir)
        proc = await asyncio.create_subprocess_exec(
            self.python,
            "-s",
            "-B",
            agent,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=work_dir,
            env=env,
            limit=1 << 20,
        )
        conn = AgentConnection(proc, self._placeholders(program_dir, work_dir))
        info = await conn.wait_ready(self.start_timeout_s)
        return AgentSession(conn, program_dir, work_dir, env, info, cleanup=root)

    def _placeholders(self, program_dir: str, work_dir: str) -> dict[str, str]:
        return {"{program_dir}": program_dir, "{work_dir}": work_dir, "{python}": self.python}


#: Warm sandboxes serve programs with the same scratch space, memory and processes (their
#: cgroup was made for those), the same need of a build's memory, and the same host paths
#: (toolchains, data: the sandbox's mounts).
_WarmKey = tuple[str, int, int, int, bool, tuple[str, ...]]


#: Sandboxes are not pinned to a CPU while the load average is over this many times the
#: CPUs: measured with bench/pinning.py on 2 CPUs, pinning W2 was 1.2x faster than not at
#: load 3 to 5 and 0.65x at load 9, when other work held the CPUs.
PIN_MAX_LOAD = 3.0


def _oversubscribed() -> bool:
    try:
        return os.getloadavg()[0] > PIN_MAX_LOAD * len(os.sched_getaffinity(0))
    except (OSError, AttributeError):
        return False


class CpuPlacement:
    """Which CPU each pinned sandbox runs on (see ``LocalRuntime``'s ``pin_cpus``).

    A new sandbox goes to the CPU with the fewest sandboxes at work, then the fewest alive;
    an idle one is taken from the CPU with the least work (``LocalRuntime._pop_idle``).
    """

    def __init__(self, cpus: Sequence[int]) -> None:
        self.cpus = list(cpus)
        #: Sandboxes at work (serving a program) and alive, per CPU.
        self.busy = dict.fromkeys(self.cpus, 0)
        self.alive = dict.fromkeys(self.cpus, 0)

    def place(self) -> int:
        """The CPU for a new sandbox (counted alive until :meth:`release`)."""
        cpu = min(self.cpus, key=lambda c: (self.busy[c], self.alive[c]))
        self.alive[cpu] += 1
        return cpu

    def release(self, cpu: int) -> None:
        """A sandbox on ``cpu`` closed."""
        self.alive[cpu] -= 1


def _warm_key(mode: str, limits: Limits, program: Program) -> _WarmKey:
    return (
        mode,
        limits.disk_mb,
        limits.memory_mb,
        limits.max_processes,
        program.build is not None,
        tuple(sorted(set(program.host_paths))),
    )


def _warm_eligible(program: Program) -> bool:
    """Whether a warm sandbox may serve ``program``: files it can be given after it started."""
    size = sum(len(c) for c in program.files.values())
    return size + sum(len(c) for c in program.work_files.values()) <= WARM_MAX_FILE_BYTES


async def _stderr_excerpt(proc: asyncio.subprocess.Process, limit: int = 600) -> str:
    """What a sandbox that failed to start wrote on stderr (bounded, briefly awaited)."""
    if proc.stderr is None:
        return ""
    try:
        data = await asyncio.wait_for(proc.stderr.read(limit), 1.0)
    except (asyncio.TimeoutError, OSError, ValueError):
        return ""
    return data.decode("utf-8", "replace").strip()


_PROGRAM_DIR_PREFIX = "verifiers-program-"


def _program_directory(tidy: bool) -> str:
    """A host directory for a warm sandbox's program files (memory-backed when possible).

    Its name carries this process's pid; with ``tidy``, directories of processes that
    died without removing theirs (killed, say) are removed first.
    """
    shm = "/dev/shm"
    base = shm if os.path.isdir(shm) and os.access(shm, os.W_OK) else tempfile.gettempdir()
    if tidy:
        _remove_stale_program_directories(base)
    directory = tempfile.mkdtemp(prefix=f"{_PROGRAM_DIR_PREFIX}{os.getpid()}-", dir=base)
    os.chmod(directory, 0o755)  # the sandbox's uids read it; only the host writes it
    return directory


def _remove_stale_program_directories(base: str) -> None:
    try:
        entries = list(os.scandir(base))
    except OSError:
        return
    for entry in entries:
        if not entry.name.startswith(_PROGRAM_DIR_PREFIX):
            continue
        owner = entry.name[len(_PROGRAM_DIR_PREFIX) :].split("-", 1)[0]
        if owner.isdigit() and not os.path.exists(f"/proc/{owner}"):
            shutil.rmtree(entry.path, ignore_errors=True)


def _ancestors(paths: set[str]) -> set[str]:
    """Every directory on the way to ``paths`` (themselves included), except ``/``."""
    out: set[str] = set()
    for start in paths:
        path = start
        while path not in ("/", "") and path not in out:
            out.add(path)
            path = os.path.dirname(path)
    return out


def _memfd(content: bytes) -> int:
    fd = os.memfd_create("verifiers", 0)
    view = memoryview(content)
    while view:
        view = view[os.write(fd, view) :]
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


_warned = False


def _warn_unsafe() -> None:
    global _warned
    message = (
        "verifiers: running model-written code WITHOUT A SANDBOX (isolation='none'). "
        "It can read your files and secrets, use the network and harm this machine."
    )
    if not _warned:
        _warned = True
        warnings.warn(message, RuntimeWarning, stacklevel=3)
    log.warning(message)
