"""Warm sandboxes: one sandbox serves program after program, and nothing leaks between them.

Every test here runs real programs through ``verifiers.score`` on a private
:class:`LocalRuntime`, so that its warm-pool counters belong to the test alone.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import threading
import time

import verifiers
from verifiers import Status
from verifiers.runtimes import LocalRuntime
from verifiers.testing import resources

ADD = "def add(a, b):\n    return a + b\n"
ADD_TESTS = {"test_list": ["assert add(1, 2) == 3", "assert add(-1, 1) == 0"]}

# A program that litters every writable place of its sandbox and leaves a daemon.
LITTER = """
import os, subprocess
def add(a, b):
    return a + b
for path in ("/tmp/left", "/sandbox/left", "/dev/shm/left"):
    with open(path, "w") as f:
        f.write("secret of the previous program")
os.makedirs("/tmp/deep/er", exist_ok=True)
os.chmod("/tmp/deep", 0o500)
subprocess.Popen(["sleep", "60"], start_new_session=True)
"""

# Tests (trusted) that look for anything an earlier program left behind.
CLEAN_TESTS = {
    "test_imports": ["import os"],
    "test_list": [
        "assert add(1, 2) == 3",
        "assert not [p for p in ('/tmp/left', '/sandbox/left', '/dev/shm/left', '/tmp/deep')"
        " if os.path.exists(p)]",
        # The tests run in the judge: the supervisor, the zygote, the program and the judge.
        "assert len([p for p in os.listdir('/proc') if p.isdigit()]) == 4",
    ],
}


def score(code: str, tests: object, runtime: LocalRuntime) -> verifiers.Result:
    return verifiers.score("python", code, tests, runtime=runtime)


def test_programs_reuse_a_warm_sandbox() -> None:
    rt = LocalRuntime()
    results = [score(ADD, ADD_TESTS, rt) for _ in range(5)]
    assert all(r.status is Status.PASSED for r in results)
    assert rt.warm_stats["started"] == 1
    assert rt.warm_stats["reused"] == 4
    verifiers.close_idle_sandboxes()


def test_nothing_a_program_leaves_reaches_the_next() -> None:
    rt = LocalRuntime()
    littered = score(LITTER, ADD_TESTS, rt)
    assert littered.status is Status.PASSED, littered.feedback
    after = score(ADD, CLEAN_TESTS, rt)
    assert after.status is Status.PASSED, after.feedback
    # The same sandbox served both: it was cleaned, not replaced.
    assert rt.warm_stats == {"started": 1, "reused": 1, "discarded": 0}
    verifiers.close_idle_sandboxes()


def test_a_sandbox_with_leftover_ipc_objects_is_discarded() -> None:
    rt = LocalRuntime()
    ipc = (
        "import ctypes\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "assert libc.shmget(0, 4096, 0o1600) >= 0\n" + ADD  # IPC_PRIVATE, IPC_CREAT | 0600
    )
    assert score(ipc, ADD_TESTS, rt).status is Status.PASSED
    assert score(ADD, ADD_TESTS, rt).status is Status.PASSED
    assert rt.warm_stats["discarded"] == 1
    assert rt.warm_stats["started"] == 2
    verifiers.close_idle_sandboxes()


def test_a_program_cannot_rewrite_the_tests_of_later_runs() -> None:
    # The harness keeps the program's files in memory: a test that rewrites them changes
    # its own forked copy only, so later tests (and later programs) see the real ones.
    rt = LocalRuntime()
    tamper = (
        "import json, sys\n"
        "for module in list(sys.modules.values()):\n"
        "    files = getattr(module, 'PROGRAM_FILES', None)\n"
        "    if isinstance(files, dict):\n"
        "        for path in list(files):\n"
        "            if path.endswith('spec.json'):\n"
        "                files[path] = json.dumps({'mode': 'assert'}).encode()\n"
        "            if path.endswith('cases.bin'):\n"
        "                files[path] = b' ' * len(files[path])\n"
        "def add(a, b):\n    return a - b\n"
    )
    result = score(tamper, ADD_TESTS, rt)
    assert result.status is Status.FAILED
    assert result.passed == 0
    assert score(ADD, ADD_TESTS, rt).status is Status.PASSED
    verifiers.close_idle_sandboxes()


def test_a_timeout_does_not_spoil_the_sandbox() -> None:
    rt = LocalRuntime()
    spin = "import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nwhile True:\n    pass\n"
    slow = verifiers.score(
        "python", spin, [{"input": "", "output": "x"}], runtime=rt, limits={"timeout_s": 0.5}
    )
    assert slow.status is Status.TIMEOUT
    assert score(ADD, CLEAN_TESTS, rt).status is Status.PASSED
    assert rt.warm_stats["started"] == 1
    verifiers.close_idle_sandboxes()


def test_programs_with_files_on_disk_reuse_a_warm_sandbox() -> None:
    # JavaScript runs node on files in the program directory: the host writes them into
    # the warm sandbox's directory (bound read-only) for each program.
    rt = LocalRuntime()
    for n in range(3):
        js = verifiers.score(
            "javascript",
            f"const add = (a, b) => a + b + {n} - {n};",
            {"test": "const assert = require('node:assert');\nassert.equal(add(1, 2), 3);"},
            runtime=rt,
        )
        assert js.status is Status.PASSED, js.feedback
    assert rt.warm_stats["started"] == 1
    assert rt.warm_stats["reused"] == 2
    verifiers.close_idle_sandboxes()


# Tries to change its own program directory and leave files for the next program.
MEDDLE_JS = """
const fs = require('fs');
const tries = [
  () => fs.writeFileSync('/opt/program/solution.js', 'console.log("forged")'),
  () => fs.writeFileSync('/opt/program/left.js', 'x'),
  () => fs.unlinkSync('/opt/program/solution.js'),
  () => fs.chmodSync('/opt/program', 0o777),
];
let blocked = 0;
for (const t of tries) { try { t(); } catch (e) { blocked += 1; } }
fs.writeFileSync('/sandbox/left', 'secret');
console.log(blocked);
"""

# Sees what an earlier program left: its program directory holds its own file alone.
LOOK_JS = """
const fs = require('fs');
console.log(fs.readdirSync('/opt/program').join(','), fs.existsSync('/sandbox/left'));
"""


def test_a_program_cannot_change_its_program_directory_or_reach_the_next() -> None:
    rt = LocalRuntime()
    meddle = verifiers.score("javascript", MEDDLE_JS, [{"input": "", "output": "4"}], runtime=rt)
    assert meddle.status is Status.PASSED, meddle.feedback
    look = verifiers.score(
        "javascript", LOOK_JS, [{"input": "", "output": "solution.js false"}], runtime=rt
    )
    assert look.status is Status.PASSED, look.feedback
    assert rt.warm_stats["reused"] == 1
    verifiers.close_idle_sandboxes()


def test_program_directories_of_dead_processes_are_removed() -> None:
    # A process killed while its warm sandboxes lived leaves their directories behind; the
    # next runtime to make one removes them (by the pid in their names), not others'.
    gone = subprocess.Popen(["true"])  # a pid that has just exited
    gone.wait()
    base = "/dev/shm" if os.access("/dev/shm", os.W_OK) else tempfile.gettempdir()
    stale = tempfile.mkdtemp(prefix=f"verifiers-program-{gone.pid}-", dir=base)
    alive = tempfile.mkdtemp(prefix=f"verifiers-program-{os.getpid()}-", dir=base)
    try:
        rt = LocalRuntime()
        js = verifiers.score("javascript", LOOK_JS, [{"input": "", "output": "x"}], runtime=rt)
        assert js.status is not Status.SANDBOX_ERROR, js.feedback
        assert not os.path.exists(stale)
        assert os.path.exists(alive)
    finally:
        for path in (stale, alive):
            if os.path.exists(path):
                os.rmdir(path)
        verifiers.close_idle_sandboxes()


def test_a_compiled_program_reuses_a_warm_sandbox_and_its_build_is_gone() -> None:
    # Two Go programs: the second is built and run in the sandbox the first used, and
    # finds nothing of the first one's work directory (its binary included).
    rt = LocalRuntime()
    first = (
        'package main\nimport ("fmt"; "os")\n'
        'func main() { os.WriteFile("/sandbox/left", []byte("x"), 0o644); fmt.Println(1) }\n'
    )
    second = (
        'package main\nimport ("fmt"; "os")\n'
        'func main() { _, err := os.Stat("/sandbox/left"); fmt.Println(os.IsNotExist(err)) }\n'
    )
    one = verifiers.score("go", first, [{"input": "", "output": "1"}], runtime=rt)
    assert one.status is Status.PASSED, one.feedback
    two = verifiers.score("go", second, [{"input": "", "output": "true"}], runtime=rt)
    assert two.status is Status.PASSED, two.feedback
    assert rt.warm_stats == {"started": 1, "reused": 1, "discarded": 0}
    verifiers.close_idle_sandboxes()


def test_warm_can_be_turned_off() -> None:
    rt = LocalRuntime(warm=False)
    for _ in range(2):
        assert score(ADD, ADD_TESTS, rt).status is Status.PASSED
    assert rt.warm_stats == {"started": 0, "reused": 0, "discarded": 0}


def test_host_paths_under_tmp_do_not_spoil_the_sandbox(tmp_path: object) -> None:
    # A virtual environment or checkout under /tmp is bound under the sandbox's own /tmp:
    # emptying /tmp must keep its mount point, and a program's litter must still go.
    # (Before, every reset failed on it and each program started a new sandbox.)
    import pathlib

    host = pathlib.Path(str(tmp_path)) / "tree"
    host.mkdir()
    (host / "data.txt").write_text("read-only host data")
    rt = LocalRuntime(extra_ro_paths=[str(host)])
    littered = score(LITTER, ADD_TESTS, rt)
    assert littered.status is Status.PASSED, littered.feedback
    seen = {
        "test_imports": ["import os"],
        "test_list": [
            *CLEAN_TESTS["test_list"],
            f"assert open({str(host / 'data.txt')!r}).read() == 'read-only host data'",
        ],
    }
    for _ in range(3):
        after = score(ADD, seen, rt)
        assert after.status is Status.PASSED, after.feedback
    assert rt.warm_stats == {"started": 1, "reused": 3, "discarded": 0}
    verifiers.close_idle_sandboxes()


def test_more_programs_than_sandboxes_being_reset_all_get_one() -> None:
    """Programs arriving while sandboxes reset: each reset serves one, the rest start their own.

    Two programs leave two sandboxes resetting; three arrive at once. None may wait forever
    (each finished reset wakes every waiter of its key, and no more programs wait than
    sandboxes are resetting), and the third starts a sandbox instead of waiting.
    """
    rt = LocalRuntime(max_idle=4)

    def programs(n: int, tag: str) -> list[dict[str, object]]:
        # Distinct programs (a comment), so that deduplication runs each one.
        return [
            {"language": "python", "completion": f"{ADD}# {tag} {k}\n", "tests": ADD_TESTS}
            for k in range(n)
        ]

    first = verifiers.score_batch(programs(2, "first"), runtime=rt, max_concurrency=2)
    assert [r.status for r in first] == [Status.PASSED] * 2
    assert rt.warm_stats["started"] == 2
    again = programs(3, "again")
    done: list[list[verifiers.Result]] = []
    worker = threading.Thread(
        target=lambda: done.append(verifiers.score_batch(again, runtime=rt, max_concurrency=3))
    )
    worker.start()
    worker.join(60)
    assert not worker.is_alive(), "a program waited for a warm sandbox forever"
    assert [r.status for r in done[0]] == [Status.PASSED] * 3
    assert rt.warm_stats["started"] == 3
    assert rt.warm_stats["reused"] == 2
    verifiers.close_idle_sandboxes()


def test_closing_an_idle_sandbox_accounts_for_all_its_processes() -> None:
    # An idle sandbox asked to exit reaps its zygote itself: the zygote's CPU time reaches
    # this process's children (a killed sandbox leaves it to the host's init, and a
    # benchmark's CPU per test misses it).
    import resource

    verifiers.close_idle_sandboxes()  # only this test's sandbox is alive below
    rt = LocalRuntime()
    for n in range(30):
        assert score(ADD + f"# {n}\n", ADD_TESTS, rt).status is Status.PASSED
    found = resources.agents()
    zygotes = [a for a in found if a.role == "zygote"]
    supervisors = [a for a in found if a.role == "supervisor"]
    assert len(zygotes) == 1 and len(supervisors) == 1, found
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    held = sum(a.cpu_s + a.children_cpu_s for a in found)
    assert zygotes[0].cpu_s >= 0.02  # thirty programs loaded: enough to be seen
    verifiers.close_idle_sandboxes()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    counted = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    assert counted >= held - 0.02, (counted, held)  # a clock tick of rounding per field
    assert zygotes[0].pid not in {a.pid for a in resources.agents()}


def test_a_warm_sandbox_keeps_large_files_across_programs() -> None:
    # The harness (95 KB) goes to a warm sandbox once; later programs name it. Programs
    # with large files of their own push the oldest kept file out (at most KEPT_FILES),
    # and a file forgotten so is sent again: every verdict stays right.
    from verifiers.runtimes.base import KEPT_FILES

    rt = LocalRuntime()
    padded = [ADD + f"# {n}\n" + "#" * 5000 + "\n" for n in range(KEPT_FILES + 3)]
    wrong = padded[0].replace("a + b", "a - b")
    for code in [*padded, padded[0], wrong, padded[1]]:
        result = score(code, ADD_TESTS, rt)
        assert result.status is (Status.FAILED if code is wrong else Status.PASSED)
    assert rt.warm_stats["started"] == 1
    for _ in range(500):  # the sandbox is put back once its reset is over
        if rt._idle:
            break
        time.sleep(0.01)
    [(_, _, session)] = rt._idle
    kept = session.conn.kept
    assert len(kept) == KEPT_FILES
    # The harness, used by every program, is never the least recently used: still kept.
    assert [k for k in kept if len(k) > 50_000 and b"def candidate_main" in k]
    assert padded[1].encode() in kept and padded[2].encode() not in kept
    verifiers.close_idle_sandboxes()
