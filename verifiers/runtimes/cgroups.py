"""Control groups for local sandboxes: memory, processes and CPU bounded per sandbox.

Resource limits (``RLIMIT_*``) bound each process; a sandbox holds many (a fork bomb, a
pool of threads, the supervisor, the zygote, a judge), so without a group of its own a
program could hold ``max_processes`` times its memory. Each sandbox therefore gets a cgroup
of its own when the host allows it:

* **memory**: every process of the sandbox together, its scratch files (tmpfs) included, at
  most ``memory_mb`` (or the build's, when it builds) plus ``SANDBOX_OVERHEAD_MB``; no
  swap. When the group runs out, the kernel kills the program (it is the out-of-memory
  killer's first choice; the supervisor is exempt) and the agent reports ``memory_limit``;
* **pids**: at most ``max_processes`` plus ``SANDBOX_OVERHEAD_PIDS`` tasks;
* **cpu**: the same weight for every sandbox, so a sandbox full of busy processes gets one
  sandbox's share, not one per process.

Both hierarchies exist in the field. With cgroup v1 (separate ``memory``, ``pids`` and
``cpu`` mounts) the groups nest under this process's own group in each, so that whatever
bounds this process bounds its sandboxes too. With cgroup v2 (one unified tree) a group
holding processes cannot delegate controllers to children, so the groups go under a
``verifiers`` group at the top of the tree this process can see. Creating groups needs
root or a delegated subtree; without one :func:`probe` says why and sandboxes keep the
per-process limits alone (``verifiers doctor`` shows it).
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path("/sys/fs/cgroup")
#: Where a sandbox sees its own memory group (read-only), to learn of out-of-memory kills.
MEMORY_VIEW = "/run/verifiers/memory"
_counter = itertools.count()
_lock = threading.Lock()


@dataclass(frozen=True)
class Hierarchy:
    """Where sandbox groups are made.

    Attributes:
        version: 1 or 2.
        bases: Controller name -> directory that holds the sandboxes' groups (v2: one
            directory for all three).
        detail: One line for ``verifiers doctor``.
    """

    version: int
    bases: dict[str, Path]
    detail: str


def _own_path(controller: str) -> str | None:
    """The group of the current process in a v1 controller (``memory``), or in v2 (``""``)."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, names, path = line.split(":", 2)
        if controller == "" and names == "":
            return path
        if controller and controller in names.split(","):
            return path
    return None


def probe() -> Hierarchy | str:
    """The hierarchy sandbox groups can be made in, or why there is none."""
    if (ROOT / "cgroup.controllers").exists():
        return _probe_v2()
    return _probe_v1()


def _probe_v1() -> Hierarchy | str:
    bases: dict[str, Path] = {}
    for controller in ("memory", "pids", "cpu"):
        own = _own_path(controller)
        mount = ROOT / controller
        if own is None or not mount.is_dir():
            return f"cgroup v1 without the {controller} controller"
        parent = mount / own.lstrip("/")
        base = parent / f"verifiers-{os.getpid()}"
        _remove_stale(parent)
        try:
            base.mkdir(exist_ok=True)
        except OSError as err:
            return f"cannot create cgroups under {mount / own.lstrip('/')}: {err.strerror}"
        bases[controller] = base
        _at_exit(base)
    memory = bases["memory"]
    if not (memory / "memory.limit_in_bytes").exists():
        return "cgroup v1 memory controller without memory.limit_in_bytes"
    return Hierarchy(1, bases, f"cgroup v1 (memory, pids, cpu under {memory.parent})")


def _probe_v2() -> Hierarchy | str:
    controllers = (ROOT / "cgroup.controllers").read_text().split()
    missing = {"memory", "pids", "cpu"} - set(controllers)
    if missing:
        return f"cgroup v2 without the {', '.join(sorted(missing))} controller(s)"
    base = ROOT / "verifiers"
    try:
        base.mkdir(exist_ok=True)
        enabled = (ROOT / "cgroup.subtree_control").read_text().split()
        wanted = [c for c in ("memory", "pids", "cpu") if c not in enabled]
        if wanted:
            (ROOT / "cgroup.subtree_control").write_text(" ".join(f"+{c}" for c in wanted))
        (base / "cgroup.subtree_control").write_text("+memory +pids +cpu")
    except OSError as err:
        return f"cannot delegate cgroup v2 controllers under {ROOT}: {err.strerror}"
    return Hierarchy(2, {"memory": base, "pids": base, "cpu": base}, f"cgroup v2 under {base}")


