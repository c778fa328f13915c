"""The sandbox agent: a small supervisor that runs inside the sandbox.

It is started once per sandbox session (as PID 1 of the sandbox's PID namespace under
bubblewrap, or of a container) and serves requests from the host over its stdin/stdout:

* ``run``: start one process with its own stdin, resource limits and wall-clock
  timeout, collect its stdout, stderr and result channel (fd 3) with size caps,
  and report exit status, signal, CPU time and peak memory. ``kind: exec``
  executes a program; ``kind: call`` calls a Python function in a child of the
  *zygote* (no interpreter start per test). A step may carry a ``judge``: trusted test
  code run at the same time in a process of its own, connected to the program by a call
  channel (descriptors 5 and 6 on both sides), whose verdict comes back on the judge's
  descriptor 3. After every run all other processes in the sandbox are killed.
* ``write``: write files into the sandbox; ``preload``: import modules once so forked
  children share them, and run the language's trusted set-up calls; ``exit``: kill and
  reap everything else (the zygote too), then end.
* ``load`` and ``reset``, for a warm sandbox that serves one program after another:
  ``load`` keeps a program's files in memory and preloads like ``preload``; ``reset``
  forgets the program, empties the writable directories and reports whether the sandbox
  is as clean as a new one (no process, file, IPC object or key left behind, and every
  limit, CPU affinity, priority and scheduling policy of the supervisor as it started).
  The host discards a sandbox that is not.

**Three identities.** With several user ids available (the host runs as root), the agent
drops from root to the *supervisor* uid while keeping only the capabilities it needs to
start processes as other users, signal them and clean their files; test programs run as
the sandbox's *program* uid (one per sandbox slot, so per-user kernel quotas are per
sandbox) with no capability at all, and trusted test code as the *judge* uid. A program
cannot signal, trace, re-limit or re-prioritise a process of another uid, and the agent,
the zygote and the judges are not dumpable, so no program can read or write their memory
or descriptors through ``/proc``. With one uid only (an unprivileged host), every process
shares it: processes stay apart (no descriptor, no memory access), the reset still proves
the supervisor's limits and scheduling untouched, but a program can signal a judge.

**The zygote.** ``call`` steps run candidate Python code in a forked interpreter, and a fork
copies the parent's memory: a candidate forked from this process could read test code and
expected values that the agent once held. So the agent forks a zygote before it reads any
request; the zygote only ever receives the candidate's own files (never a judge's), and
forks each candidate from there as this process's child (``clone(CLONE_PARENT)``: one
process creation, where forking twice and orphaning the candidate took two and a wait), so
that it is waited for and killed like any other. The supervisor forks the judge meanwhile.

Why PID 1: the kernel ignores signals sent to a namespace's init from inside the
namespace unless it installed a handler, so the program cannot kill or stop its
supervisor; and it reaps every process left behind.

This file is stdlib-only: it runs on the sandbox's interpreter, which need not
have the SDK installed. Frames are a 4-byte big-endian header length, a JSON
header, then raw blobs whose lengths the header lists.
"""

from __future__ import annotations

import builtins
import ctypes
import errno
import fcntl
import io
import json
import mmap
import os
import resource
import select
import signal
import socket
import struct
import sys
import time
from types import ModuleType
from typing import Any

IN_FD = 0
OUT_FD = 1
CHANNEL_FD = 3
NONCE_FD = 4
CALLS_IN_FD = 5
CALLS_OUT_FD = 6
MAX_HEADER = 1 << 20
MAX_BLOB = 1 << 31
PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_KEEPCAPS = 8
PR_SET_CHILD_SUBREAPER = 36
PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
# Capabilities the supervisor keeps: start processes as other users (setuid, setgid),
# signal them (kill), and clean up what they leave (chown, dac_override, dac_read_search,
# fowner). Everything else is gone.
CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER, CAP_KILL = 0, 1, 2, 3, 5
CAP_SETGID, CAP_SETUID = 6, 7
SUPERVISOR_CAPS = (
    CAP_CHOWN,
    CAP_DAC_OVERRIDE,
    CAP_DAC_READ_SEARCH,
    CAP_FOWNER,
    CAP_KILL,
    CAP_SETGID,
    CAP_SETUID,
)
# glibc sizes every thread's stack by RLIMIT_STACK, and thread stacks count
# against RLIMIT_DATA: a larger value would starve multi-threaded runtimes (Go, Node).
STACK_CAP = 8 * 1024 * 1024
#: What a program's stderr keeps (head and tail), and its result channel, at most: the
#: host holds a bounded amount per test, whatever the program prints.
STDERR_KEEP = 64 * 1024
CHANNEL_KEEP = 1 << 20
#: How long a judged program may take to exit by itself once its judge has ended.
PROGRAM_EXIT_GRACE_S = 0.2
#: A judge's own stderr (trusted test code printing), kept for diagnostics.
JUDGE_STDERR_KEEP = 16 * 1024
#: Where the sandbox's memory group can be read: the local runtime binds it there; in a
#: container, its own group is the root of the cgroup mount.
MEMORY_GROUPS = ("/run/verifiers/memory", "/sys/fs/cgroup/memory", "/sys/fs/cgroup")

_entries: dict[str, ModuleType] = {}
# Files the host asked this agent to keep across programs (the Python harness), by the
# names it gave them; it says which to forget, so that it holds at most a few.
_kept: dict[str, bytes] = {}
# Harness modules by (path, source), kept across the programs of a warm sandbox.
_entry_cache: dict[tuple[str, bytes], ModuleType] = {}
# The current program's files (absolute path -> bytes) when it was loaded into memory.
# Entry modules see this very dict as ``PROGRAM_FILES``: it is mutated, never rebound.
_program_files: dict[str, bytes] = {}
# Files only judges see (name -> bytes): tests, expected values. Never sent to the zygote.
# Entry modules see it as ``JUDGE_FILES``.
_judge_files: dict[str, bytes] = {}
# Directories a program may write to, emptied between the programs of a warm sandbox.
SCRATCH_DIRS = ("/sandbox", "/tmp", "/dev/shm", "/dev/mqueue")


class Ids:
    """The user ids of the sandbox: supervisor, judge, program (and their groups)."""

    def __init__(self, supervisor: int, judge: int, program: int) -> None:
        self.supervisor = supervisor
        self.judge = judge
        self.program = program

    @property
    def separate(self) -> bool:
        """Whether programs run under a uid of their own (otherwise every process shares one)."""
        return self.program != self.supervisor


_ids = Ids(-1, -1, -1)


# --- framing -------------------------------------------------------------------------------


def _read_exact(n: int) -> bytes:
    chunks = []
    while n > 0:
        chunk = os.read(IN_FD, min(n, 1 << 20))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def read_frame() -> tuple[dict[str, Any], list[bytes]]:
    (size,) = struct.unpack(">I", _read_exact(4))
    if size > MAX_HEADER:
        raise ValueError("header too large")
    header = json.loads(_read_exact(size))
    blobs = []
    for n in header.get("blobs", []):
        if not isinstance(n, int) or n < 0 or n > MAX_BLOB:
            raise ValueError("bad blob length")
        blobs.append(_read_exact(n))
    return header, blobs


def send_frame(header: dict[str, Any], blobs: list[bytes] | None = None) -> None:
    blobs = blobs or []
    header["blobs"] = [len(b) for b in blobs]
    data = json.dumps(header).encode()
    payload = [struct.pack(">I", len(data)), data, *blobs]
    for part in payload:
        view = memoryview(part)
        while view:
            written = os.write(OUT_FD, view)
            view = view[written:]


# --- privileges ----------------------------------------------------------------------------

_libc: Any = None


def _lib() -> Any:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    return _libc


def _prctl(option: int, value: int) -> None:
    try:
        _lib().prctl(option, value, 0, 0, 0)
    except (OSError, AttributeError):  # pragma: no cover - exotic libc
        pass


def _name(role: str) -> None:
    """Name this process by its role (``ps``, ``top`` and ``perf`` show it): ``vf-judge``."""
    _write_proc("/proc/self/comm", b"vf-" + role.encode()[:12])


def _write_proc(path: str, data: bytes) -> None:
    """Write a small value to a ``/proc`` file through a bare descriptor.

    No Python file object: each object a forked child makes costs it copies of pages.
    """
    try:
        fd = os.open(path, os.O_WRONLY)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
    except OSError:
        pass


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


#: A seccomp filter (classic BPF) the host gave, loaded into every program before it runs;
#: empty where the sandbox as a whole has one already (bubblewrap loads the local runtime's).
_program_filter = b""


#: Arguments of the calls a forked child makes through ctypes, built once by the parent
#: (:func:`_prepare_child_calls`): the child only makes the call.
_filter_args: tuple[Any, Any] | None = None
_no_caps_args: tuple[Any, Any] | None = None


def _filter_arguments(program: bytes) -> tuple[Any, Any]:
    if not program or len(program) % 8:
        raise OSError(errno.EINVAL, "seccomp: the filter is malformed")
    buf = ctypes.create_string_buffer(program, len(program))
    return buf, _SockFprog(len(program) // 8, ctypes.cast(buf, ctypes.c_void_p))


def _load_filter(program: bytes) -> None:
    """Load ``program`` as this process's seccomp filter (no_new_privs is already set)."""
    args = _filter_args if _filter_args and program == _program_filter else None
    _, fprog = args or _filter_arguments(program)
    if _lib().prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"seccomp: {os.strerror(err)}")


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


def _cap_arguments(caps: tuple[int, ...]) -> tuple[Any, Any]:
    mask = 0
    for cap in caps:
        mask |= 1 << cap
    header = _CapHeader(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3
    data = (_CapData * 2)()
    data[0].effective = data[0].permitted = mask & 0xFFFFFFFF
    data[1].effective = data[1].permitted = mask >> 32
    return header, data


def _capset(caps: tuple[int, ...]) -> None:
    """Set this thread's effective and permitted capabilities to ``caps`` (none inheritable)."""
    header, data = (_no_caps_args if not caps else None) or _cap_arguments(caps)
    if _lib().capset(ctypes.byref(header), data) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"capset: {os.strerror(err)}")


def _trim_heap() -> None:
    """Give the C heap's free pages back to the kernel (``malloc_trim``).

    Compiling leaves megabytes of freed memory mapped, and a fork costs in proportion to
    the pages mapped: the kernel copies the parent's page table and tears the child's down
    at its exit (0.05-0.09 ms per MB per forked test: ``bench/fork_cost.py``). Called before
    forking resumes.
    """
    try:
        _lib().malloc_trim(0)
    except (OSError, AttributeError):  # pragma: no cover - not glibc
        pass


def _prepare_child_calls() -> None:
    """Build the ctypes arguments every forked child uses, once, before the first fork."""
    global _filter_args, _no_caps_args
    _no_caps_args = _cap_arguments(())
    if _program_filter:
        _filter_args = _filter_arguments(_program_filter)


def become_supervisor(ids: Ids, workdir: str | None) -> None:
    """From root (in the sandbox's user namespace, or a container's): the supervisor uid.

    The work directory becomes the program's; the capabilities the supervisor needs survive
    the change of uid, every other one is dropped.
    """
    if os.getuid() == 0 and ids.separate:
        if workdir:
            os.chown(workdir, ids.program, ids.program)
        os.setgroups([])
        _prctl(PR_SET_KEEPCAPS, 1)
        os.setresgid(ids.supervisor, ids.supervisor, ids.supervisor)
        os.setresuid(ids.supervisor, ids.supervisor, ids.supervisor)
        _prctl(PR_SET_KEEPCAPS, 0)
        _capset(SUPERVISOR_CAPS)
        # Changing credentials cleared bubblewrap's --die-with-parent: arm it again.
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    elif os.getuid() == 0 and ids.program not in (-1, 0):
        # One uid for every process (the old layout, kept for hosts that map only one).
        if workdir:
            os.chown(workdir, ids.program, ids.program)
        os.setgroups([])
        os.setresgid(ids.program, ids.program, ids.program)
        os.setresuid(ids.program, ids.program, ids.program)
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    _prctl(PR_SET_NO_NEW_PRIVS, 1)
    _prctl(PR_SET_DUMPABLE, 0)


def _become(uid: int, dumpable: bool) -> None:
    """In a child: become ``uid`` with no capability at all (nothing to regain: no_new_privs)."""
    if _ids.separate and os.getuid() != uid:
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
        _capset(())
    if not dumpable:
        # A change of credentials made the process dumpable again.
        _prctl(PR_SET_DUMPABLE, 0)


# --- the supervisor's own state, proven unchanged at every reset ----------------------------


