"""What a verification run holds on the host: descriptors, processes, temporary entries.

Soak runs and the property suite compare these before and after many verifications; any
growth is a leak.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

#: Where the sandbox agent lives inside the sandbox (how its processes are recognised).
AGENT = b"/opt/agent/agent.py"


def proc_stat(pid: str) -> tuple[str, int, int] | None:
    """(state, ppid, start time in clock ticks since boot) of a process, None if gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
    except OSError:
        return None
    return fields[0].decode(), int(fields[1]), int(fields[19])


def _argv(pid: int) -> list[bytes]:
    """A process's command line (empty if it is gone)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().split(b"\0")
    except OSError:
        return []


def is_sandbox(pid: int) -> bool:
    """Whether a process is a sandbox (bwrap or the agent)."""
    argv = _argv(pid)
    return bool(argv) and (argv[0].endswith(b"bwrap") or any(AGENT in a for a in argv))


@dataclass
class Processes:
    """Counts of processes (see :func:`processes`)."""

    descendants: int = 0  # every process below this one
    sandboxes: int = 0  # of those, bwrap or the agent
    orphans: int = 0  # live sandbox processes reparented to PID 1 since the soak began
    init_zombies: int = 0  # zombies left for PID 1 to reap since the soak began


def processes(since_ticks: int = 0) -> Processes:
    """Processes below this one, and sandbox processes adopted by PID 1 since ``since_ticks``."""
    me = os.getpid()
    children: dict[int, list[int]] = {}
    adopted: list[tuple[int, str]] = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        st = proc_stat(entry)
        if st is None:
            continue
        state, ppid, started = st
        children.setdefault(ppid, []).append(int(entry))
        if ppid == 1 and started >= since_ticks:
            adopted.append((int(entry), state))
    out = Processes()
    stack = list(children.get(me, []))
    while stack:
        pid = stack.pop()
        out.descendants += 1
        out.sandboxes += is_sandbox(pid)
        stack += children.get(pid, [])
    for pid, state in adopted:
        if state == "Z":
            out.init_zombies += 1
        elif is_sandbox(pid):
            out.orphans += 1
    return out


@dataclass(frozen=True)
class Agent:
    """A live sandbox agent process (see :func:`agents`)."""

    pid: int
    role: str  # "supervisor", "zygote" or "judge" (the warm judge)
    cpu_s: float  # its own CPU time
    children_cpu_s: float  # its reaped children's (programs, judges)


def agents() -> list[Agent]:
    """The sandbox agents alive on this host, with their CPU time so far.

    An agent names its processes by role (``vf-supervisor``, ``vf-zygote``, ``vf-judge``;
    a program's is ``vf-program``, not an agent); one that does not is a zygote if its
    parent is an agent, else a supervisor. A benchmark reads them before the sandboxes
    close to split its machinery by role; a test, to check that closing a sandbox
    accounts for all of it.
    """
    found: dict[int, tuple[int, float, float, str]] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or not _is_agent(int(entry)):
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                head, _, tail = f.read().rpartition(b")")
        except OSError:
            continue
        name = head.partition(b"(")[2].decode(errors="replace")
        if name == "vf-program":
            continue
        fields = tail.split()
        own = (int(fields[11]) + int(fields[12])) / tick
        reaped = (int(fields[13]) + int(fields[14])) / tick
        found[int(entry)] = (int(fields[1]), own, reaped, name)
    return [
        Agent(pid, _role(name, parent in found), own, reaped)
        for pid, (parent, own, reaped, name) in found.items()
    ]


def _role(name: str, child_of_an_agent: bool) -> str:
    if name in ("vf-supervisor", "vf-zygote", "vf-judge"):
        return name[3:]
    return "zygote" if child_of_an_agent else "supervisor"


def _is_agent(pid: int) -> bool:
    argv = _argv(pid)
    return bool(argv) and not argv[0].endswith(b"bwrap") and any(AGENT in a for a in argv)


def tmp_entries(tmp: Path | None = None) -> int:
    """Entries named ``verifiers*`` in the temporary directory and ``/dev/shm``.

    The temporary directory is the system's by default; ``/dev/shm`` holds warm sandboxes'
    program directories (see :mod:`verifiers.runtimes.local`).
    """
    tmp = Path(tempfile.gettempdir()) if tmp is None else tmp
    places = [tmp] + [p for p in (Path("/dev/shm"),) if p.is_dir() and p != tmp]
    return sum(1 for place in places for p in place.iterdir() if p.name.startswith("verifiers"))


def rss_mib() -> float:
    """Resident memory of this process, in MiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def open_fds() -> int:
    """Open file descriptors of this process."""
    return len(os.listdir("/proc/self/fd"))


def start_ticks() -> int:
    """When this process started, in clock ticks since boot (see :func:`processes`)."""
    stat = proc_stat("self")
    return stat[2] if stat is not None else 0
