"""The warm Python runner: every stdin/stdout test of a program in one forked process.

The runner is forked once per program from the zygote (``candidate_main(..., "warm")`` in
``_python_harness.py``) and served by the supervisor's ``run_warm``. What must hold: each
test gets a new ``__main__``, its own input and output, the verdicts of a process per test
(exits, errors, limits, output read every usual way), what a test changes of the process is
restored or retires the runner, and a program that names process-wide state runs a
process per test.
"""

from __future__ import annotations

from typing import Any

import pytest

import verifiers
from verifiers.languages.python import COLD_ONLY, PythonLanguage
from verifiers.runtimes.local import LocalRuntime
from verifiers.testing import resources

RUNTIME = LocalRuntime()
SUMS = {"inputs": ["1 2\n", "3 4\n", "10 20\n"], "outputs": ["3\n", "7\n", "30\n"]}
ALL = {"policy": "partial", "stop_on_failure": False}
PID = "import os\nprint(os.getpid())\n"


def _score(code: str, tests: dict[str, Any], warm: bool = True, **options: Any) -> verifiers.Result:
    verifier = verifiers.CodeVerifier(PythonLanguage(warm=warm), RUNTIME)
    options.setdefault("limits", {"timeout_s": 2})
    return verifier.score(code, tests, **options)


def _pids(result: verifiers.Result) -> set[str]:
    return {t.actual.split()[0] for t in result.tests}


def test_one_process_serves_the_tests_with_a_fresh_main() -> None:
    code = (
        "import os\ncalls = globals().get('calls', 0) + 1\n"
        "print(os.getpid(), calls, __name__, len(__import__('sys').argv))\n"
    )
    tests = {"inputs": ["a\n", "b\n", "c\n"], "outputs": ["x\n"] * 3}
    warm = _score(code, tests, **ALL)
    assert len(_pids(warm)) == 1, [t.actual for t in warm.tests]
    assert all(t.actual.split()[1:] == ["1", "__main__", "1"] for t in warm.tests)
    cold = _score(code, tests, warm=False, **ALL)
    assert len(_pids(cold)) == 3


READ = "a, b = map(int, input().split())\n"


@pytest.mark.parametrize(
    ("name", "code", "status"),
    [
        ("input()", READ + "print(a + b)\n", "passed"),
        (
            "sys.stdin.read",
            "import sys\na, b = map(int, sys.stdin.read().split())\nprint(a + b)\n",
            "passed",
        ),
        ("open(0)", "a, b = map(int, open(0).read().split())\nprint(a + b)\n", "passed"),
        (
            "os.read(0)",
            "import os\na, b = map(int, os.read(0, 99).split())\nprint(a + b)\n",
            "passed",
        ),
        (
            "stdin.buffer",
            "import sys\na, b = map(int, sys.stdin.buffer.read().split())\nprint(a + b)\n",
            "passed",
        ),
        (
            "/dev/stdin",
            "a, b = map(int, open('/dev/stdin').read().split())\nprint(a + b)\n",
            "passed",
        ),
        ("os.write(1)", "import os\n" + READ + "os.write(1, f'{a + b}\\n'.encode())\n", "passed"),
        (
            "stdout.buffer",
            "import sys\n" + READ + "sys.stdout.buffer.write(b'%d\\n' % (a + b))\n",
            "passed",
        ),
        ("exit(0) after", READ + "print(a + b)\nexit(0)\n", "passed"),
        ("SystemExit('why')", READ + "raise SystemExit('why')\n", "runtime_error"),
        ("exit(3)", "import sys\nsys.exit(3)\n", "runtime_error"),
        ("an exception", READ + "print(a + b)\n1 / 0\n", "runtime_error"),
        ("wrong", READ + "print(a - b)\n", "failed"),
        ("no output", READ, "failed"),
        ("compile error", "return 1\n", "compile_error"),
        (
            "fd 1 closed after",
            "import os\n" + READ + "print(a + b, flush=True)\nos.close(1)\n",
            "passed",
        ),
        (
            "recursion limit raised",
            "import sys\nsys.setrecursionlimit(10**5)\n" + READ + "print(a + b)\n",
            "passed",
        ),
        (
            "stderr chatter",
            "import sys\n" + READ + "print('debug', file=sys.stderr)\nprint(a + b)\n",
            "passed",
        ),
        ("output flood", "while True:\n    print('x' * 4096)\n", "output_limit"),
        (
            "stderr flood",
            "import sys\nwhile True:\n    sys.stderr.write('x' * 4096)\n",
            "output_limit",
        ),
        ("loop", "while True:\n    pass\n", "timeout"),
        ("memory", "x = []\nwhile True:\n    x.append(bytearray(1 << 24))\n", "memory_limit"),
    ],
)
def test_verdicts_are_those_of_a_process_per_test(name: str, code: str, status: str) -> None:
    # 256 MB: the memory bomb meets its limit well inside the time limit on a busy host.
    limits = {"timeout_s": 2, "memory_mb": 256}
    warm = _score(code, SUMS, limits=limits, **ALL)
    cold = _score(code, SUMS, warm=False, limits=limits, **ALL)
    assert warm.status.value == status, (name, warm.feedback)
    assert [t.status for t in warm.tests] == [t.status for t in cold.tests], (name, warm.feedback)
    assert [t.actual for t in warm.tests] == [t.actual for t in cold.tests]


