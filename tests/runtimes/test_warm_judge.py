"""The warm judge: one judge process serves the judged tests of a sandbox's programs.

Each test's judge reports its process id in its failure message (the tests' code is
trusted: it may say what it likes). A test that leaves something behind for the next one
retires the judge, and the next test, in the next program, runs in a new judge with
nothing of it.
"""

from __future__ import annotations

import os
import re

import pytest

import verifiers
from verifiers import Status
from verifiers.runtimes import LocalRuntime

from ..conftest import need

# The warm judge is kept only where the program's and the judge's uids differ (the host
# runs as root, as CI and containers do); elsewhere a judge is forked per test.
pytestmark = pytest.mark.usefixtures("_separate_uids")


@pytest.fixture
def _separate_uids() -> None:
    need(os.geteuid() == 0, "the warm judge needs separate uids: run as root")


# The program returns its argument; every test fails and shows its judge's pid and state.
PROGRAM = "def f(x):\n    return x\n"
REPORT = (
    "import os, sys\n"
    "def check(c):\n"
    "    assert c(1) == 0, ('judge', os.getpid(), sys.getrecursionlimit())\n"
)


def _judge(result: verifiers.Result) -> tuple[int, int]:
    found = re.search(r"\('judge', (\d+), (\d+)\)", result.tests[0].message)
    assert found, result.tests[0].message
    return int(found.group(1)), int(found.group(2))


def _score(code: str, test: str, rt: LocalRuntime, **options: object) -> verifiers.Result:
    return verifiers.score(
        "python", code, {"test": test, "entry_point": "f"}, runtime=rt, **options
    )


def test_one_judge_serves_the_tests_of_every_program() -> None:
    rt = LocalRuntime()
    results = [_score(PROGRAM + f"# {n}\n", REPORT, rt) for n in range(5)]
    assert all(r.status is Status.FAILED for r in results)
    assert len({_judge(r)[0] for r in results}) == 1
    # MBPP's asserts are a test each: one judge for all of them too.
    asserts = [f"assert f({n}) == -1, ('judge', __import__('os').getpid(), 0)" for n in (1, 2, 3)]
    mbpp = verifiers.score(
        "python", PROGRAM, {"test_list": asserts}, runtime=rt, stop_on_failure=False
    )
    pids = {int(re.search(r"'judge', (\d+)", t.message).group(1)) for t in mbpp.tests}  # type: ignore[union-attr]
    assert len(mbpp.tests) == 3 and pids == {_judge(results[0])[0]}
    verifiers.close_idle_sandboxes()


LEFT_BEHIND = {
    "recursion limit": "import sys\nsys.setrecursionlimit(4321)\n",
    "a builtin": "import builtins\nbuiltins.max = min\n",
    "a module": "import sys\nsys.modules['json'] = sys.modules['ast']\n",
    "a thread": (
        "import threading, time\n"
        "threading.Thread(target=time.sleep, args=(30,), daemon=True).start()\n"
    ),
    "memory": "import ast\nast.kept = b'x' * (96 << 20)\n",
    "a warning filter": "import warnings\nwarnings.simplefilter('error')\n",
    "a signal handler": "import signal\nsignal.signal(signal.SIGUSR1, lambda *a: None)\n",
    "the decimal context": "import decimal\ndecimal.getcontext().prec = 3\n",
    # The judge's own code: a replaced judge_main would have judged every later program.
    "the harness's code": (
        "import sys\nsys.modules['_vf_entry_harness'].judge_main = lambda argv: 0\n"
    ),
}


@pytest.mark.parametrize("change", sorted(LEFT_BEHIND))
def test_a_test_that_leaves_something_behind_retires_the_judge(change: str) -> None:
    rt = LocalRuntime()
    before = _judge(_score(PROGRAM, REPORT, rt))
    meddling = LEFT_BEHIND[change] + REPORT
    during = _judge(_score(PROGRAM + "# meddled\n", meddling, rt))
    assert during[0] == before[0]  # the test ran in the warm judge, and changed it
    after = _judge(_score(PROGRAM + "# after\n", REPORT, rt))
    assert after[0] != during[0], f"{change}: the changed judge served the next program"
    assert after[1] == before[1]
    verifiers.close_idle_sandboxes()


def test_a_judge_stopped_at_the_time_limit_is_replaced() -> None:
    rt = LocalRuntime()
    first = _judge(_score(PROGRAM, REPORT, rt))
    looping = "def check(c):\n    c(1)\n    while True:\n        pass\n"
    stuck = _score(PROGRAM + "# loops\n", looping, rt, limits={"timeout_s": 1})
    assert stuck.status is Status.TIMEOUT, stuck.feedback
    after = _judge(_score(PROGRAM + "# after\n", REPORT, rt))
    assert after[0] != first[0]
    assert _score("def f(x):\n    return 0\n", REPORT, rt).status is Status.PASSED
    verifiers.close_idle_sandboxes()


def test_the_judge_holds_no_earlier_program_s_tests() -> None:
    # A program's tests reach the judge with its load: a test of the next program cannot
    # see the earlier one's cases (nor can the program: the judge is another uid).
    rt = LocalRuntime()
    secret = "def check(c):\n    SECRET_7341 = 1\n    assert c(1) == 0\n"
    assert _score(PROGRAM, secret, rt).status is Status.FAILED
    peek = (
        "from _vf_entry_harness import JUDGE_FILES\n"
        "def check(c):\n"
        "    assert c(1) == 1\n"
        "    marker = ('SECRET_' + '7341').encode()\n"
        "    assert not any(marker in v for v in JUDGE_FILES.values())\n"
    )
    assert _score(PROGRAM + "# next\n", peek, rt).status is Status.PASSED
    verifiers.close_idle_sandboxes()


def test_a_program_killed_after_its_test_does_not_take_the_judge_with_it() -> None:
    # The program leaves a thread, so it outlives its test and is killed with everything of
    # its uid; the warm judge (another uid) serves the next test and the next program.
    rt = LocalRuntime()
    lingering = (
        "import threading, time\n"
        "def f(x):\n"
        "    threading.Thread(target=time.sleep, args=(60,)).start()\n"
        "    return x\n"
    )
    first = _judge(_score(lingering, REPORT, rt))
    asserts = ["assert f(1) == 1", "assert f(2) == 2", "assert f(3) == 3"]
    spec = {"test_list": asserts}
    assert verifiers.score("python", lingering, spec, runtime=rt).status is Status.PASSED
    assert _judge(_score(PROGRAM + "# next\n", REPORT, rt))[0] == first[0]
    verifiers.close_idle_sandboxes()
