"""The sandbox agent: a small supervisor that runs inside the sandbox.

It is started once per sandbox session (as PID 1 of the sandbox's PID namespace
under bubblewrap) and serves requests from the host over its stdin/stdout:

* ``run``: start one process with its own stdin, resource limits and wall-clock
  timeout, collect its stdout, stderr and result channel (fd 3) with size caps,
  and report exit status, signal, CPU time and peak memory. ``kind: exec``
  executes a program; ``kind: call`` forks this already-running interpreter and
  calls a Python function in the child (no interpreter start per test).
  After every run all other processes in the sandbox are killed.
* ``write``: write files into the sandbox; ``preload``: import modules once so
  forked children share them, and run the language's trusted set-up calls (such as
  compiling the tests) in this process; ``exit``.
* ``load`` and ``reset``, for a warm sandbox that serves one program after another:
  ``load`` keeps a program's files in this process's memory (forked children see
  them, and cannot change what the next test sees) and preloads like ``preload``;
  ``reset`` forgets the program, empties the writable directories and reports
  whether the sandbox is as clean as a new one (no process, file, IPC object or
  key left behind). The host discards a sandbox that is not.

Why PID 1: the kernel ignores signals sent to a namespace's init from inside the
namespace unless it installed a handler, so the program cannot kill or stop its
supervisor; and ``kill(-1, SIGKILL)`` from PID 1 reaches every other process in
the sandbox, including daemons that left their process group. The agent also
makes itself non-dumpable, so a same-uid program can neither ptrace it nor open
its file descriptors through /proc.

This file is stdlib-only: it runs on the sandbox's interpreter, which need not
have the SDK installed. Frames are a 4-byte big-endian header length, a JSON
header, then raw blobs whose lengths the header lists.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import io
import json
import os
import resource
import select
import signal
import struct
import sys
import time
from types import ModuleType
from typing import Any

IN_FD = 0
OUT_FD = 1
CHANNEL_FD = 3
NONCE_FD = 4
MAX_HEADER = 1 << 20
MAX_BLOB = 1 << 31
PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_NO_NEW_PRIVS = 38
# glibc sizes every thread's stack by RLIMIT_STACK, and thread stacks count
# against RLIMIT_DATA: a larger value would starve multi-threaded runtimes (Go, Node).
STACK_CAP = 8 * 1024 * 1024

_entries: dict[str, ModuleType] = {}
# Harness modules by (path, content hash), kept across the programs of a warm sandbox.
_entry_cache: dict[tuple[str, str], ModuleType] = {}
# The current program's files (absolute path -> bytes) when it was loaded into memory.
# Entry modules see this very dict as ``PROGRAM_FILES``: it is mutated, never rebound.
_program_files: dict[str, bytes] = {}
# Directories a program may write to, emptied between the programs of a warm sandbox.
SCRATCH_DIRS = ("/sandbox", "/tmp", "/dev/shm", "/dev/mqueue")


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


# --- set-up --------------------------------------------------------------------------------


def _prctl(option: int, value: int) -> None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(option, value, 0, 0, 0)
    except (OSError, AttributeError):  # pragma: no cover - exotic libc
        pass


def drop_privileges(uid: int, gid: int, workdir: str | None) -> None:
    """Become the unprivileged sandbox user (when started as root inside the user namespace)."""
    if os.getuid() == 0 and uid != 0:
        if workdir:
            os.chown(workdir, uid, gid)
        os.setgroups([])
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)
        # Changing credentials cleared bubblewrap's --die-with-parent: arm it again.
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    _prctl(PR_SET_NO_NEW_PRIVS, 1)
    _prctl(PR_SET_DUMPABLE, 0)


# --- running one process --------------------------------------------------------------------


def _set_limits(limits: dict[str, Any], enforce_nproc: bool) -> None:
    def setl(which: int, value: int) -> None:
        hard = resource.getrlimit(which)[1]
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        resource.setrlimit(which, (value, value))

    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    cpu = int(limits["cpu_s"])
    soft_hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
    hard = cpu + 1 if soft_hard == resource.RLIM_INFINITY else min(cpu + 1, soft_hard)
    resource.setrlimit(resource.RLIMIT_CPU, (min(cpu, hard), hard))
    memory = int(limits["memory_bytes"])
    setl(resource.RLIMIT_DATA, memory)
    setl(resource.RLIMIT_STACK, min(memory, STACK_CAP))
    setl(resource.RLIMIT_FSIZE, int(limits["max_file_bytes"]))
    setl(resource.RLIMIT_NOFILE, int(limits["max_open_files"]))
    if enforce_nproc:
        # RLIMIT_NPROC counts every task of our uid in this user namespace (one
        # per sandbox), the agent included. Outside a namespace it would count
        # the user's processes on the whole host, so it is not set there.
        setl(resource.RLIMIT_NPROC, int(limits["max_processes"]) + 1)


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


def _fresh_stdio() -> None:
    """Give a forked Python child the standard streams a new interpreter would have."""
    sys.stdin, sys.stdout, sys.stderr = _STDIO or _make_stdio()
    for name in ("stdin", "stdout", "stderr"):
        setattr(sys, f"__{name}__", getattr(sys, name))


def _flush_stdio() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass


def _child(req: dict[str, Any], fds: dict[str, int], err_w: int, pid1: bool) -> None:
    """In the forked child: wire the descriptors, apply limits, then exec or call. Never returns."""
    code = 127
    try:
        os.setsid()
        # Move every source above the target range first, so that no dup2 below
        # overwrites a source that is still to be used.
        high = {name: fcntl.fcntl(fd, fcntl.F_DUPFD, 64) for name, fd in fds.items()}
        err_w = fcntl.fcntl(err_w, fcntl.F_DUPFD_CLOEXEC, 64)
        for target, name in enumerate(("stdin", "stdout", "stderr", "channel", "nonce")):
            os.dup2(high[name], target)
        os.closerange(NONCE_FD + 1, err_w)
        os.closerange(err_w + 1, 65536)
        os.chdir(req.get("cwd") or "/")
        env = {str(k): str(v) for k, v in (req.get("env") or {}).items()}
        _set_limits(req["limits"], enforce_nproc=pid1)
        if _OOM_FIRST:
            # A container's memory cgroup may run out before a process's own limit: the
            # kernel must then kill the program, never its supervisor.
            try:
                with open("/proc/self/oom_score_adj", "w") as f:
                    f.write("1000")
            except OSError:
                pass
        if req["kind"] == "exec":
            signal.signal(signal.SIGPIPE, signal.SIG_DFL)
            signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
            argv = [str(a) for a in req["argv"]]
            os.execvpe(argv[0], argv, env)
        module = _entries[req["module"]]
        function = getattr(module, req["function"])
        if env != os.environ:  # usually equal: then no putenv/unsetenv per variable
            os.environ.clear()
            os.environ.update(env)
        _fresh_stdio()
        os.close(err_w)
        err_w = -1
        try:
            code = int(function([str(a) for a in req["argv"]]) or 0)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException:
            import traceback

            traceback.print_exc()
            code = 1
        _flush_stdio()
    except BaseException as exc:
        if err_w >= 0:
            try:
                os.write(err_w, f"{type(exc).__name__}: {exc}".encode(errors="replace")[:4000])
            except OSError:
                pass
    finally:
        os._exit(code & 0xFF)


def _kill_others(pgid: int, pid1: bool) -> None:
    if pid1:
        try:
            os.kill(-1, signal.SIGKILL)
        except ProcessLookupError:
            pass
    else:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def _reap_all(pid1: bool, deadline: float) -> None:
    if not pid1:
        return
    while time.monotonic() < deadline:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            time.sleep(0.001)


def _rss_kb() -> int:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * (os.sysconf("SC_PAGE_SIZE") // 1024)
    except (OSError, ValueError, IndexError):
        return 0


def _memfd(data: bytes) -> int:
    try:
        fd = os.memfd_create("stdin", 0)
    except (AttributeError, OSError):
        path = f"/tmp/.stdin-{os.urandom(8).hex()}"
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        os.unlink(path)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def run(req: dict[str, Any], blobs: list[bytes], pid1: bool) -> tuple[dict[str, Any], list[bytes]]:
    limits = req["limits"]
    timeout = float(limits["timeout_s"])
    cap = int(limits["max_output_bytes"])
    if req["kind"] == "call" and req["module"] not in _entries:
        _load_entry(req["module"])
    stdin_index = req.get("stdin")
    stdin_fd = _memfd(blobs[stdin_index] if isinstance(stdin_index, int) else b"")
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    ch_r, ch_w = os.pipe()
    nonce_r, nonce_w = os.pipe()
    exec_r, exec_w = os.pipe2(os.O_CLOEXEC)
    child_fds = {
        "stdin": stdin_fd,
        "stdout": out_w,
        "stderr": err_w,
        "channel": ch_w,
        "nonce": nonce_r,
    }
    # A forked child starts with this process's resident pages; for an exec'd
    # program a peak at or below that baseline says nothing about the program.
    baseline_kb = _rss_kb() if req["kind"] == "exec" else 0
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        _child(req, child_fds, exec_w, pid1)
    for fd in (stdin_fd, out_w, err_w, ch_w, nonce_r, exec_w):
        os.close(fd)
    # The nonce exists only after the fork: the child's memory never held it.
    nonce = os.urandom(16).hex()
    try:
        os.write(nonce_w, nonce.encode())
    except OSError:
        pass
    os.close(nonce_w)

    streams = {out_r: "stdout", err_r: "stderr", ch_r: "channel", exec_r: "exec"}
    data: dict[str, list[bytes]] = {name: [] for name in streams.values()}
    sizes = dict.fromkeys(streams.values(), 0)
    for fd in streams:
        os.set_blocking(fd, False)
    try:
        pidfd: int | None = os.pidfd_open(pid)  # type: ignore[attr-defined,unused-ignore]
    except (AttributeError, OSError):
        pidfd = None

    deadline = started + timeout
    status: int | None = None
    rusage: Any = None
    timed_out = False
    exceeded: str | None = None
    killed = False

    def collect(wait: float) -> None:
        nonlocal exceeded, killed
        watch = list(streams) + ([pidfd] if pidfd is not None and status is None else [])
        if not watch:
            return
        try:
            readable, _, _ = select.select(watch, [], [], max(wait, 0.0))
        except InterruptedError:
            return
        for fd in readable:
            if fd == pidfd:
                continue
            name = streams[fd]
            try:
                chunk = os.read(fd, 1 << 16)
            except BlockingIOError:
                continue
            if not chunk:
                os.close(fd)
                del streams[fd]
                continue
            room = cap - sizes[name]
            if len(chunk) > room and name != "exec":
                if room > 0:
                    data[name].append(chunk[:room])
                sizes[name] = cap + 1
                if exceeded is None and not killed:
                    exceeded = name
                    killed = True
                    _kill_others(pid, pid1)
                continue
            if sizes[name] <= cap:
                data[name].append(chunk)
                sizes[name] += len(chunk)

    while status is None:
        now = time.monotonic()
        if now >= deadline and not killed:
            timed_out = killed = True
            _kill_others(pid, pid1)
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        wait = min(deadline - now, 0.25) if pidfd is not None else min(deadline - now, 0.005)
        collect(wait if not killed else 0.01)
        got, raw_status, usage = os.wait4(pid, os.WNOHANG)
        if got == pid:
            status, rusage = raw_status, usage
    wall = time.monotonic() - started
    if pidfd is not None:
        os.close(pidfd)
        pidfd = None
    # The main process is gone: everything it left behind goes too.
    _kill_others(pid, pid1)
    drain_deadline = time.monotonic() + 2.0
    while streams and time.monotonic() < drain_deadline:
        collect(0.05)
    for fd in list(streams):
        os.close(fd)
    _reap_all(pid1, time.monotonic() + 2.0)

    exec_error = b"".join(data.pop("exec")).decode(errors="replace") or None
    exit_code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
    sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
    header = {
        "exit_code": exit_code,
        "signal": sig,
        "wall_s": round(wall, 6),
        "cpu_s": round(rusage.ru_utime + rusage.ru_stime, 6) if rusage else 0.0,
        "maxrss_kb": int(rusage.ru_maxrss) if rusage and rusage.ru_maxrss > baseline_kb else 0,
        "timed_out": timed_out,
        "output_exceeded": exceeded,
        "stdout_truncated": sizes["stdout"] > cap,
        "stderr_truncated": sizes["stderr"] > cap,
        "nonce": nonce,
        "exec_error": exec_error,
    }
    out = [b"".join(data["stdout"]), b"".join(data["stderr"]), b"".join(data["channel"])]
    return header, out


def _load_entry(path: str) -> ModuleType:
    import hashlib
    import importlib.util

    name = "_vf_entry_" + os.path.splitext(os.path.basename(path))[0]
    source = _program_files.get(path)
    if source is None:
        with open(path, "rb") as f:
            source = f.read()
    key = (path, hashlib.sha256(source).hexdigest())
    module = _entry_cache.get(key)
    if module is None:
        spec = importlib.util.spec_from_loader(name, loader=None, origin=path)
        assert spec is not None
        module = importlib.util.module_from_spec(spec)
        module.__file__ = path
        sys.modules[name] = module
        exec(compile(source, path, "exec", dont_inherit=True), module.__dict__)
        module.PROGRAM_FILES = _program_files  # type: ignore[attr-defined]
        if len(_entry_cache) >= 16:
            _entry_cache.pop(next(iter(_entry_cache)))
        _entry_cache[key] = module
    _entries[path] = module
    return module


def _preload(header: dict[str, Any]) -> dict[str, Any]:
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
    others = [p for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid()]
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
    return None


_initial_keys: list[str] = []
_initial_cwd = "/"
# Set by --oom-first (containers): every program is the out-of-memory killer's first choice.
_OOM_FIRST = False


def reset(pid1: bool) -> dict[str, Any]:
    if not pid1:
        return {"ok": True, "clean": False, "reason": "not the sandbox's init process"}
    _kill_others(0, pid1)
    _reap_all(pid1, time.monotonic() + 2.0)
    _program_files.clear()
    _entries.clear()
    try:
        for path in SCRATCH_DIRS:
            _empty_dir(path)
        reason = _leftovers()
    except OSError as exc:
        reason = f"could not clean up: {exc}"
    return {"ok": True, "clean": reason is None, "reason": reason, "rss_kb": _rss_kb()}


# --- requests ------------------------------------------------------------------------------


def handle(
    header: dict[str, Any], blobs: list[bytes], pid1: bool
) -> tuple[dict[str, Any], list[bytes]]:
    op = header.get("op")
    if op == "run":
        reply, out = run(header, blobs, pid1)
        reply["ok"] = True
        return reply, out
    if op == "run_many":
        # Several steps in one round trip; none starts after the budget is spent.
        budget = header.get("budget_s")
        deadline = time.monotonic() + float(budget) if budget is not None else None
        results: list[dict[str, Any]] = []
        out = []
        for step in header["steps"]:
            if deadline is not None and time.monotonic() >= deadline:
                break
            reply, streams = run(step, blobs, pid1)
            results.append(reply)
            out += streams
        return {"ok": True, "results": results}, out
    if op == "write":
        for item in header["files"]:
            path = item["path"]
            os.makedirs(os.path.dirname(path) or "/", exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, int(item.get("mode", 0o644)))
            view = memoryview(blobs[item["blob"]])
            while view:
                view = view[os.write(fd, view) :]
            os.close(fd)
        return {"ok": True}, []
    if op == "read":
        path, limit = header["path"], int(header["max_bytes"])
        size = os.path.getsize(path)
        if size > limit:
            return {"ok": False, "error": f"{path} has {size} bytes, more than {limit}"}, []
        with open(path, "rb") as f:
            return {"ok": True}, [f.read(limit + 1)]
    if op == "preload":
        return _preload(header), []
    if op == "load":
        _program_files.clear()
        for item in header["files"]:
            _program_files[str(item["path"])] = blobs[item["blob"]]
        return _preload(header), []
    if op == "reset":
        return reset(pid1), []
    if op == "ping":
        return {"ok": True}, []
    return {"ok": False, "error": f"unknown op {op!r}"}, []


def main(argv: list[str]) -> int:
    uid = gid = -1
    if "--uid" in argv:
        uid = int(argv[argv.index("--uid") + 1])
    if "--gid" in argv:
        gid = int(argv[argv.index("--gid") + 1])
    workdir = argv[argv.index("--workdir") + 1] if "--workdir" in argv else None
    global _OOM_FIRST
    _OOM_FIRST = "--oom-first" in argv
    if uid >= 0:
        drop_privileges(uid, gid if gid >= 0 else uid, workdir)
    else:
        _prctl(PR_SET_DUMPABLE, 0)
    # Python handles SIGINT; an init process with no handler cannot be signalled from
    # inside its namespace at all, so a sandboxed program cannot interrupt the agent.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if p and os.path.abspath(p) != here]
    pid1 = os.getpid() == 1
    global _initial_keys, _initial_cwd, _STDIO
    _STDIO = _make_stdio()
    _initial_keys = _proc_lines("/proc/keys")
    _initial_cwd = os.getcwd()
    _find_mounts()
    send_frame(
        {
            "event": "ready",
            "pid": os.getpid(),
            "uid": os.getuid(),
            "python": sys.version.split()[0],
            "pid1": pid1,
        }
    )
    while True:
        try:
            header, blobs = read_frame()
        except EOFError:
            return 0
        if header.get("op") == "exit":
            send_frame({"ok": True})
            return 0
        try:
            reply, out = handle(header, blobs, pid1)
        except Exception as exc:
            reply, out = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}, []
        reply["id"] = header.get("id")
        try:
            send_frame(reply, out)
        except OSError as exc:
            if exc.errno == errno.EPIPE:
                return 0
            raise


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