def test_a_failed_test_does_not_reach_the_next() -> None:
    # Tests 1 and 3 run out of time and memory; the runner goes with each, and the tests
    # after them get a new one with nothing of it. The memory limit is small so that
    # filling it is quick where page faults are slow (gVisor fills 1 GiB in about 4 s);
    # no time budget, so that every test runs whatever the machine's speed.
    code = (
        "import sys\nn = int(input())\n"
        "if n == 1:\n    while True: pass\n"
        "if n == 3:\n    x = [bytearray(1 << 24) for _ in range(10**4)]\n"
        "print(n)\n"
    )
    tests = {"inputs": [f"{n}\n" for n in range(5)], "outputs": [f"{n}\n" for n in range(5)]}
    limits = {"timeout_s": 1, "memory_mb": 128, "budget_timeouts": None}
    result = _score(code, tests, limits=limits, **ALL)
    statuses = [t.status.value for t in result.tests]
    assert statuses == ["passed", "timeout", "passed", "memory_limit", "passed"], statuses


def test_what_a_test_changes_is_restored_or_retires_the_runner() -> None:
    # The working directory, the recursion limit and the collector are restored; a
    # changed builtin retires the runner (the next test runs in a new process).
    code = (
        "import os, sys, gc\nseen = (os.getcwd(), sys.getrecursionlimit(), gc.isenabled())\n"
        "os.chdir('/tmp')\nsys.setrecursionlimit(12345)\ngc.disable()\n"
        "print(os.getpid(), *seen)\n"
    )
    tests = {"inputs": ["a\n", "b\n"], "outputs": ["x\n"] * 2}
    first, second = (t.actual.split() for t in _score(code, tests, **ALL).tests)
    assert first[0] == second[0] and first[1:] == second[1:], (first, second)
    assert second[2] != "12345" and second[3] == "True"
    meddle = PID + "import builtins\nbuiltins.len = lambda x: 0\n"
    assert COLD_ONLY.search(meddle)  # such programs do not get a runner at all
    sneaky = PID + "vars(__import__('bui' + 'ltins'))['lenx'] = 1\n"
    assert not COLD_ONLY.search(sneaky)
    pids = _pids(_score(sneaky, tests, **ALL))
    assert len(pids) == 2, pids  # the runner retired after the first test


