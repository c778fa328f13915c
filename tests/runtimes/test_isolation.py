"""Sandboxes cannot touch each other or the host (real sandboxes, hostile programs).

Every check is a verdict or a count (processes, memory), never a timing.
"""

from __future__ import annotations

import os
import resource
import threading
import time

import pytest

import verifiers
from verifiers import Status, registry
from verifiers.limits import MIB
from verifiers.runtimes import LocalRuntime
from verifiers.runtimes.base import REPLY_BYTES

from ..conftest import need

SUM = {"inputs": ["1 2\n", "3 4\n"], "outputs": ["3\n", "7\n"]}
CORRECT = "a, b = map(int, input().split())\nprint(a + b)"
# A program that needs its threads and open files: it fails if another sandbox's bomb (or
# a lowered limit) took them.
THREADS = (
    "import threading, tempfile\n"
    "files = [tempfile.TemporaryFile() for _ in range(100)]\n"
    "done = []\n"
    "ts = [threading.Thread(target=lambda: done.append(1)) for _ in range(16)]\n"
    "[t.start() for t in ts]\n[t.join() for t in ts]\n"
    "data = bytearray(300 * 1024 * 1024)\n"
    "a, b = map(int, input().split())\nprint(a + b if len(done) == 16 else -1)"
)


def memory_bomb(processes: int) -> str:
    """A program whose ``processes`` children each touch 256 MB, then all sleep."""
    return (
        "import os, time\n"
        f"for _ in range({processes}):\n"
        "    if os.fork() == 0:\n"
        "        x = bytearray(256 * 1024 * 1024)\n"
        "        for i in range(0, len(x), 4096):\n"
        "            x[i] = 1\n"
        "        time.sleep(30)\n"
        "        os._exit(0)\n"
        "time.sleep(30)\n"
    )


def _available_mb() -> float:
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no MemAvailable in /proc/meminfo")


def _cgroups(runtime: LocalRuntime) -> None:
    found = runtime.hierarchy()
    need(not isinstance(found, str), f"no cgroup per sandbox here: {found}")


def test_a_multi_process_memory_bomb_is_memory_limit(runtime: LocalRuntime) -> None:
    _cgroups(runtime)
    # 16 processes of 256 MB each: each is under its own limit (RLIMIT_DATA 300 MB), all
    # together far over the sandbox's memory; the host keeps its memory.
    bomb = memory_bomb(16)
    floor = _available_mb() - 2 * 1024
    lowest = [_available_mb()]
    stop = threading.Event()

    def watch() -> None:
        while not stop.is_set():
            lowest[0] = min(lowest[0], _available_mb())
            time.sleep(0.02)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        r = verifiers.score(
            "python",
            bomb,
            {"inputs": [""], "outputs": [""]},
            runtime=runtime,
            limits={"timeout_s": 20, "memory_mb": 300, "max_processes": 32, "disk_mb": 32},
        )
    finally:
        stop.set()
        watcher.join()
    assert r.status is Status.MEMORY_LIMIT, r.feedback
    # The sandbox may hold its memory (300 MB), scratch (2 x 32 + 64 MB) and overhead.
    assert lowest[0] > floor, f"the host went down to {lowest[0]:.0f} MB available"


def test_fork_bombs_leave_correct_neighbours_alone(runtime: LocalRuntime) -> None:
    bomb = (
        "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"
    )
    limits = {"timeout_s": 10, "max_processes": 24, "memory_mb": 512}
    items = [
        {"language": "python", "completion": code, "tests": SUM, "limits": limits}
        for code in [bomb, THREADS] * 4
    ]
    results = verifiers.score_batch(items, runtime=runtime, max_concurrency=8)
    correct = results[1::2]
    assert all(r.status is Status.PASSED for r in correct), [r.feedback for r in correct]
    assert all(r.status is not Status.PASSED for r in results[::2])
    assert not any(r.infra_error for r in results)


MEDDLE = """
import os, resource, sys
try:
    resource.prlimit(1, resource.RLIMIT_NOFILE, (16, 16))
except OSError as e:
    print("prlimit", e.errno, file=sys.stderr)
for call in (lambda: os.sched_setaffinity(1, {0}), lambda: os.setpriority(os.PRIO_PROCESS, 1, 19),
             lambda: os.sched_setscheduler(1, os.SCHED_IDLE, os.sched_param(0)),
             lambda: resource.prlimit(1, resource.RLIMIT_NPROC, (1, 1)),
             lambda: resource.prlimit(1, resource.RLIMIT_DATA, (1 << 20, 1 << 20))):
    try:
        call()
    except OSError:
        pass
a, b = map(int, input().split())
print(a + b)
"""