_bases: set[Path] = set()


def _at_exit(base: Path) -> None:
    """Remember this process's parent group, removed when empty (:func:`tidy`, and at exit)."""
    with _lock:
        if not _bases:
            atexit.register(tidy)
        _bases.add(base)


def tidy() -> None:
    """Remove this process's empty parent groups (made again by the next sandbox)."""
    for base in list(_bases):
        with contextlib.suppress(OSError):
            base.rmdir()


def live_groups() -> int:
    """How many sandbox groups of this process exist now (each hierarchy counted once)."""
    found: set[str] = set()
    for base in list(_bases):
        with contextlib.suppress(OSError):
            found.update(child.name for child in base.glob("sandbox-*"))
    return len(found)


def _remove_stale(parent: Path) -> None:
    """Remove the groups a process that died (killed, say) left under ``parent``."""
    for base in parent.glob("verifiers-*"):
        pid = base.name.removeprefix("verifiers-")
        if not pid.isdigit() or int(pid) == os.getpid() or Path(f"/proc/{pid}").exists():
            continue
        for child in base.glob("sandbox-*"):
            _rmdir(child, 0.0)
        _rmdir(base, 0.0)


def _rmdir(path: Path, patience_s: float) -> None:
    """Remove an empty group, waiting a moment for the kernel to let its last tasks go."""
    deadline = time.monotonic() + patience_s
    while True:
        try:
            path.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            if time.monotonic() >= deadline:
                return
            time.sleep(0.01)


class SandboxGroup:
    """The group of one sandbox (in each controller with v1), made before the sandbox starts.

    Args:
        hierarchy: Where groups are made.
        memory_bytes: The memory of every process together (tmpfs included).
        pids: The most tasks at once.
    """

    def __init__(self, hierarchy: Hierarchy, memory_bytes: int, pids: int) -> None:
        with _lock:
            name = f"sandbox-{os.getpid()}-{next(_counter)}"
        self.hierarchy = hierarchy
        self.dirs = sorted({base / name for base in hierarchy.bases.values()})
        self.memory_dir = hierarchy.bases["memory"] / name
        made: list[Path] = []
        try:
            for path in self.dirs:
                path.parent.mkdir(exist_ok=True)  # tidied away when it was empty
                path.mkdir()
                made.append(path)
            if hierarchy.version == 1:
                self._write("memory", "memory.limit_in_bytes", str(memory_bytes))
                with contextlib.suppress(FileNotFoundError):  # no swap accounting: no swap
                    self._write("memory", "memory.memsw.limit_in_bytes", str(memory_bytes))
                self._write("pids", "pids.max", str(pids))
                self._write("cpu", "cpu.shares", "1024")
            else:
                self._write("memory", "memory.max", str(memory_bytes))
                with contextlib.suppress(FileNotFoundError):
                    self._write("memory", "memory.swap.max", "0")
                self._write("pids", "pids.max", str(pids))
                self._write("cpu", "cpu.weight", "100")
        except BaseException:
            for path in reversed(made):
                with contextlib.suppress(OSError):
                    path.rmdir()
            raise

    def _write(self, controller: str, name: str, value: str) -> None:
        base = self.hierarchy.bases[controller]
        (base / self.memory_dir.name / name).write_text(value)

    def oom_kills(self) -> int:
        """How many processes the out-of-memory killer took in the group so far."""
        name = "memory.oom_control" if self.hierarchy.version == 1 else "memory.events"
        try:
            text = (self.memory_dir / name).read_text()
        except OSError:
            return 0
        for line in text.splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill" and value.strip().isdigit():
                return int(value)
        return 0

    async def exhausted(self, seen: int) -> bool:
        """Whether the group's memory ran out beyond the ``seen`` kills the agent reported."""
        return self.oom_kills() > seen

    def add(self, pid: int) -> None:
        """Move a process (the sandbox's first) into the group; its children follow."""
        for path in self.dirs:
            (path / "cgroup.procs").write_text(str(pid))

    def remove(self) -> None:
        """Remove the group once its processes are gone (waits a moment for them)."""
        for path in self.dirs:
            _rmdir(path, 5.0)