@pytest.mark.parametrize(
    "code",
    [
        "import threading\nprint(1)\n",
        "import os\nprint(1, flush=True)\nos._exit(0)\n",
        "import signal\nsignal.alarm(5)\nprint(1)\n",
        "import atexit\natexit.register(lambda: None)\nprint(1)\n",
        "import subprocess\nprint(1)\n",
    ],
)
def test_process_wide_state_runs_a_process_per_test(code: str) -> None:
    assert COLD_ONLY.search(code)
    tests = {"inputs": ["a\n", "b\n"], "outputs": ["1\n"] * 2}
    result = _score(code, tests, **ALL)
    assert result.status is verifiers.Status.PASSED, result.feedback


def test_a_program_cannot_answer_a_later_test_through_the_runner() -> None:
    # The reply channel is the program's own (descriptor 6). During test 0 it writes a
    # reply for test 0 and one more (in one write), ahead of test 1's request: the second
    # must never answer test 1 (bytes ahead of a request end the runner; test 1 gets a new
    # one). Bytes a program writes later than the supervisor's look are its output for
    # the next test, as printing them then would be: a runner is the program's process.
    code = (
        "import os, json, struct\nn = int(input())\n"
        "def reply(out):\n"
        "    h = json.dumps({'exit_code': 0, 'cpu_s': 0, 'stdout_bytes': len(out),"
        " 'stderr_bytes': 0, 'retire': False}).encode()\n"
        "    return struct.pack('>I', len(h)) + h + out\n"
        "if n == 0:\n    os.write(6, reply(b'0\\n') + reply(b'9\\n'))\n"
        "print(n)\n"
    )
    tests = {"inputs": ["0\n", "1\n"], "outputs": ["0\n", "9\n"]}
    result = _score(code, tests, **ALL)
    assert result.tests[1].status is not verifiers.Status.PASSED, result.feedback
    assert result.tests[1].actual == "1\n", result.tests[1]


def test_a_test_stopped_in_the_runner_is_charged_its_cpu_time() -> None:
    # A looping test's CPU is the program's (its runner is stopped with it): a reward's
    # logs and a benchmark's split by process must not book it to the machinery. The CPU
    # limit stops it (wall time is long), so what it used does not depend on the load.
    code = "n = int(input())\nif n == 1:\n    while True: pass\nprint(n)\n"
    tests = {"inputs": ["0\n", "1\n"], "outputs": ["0\n", "1\n"]}
    limits = {"timeout_s": 20, "cpu_time_s": 1, "budget_timeouts": None}
    result = _score(code, tests, limits=limits, **ALL)
    assert [t.status.value for t in result.tests] == ["passed", "timeout"]
    assert result.tests[1].cpu_s >= 0.5, result.tests[1]
    assert result.tests[1].cpu_s <= result.tests[1].wall_s * 1.5 + 0.5


def _supervisors_cpu_s() -> dict[int, float]:
    return {a.pid: a.cpu_s for a in resources.agents() if a.role == "supervisor"}


@pytest.mark.parametrize(
    "code",
    ["while True:\n    pass\n", "import os\nos.close(1)\nos.close(2)\nwhile True:\n    pass\n"],
    ids=["loop", "closes-its-output-then-loops"],
)
def test_the_supervisor_sleeps_while_a_warm_test_runs(code: str) -> None:
    # A runner's own output pipe at its end polls readable for ever: the supervisor spun
    # on it for as long as the test ran, on the program's own CPU when pinned (a looping
    # test got half its time limit of CPU, and the machinery burnt the other half).
    tests = {"inputs": ["1\n", "2\n"], "outputs": ["1\n", "2\n"]}
    _score(SUMS["inputs"][0], {"inputs": ["x\n"], "outputs": ["x\n"]})  # a warm sandbox
    before = _supervisors_cpu_s()
    r = _score(code, tests, limits={"timeout_s": 1.5})
    spent = sum(cpu - before.get(pid, 0.0) for pid, cpu in _supervisors_cpu_s().items())
    assert r.tests[0].status.value == "timeout", r.feedback
    assert spent < 0.5, f"the supervisors used {spent:.2f} s of CPU during a 1.5 s test"