def _own_state(pid: int = 0) -> dict[str, Any]:
    """Limits, CPU affinity, priority and scheduling policy of a process (0: this one)."""
    state: dict[str, Any] = {}
    if pid == 0:
        state["limits"] = {
            name: resource.getrlimit(getattr(resource, name))
            for name in dir(resource)
            if name.startswith("RLIMIT_")
        }
        try:
            state["affinity"] = sorted(os.sched_getaffinity(0))
        except OSError:
            state["affinity"] = None
        state["nice"] = os.getpriority(os.PRIO_PROCESS, 0)
        state["policy"] = os.sched_getscheduler(0)
        return state
    state["limits"] = _proc_lines(f"/proc/{pid}/limits")
    status = {
        line.split(":", 1)[0]: line.split(":", 1)[1].strip()
        for line in _proc_lines(f"/proc/{pid}/status")
        if ":" in line
    }
    state["affinity"] = status.get("Cpus_allowed_list")
    try:
        state["nice"] = os.getpriority(os.PRIO_PROCESS, pid)
        state["policy"] = os.sched_getscheduler(pid)
    except OSError:
        state["nice"] = state["policy"] = None
    return state


_initial_state: dict[str, Any] = {}
_zygote_state: dict[str, Any] = {}


# --- running one process --------------------------------------------------------------------


#: Whether the kernel enforces RLIMIT_DATA (Linux does since 4.7; gVisor does not). Found
#: once, at start, before the zygote is forked.
_data_limit_enforced = True


def _probe_data_limit() -> bool:
    """Whether a process under a 64 MiB RLIMIT_DATA is refused a 256 MiB private mapping."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        try:
            resource.setrlimit(resource.RLIMIT_DATA, (64 << 20, 64 << 20))
            mmap.mmap(-1, 256 << 20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        except (OSError, ValueError):
            os._exit(0)
        os._exit(1)
    _, status = os.waitpid(pid, 0)
    return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


#: Processes a uid may have beyond RLIMIT_NPROC: none on Linux, one under gVisor (it does
#: not count the forking process). Found once, at start.
_nproc_extra = 0


def _probe_nproc_extra() -> int:
    """1 if a process may fork with RLIMIT_NPROC equal to its uid's task count, else 0."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        try:
            uid = os.getuid()
            tasks = 0
            for entry in os.listdir("/proc"):
                if entry.isdigit():
                    try:
                        if os.stat(f"/proc/{entry}").st_uid == uid:
                            tasks += len(os.listdir(f"/proc/{entry}/task"))
                    except OSError:
                        pass
            resource.setrlimit(resource.RLIMIT_NPROC, (tasks, tasks))
            child = os.fork()
        except OSError:
            os._exit(0)
        if child == 0:
            os._exit(0)
        os.waitpid(child, 0)
        os._exit(1)
    _, status = os.waitpid(pid, 0)
    return 1 if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 1 else 0


def _set_limits(limits: dict[str, Any], enforce_nproc: bool, soft: bool = False) -> None:
    """A step's resource limits, soft and hard; with ``soft``, the soft limits only.

    The warm judge sets each test's as soft limits (the hard ones stay, so that the next
    test's may be higher), its CPU limit counted from what the process used so far.
    """

    def setl(which: int, value: int) -> None:
        hard = resource.getrlimit(which)[1]
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        resource.setrlimit(which, (value, hard if soft else value))

    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    cpu = int(limits["cpu_s"])
    if soft:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        setl(resource.RLIMIT_CPU, int(usage.ru_utime + usage.ru_stime) + 1 + cpu)
    else:
        soft_hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
        hard = cpu + 1 if soft_hard == resource.RLIM_INFINITY else min(cpu + 1, soft_hard)
        resource.setrlimit(resource.RLIMIT_CPU, (min(cpu, hard), hard))
    memory = int(limits["memory_bytes"])
    setl(resource.RLIMIT_DATA, memory)
    if not _data_limit_enforced:
        # The kernel ignores RLIMIT_DATA (gVisor): the address space is what it bounds.
        setl(resource.RLIMIT_AS, memory + int(limits.get("address_reserve_bytes") or 0))
    setl(resource.RLIMIT_STACK, min(memory, STACK_CAP))
    setl(resource.RLIMIT_FSIZE, int(limits["max_file_bytes"]))
    setl(resource.RLIMIT_NOFILE, int(limits["max_open_files"]))
    if enforce_nproc:
        # RLIMIT_NPROC counts every task of the process's uid in this user namespace: with
        # a uid per sandbox, the sandbox's own processes. Outside a namespace it would count
        # the user's processes on the whole host, so it is not set there.
        setl(resource.RLIMIT_NPROC, int(limits["max_processes"]) + 1 - _nproc_extra)


_LIMITED = ("CPU", "DATA", "AS", "STACK", "FSIZE", "NOFILE", "NPROC")


def _lift_soft_limits() -> None:
    """Soft limits back up to the hard ones (the warm judge, between tests)."""
    for name in _LIMITED:
        which = getattr(resource, "RLIMIT_" + name)
        hard = resource.getrlimit(which)[1]
        resource.setrlimit(which, (hard, hard))


def _make_stdio() -> tuple[io.TextIOWrapper, io.TextIOWrapper, io.TextIOWrapper]:
    return (
        io.TextIOWrapper(
            io.BufferedReader(io.FileIO(0, "r", closefd=False)),
            encoding="utf-8",
            errors="surrogateescape",
        ),
        io.TextIOWrapper(
            io.BufferedWriter(io.FileIO(1, "w", closefd=False)),
            encoding="utf-8",
            errors="surrogateescape",
        ),
        io.TextIOWrapper(
            io.BufferedWriter(io.FileIO(2, "w", closefd=False)),
            encoding="utf-8",
            errors="backslashreplace",
            line_buffering=True,
        ),
    )


# Standard streams for forked Python children, made once here and never used by this
# process: every child gets its own untouched copy (creating them costs each child more).
_STDIO: tuple[io.TextIOWrapper, io.TextIOWrapper, io.TextIOWrapper] | None = None
_REPLACED: list[Any] = []


def _fresh_stdio() -> None:
    """Give a forked Python child the standard streams a new interpreter would have."""
    # The streams replaced stay referenced: freeing them would cost the child copies of the
    # pages their objects are on, for nothing (it writes to the new ones only).
    _REPLACED.append((sys.stdin, sys.stdout, sys.stderr, sys.__stdin__, sys.__stdout__))
    sys.stdin, sys.stdout, sys.stderr = _STDIO or _make_stdio()
    for name in ("stdin", "stdout", "stderr"):
        setattr(sys, f"__{name}__", getattr(sys, name))


def _flush_stdio() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass


#: Descriptor numbers of a child, in order (None: not given). A checker's or interactor's
#: files (the test's input, the program's output, the jury's answer) are memory files at
#: 7, 8 and 9, named to it as ``/proc/self/fd/N``: only it holds them.
CHILD_FDS = (
    "stdin",
    "stdout",
    "stderr",
    "channel",
    "nonce",
    "calls_in",
    "calls_out",
    "input_file",
    "output_file",
    "answer_file",
)
#: The placeholders of a checker's argv and where they point.
CHECK_FILES = {"{input}": "input_file", "{output}": "output_file", "{answer}": "answer_file"}
#: Files a checker writes in its feedback directory that are read back, and how much of each.
FEEDBACK_FILES = 8
FEEDBACK_KEEP = 64 * 1024


def _child_env(req: dict[str, Any]) -> None:
    """Make this process's environment the step's, before it forks the step's process.

    A child that has to rewrite its environment copies the pages that takes (a sixth of a
    forked test's cost, measured), where the parent's are its own already; and the next
    child of the same environment (every one, usually) inherits it as it is. This process
    never reads its environment: what it execs or forks is given one explicitly or this.
    """
    env = {str(k): str(v) for k, v in (req.get("env") or {}).items()}
    if env != dict(os.environ):
        os.environ.clear()
        os.environ.update(env)


def _child(req: dict[str, Any], fds: dict[str, int], err_w: int, role: str) -> None:
    """In the forked child: wire the descriptors, apply limits, then exec or call. Never returns.

    ``role`` is ``program`` (untrusted: the program uid, the out-of-memory killer's first
    choice) or ``judge`` (trusted test code: the judge uid, not dumpable). The parent made
    its own environment the step's (:func:`_child_env`).
    """
    code = 127
    try:
        os.setsid()
        _name(role)
        # Move every source above the target range first, so that no dup2 below
        # overwrites a source that is still to be used.
        high = {name: fcntl.fcntl(fd, fcntl.F_DUPFD, 64) for name, fd in fds.items()}
        err_w = fcntl.fcntl(err_w, fcntl.F_DUPFD_CLOEXEC, 64)
        for target, name in enumerate(CHILD_FDS):
            if name in high:
                os.dup2(high[name], target)
            else:
                # Not this child's: whatever the agent held at that number (a judge's pipe,
                # a checker's file) must not be inherited.
                try:
                    os.close(target)
                except OSError:
                    pass
        os.closerange(len(CHILD_FDS), err_w)
        os.closerange(err_w + 1, 65536)
        os.chdir(req.get("cwd") or "/")
        _set_limits(req["limits"], enforce_nproc=_pid1)
        if role == "program":
            # The sandbox's memory may run out before a process's own limit: the kernel
            # must then kill the program, never its supervisor.
            _write_proc("/proc/self/oom_score_adj", b"1000")
            _become(_ids.program, dumpable=True)
            if _program_filter:
                # Last: the filter refuses nothing the steps above need, and a program
                # never runs without it (a failure to load it fails the start).
                _load_filter(_program_filter)
        else:
            # The supervisor is exempt from the out-of-memory killer; judges are not.
            _write_proc("/proc/self/oom_score_adj", b"0")
            _become(_ids.judge, dumpable=False)
        if req["kind"] == "exec":
            # An interactor writing to a program that has ended gets EPIPE, not a signal: the
            # program's early end is no failure of the judge's (as Kattis's runner does).
            keep = signal.SIG_IGN if req.get("interactor") else signal.SIG_DFL
            signal.signal(signal.SIGPIPE, keep)
            signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
            argv = [str(a) for a in req["argv"]]
            os.execvp(argv[0], argv)
        module = _entries[req["module"]]
        function = getattr(module, req["function"])
        _fresh_stdio()
        os.close(err_w)
        err_w = -1
        code = _call_entry(function, req["argv"])
        _flush_stdio()
    except BaseException as exc:
        if err_w >= 0:
            try:
                os.write(err_w, f"{type(exc).__name__}: {exc}".encode(errors="replace")[:4000])
            except OSError:
                pass
    finally:
        os._exit(code & 0xFF)


def _call_entry(function: Any, argv: list[Any]) -> int:
    """Call an entry's function as a process runs: its exit status (``SystemExit``'s code;
    1, with the traceback on stderr, for an uncaught exception)."""
    try:
        return int(function([str(a) for a in argv]) or 0)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:
        import traceback

        traceback.print_exc()
        return 1


#: The file that counts this sandbox's out-of-memory kills: found at the first call ("" where
#: there is none), as a sandbox's memory group does not come or go while it lives.
_oom_file: str | None = None


#: The count :func:`run_warm` read after its test, for the next warm test of the same
#: request to start from (None once anything else ran: every request starts afresh).
_oom_last: int | None = None


def _oom_kills() -> int:
    """How many processes the out-of-memory killer took in this sandbox's group so far."""
    global _oom_file
    if _oom_file is None:
        _oom_file = ""
        for directory in MEMORY_GROUPS:
            for name in ("memory.events", "memory.oom_control"):
                path = os.path.join(directory, name)
                if any(line.startswith("oom_kill ") for line in _proc_lines(path)):
                    _oom_file = path
                    break
            if _oom_file:
                break
    if not _oom_file:
        return 0
    for line in _proc_lines(_oom_file):
        key, _, value = line.partition(" ")
        if key == "oom_kill" and value.strip().isdigit():
            return int(value)
    return 0


def _others() -> list[int]:
    """Processes in the sandbox besides this one, the zygote and the warm judge."""
    keep = {os.getpid(), _zygote.pid, _judge_server.pid}
    return [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) not in keep]


def _kill_uid(uid: int) -> None:
    """Kill every process of ``uid`` at once: ``kill(-1)`` from a child that becomes ``uid``.

    The kernel signals all of them in one pass that new forks cannot outrun, whatever
    process groups or sessions they made.
    """
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        try:
            os.setresuid(uid, uid, uid)
            # No capability left (a change between non-root uids keeps them): kill(-1) then
            # reaches exactly the processes of ``uid``.
            _capset(())
            os.kill(-1, signal.SIGKILL)
        except OSError:
            pass
        os._exit(0)
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