def test_a_program_cannot_change_the_supervisor() -> None:
    """PID 1's limits, affinity, priority and scheduling: refused, and proven at each reset."""
    rt = LocalRuntime()
    verdict = rt.check()
    need(verdict.available, verdict.detail)
    meddler = verifiers.score("python", MEDDLE, SUM, runtime=rt)
    assert meddler.status is Status.PASSED, meddler.feedback
    assert "prlimit 1" in meddler.tests[0].stderr  # EPERM: the supervisor is another uid
    after = [verifiers.score("python", THREADS, SUM, runtime=rt, limits={"timeout_s": 10})]
    after += [
        verifiers.score(
            "javascript",
            "console.log(Buffer.alloc(200 << 20).length > 0 ? 3 : 0)",
            {"inputs": [""], "outputs": ["3\n"]},
            runtime=rt,
        )
    ]
    assert all(r.status is Status.PASSED for r in after), [r.feedback for r in after]
    # The same warm sandbox served them: the reset found the supervisor as it started.
    assert rt.warm_stats["discarded"] == 0, rt.warm_stats
    assert rt.warm_stats["reused"] >= 1, rt.warm_stats
    verifiers.close_idle_sandboxes()


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def test_output_amplification_keeps_the_sdk_bounded(runtime: LocalRuntime) -> None:
    # Each amplifier writes the whole 16 MiB cap to stdout, stderr and its channel in every
    # one of 33 tests: 1.6 GB per program if the host kept it all.
    cap = 16 * MIB
    amplifier = (
        "import os, sys\n"
        f"chunk = b'x' * (1 << 20)\n"
        f"for _ in range({cap >> 20}):\n"
        "    os.write(1, chunk)\n"
        "    os.write(2, chunk)\n"
        "    try:\n"
        "        os.write(3, chunk)\n"
        "    except OSError:\n"
        "        pass\n"
    )
    tests = {"inputs": [""] * 33, "outputs": ["never"] * 33}
    items = [
        {"language": "python", "completion": amplifier, "tests": tests, "policy": "partial"}
        for _ in range(4)
    ] + [{"language": "python", "completion": CORRECT, "tests": SUM} for _ in range(4)]
    before = _rss_mb()
    results = verifiers.score_batch(
        items, runtime=runtime, max_concurrency=2, limits={"timeout_s": 20}
    )
    grown = _rss_mb() - before
    assert len(results) == 8
    assert all(r.status is Status.PASSED for r in results[4:])
    assert all(r.status is not Status.PASSED and not r.infra_error for r in results[:4])
    # Per verification in flight: one round trip's outputs (REPLY_BYTES) plus one test's
    # capped streams, held a few times over while decoded and judged.
    bound = 2 * 4 * (REPLY_BYTES + 2 * cap) / MIB
    assert grown < bound, f"the SDK grew by {grown:.0f} MB (bound {bound:.0f} MB)"


@pytest.mark.parametrize("language", ["python", "javascript"])
def test_the_sandbox_shows_only_what_programs_need(runtime: LocalRuntime, language: str) -> None:
    python = runtime.sandbox_python()
    hidden_site = python.hidden[-1]
    sdk_dir = os.path.dirname(verifiers.__file__)  # the SDK's own code: never in a sandbox
    if language == "python":
        code = (
            "import os, importlib.util\n"
            f"entries = set(os.listdir({hidden_site!r}))\n"
            "sdk = importlib.util.find_spec('verifiers') is None\n"
            f"sdk = sdk and not os.path.exists({sdk_dir!r})\n"
            "print('ok' if sdk and 'torch' not in entries and os.path.exists('/etc/passwd') "
            "and not os.path.exists(os.path.expanduser('~root/.bashrc')) else entries)"
        )
    else:
        code = (
            "const fs = require('fs');\n"
            f"const entries = fs.readdirSync({hidden_site!r});\n"
            f"const sdk = fs.existsSync({sdk_dir!r});\n"
            "console.log(entries.includes('torch') || sdk ? 'seen' : 'ok');"
        )
    r = verifiers.score(language, code, {"inputs": [""], "outputs": ["ok\n"]}, runtime=runtime)
    assert r.status is Status.PASSED, r.feedback
    assert os.path.isdir(hidden_site)


# What a sandbox mounts of its own (kernel file systems, scratch, generated files, the agent).
_SANDBOX_OWN = ("/", "/proc", "/dev", "/tmp", "/sandbox", "/opt", "/etc/passwd", "/etc/group")
_SANDBOX_OWN += ("/etc/hosts", "/run/verifiers/memory")


def test_a_sandbox_mounts_exactly_the_paths_readable_paths_lists(runtime: LocalRuntime) -> None:
    """Every mount point in a Python sandbox is listed by readable_paths() or is the sandbox's.

    ``verifiers doctor --paths`` and docs/security.md print that list: this is what keeps
    them true.
    """
    listed = runtime.readable_paths()
    allowed = sorted({p for group in listed.values() for p in group})
    hidden = list(runtime.sandbox_python().hidden)
    code = (
        "import json\n"
        f"allowed, own, hidden = {allowed!r}, {_SANDBOX_OWN!r}, {hidden!r}\n"
        "def inside(p, roots):\n"
        "    return any(p == r or p.startswith(r.rstrip('/') + '/') for r in roots)\n"
        "mounts = [line.split()[4] for line in open('/proc/self/mountinfo')]\n"
        "extra = [m for m in mounts if m not in allowed and m not in hidden and\n"
        "         not (m == '/' or inside(m, [o for o in own if o != '/']))]\n"
        "print(json.dumps(extra))\n"
    )
    r = verifiers.score("python", code, {"inputs": [""], "outputs": ["[]\n"]}, runtime=runtime)
    assert r.status is Status.PASSED, r.feedback
    sdk_dir = os.path.dirname(verifiers.__file__)
    assert not [p for p in allowed if sdk_dir == p or sdk_dir.startswith(p.rstrip("/") + "/")]


def test_toolchain_paths_are_the_toolchains_own(runtime: LocalRuntime) -> None:
    for name in ("go", "rust", "javascript"):
        specs = tuple(getattr(registry.get_language(name), "toolchains", ()))
        tools = runtime.readable_paths(specs)["toolchains"]
        home = os.path.expanduser("~")
        # Nothing broader than a toolchain's own directory: never the home directory itself.
        assert home not in tools and "/" not in tools, tools
        assert all(os.path.exists(p) for p in tools), tools