def _kill_others(pgid: int) -> None:
    """Kill what a run left behind (everything but this process, the zygote and the warm
    judge)."""
    if not _pid1:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        return
    if not _others():
        return
    if _ids.separate:
        # All of the program's uid at once (a fork bomb cannot outrun it). The judge uid's
        # too, unless the warm judge lives: then its stragglers (trusted test code's
        # children) go one by one below, and the warm judge stays.
        judge = () if _judge_server.pid > 0 else (_ids.judge,)
        for uid in dict.fromkeys((_ids.program, *judge)):
            _kill_uid(uid)
    # One uid for everything (the zygote must live), or a straggler: one by one, again
    # while new ones appear (a fork bomb is bounded by the process limit).
    for _ in range(64):
        left = _others()
        if not left:
            return
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass


def _reap_all(deadline: float) -> None:
    if not _pid1:
        return
    while time.monotonic() < deadline:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            if not _others():
                return
            time.sleep(0.001)


def _shut_down() -> None:
    """Before the agent exits: the zygote and anything left, killed and reaped here.

    A PID namespace's init that exits leaves its other processes to the host's init, and
    their CPU time with them; reaped here, it reaches the host's account of its children
    (through bubblewrap, which waits for this process), so a benchmark counts the zygote.
    """
    if _runner is not None:
        _retire_runner()
    _judge_server.stop()
    if _pid1:  # without a namespace of its own, each run's process group went with it
        _kill_others(0)
    if _zygote.pid > 0:
        try:
            os.kill(_zygote.pid, signal.SIGKILL)
            os.waitpid(_zygote.pid, 0)
        except (ProcessLookupError, ChildProcessError, PermissionError):
            pass
        _zygote.pid = -1
    _reap_all(time.monotonic() + 2.0)


def _rss_kb(pid: int | str = "self") -> int:
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * (os.sysconf("SC_PAGE_SIZE") // 1024)
    except (OSError, ValueError, IndexError):
        return 0


def _memfd(data: bytes, name: str = "stdin") -> int:
    try:
        fd = os.memfd_create(name, 0)
    except (AttributeError, OSError):
        path = f"/tmp/.{name}-{os.urandom(8).hex()}"
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        os.unlink(path)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


class _Stream:
    """One output pipe of a run: kept up to a cap (head, or head and tail), counted in full."""

    def __init__(self, name: str, fd: int, cap: int, keep: int, tail: bool) -> None:
        self.name = name
        self.fd = fd
        self.cap = cap  # more than this is the program's output limit
        self.keep = keep  # at most this much is kept
        self.tail = tail
        self.size = 0
        self.head: list[bytes] = []
        self.kept = 0
        self.end = b""

    def add(self, chunk: bytes) -> None:
        self.size += len(chunk)
        room = self.keep - self.kept
        if room > 0:
            piece = chunk[:room]
            self.head.append(piece)
            self.kept += len(piece)
            chunk = chunk[len(piece) :]
        if chunk and self.tail:
            self.end = (self.end + chunk)[-self.keep // 2 :]

    def data(self) -> bytes:
        body = b"".join(self.head)
        if self.end:
            skipped = self.size - len(body) - len(self.end)
            marker = f"\n...[{skipped} bytes omitted]...\n".encode() if skipped > 0 else b""
            body = body[: self.keep // 2] + marker + self.end
        return body

    @property
    def exceeded(self) -> bool:
        return self.size > self.cap


def _spawn_local(req: dict[str, Any], fds: dict[str, int], err_w: int, role: str) -> int:
    _child_env(req)
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        _child(req, fds, err_w, role)
    return pid


# --- checkers and interactors ----------------------------------------------------------------

#: The directory only judges reach (0700, the judge uid's): checkers' and interactors' own
#: files, and the feedback directory of the current one. Made with a random name before the
#: first program runs (or when first needed), emptied by a reset.
_judge_dir: str | None = None


def _ensure_judge_dir() -> str:
    global _judge_dir
    if _judge_dir is None or not os.path.isdir(_judge_dir):
        import tempfile

        # In the sandbox, its /tmp; unsandboxed, beside the work directory (removed with it).
        base = "/tmp" if _pid1 else os.path.dirname(_initial_cwd)
        path = tempfile.mkdtemp(prefix=".verifiers-judge-", dir=base)
        if _ids.separate:
            os.chown(path, _ids.judge, _ids.judge)
        _judge_dir = path
    return _judge_dir


def _judge_dir_load(header: dict[str, Any], blobs: list[bytes]) -> None:
    """Write the judges' own files (a checker's binary or source) into the judge directory."""
    items = header.get("judge_dir_files") or []
    if not items:
        return
    root = _ensure_judge_dir()
    for item in items:
        rel = os.path.normpath(str(item["path"]))
        if rel.startswith(("/", "..")):
            raise ValueError(f"judge file {rel!r} leaves the judge directory")
        path = os.path.join(root, rel)
        parent = os.path.dirname(path)
        if not os.path.isdir(parent):
            os.makedirs(parent, 0o700)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o700)
        view = memoryview(blobs[item["blob"]])
        while view:
            view = view[os.write(fd, view) :]
        os.close(fd)
    if _ids.separate:
        for where, dirs, names in os.walk(root):
            for name in dirs + names:
                os.chown(os.path.join(where, name), _ids.judge, _ids.judge, follow_symlinks=False)


def _fresh_feedback_dir() -> str:
    """An empty feedback directory for the next checker (Kattis ``feedback_dir``)."""
    path = os.path.join(_ensure_judge_dir(), "feedback")
    if os.path.isdir(path) and not os.path.islink(path):
        _empty_dir(path)
    else:
        if os.path.lexists(path):
            os.unlink(path)
        os.mkdir(path, 0o700)
    if _ids.separate:
        os.chown(path, _ids.judge, _ids.judge)
    return path


def _read_feedback(path: str) -> tuple[list[list[Any]], bytes]:
    """The regular files a checker left in ``path`` (no links followed), each cut at a cap."""
    sizes: list[list[Any]] = []
    parts: list[bytes] = []
    try:
        names = sorted(os.listdir(path))
    except OSError:
        return [], b""
    for name in names[:FEEDBACK_FILES]:
        try:
            fd = os.open(os.path.join(path, name), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            if not stat_is_regular(fd):
                continue
            data = os.read(fd, FEEDBACK_KEEP)
        except OSError:
            continue
        finally:
            os.close(fd)
        sizes.append([name, len(data)])
        parts.append(data)
    return sizes, b"".join(parts)


def stat_is_regular(fd: int) -> bool:
    import stat

    return stat.S_ISREG(os.fstat(fd).st_mode)


def _check_step(check: dict[str, Any], feedback: str) -> dict[str, Any]:
    """A checker's or interactor's step with its placeholders resolved."""
    step = dict(check["step"])

    def resolve_arg(arg: str) -> str:
        for key, name in CHECK_FILES.items():
            arg = arg.replace(key, f"/proc/self/fd/{CHILD_FDS.index(name)}")
        return arg.replace("{feedback_dir}", feedback + "/").replace("{judge_dir}", judge_dir)

    judge_dir = _ensure_judge_dir()

    step["argv"] = [resolve_arg(str(a)) for a in step["argv"]]
    return step


def _run_check(
    check: dict[str, Any], blobs: list[bytes], output: bytes
) -> tuple[dict[str, Any], list[bytes]]:
    """Run a checker on a finished program's output: the judge uid, its own limits.

    Its files are memory files only it holds; its stdin is the output too when the protocol
    says so (Kattis). Replies its run's facts and, as one more blob, its feedback files.
    """
    feedback = _fresh_feedback_dir()
    step = _check_step(check, feedback)
    blobs.append(output if check.get("output_on_stdin") else b"")
    step["stdin"] = len(blobs) - 1
    files = {
        "input_file": blobs[check["input"]],
        "output_file": output,
        "answer_file": blobs[check["answer"]],
    }
    reply, streams = run(step, blobs, role="judge", files=files)
    sizes, data = _read_feedback(feedback)
    _empty_dir(feedback)
    reply["feedback"] = sizes
    return reply, [streams[0], streams[1], data]


def run(
    req: dict[str, Any],
    blobs: list[bytes],
    role: str = "program",
    files: dict[str, bytes] | None = None,
) -> tuple[dict[str, Any], list[bytes]]:
    """Run one step (and its judge or interactor, if any); every process is gone afterwards.

    ``role`` is ``judge`` for a checker run on a program's output; ``files`` are then its
    memory files (:data:`CHILD_FDS`).
    """
    limits = req["limits"]
    timeout = float(limits["timeout_s"])
    cap = int(limits["max_output_bytes"])
    judge = req.get("judge")
    if judge is not None and judge["kind"] == "call" and judge["module"] not in _entries:
        _load_entry(judge["module"])
    check = req.get("check")
    interactor = check if check is not None and check.get("interactive") else None
    stdin_index = req.get("stdin")
    # A call-kind judge is served by the warm judge where there is one (started before this
    # run's descriptors exist, so that it never holds any of them).
    server = (
        _judge_server_ready()
        if judge is not None and interactor is None and judge["kind"] == "call"
        else None
    )
    opened: list[int] = []

    def pipe() -> tuple[int, int]:
        r, w = os.pipe()
        opened.extend((r, w))
        return r, w

    out_r, out_w = pipe()
    err_r, err_w = pipe()
    ch_r, ch_w = pipe()
    nonce_r, nonce_w = pipe()
    exec_r, exec_w = os.pipe2(os.O_CLOEXEC)
    opened.extend((exec_r, exec_w))
    child_fds = {
        "stdout": out_w,
        "stderr": err_w,
        "channel": ch_w,
        "nonce": nonce_r,
    }
    for name, data in (files or {}).items():
        child_fds[name] = _memfd(data, name)
        opened.append(child_fds[name])
    streams: dict[int, _Stream] = {
        err_r: _Stream("stderr", err_r, cap, STDERR_KEEP, tail=True),
        ch_r: _Stream("channel", ch_r, cap, CHANNEL_KEEP, tail=False),
        exec_r: _Stream("exec", exec_r, 1 << 16, 1 << 16, tail=False),
    }
    feedback = ""
    if interactor is None:
        child_fds["stdin"] = _memfd(blobs[stdin_index] if isinstance(stdin_index, int) else b"")
        opened.append(child_fds["stdin"])
        streams[out_r] = _Stream("stdout", out_r, cap, cap, tail=False)
    else:
        # The program and the interactor talk through two pipes; the program's output is
        # the interactor's to read, so nothing of it is kept here.
        to_program_r, to_program_w = pipe()
        feedback = _fresh_feedback_dir()
        judge = _check_step(interactor, feedback)
        judge["interactor"] = True
        child_fds["stdin"] = to_program_r
        judge["files"] = {
            "input_file": blobs[interactor["input"]],
            "output_file": b"",
            "answer_file": blobs[interactor["answer"]],
        }
    judge_fds: dict[str, int] = {}
    if judge is not None and interactor is not None:
        jerr_r, jerr_w = pipe()
        jout_r, jout_w = pipe()  # the interactor's own channel: unused, kept apart
        judge_fds = {
            "stdin": out_r,
            "stdout": to_program_w,
            "stderr": jerr_w,
            "channel": jout_w,
        }
        for name, data in judge.pop("files").items():
            judge_fds[name] = _memfd(data, name)
            opened.append(judge_fds[name])
        streams[jout_r] = _Stream("verdict", jout_r, cap, 1 << 16, tail=False)
        streams[jerr_r] = _Stream("judge_stderr", jerr_r, cap, STDERR_KEEP, tail=True)
    elif judge is not None:
        to_program_r, to_program_w = pipe()
        to_judge_r, to_judge_w = pipe()
        verdict_r, verdict_w = pipe()
        jerr_r, jerr_w = pipe()
        judge_in = _memfd(
            blobs[judge["stdin"]] if isinstance(judge.get("stdin"), int) else b"", "judge"
        )
        opened.append(judge_in)
        child_fds.update(calls_in=to_program_r, calls_out=to_judge_w)
        judge_fds = {
            "stdin": judge_in,
            "stdout": jerr_w,
            "stderr": jerr_w,
            "channel": verdict_w,
            "calls_in": to_judge_r,
            "calls_out": to_program_w,
        }
        streams[verdict_r] = _Stream("verdict", verdict_r, cap, cap, tail=False)
        streams[jerr_r] = _Stream("judge_stderr", jerr_r, cap, JUDGE_STDERR_KEEP, tail=True)
    named = {stream.name: stream for stream in streams.values()}
    if "stdout" not in named:
        named["stdout"] = _Stream("stdout", -1, cap, cap, tail=False)
    # A forked child starts with its parent's resident pages; for an exec'd program a peak
    # at or below that baseline says nothing about the program.
    baseline_kb = _rss_kb() if req["kind"] == "exec" else 0
    oom_before = _oom_kills()
    started = time.monotonic()
    parent_ends = {nonce_w, *streams}

    def start_judge() -> int | None:
        if judge is None:
            return None
        if server is not None:
            server.send_judge(judge, judge_fds)
            return server.pid
        return _spawn_local(judge, judge_fds, exec_w, "judge")

    try:
        if req["kind"] == "call":
            # The zygote forks the candidate while this process starts the judge.
            _zygote.send_spawn(req, child_fds, exec_w)
            try:
                judge_pid = start_judge()
            finally:
                pid = _zygote.spawned()
        else:
            pid = _spawn_local(req, child_fds, exec_w, role)
            judge_pid = start_judge()
    except BaseException:
        _kill_others(0)
        for fd in opened:
            os.close(fd)
        raise
    for fd in opened:
        if fd not in parent_ends:
            os.close(fd)
    # The nonce exists only after the fork: the child's memory never held it.
    nonce = os.urandom(16).hex()
    try:
        os.write(nonce_w, nonce.encode())
    except OSError:
        pass
    os.close(nonce_w)

    for fd in streams:
        os.set_blocking(fd, False)
    pidfds: dict[int, int] = {}
    for p in (pid, judge_pid):
        if p is not None and p > 0:
            try:
                pidfds[os.pidfd_open(p)] = p  # type: ignore[attr-defined,unused-ignore]
            except (AttributeError, OSError):
                pass

    deadline = started + timeout
    status: dict[int, int] = {}
    usage: dict[int, Any] = {}
    timed_out = False
    run_delay: float | None = None
    exceeded: str | None = None
    killed = False

    def kill_run() -> None:
        _kill_others(pid)
        for p in (pid, judge_pid):
            if p is not None and p > 0 and p not in status:
                try:
                    os.kill(p, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass

    served = server.sock.fileno() if server is not None and server.sock is not None else -1

    def judge_replied() -> None:
        # The warm judge's reply ends its test, as a judge process's exit would.
        assert server is not None and judge_pid is not None
        try:
            reply = server.receive(1.0)
        except (OSError, RuntimeError, ValueError):
            return  # it ended: its status comes from wait4
        status[judge_pid] = (int(reply.get("code", 1)) & 0xFF) << 8
        usage[judge_pid] = None
        order.append(judge_pid)
        server.retiring = bool(reply.get("retire"))

    def collect(wait: float) -> None:
        nonlocal exceeded, killed
        watch = list(streams) + [fd for fd, p in pidfds.items() if p not in status]
        if served >= 0 and judge_pid not in status:
            watch.append(served)
        if not watch:
            time.sleep(max(wait, 0.0))
            return
        # poll, not select: no descriptor-number ceiling, and gVisor refuses select(2)
        # under a container's seccomp profile.
        poller = select.poll()
        for fd in watch:
            poller.register(fd, select.POLLIN)
        try:
            readable = [fd for fd, _ in poller.poll(max(wait, 0.0) * 1000)]
        except InterruptedError:
            return
        for fd in readable:
            if fd == served and judge_pid not in status:
                judge_replied()
                continue
            if fd in pidfds or fd not in streams:
                continue
            stream = streams[fd]
            try:
                chunk = os.read(fd, 1 << 16)
            except BlockingIOError:
                continue
            if not chunk:
                os.close(fd)
                del streams[fd]
                continue
            stream.add(chunk)
            if stream.exceeded and stream.name not in ("exec", "judge_stderr"):
                if exceeded is None and not killed:
                    exceeded = stream.name
                if not killed:
                    killed = True
                    kill_run()

    order: list[int] = []

    def reap() -> None:
        # Of two ended in one pass, the program is taken first: an interactor that meets
        # the end of a crashed program's output ends after it. (A program that dies of
        # SIGPIPE ended after its interactor: the host reads that from the signal.)
        for p in (pid, judge_pid):
            if p is None or p <= 0 or p in status:
                continue
            try:
                got, raw, rusage = os.wait4(p, os.WNOHANG)
            except ChildProcessError:
                status[p], usage[p] = 0, None
                order.append(p)
                continue
            if got == p:
                status[p], usage[p] = raw, rusage
                order.append(p)

    judge_deadline = deadline
    if interactor is not None:
        judge_deadline = started + float(interactor["step"]["limits"]["timeout_s"])
    judge_timed_out = False

    def finished() -> bool:
        if judge_pid is None:
            return pid in status
        if interactor is not None:
            # Both sides end an interaction (the program meets the end of its input).
            return pid in status and judge_pid in status
        # The judge's verdict ends the test; a program that ended lets the judge finish.
        return judge_pid in status

    rest_killed = False  # an interaction's program processes left when the program ended

    def kill_program_rest() -> None:
        """An interaction whose program ended: what it left (a forked child holding its
        end of the pipes, which keeps the interactor from reading the end of its output)
        goes now, so that the interactor decides; never the interactor itself."""
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        if _pid1 and _ids.separate:
            _kill_uid(_ids.program)  # a child that left the group goes too

    while not finished():
        now = time.monotonic()
        if interactor is not None and pid in status and not rest_killed and pid > 0:
            rest_killed = True
            kill_program_rest()
        if now >= deadline and not killed and (interactor is None or pid not in status):
            timed_out = killed = True
            # Read before the kill: whether the program was slow or starved of CPU.
            run_delay = _run_delay(pid) if pid > 0 else None
            kill_run()
        if interactor is not None and now >= judge_deadline and not killed:
            # The program ended in time; the interactor did not.
            judge_timed_out = killed = True
            kill_run()
        if (
            interactor is None
            and judge_pid is not None
            and judge_pid in status
            and pid not in status
            and not killed
        ):
            killed = True
            kill_run()
        wait = min(deadline - now, 0.25) if pidfds else min(deadline - now, 0.005)
        collect(wait if not killed else 0.01)
        reap()
    wall = time.monotonic() - started
    if judge_pid is not None and pid not in status and not killed:
        # The judge is done, so the program's channel has ended and it is exiting by itself:
        # waiting a moment for that spares the killers' forks (each a round trip through the
        # scheduler, many milliseconds on a busy machine). One that lingers is killed below.
        grace = min(time.monotonic() + PROGRAM_EXIT_GRACE_S, deadline)
        while pid not in status and time.monotonic() < grace:
            collect(0.005)
            reap()
    # The test is over: everything it left behind goes, the program included.
    if pid not in status:
        kill_run()
        stop = time.monotonic() + 5.0
        while pid not in status and time.monotonic() < stop:
            collect(0.01)
            reap()
    for fd in pidfds:
        os.close(fd)
    _kill_others(pid)
    drain_deadline = time.monotonic() + 2.0
    while streams and time.monotonic() < drain_deadline:
        collect(0.05)
    for fd in list(streams):
        os.close(fd)
    _reap_all(time.monotonic() + 2.0)
    if server is not None and (server.retiring or not server.alive()):
        server.stop()  # the next test gets a new one

    raw_status = status.get(pid, 0)
    rusage = usage.get(pid)
    exec_error = named["exec"].data().decode(errors="replace") or None
    exit_code = os.WEXITSTATUS(raw_status) if os.WIFEXITED(raw_status) else None
    sig = os.WTERMSIG(raw_status) if os.WIFSIGNALED(raw_status) else None
    oom_after = _oom_kills()
    header: dict[str, Any] = {
        "exit_code": exit_code,
        "signal": sig,
        "wall_s": round(wall, 6),
        "cpu_s": round(rusage.ru_utime + rusage.ru_stime, 6) if rusage else 0.0,
        "maxrss_kb": int(rusage.ru_maxrss) if rusage and rusage.ru_maxrss > baseline_kb else 0,
        "timed_out": timed_out,
        "run_delay_s": round(run_delay, 6) if run_delay is not None else None,
        "output_exceeded": exceeded,
        "stdout_truncated": named["stdout"].exceeded,
        "stderr_truncated": named["stderr"].size > named["stderr"].kept,
        "stderr_bytes": named["stderr"].size,
        "nonce": nonce,
        "exec_error": exec_error,
        # The sandbox's memory (all its processes, its scratch files) ran out during the run;
        # the count so far lets the host tell an agent lost to memory from one lost otherwise.
        "oom_killed": oom_after > oom_before,
        "oom_kills": oom_after,
    }
    out = [named["stdout"].data(), named["stderr"].data(), named["channel"].data()]
    if interactor is not None:
        judge_status = status.get(judge_pid or 0, 0)
        judge_usage = usage.get(judge_pid or 0)
        sizes, data = _read_feedback(feedback)
        _empty_dir(feedback)
        header["check"] = {
            "exit_code": os.WEXITSTATUS(judge_status) if os.WIFEXITED(judge_status) else None,
            "signal": os.WTERMSIG(judge_status) if os.WIFSIGNALED(judge_status) else None,
            "timed_out": judge_timed_out,
            "output_exceeded": exceeded if exceeded == "judge_stderr" else None,
            "wall_s": round(wall, 6),
            "cpu_s": round(judge_usage.ru_utime + judge_usage.ru_stime, 6) if judge_usage else 0.0,
            "feedback": sizes,
            # Which side ended first: Kattis judges a wrong answer given first as one.
            "first": "judge" if order and order[0] == judge_pid else "program",
        }
        out += [b"", named["judge_stderr"].data(), data]
    elif judge_pid is not None:
        judge_status = status.get(judge_pid, 0)
        header["judge_exit_code"] = (
            os.WEXITSTATUS(judge_status) if os.WIFEXITED(judge_status) else None
        )
        header["judge_signal"] = os.WTERMSIG(judge_status) if os.WIFSIGNALED(judge_status) else None
        out += [named["verdict"].data(), named["judge_stderr"].data()]
    if (
        check is not None
        and interactor is None
        and exit_code == 0
        and sig is None
        and not timed_out
        and exceeded is None
        and not header["oom_killed"]
    ):
        # The program ended cleanly: its output goes to the checker, inside the sandbox.
        header["check"], checked = _run_check(check, blobs, named["stdout"].data())
        out += checked
    return header, out


# --- warm runners: one process serving every test of a program ---------------------------

#: A runner's CPU limit is this many times a test's, and it is replaced once it has used
#: half of that: its CPU is the sum of its tests'.
RUNNER_CPU_FACTOR = 64
#: The most a runner's reply header may hold.
RUNNER_HEADER_MAX = 1 << 16
#: How long a runner may take to say it is ready (a JVM on a loaded machine).
RUNNER_START_S = 30.0


class _Runner:
    """A live runner: the process, its request and reply pipes, its own output."""

    def __init__(
        self, key: tuple[Any, ...], pid: int, requests: int, replies: int, output: int
    ) -> None:
        self.key = key
        self.pid = pid
        self.requests = requests
        self.replies = replies
        self.output = output
        self.cpu_s = 0.0

    def read_output(self) -> bytes:
        """What the runner wrote of its own output; at its end the pipe is closed.

        A pipe at its end polls readable for ever: kept in a poll set, it would spin the
        supervisor on the program's CPU for as long as a test runs (runners close their
        own output, and a program can close it too). Raises ``BlockingIOError``.
        """
        chunk = os.read(self.output, 1 << 16)
        if not chunk:
            os.close(self.output)
            self.output = -1
        return chunk

    def close(self) -> None:
        # Once only: a number closed twice may by then be another descriptor's.
        fds, self.requests, self.replies, self.output = (
            (self.requests, self.replies, self.output),
            -1,
            -1,
            -1,
        )
        for fd in fds:
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass


_runner: _Runner | None = None


def _forget_runner() -> None:
    """The runner is gone or about to be (every process of the program is killed)."""
    global _runner
    if _runner is not None:
        _runner.close()
        _runner = None


def _retire_runner(reaped: bool = False) -> None:
    """Kill the runner and everything else the program runs; wait for them."""
    if _runner is not None:
        _stop_runner(_runner, reaped)
    else:
        _reap_all(time.monotonic() + 2.0)
    _forget_runner()


def _stop_runner(runner: _Runner, reaped: bool = False) -> None:
    try:
        os.kill(runner.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    if not reaped:
        _wait_rusage(runner.pid)
    _kill_others(runner.pid)
    _reap_all(time.monotonic() + 2.0)
    runner.close()


def _runner_ready(runner: _Runner) -> bool:
    """The runner is alive and idle: it has not ended, and sent nothing since its last reply
    (bytes ahead of a request would be read as the next test's reply: a runner that sends
    them is not used again)."""
    try:
        got, _ = os.waitpid(runner.pid, os.WNOHANG)
    except ChildProcessError:
        return False
    if got != 0:
        return False
    try:
        return not os.read(runner.replies, 1)
    except BlockingIOError:
        return True
    except OSError:
        return False


def _start_runner(req: dict[str, Any], key: tuple[Any, ...]) -> _Runner | None:
    """A new runner for ``req``, ready for its first test; None if it did not get ready."""
    limits = dict(req["limits"])
    limits["cpu_s"] = int(limits["cpu_s"]) * RUNNER_CPU_FACTOR
    requests_r, requests_w = os.pipe()
    replies_r, replies_w = os.pipe()
    output_r, output_w = os.pipe()
    exec_r, exec_w = os.pipe2(os.O_CLOEXEC)
    stdin = _memfd(b"")
    fds = {
        "stdin": stdin,
        "stdout": output_w,
        "stderr": output_w,
        "calls_in": requests_r,
        "calls_out": replies_w,
    }
    try:
        if req["kind"] == "call":
            # A Python runner: forked from the zygote, which holds nothing of any test.
            _zygote.send_spawn({**req, "limits": limits}, fds, exec_w)
            pid = _zygote.spawned()
        else:
            pid = _spawn_local({**req, "limits": limits}, fds, exec_w, "program")
    finally:
        for fd in (stdin, output_w, requests_r, replies_w, exec_w):
            os.close(fd)
    # An exec that failed says why on the close-on-exec pipe; one that worked closes it.
    with os.fdopen(exec_r, "rb") as f:
        error = f.read(1 << 16)
    if error:  # its executable is missing, say: the step runs alone and reports that
        for fd in (requests_w, replies_r, output_r):
            os.close(fd)
        _wait_rusage(pid)
        return None
    for fd in (replies_r, output_r):
        os.set_blocking(fd, False)
    runner = _Runner(key, pid, requests_w, replies_r, output_r)
    if not _await_ready(runner, time.monotonic() + RUNNER_START_S):
        _stop_runner(runner)
        return None
    return runner


def _await_ready(runner: _Runner, deadline: float) -> bool:
    """Whether the runner said it is ready (a reply of ``{"ready": true}``) in time."""
    buffer = bytearray()
    while time.monotonic() < deadline:
        poller = select.poll()
        poller.register(runner.replies, select.POLLIN)
        if runner.output >= 0:
            poller.register(runner.output, select.POLLIN)
        for fd, _ in poller.poll(max(0.0, deadline - time.monotonic()) * 1000):
            if fd == runner.output:
                try:
                    runner.read_output()  # the runner's own start-up chatter
                except BlockingIOError:
                    pass
                continue
            try:
                chunk = os.read(fd, 1 << 16)
            except BlockingIOError:
                continue
            if not chunk:
                return False
            buffer += chunk
            if len(buffer) > RUNNER_HEADER_MAX:
                return False
            if len(buffer) >= 4:
                size = struct.unpack(">I", bytes(buffer[:4]))[0]
                if len(buffer) == 4 + size:
                    try:
                        hello = json.loads(bytes(buffer[4:]))
                    except ValueError:
                        return False
                    return isinstance(hello, dict) and hello.get("ready") is True
                if len(buffer) > 4 + size:
                    return False
    return False


def _runner_key(req: dict[str, Any]) -> tuple[Any, ...]:
    """What makes two steps the same runner: all but their time limit and their stdin
    (compared by equality: the parts are JSON values)."""
    limits = {k: v for k, v in req["limits"].items() if k != "timeout_s"}
    code = (req.get("kind"), req.get("module"), req.get("function"))
    return (req["argv"], code, req.get("env"), req.get("cwd"), limits)


def run_warm(req: dict[str, Any], blobs: list[bytes]) -> tuple[dict[str, Any], list[bytes]]:
    """Run one test in the program's warm runner (``Step.warm_argv``), starting it if needed.

    The runner is the program's own process (its code and the runner's share it), so what
    it reports is taken as the program's output only: the wall-clock limit, the output cap
    and the size of every reply are enforced here, and a runner that ends, stalls or sends
    garbage has crashed the test it was running (the next test gets a new runner). Anything
    else the test left running is killed with the runner, as after any run.
    """
    global _runner
    cold = req
    req = {**req, "argv": req["warm_argv"]}
    limits = req["limits"]
    timeout = float(limits["timeout_s"])
    cap = int(limits["max_output_bytes"])
    key = _runner_key(req)
    if _runner is not None and (
        _runner.key != key or _runner.cpu_s * 2 > _runner_cpu(req) or not _runner_ready(_runner)
    ):
        _retire_runner()
    if _runner is None:
        # Started, and ready, before the test's clock: its start is nobody's time.
        _runner = _start_runner(req, key)
        if _runner is None:
            return run(cold, blobs)  # no runner here: the step as it runs alone
    runner = _runner
    stdin = blobs[req["stdin"]] if isinstance(req.get("stdin"), int) else b""
    stdout = _Stream("stdout", -1, cap, cap, tail=False)
    stderr = _Stream("stderr", -1, cap, STDERR_KEEP, tail=True)
    channel = _Stream("channel", -1, CHANNEL_KEEP, CHANNEL_KEEP, tail=False)
    header = json.dumps({"stdin_bytes": len(stdin), "max_output_bytes": cap}).encode()
    request = struct.pack(">I", len(header)) + header + stdin
    global _oom_last
    # The count read after the previous warm test of this request, if nothing ran since.
    oom_before = _oom_last if _oom_last is not None else _oom_kills()
    before = _task_times(runner.pid)
    started = time.monotonic()
    reply, status, usage, timed_out, exceeded = _exchange(
        runner, request, started + timeout, cap, stdout, stderr, channel
    )
    wall = time.monotonic() - started
    run_delay = _busiest_delay(before, _task_times(runner.pid)) if timed_out else None
    stopped_cpu = 0.0  # what a runner stopped during the test used beyond its earlier tests
    if status is None and reply is not None and exceeded is None and not reply.get("retire"):
        runner.cpu_s += _reply_cpu(reply)
        if [p for p in _others() if p != runner.pid]:
            _retire_runner()  # what the test started goes, and the runner with it
    else:
        # Timed out, over its output, ended, broken, or retiring: it goes with the test.
        if status is None:
            try:
                os.kill(runner.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            _, killed, killed_usage = _wait_rusage(runner.pid)
            if killed_usage is not None:
                used = killed_usage.ru_utime + killed_usage.ru_stime
                stopped_cpu = max(0.0, used - runner.cpu_s)
            if reply is None and not timed_out:
                status, usage = killed, killed_usage  # garbage for a reply: its crash
        _retire_runner(reaped=True)
    exit_code: int | None = None
    sig: int | None = None
    cpu = 0.0
    if timed_out:
        sig = signal.SIGKILL
        cpu = stopped_cpu  # its start included: a looping test's CPU is the program's
    elif status is not None:  # the runner ended (or was stopped) without a reply
        exit_code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
        sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
        if usage is not None:
            cpu = usage.ru_utime + usage.ru_stime
    elif reply is not None:
        code = reply.get("exit_code")
        exit_code = code if isinstance(code, int) and 0 <= code < 256 else 1
        cpu = _reply_cpu(reply)
    oom_after = _oom_last = _oom_kills()
    out_header: dict[str, Any] = {
        "exit_code": exit_code,
        "signal": sig,
        "wall_s": round(wall, 6),
        "cpu_s": round(min(cpu, wall * 64), 6),
        "maxrss_kb": 0,
        "timed_out": timed_out,
        "run_delay_s": round(run_delay, 6) if run_delay is not None else None,
        "output_exceeded": exceeded,
        "stdout_truncated": stdout.exceeded,
        "stderr_truncated": stderr.size > stderr.kept,
        "stderr_bytes": stderr.size,
        "nonce": "",
        "exec_error": None,
        "oom_killed": oom_after > oom_before,
        "oom_kills": oom_after,
        "warm": True,
    }
    return out_header, [stdout.data(), stderr.data(), channel.data()]


def _reply_cpu(reply: dict[str, Any]) -> float:
    """The CPU time a runner says its test used (0 when it says nothing usable)."""
    cpu = reply.get("cpu_s")
    return float(cpu) if isinstance(cpu, (int, float)) and 0 <= cpu < 1e6 else 0.0


def _task_times(pid: int) -> dict[str, tuple[int, int]]:
    """Each thread's time on a CPU and time waiting for one (nanoseconds, schedstat)."""
    out: dict[str, tuple[int, int]] = {}
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat", "rb") as f:
                fields = f.read(256).split()
            out[task] = (int(fields[0]), int(fields[1]))
        except (OSError, IndexError, ValueError):
            continue
    return out


def _busiest_delay(
    before: dict[str, tuple[int, int]], after: dict[str, tuple[int, int]]
) -> float | None:
    """The CPU wait of the thread that ran or waited most in between: the test's thread
    (a runner's timed-out test, for the rule that runs a starved timeout again)."""
    best: tuple[int, int] | None = None
    for task, (ran, waited) in after.items():
        ran0, waited0 = before.get(task, (0, 0))
        delta = (ran - ran0, waited - waited0)
        if best is None or sum(delta) > sum(best):
            best = delta
    return best[1] / 1e9 if best is not None else None


def _runner_cpu(req: dict[str, Any]) -> float:
    return float(int(req["limits"]["cpu_s"]) * RUNNER_CPU_FACTOR)


def _wait_rusage(pid: int) -> tuple[int, int | None, Any]:
    try:
        got, status, usage = os.wait4(pid, 0)
        return got, status, usage
    except ChildProcessError:
        return pid, None, None


def _exchange(
    runner: _Runner,
    request: bytes,
    deadline: float,
    cap: int,
    stdout: _Stream,
    stderr: _Stream,
    channel: _Stream,
) -> tuple[dict[str, Any] | None, int | None, Any, bool, str | None]:
    """Send one test to ``runner`` and read its reply: (reply, exit status, usage, timed
    out, stream over the cap). An exit status means the runner ended (no reply)."""
    try:
        pidfd = os.pidfd_open(runner.pid)  # type: ignore[attr-defined,unused-ignore]
    except (AttributeError, OSError):
        pidfd = -1
    view = memoryview(request)
    os.set_blocking(runner.requests, False)
    buffer = bytearray()
    limit = RUNNER_HEADER_MAX + 2 * cap + CHANNEL_KEEP + 8
    try:
        while True:
            now = time.monotonic()
            if now >= deadline:
                return None, None, None, True, None
            poller = select.poll()
            poller.register(runner.replies, select.POLLIN)
            if runner.output >= 0:
                poller.register(runner.output, select.POLLIN)
            if pidfd >= 0:
                poller.register(pidfd, select.POLLIN)
            if view:
                poller.register(runner.requests, select.POLLOUT)
            wait = min(deadline - now, 0.25 if pidfd >= 0 else 0.005)
            try:
                events = poller.poll(max(wait, 0.0) * 1000)
            except InterruptedError:
                continue
            for fd, _ in events:
                if fd == runner.requests and view:
                    try:
                        view = view[os.write(runner.requests, view) :]
                    except BlockingIOError:
                        pass
                    except OSError:
                        view = memoryview(b"")  # the runner is gone: its end says why
                elif fd == runner.output:
                    try:
                        chunk = runner.read_output()
                    except BlockingIOError:
                        continue
                    if chunk:
                        stderr.add(chunk)  # the runner's own output: diagnostics
                elif fd == runner.replies:
                    try:
                        chunk = os.read(fd, 1 << 16)
                    except BlockingIOError:
                        continue
                    if not chunk:
                        # Its reply channel closed (by the program, or as it ended): the
                        # runner cannot serve, and is stopped if it has not ended.
                        try:
                            os.kill(runner.pid, signal.SIGKILL)
                        except (ProcessLookupError, PermissionError):
                            pass
                        _, status, usage = _wait_rusage(runner.pid)
                        return None, status, usage, False, None
                    buffer += chunk
                    if len(buffer) > limit:
                        return None, None, None, False, "stdout"
                    try:
                        reply = _parse_reply(buffer, cap, stdout, stderr, channel)
                    except (ValueError, UnicodeDecodeError, RecursionError):
                        return None, None, None, False, None  # garbage: the test crashed
                    if reply is not None:
                        if reply.get("output_exceeded") in ("stdout", "stderr"):
                            return reply, None, None, False, str(reply["output_exceeded"])
                        return reply, None, None, False, None
                elif fd == pidfd:
                    _, status, usage = _wait_rusage(runner.pid)
                    return None, status, usage, False, None
    finally:
        if pidfd >= 0:
            os.close(pidfd)


def _parse_reply(
    buffer: bytearray, cap: int, stdout: _Stream, stderr: _Stream, channel: _Stream
) -> dict[str, Any] | None:
    """A complete reply in ``buffer`` (its streams added), None while it is incomplete.

    After the header: ``stdout_bytes`` of output, ``stderr_bytes`` of errors and, from a
    runner that keeps a result channel (Python's), ``channel_bytes`` of its records.
    Malformed replies raise ``ValueError`` (the caller treats the runner as crashed).
    """
    if len(buffer) < 4:
        return None
    size = struct.unpack(">I", bytes(buffer[:4]))[0]
    if size > RUNNER_HEADER_MAX:
        raise ValueError("the runner's reply header is too large")
    if len(buffer) < 4 + size:
        return None
    header = json.loads(bytes(buffer[4 : 4 + size]))
    if not isinstance(header, dict):
        raise ValueError("the runner's reply is not an object")
    out_n, err_n = header.get("stdout_bytes"), header.get("stderr_bytes")
    ch_n = header.get("channel_bytes", 0)
    sizes = (out_n, err_n, ch_n)
    if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in sizes):
        raise ValueError("the runner's reply has no stream sizes")
    assert isinstance(out_n, int) and isinstance(err_n, int) and isinstance(ch_n, int)
    if ch_n > CHANNEL_KEEP:
        raise ValueError("the runner's reply has too many channel records")
    if out_n > cap + 1 or err_n > cap + 1:
        header["output_exceeded"] = "stdout" if out_n > cap + 1 else "stderr"
    end = 4 + size + out_n + err_n + ch_n
    if len(buffer) < end:
        return None
    body = bytes(buffer[4 + size : end])
    stdout.add(body[:out_n])
    stderr.add(body[out_n : out_n + err_n])
    channel.add(body[out_n + err_n :])
    if len(buffer) > end:
        raise ValueError("the runner sent more than one reply")
    return header


def _entry_code(path: str, source: bytes) -> Any:
    """An entry's code, compiled in a child of this process and sent back marshalled.

    Compiling 2,000 lines leaves megabytes of the compiler's memory in the process that
    compiles (its arenas do not go back to the system whole), and this one is a zygote or
    a supervisor that every test is forked from: every fork would copy those page tables
    and every exit tear them down. A fork here happens once per entry and sandbox. Where
    it cannot, the source is compiled here.
    """
    import marshal

    try:
        r, w = os.pipe()
    except OSError:
        return compile(source, path, "exec", dont_inherit=True)
    try:
        pid = os.fork()
    except OSError:  # out of processes (a test's soft limit in the warm judge), say
        os.close(r)
        os.close(w)
        return compile(source, path, "exec", dont_inherit=True)
    if pid == 0:  # pragma: no cover - the compiling child
        code = 1
        try:
            os.close(r)
            data = marshal.dumps(compile(source, path, "exec", dont_inherit=True))
            view = memoryview(data)
            while view:
                view = view[os.write(w, view) :]
            code = 0
        finally:
            os._exit(code)
    os.close(w)
    chunks = []
    with os.fdopen(r, "rb") as f:
        while chunk := f.read(1 << 16):
            chunks.append(chunk)
    _, status = os.waitpid(pid, 0)
    if status == 0:
        try:
            return marshal.loads(b"".join(chunks))
        except (EOFError, ValueError, TypeError):
            pass
    return compile(source, path, "exec", dont_inherit=True)


def _load_entry(path: str) -> ModuleType:
    import importlib.util

    name = "_vf_entry_" + os.path.splitext(os.path.basename(path))[0]
    source = _program_files.get(path)
    if source is None:
        with open(path, "rb") as f:
            source = f.read()
    # Keyed by the source itself, not a digest: hashlib would map OpenSSL into this process
    # (4 MB that every forked test would copy the page tables of and unmap again).
    key = (path, source)
    module = _entry_cache.get(key)
    if module is None:
        spec = importlib.util.spec_from_loader(name, loader=None, origin=path)
        assert spec is not None
        module = importlib.util.module_from_spec(spec)
        module.__file__ = path
        sys.modules[name] = module
        exec(_entry_code(path, source), module.__dict__)
        module.PROGRAM_FILES = _program_files  # type: ignore[attr-defined]
        module.JUDGE_FILES = _judge_files  # type: ignore[attr-defined]
        if len(_entry_cache) >= 16:
            _entry_cache.pop(next(iter(_entry_cache)))
        _entry_cache[key] = module
    _entries[path] = module
    return module


def _preload(header: dict[str, Any]) -> dict[str, Any]:
    """Import modules, load entry files and run trusted set-up calls, in this process."""
    modules, entries = header.get("modules", []), header.get("entries", [])
    failed_modules, failed_entries = [], []
    # An import that prints must not write into the protocol channel.
    saved = os.dup(OUT_FD)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, OUT_FD)
    os.close(devnull)
    try:
        for name in modules:
            try:
                __import__(name)
            except Exception as exc:
                failed_modules.append(f"{name}: {type(exc).__name__}: {exc}")
        for path in entries:
            try:
                _load_entry(path)
            except Exception as exc:
                failed_entries.append(f"{path}: {type(exc).__name__}: {exc}")
        # Trusted set-up of the language's own entry (compiling the tests, say), done
        # once here rather than in every forked test. It is an optimisation only: a
        # failure is left for the tests to meet.
        for call in header.get("calls", []):
            try:
                module = _entries.get(call["module"]) or _load_entry(call["module"])
                getattr(module, call["function"])([str(a) for a in call["argv"]])
            except Exception:
                pass
    finally:
        os.dup2(saved, OUT_FD)
        os.close(saved)
    return {"ok": True, "failed_modules": failed_modules, "failed_entries": failed_entries}


def _split_preload(header: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A preload request's program part (for the zygote) and judge part (for this process)."""
    program = {
        "modules": header.get("modules", []),
        "entries": header.get("entries", []),
        "calls": [c for c in header.get("calls", []) if c.get("role") != "judge"],
    }
    judge = {
        "modules": header.get("judge_modules", []),
        "entries": header.get("judge_entries", []),
        "calls": [c for c in header.get("calls", []) if c.get("role") == "judge"],
    }
    return program, judge


def _merge_replies(*replies: dict[str, Any]) -> dict[str, Any]:
    return {
        "ok": all(r.get("ok") for r in replies),
        "failed_modules": [m for r in replies for m in r.get("failed_modules", [])],
        "failed_entries": [e for r in replies for e in r.get("failed_entries", [])],
        "error": next((r["error"] for r in replies if r.get("error")), None),
    }


# --- the zygote ----------------------------------------------------------------------------


class _Helper:
    """A process of the agent's that serves its requests over a socket pair.

    Descriptors come with a request (``SCM_RIGHTS``); each request has one reply.
    """

    def __init__(self) -> None:
        self.pid = -1
        self.sock: socket.socket | None = None

    def request(
        self, header: dict[str, Any], fds: list[int] | None = None, timeout: float = 120.0
    ) -> dict[str, Any]:
        self.send(header, fds)
        return self.receive(timeout)

    def send(self, header: dict[str, Any], fds: list[int] | None = None) -> None:
        """Send a request; its reply is read by :meth:`receive` (the agent works meanwhile)."""
        if self.sock is None:
            raise RuntimeError("the zygote is not running")
        data = json.dumps(header).encode()
        if fds:
            socket.send_fds(self.sock, [data], fds)
        else:
            self.sock.sendall(data)

    def receive(self, timeout: float = 120.0) -> dict[str, Any]:
        if self.sock is None:
            raise RuntimeError("the zygote is not running")
        self.sock.settimeout(timeout)
        try:
            reply = self.sock.recv(1 << 20)
        finally:
            self.sock.settimeout(None)
        if not reply:
            raise RuntimeError("the zygote stopped")
        answer: dict[str, Any] = json.loads(reply)
        return answer

    def send_load(self, files: dict[str, bytes], preload: dict[str, Any]) -> None:
        """Give the process a program's files (in one memory file) and preload there."""
        order = sorted(files)
        blob = b"".join(files[path] for path in order)
        fd = _memfd(blob, "program")
        try:
            sizes = [[path, len(files[path])] for path in order]
            self.send({"op": "load", "files": sizes, **preload}, [fd])
        finally:
            os.close(fd)


class Zygote(_Helper):
    """The clean parent of candidate Python processes (see the module's docstring).

    It holds only the candidate's files.
    """

    def start(self) -> None:
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        pid = os.fork()
        if pid == 0:  # pragma: no cover - runs in the zygote
            parent.close()
            try:
                _zygote_main(child)
            finally:
                os._exit(0)
        child.close()
        self.pid, self.sock = pid, parent

    def send_spawn(self, req: dict[str, Any], fds: dict[str, int], err_w: int) -> None:
        """Ask for a candidate process; :meth:`spawned` says its pid."""
        names = [n for n in CHILD_FDS if n in fds]
        self.send({"op": "spawn", "req": req, "fds": names}, [fds[n] for n in names] + [err_w])

    def spawned(self) -> int:
        reply = self.receive()
        if "pid" not in reply:
            raise RuntimeError(f"the zygote could not start the program: {reply.get('error')}")
        return int(reply["pid"])

    def reset(self) -> dict[str, Any]:
        return self.request({"op": "reset"})


_zygote = Zygote()


# --- the warm judge -----------------------------------------------------------------------
#
# A judged Python test needs two processes: the candidate (forked from the zygote) and its
# judge. Forking the judge per test cost as much again as the candidate (a fork, the
# page copies every Python child makes, an exit): W2 halved when judges moved out of the
# candidate's process. So, where the uids are separate, one judge process serves the
# judged tests of every program of the sandbox, one after another: it runs as the judge
# uid (not dumpable, the program cannot signal or read it), gets each program's judge files
# and preload at ``load`` (never the program's), and each test's descriptors, limits (as
# soft limits), working directory and environment with its request. Only trusted test
# code runs in it, and the program reaches it only through the call channel's plain data.
# What a test could leave for the next is checked after each one (``_judge_state``: the
# recursion and digit limits, builtins, the modules present before, the standard streams,
# import hooks, signal handlers, tracing, the collector, threads, warning filters, the
# decimal context, memory); a test that changed any of it, or was killed (out of time,
# say), retires the process, and the next test gets a new one.

#: A warm judge retires after this many tests, or when it grew by this much memory.
JUDGE_SERVER_TESTS = 1000
JUDGE_SERVER_GROWTH_KB = 64 * 1024


class JudgeServer(_Helper):
    """The supervisor's handle on the warm judge process."""

    def __init__(self) -> None:
        super().__init__()
        self.pidfd = -1
        self.retiring = False

    def start(self) -> None:
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        pid = os.fork()
        if pid == 0:  # pragma: no cover - runs in the judge process
            parent.close()
            code = 1
            try:
                code = _judge_server_main(child)
            finally:
                os._exit(code)
        child.close()
        try:
            pidfd = os.pidfd_open(pid)  # type: ignore[attr-defined,unused-ignore]
        except OSError:
            os.kill(pid, signal.SIGKILL)  # not yet the judge uid's: still this process's
            os.waitpid(pid, 0)
            parent.close()
            raise
        self.pid, self.sock, self.pidfd = pid, parent, pidfd

    def alive(self) -> bool:
        """Whether the process still runs (its pidfd is readable once it has ended)."""
        if self.pid <= 0:
            return False
        poller = select.poll()
        poller.register(self.pidfd, select.POLLIN)
        return not poller.poll(0)

    def send_judge(self, judge: dict[str, Any], fds: dict[str, int]) -> None:
        """Start one test in the judge process; its end is the reply on :attr:`sock`."""
        names = [n for n in CHILD_FDS if n in fds]
        header = {k: judge.get(k) for k in ("argv", "module", "function", "env", "cwd")}
        self.send(
            {"op": "judge", "fds": names, "limits": judge["limits"], **header},
            [fds[n] for n in names],
        )

    def stop(self) -> None:
        """Kill (unless it ended) and reap the process, and forget it."""
        if self.pid > 0:
            if self.alive():
                try:
                    signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)  # type: ignore[attr-defined,unused-ignore]
                except OSError:
                    pass
            try:
                os.waitpid(self.pid, 0)
            except ChildProcessError:
                pass  # a reset reaped it already
        if self.sock is not None:
            self.sock.close()
        if self.pidfd >= 0:
            os.close(self.pidfd)
        self.pid, self.sock, self.pidfd, self.retiring = -1, None, -1, False


_judge_server = JudgeServer()
#: Whether judges may be kept between tests: with separate uids (the program cannot signal
#: the judge), as the namespace's init, on a kernel with pidfds. Decided at start.
_judge_server_ok = False


def _judge_server_ready() -> JudgeServer | None:
    """The warm judge, started if needed; None where judges are forked per test."""
    if not _judge_server_ok:
        return None
    server = _judge_server
    if server.pid > 0 and (server.retiring or not server.alive()):
        server.stop()
    if server.pid <= 0:
        try:
            server.start()
        except OSError:
            server.stop()
            return None
    return server


def _judge_state() -> dict[str, Any]:
    """What a test in the warm judge could leave behind for the next (see above)."""
    import decimal
    import gc
    import threading

    # The working directory and the environment are the next test's own (it sets them).
    return {
        "recursion limit": sys.getrecursionlimit(),
        "integer digits limit": getattr(sys, "get_int_max_str_digits", lambda: None)(),
        "builtins": {k: id(v) for k, v in vars(builtins).items()},
        "modules": {k: id(v) for k, v in sys.modules.items() if k != "__main__"},
        "standard streams": (id(sys.stdin), id(sys.stdout), id(sys.stderr)),
        "import hooks": ([id(p) for p in sys.meta_path], [id(p) for p in sys.path_hooks]),
        "module path": list(sys.path),
        "signal handlers": [signal.getsignal(n) for n in _HANDLED_SIGNALS],
        "tracing": (sys.gettrace(), sys.getprofile()),
        "collector": (gc.isenabled(), gc.get_threshold()),
        "threads": (threading.active_count(), len(os.listdir("/proc/self/task"))),
        "warning filters": [id(f) for f in getattr(sys.modules.get("warnings"), "filters", ())],
        "decimal context": repr(decimal.getcontext()),
        # Its own code: the entries' functions and state (a test that replaced the harness's
        # judge_main would judge every later program); the one judge state each test
        # makes anew is left out.
        "entries": {
            f"{module.__name__}.{k}": id(v)
            for module in _entry_cache.values()
            for k, v in vars(module).items()
            if k not in _PER_TEST
        },
    }


#: Globals of an entry that each test sets anew (the harness's current judge).
_PER_TEST = frozenset({"_JUDGE"})


#: The signals whose handlers a judge's test could change (not KILL and STOP).
_HANDLED_SIGNALS = sorted(set(signal.valid_signals()) - {signal.SIGKILL, signal.SIGSTOP})


def _judge_changed(before: dict[str, Any]) -> str | None:
    """What a test changed of :func:`_judge_state`, or None.

    Modules and builtins it added are its own business (a module it imported first, say);
    one it replaced or removed is a change.
    """
    now = _judge_state()
    for name, was in before.items():
        if name in ("builtins", "modules", "entries"):
            if any(now[name].get(k) != v for k, v in was.items()):
                return name
        elif now[name] != was:
            return name
    return None


def _judge_server_main(sock: socket.socket) -> int:
    """The warm judge's loop: become the judge, then load programs' tests and run tests."""
    os.setsid()
    _name("judge")
    control = fcntl.fcntl(sock.fileno(), fcntl.F_DUPFD_CLOEXEC, 64)
    sock.close()
    devnull = os.open(os.devnull, os.O_RDWR)
    for target in range(len(CHILD_FDS)):
        os.dup2(devnull, target)
    null = fcntl.fcntl(devnull, fcntl.F_DUPFD_CLOEXEC, 64)
    os.close(devnull)
    start = len(CHILD_FDS)
    for keep in sorted((control, null)):
        os.closerange(start, keep)
        start = keep + 1
    os.closerange(start, 65536)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    _write_proc("/proc/self/oom_score_adj", b"0")
    _become(_ids.judge, dumpable=False)
    _fresh_stdio()
    channel = socket.socket(fileno=control)
    baseline: dict[str, Any] | None = None
    baseline_kb = 0
    tests = 0
    while True:
        try:
            data, fds, _, _ = socket.recv_fds(channel, 1 << 20, len(CHILD_FDS) + 1)
        except OSError:
            return 0
        if not data:
            return 0
        header = json.loads(data)
        op = header.get("op")
        if op == "load":
            reply = _judge_server_load(header, fds)
        elif op == "judge":
            if baseline is None:
                baseline, baseline_kb = _judge_state(), _rss_kb()
            reply = _judge_server_test(header, fds, null)
            tests += 1
            reply["retire"] = (
                tests >= JUDGE_SERVER_TESTS
                or _rss_kb() > baseline_kb + JUDGE_SERVER_GROWTH_KB
                or _judge_changed(baseline) is not None
            )
        else:
            for fd in fds:
                os.close(fd)
            reply = {"ok": False, "error": f"unknown op {op!r}"}
        channel.sendall(json.dumps(reply).encode())
        if reply.get("retire"):
            return 0


def _judge_server_load(header: dict[str, Any], fds: list[int]) -> dict[str, Any]:
    """A program's judge files and judges' entries (one memory file), and the preload."""
    _entries.clear()
    files: dict[str, bytes] = {}
    _unpack_files(header, fds, files)
    for fd in fds:
        os.close(fd)
    entries = set(header.get("entry_files") or ())
    _program_files.clear()  # nothing of an earlier program stays: only these entries
    _program_files.update({k: v for k, v in files.items() if k in entries})
    _judge_files.clear()
    _judge_files.update({k: v for k, v in files.items() if k not in entries})
    return _preload(header)


def _judge_server_test(header: dict[str, Any], fds: list[int], null: int) -> dict[str, Any]:
    """One test in the warm judge: its descriptors at 0 to 9, its limits, its call."""
    given = dict(zip(header["fds"], fds, strict=False))
    for target, name in enumerate(CHILD_FDS):
        os.dup2(given.get(name, null), target)
    for fd in fds:
        os.close(fd)
    _child_env(header)
    started = time.process_time()
    code = 1
    saved_main, saved_argv = sys.modules.get("__main__"), list(sys.argv)
    try:
        os.chdir(header.get("cwd") or "/")
        _set_limits(header["limits"], enforce_nproc=_pid1, soft=True)
        module = _entries.get(header["module"]) or _load_entry(header["module"])
        code = _call_entry(getattr(module, header["function"]), header["argv"])
    except BaseException:
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        _flush_stdio()
        if saved_main is not None:
            sys.modules["__main__"] = saved_main
        sys.argv[:] = saved_argv
        # The test's descriptors close here: its verdict channel and the program's call
        # channel end, as at a judge process's exit.
        for target in range(len(CHILD_FDS)):
            os.dup2(null, target)
        _lift_soft_limits()
    return {"ok": True, "code": code & 0xFF, "cpu_s": round(time.process_time() - started, 6)}


def _zygote_main(sock: socket.socket) -> None:
    """The zygote's loop: load candidate files, spawn candidates, reset."""
    os.setsid()
    _name("zygote")
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    # The host's protocol pipes are the agent's alone (their end must come with the agent's).
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, IN_FD)
    os.dup2(devnull, OUT_FD)
    os.close(devnull)
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    while True:
        try:
            data, fds, _, _ = socket.recv_fds(sock, 1 << 20, 16)
        except OSError:
            return
        if not data:
            return
        header = json.loads(data)
        op = header.get("op")
        reply: dict[str, Any]
        try:
            if op == "spawn":
                reply = _zygote_spawn(header, fds)
            elif op == "load":
                reply = _zygote_load(header, fds)
            elif op == "reset":
                _program_files.clear()
                _entries.clear()
                reply = {"ok": True, "rss_kb": _rss_kb()}
            elif op == "ping":
                reply = {"ok": True}
            else:
                reply = {"ok": False, "error": f"unknown op {op!r}"}
        except Exception as exc:
            reply = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
        finally:
            for fd in fds:
                try:
                    os.close(fd)
                except OSError:
                    pass
        sock.sendall(json.dumps(reply).encode())


def _unpack_files(header: dict[str, Any], fds: list[int], into: dict[str, bytes]) -> None:
    """Files sent in one memory file (:meth:`_Helper.send_load`), replacing ``into``'s."""
    into.clear()
    if fds:
        with os.fdopen(os.dup(fds[0]), "rb") as f:
            blob = f.read()
        offset = 0
        for name, size in header.get("files", []):
            into[str(name)] = blob[offset : offset + int(size)]
            offset += int(size)


def _zygote_load(header: dict[str, Any], fds: list[int]) -> dict[str, Any]:
    _entries.clear()
    _unpack_files(header, fds, _program_files)
    reply = _preload(header)
    _trim_heap()
    return reply


def _zygote_spawn(header: dict[str, Any], fds: list[int]) -> dict[str, Any]:
    names = header["fds"]
    if len(fds) != len(names) + 1:
        return {"ok": False, "error": "descriptors missing"}
    child_fds = dict(zip(names, fds[:-1], strict=True))
    err_w = fds[-1]
    req = header["req"]
    if req["module"] not in _entries:
        _load_entry(req["module"])
    _child_env(req)
    pid = _fork_sibling()
    if pid == 0:  # pragma: no cover - the candidate
        _child(req, child_fds, err_w, "program")
    if pid > 0:
        return {"ok": True, "pid": pid}
    # No clone(CLONE_PARENT) here: fork twice, and the candidate is orphaned to the agent.
    report_r, report_w = os.pipe()
    middle = os.fork()
    if middle == 0:  # pragma: no cover - the intermediate process
        os.close(report_r)
        try:
            pid = os.fork()
            if pid == 0:
                os.close(report_w)
                _child(req, child_fds, err_w, "program")
            os.write(report_w, str(pid).encode())
        finally:
            os._exit(0)
    os.close(report_w)
    with os.fdopen(report_r, "rb") as f:
        text = f.read()
    os.waitpid(middle, 0)  # the candidate is now an orphan: the agent's (PID 1) child
    if not text:
        return {"ok": False, "error": "the program could not be forked"}
    return {"ok": True, "pid": int(text)}


#: ``clone(2)``'s number on the architectures whose first argument is the flags and whose
#: others may all be zero; elsewhere :func:`_fork_sibling` is not available.
_CLONE = {"x86_64": 56, "aarch64": 220}.get(os.uname().machine)
CLONE_PARENT = 0x00008000


def _has_pidfd() -> bool:
    try:
        os.close(os.pidfd_open(os.getpid()))  # type: ignore[attr-defined,unused-ignore]
        return True
    except (AttributeError, OSError):
        return False


#: Only on a kernel with pidfds: under gVisor (which has none) a candidate made this way and
#: killed at its time limit left the supervisor waiting in our runs, where one forked twice
#: is reaped at once.
_clone_works = _CLONE is not None and _has_pidfd()
_syscall: Any = None


def _fork_sibling() -> int:
    """Fork a child of this process's parent: 0 in the child, its pid here, -1 if unsupported.

    The zygote's candidates must be the agent's children (it waits for them, reads their
    usage and kills them); ``clone(CLONE_PARENT)`` makes them so in one process creation
    where forking twice takes two and a wait. Python's own fork hooks run around it as
    ``os.fork`` runs them (the import lock, the interpreter's thread state, at-fork
    callbacks), with the interpreter lock held throughout (a ``PyDLL`` call). The zygote is
    single-threaded, so no lock of the C library is held by another thread. Where the kernel
    refuses (gVisor may), the caller falls back to forking twice, from then on.
    """
    global _clone_works
    if not _clone_works:
        return -1
    global _syscall
    if _syscall is None:
        _syscall = ctypes.PyDLL(None, use_errno=True).syscall
        _syscall.restype = ctypes.c_long
        _syscall.argtypes = [ctypes.c_long, ctypes.c_ulong, *[ctypes.c_ulong] * 4]
    api = ctypes.pythonapi
    api.PyOS_BeforeFork()
    try:
        pid = int(_syscall(_CLONE, CLONE_PARENT | signal.SIGCHLD, 0, 0, 0, 0))
    except BaseException:
        api.PyOS_AfterFork_Parent()
        raise
    if pid == 0:  # pragma: no cover - the child
        api.PyOS_AfterFork_Child()
        return 0
    api.PyOS_AfterFork_Parent()
    if pid < 0:
        _clone_works = False
        return -1
    return pid


# --- warm sandboxes ---------------------------------------------------------------------------


def _empty_dir(path: str) -> None:
    """Remove everything under ``path`` (the program may have made parts read-only)."""
    try:
        entries = list(os.scandir(path))
    except FileNotFoundError:
        return
    for entry in entries:
        if entry.path in _protected:
            # A host path bound under a scratch directory (a virtual environment under
            # /tmp, say), or a directory on the way to one: the sandbox's own, kept.
            if entry.path not in _mounts:
                _empty_dir(entry.path)
        elif entry.is_dir(follow_symlinks=False):
            os.chmod(entry.path, 0o700)
            _empty_dir(entry.path)
            os.rmdir(entry.path)
        else:
            os.unlink(entry.path)


def _has_files(path: str) -> bool:
    """Whether ``path`` holds anything but the sandbox's own mount points."""
    try:
        names = os.listdir(path)
    except OSError:
        return False
    for name in names:
        child = os.path.join(path, name)
        if child not in _protected or (child not in _mounts and _has_files(child)):
            return True
    return False


def _find_mounts() -> None:
    """Record the mount points under scratch directories, and the directories leading there."""
    for line in _proc_lines("/proc/self/mountinfo"):
        fields = line.split()
        if len(fields) < 5:
            continue
        point = fields[4].replace("\\040", " ").replace("\\011", "\t").replace("\\012", "\n")
        for scratch in SCRATCH_DIRS:
            if point.startswith(scratch + "/"):
                _mounts.add(point)
                while point != scratch:
                    _protected.add(point)
                    point = os.path.dirname(point)


_mounts: set[str] = set()
_protected: set[str] = set()


def _proc_lines(path: str) -> list[str]:
    try:
        with open(path) as f:
            return f.read().splitlines()
    except OSError:
        return []


def _leftovers() -> str | None:
    """What a finished program left in this sandbox, or None when it is as new."""
    others = _others()
    if others:
        return f"processes left: {len(others)}"
    for path in SCRATCH_DIRS:
        if os.path.isdir(path) and _has_files(path):
            return f"files left in {path}"
    for kind in ("shm", "sem", "msg"):
        if len(_proc_lines(f"/proc/sysvipc/{kind}")) > 1:
            return f"System V IPC objects left ({kind})"
    if _proc_lines("/proc/keys") != _initial_keys:
        return "kernel keys left"
    if os.getcwd() != _initial_cwd:
        return "working directory changed"
    changed = _changed(_own_state(), _initial_state)
    if changed:
        return f"the supervisor's {changed} changed"
    if _zygote.pid > 0:
        changed = _changed(_own_state(_zygote.pid), _zygote_state)
        if changed:
            return f"the zygote's {changed} changed"
    return None


def _changed(now: dict[str, Any], before: dict[str, Any]) -> str | None:
    for key in ("limits", "affinity", "nice", "policy"):
        if now.get(key) != before.get(key):
            return {"limits": "resource limits", "nice": "priority"}.get(
                key, "CPU affinity" if key == "affinity" else "scheduling policy"
            )
    return None


_initial_keys: list[str] = []
_initial_cwd = "/"
_pid1 = False


def reset() -> dict[str, Any]:
    if not _pid1:
        return {"ok": True, "clean": False, "reason": "not the sandbox's init process"}
    if _runner is not None:
        # The runner first, waited for: it can fork no more, so when nothing else is left
        # (the usual end of a program) no process is forked to kill the uid's.
        _stop_runner(_runner)
    else:
        _kill_others(0)
        _reap_all(time.monotonic() + 2.0)
    _forget_runner()
    _program_files.clear()
    _judge_files.clear()
    _entries.clear()
    global _judge_dir
    _judge_dir = None  # emptied with /tmp below
    zygote_kb = 0
    try:
        zygote_kb = int(_zygote.reset().get("rss_kb") or 0)
    except (OSError, RuntimeError, ValueError) as exc:
        return {"ok": True, "clean": False, "reason": f"the zygote did not reset: {exc}"}
    try:
        for path in SCRATCH_DIRS:
            _empty_dir(path)
        reason = _leftovers()
    except OSError as exc:
        reason = f"could not clean up: {exc}"
    rss = max(_rss_kb(), zygote_kb)
    return {"ok": True, "clean": reason is None, "reason": reason, "rss_kb": rss}


# --- requests ------------------------------------------------------------------------------


def _judge_preload(part: dict[str, Any]) -> dict[str, Any]:
    """The judges' preload: in the warm judge (with the judge files), else here."""
    wanted = part["entries"] or part["calls"] or part["modules"]
    server = _judge_server_ready() if wanted else None
    if server is not None:
        # The judges' entries go with their files: the warm judge was forked from here
        # before this program came, and holds an earlier program's copy at most.
        entries = {p: _program_files[p] for p in part["entries"] if p in _program_files}
        try:
            server.send_load({**_judge_files, **entries}, {**part, "entry_files": sorted(entries)})
            return server.receive()
        except (OSError, RuntimeError, ValueError):
            server.stop()  # its tests will be forked from here, which preloads instead
    judged = _preload(part)
    _trim_heap()
    return judged


def _judge_load(header: dict[str, Any], blobs: list[bytes]) -> None:
    _judge_files.clear()
    for item in header.get("judge_files", []):
        _judge_files[str(item["name"])] = blobs[item["blob"]]


def _give(path: str) -> None:
    """Make a file or directory the supervisor wrote the program's (it builds and runs there)."""
    if _ids.separate:
        os.chown(path, _ids.program, _ids.program)


def _make_dirs(path: str) -> None:
    if os.path.isdir(path):
        return
    _make_dirs(os.path.dirname(path))
    os.mkdir(path)
    _give(path)


def _with_timeout(step: dict[str, Any], timeout: float) -> dict[str, Any]:
    """``step`` (and its judge) with its wall-clock limit lowered to ``timeout``."""
    limits = {**step["limits"], "timeout_s": min(float(step["limits"]["timeout_s"]), timeout)}
    shorter = {**step, "limits": limits}
    if step.get("judge") is not None:
        shorter["judge"] = _with_timeout(step["judge"], timeout)
    return shorter


def _run_delay(pid: int) -> float | None:
    """The longest any of ``pid``'s threads has waited for a CPU while runnable, in seconds.

    The second field of each ``/proc/PID/task/TID/schedstat`` (nanoseconds). Every thread,
    not the main one alone: a runtime's main thread often sleeps while its helper threads
    (Node's platform workers, the JVM's compiler and collector) wait for a CPU, and such a
    program was starved although its main thread never queued. None where the kernel does
    not keep it (gVisor).
    """
    waits = [waited for _, waited in _task_times(pid).values()]
    return max(waits) / 1e9 if waits else None


def _run_step(req: dict[str, Any], blobs: list[bytes]) -> tuple[dict[str, Any], list[bytes]]:
    """A step in the program's warm runner when it asks for one, else in a process of its own."""
    global _oom_last
    warm = req.get("warm_argv")
    if warm and req.get("judge") is None and req.get("check") is None:
        return run_warm(req, blobs)
    _oom_last = None
    if _runner is not None:
        _retire_runner()  # every other run kills all the program's processes anyway
    return run(req, blobs)


def handle(header: dict[str, Any], blobs: list[bytes]) -> tuple[dict[str, Any], list[bytes]]:
    global _oom_last
    _oom_last = None
    op = header.get("op")
    if op == "run":
        reply, out = _run_step(header, blobs)
        reply["ok"] = True
        return reply, out
    if op == "run_many":
        # Several steps in one round trip; none starts after the budget of time (or of the
        # bytes the reply would carry) is spent.
        budget = header.get("budget_s")
        deadline = time.monotonic() + float(budget) if budget is not None else None
        max_bytes = int(header.get("max_reply_bytes") or 0)
        results: list[dict[str, Any]] = []
        outputs: list[list[bytes]] = []
        size = 0
        stop_after_timeout = bool(header.get("stop_after_timeout"))
        for given in header["steps"]:
            step, cut = given, False
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                # A step never outlives the budget: it is stopped when the budget ends.
                cut = left < float(step["limits"]["timeout_s"])
                if cut:
                    step = _with_timeout(step, left)
            if max_bytes and results and size >= max_bytes:
                break
            reply, streams = _run_step(step, blobs)
            reply["budget_cut"] = cut and bool(reply.get("timed_out"))
            results.append(reply)
            outputs.append(streams)
            size += sum(len(s) for s in streams)
            if stop_after_timeout and reply.get("timed_out"):
                break
        flat = [blob for streams in outputs for blob in streams]
        counts = [len(streams) for streams in outputs]
        return {"ok": True, "results": results, "streams": counts}, flat
    if op == "write":
        for item in header["files"]:
            path = item["path"]
            _make_dirs(os.path.dirname(path) or "/")
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, int(item.get("mode", 0o644)))
            view = memoryview(blobs[item["blob"]])
            while view:
                view = view[os.write(fd, view) :]
            os.close(fd)
            _give(path)
        return {"ok": True}, []
    if op == "read":
        path, limit = header["path"], int(header["max_bytes"])
        roots = header.get("within")
        if roots is not None:
            # A file a program wrote: only a regular file inside its writable directories,
            # whatever links it made (its processes are all gone by now).
            real = os.path.realpath(path)
            inside = any(real.startswith(os.path.join(os.path.realpath(r), "")) for r in roots)
            if not os.path.lexists(path):
                return {"ok": False, "error": "no such file"}, []
            if not inside or not os.path.isfile(real):
                return {
                    "ok": False,
                    "error": "not a regular file in the work directory or /tmp",
                }, []
            path = real
        size = os.path.getsize(path)
        if size > limit:
            return {"ok": False, "error": f"{path} has {size} bytes, more than {limit}"}, []
        with open(path, "rb") as f:
            return {"ok": True}, [f.read(limit + 1)]
    if op in ("preload", "load"):
        _judge_load(header, blobs)
        _judge_dir_load(header, blobs)
        program_part, judge_part = _split_preload(header)
        files: dict[str, bytes] = {}
        if op == "load":
            _program_files.clear()
            for item in header["files"]:
                if "kept" in item:
                    content = _kept.get(str(item["kept"]))
                    if content is None:
                        return {"ok": False, "error": f"no kept file {item['kept']!r}"}, []
                else:
                    content = blobs[item["blob"]]
                    if "keep" in item:
                        _kept[str(item["keep"])] = content
                files[str(item["path"])] = content
            # After the files: a file this load names may be one the host then forgets.
            for name in header.get("forget", ()):
                _kept.pop(str(name), None)
            _program_files.update(files)
        # The zygote preloads the program's part while the warm judge, or this process (where
        # judges are forked from here), does the judges': two processes, two CPUs.
        _zygote.send_load(files, program_part)
        try:
            judged = _judge_preload(judge_part)
        finally:
            loaded = _zygote.receive()
        return _merge_replies(loaded, judged), []
    if op == "reset":
        return reset(), []
    if op == "ping":
        return {"ok": True}, []
    return {"ok": False, "error": f"unknown op {op!r}"}, []


def main(argv: list[str]) -> int:
    def arg(name: str, default: int = -1) -> int:
        return int(argv[argv.index(name) + 1]) if name in argv else default

    program = arg("--uid")
    cpu = arg("--cpu")
    if cpu >= 0:
        # The host's placement: every process of the sandbox inherits it (see LocalRuntime's
        # pin_cpus). A CPU this process may not use leaves it where it was.
        try:
            os.sched_setaffinity(0, {cpu})
        except OSError:
            pass
    global _ids, _pid1, _initial_keys, _initial_cwd, _STDIO, _initial_state, _zygote_state
    global _data_limit_enforced, _nproc_extra, _program_filter, _judge_server_ok
    _ids = Ids(arg("--supervisor-uid", program), arg("--judge-uid", program), program)
    workdir = argv[argv.index("--workdir") + 1] if "--workdir" in argv else None
    if "--seccomp" in argv:
        _program_filter = bytes.fromhex(argv[argv.index("--seccomp") + 1])
    become_supervisor(_ids, workdir)
    _name("supervisor")
    # Python handles SIGINT; an init process with no handler cannot be signalled from
    # inside its namespace at all, so a sandboxed program cannot interrupt the agent.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if p and os.path.abspath(p) != here]
    _pid1 = os.getpid() == 1
    # Candidates are the zygote's grandchildren: orphaned on purpose, they must come here
    # (the namespace's init does that already; without a PID namespace this does).
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    _STDIO = _make_stdio()
    _initial_keys = _proc_lines("/proc/keys")
    _initial_cwd = os.getcwd()
    _find_mounts()
    _data_limit_enforced = _probe_data_limit()
    if _pid1:
        _nproc_extra = _probe_nproc_extra()
    _prepare_child_calls()
    _judge_server_ok = (
        _ids.separate and _pid1 and _has_pidfd() and hasattr(signal, "pidfd_send_signal")
    )
    _trim_heap()
    # Before any request is read: the zygote's memory never holds a test.
    _zygote.start()
    _initial_state = _own_state()
    _zygote_state = _own_state(_zygote.pid)
    send_frame(
        {
            "event": "ready",
            "pid": os.getpid(),
            "uid": os.getuid(),
            "program_uid": _ids.program if _ids.program >= 0 else os.getuid(),
            "separate_uids": _ids.separate,
            "python": sys.version.split()[0],
            "pid1": _pid1,
            "memory_bound": "data" if _data_limit_enforced else "address space",
        }
    )
    while True:
        try:
            header, blobs = read_frame()
        except EOFError:
            return 0
        if header.get("op") == "exit":
            _shut_down()
            send_frame({"ok": True})
            return 0
        try:
            reply, out = handle(header, blobs)
        except Exception as exc:
            # Where it failed, for the host's message: the innermost frame of the agent.
            tb = exc.__traceback__
            while tb is not None and tb.tb_next is not None:
                tb = tb.tb_next
            where = f" (in {tb.tb_frame.f_code.co_name}, line {tb.tb_lineno})" if tb else ""
            reply, out = {"ok": False, "error": f"{type(exc).__name__}: {exc}{where}"}, []
        reply["id"] = header.get("id")
        try:
            send_frame(reply, out)
        except OSError as exc:
            if exc.errno == errno.EPIPE:
                return 0
            raise


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
