"""Time budgets and reruns on real sandboxes (local and Docker).

Budgets are asserted as counts of tests run, never as timings: under ``binary`` the first
failing test ends a program's run, under ``partial`` the program's budget does, and the
tests after either are ``not_run``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

import verifiers
from verifiers import Limits, Status
from verifiers._async import run_sync
from verifiers.core import host_saturated
from verifiers.program import ProcessResult, Program, Step
from verifiers.results import Result
from verifiers.runtimes import LocalRuntime

from .conftest import need

ECHO = {"inputs": [f"{i}\n" for i in range(10)], "outputs": [f"{i}\n" for i in range(10)]}
LOOP = "while True:\n    pass\n"
#: Loops on the first input only, echoes the others.
LOOP_FIRST = "x = input()\nwhile x == '0':\n    pass\nprint(x)\n"
#: A wrong answer on the third input.
WRONG_THIRD = "x = input()\nprint(x if x != '2' else 'no')\n"
SLEEP = "import time\ntime.sleep(60)\n"


def ran(result: Result) -> int:
    """How many tests ran."""
    return sum(not t.not_run for t in result.tests)


def score(code: str, runtime: Any, tests: Any = ECHO, **options: Any) -> Result:
    options.setdefault("limits", Limits(timeout_s=1))
    return verifiers.score("python", code, tests, runtime=runtime, **options)


def test_binary_ends_at_the_first_timeout(runtime: LocalRuntime) -> None:
    r = score(LOOP, runtime)
    assert ran(r) == 1
    assert r.status is Status.TIMEOUT and r.score == 0.0 and r.total == 10
    assert [t.status for t in r.tests[1:]] == [Status.NOT_RUN] * 9
    assert all(t.not_run and t.wall_s == 0.0 for t in r.tests[1:])
    assert "9 tests not run" in r.feedback
    assert r.to_dict()["tests_run"] == 1.0


def test_binary_ends_at_the_first_wrong_answer(runtime: LocalRuntime) -> None:
    r = score(WRONG_THIRD, runtime)
    assert [t.status for t in r.tests[:3]] == [Status.PASSED, Status.PASSED, Status.FAILED]
    assert ran(r) == 3 and r.status is Status.FAILED and r.passed == 2
    assert r.tests[3].message == "not run: the run ended at the first failing test (test 3)"


def test_stop_on_failure_false_runs_every_test(runtime: LocalRuntime) -> None:
    r = score(WRONG_THIRD, runtime, stop_on_failure=False)
    assert ran(r) == 10 and r.passed == 9


def test_partial_budget_bounds_a_looping_program(runtime: LocalRuntime) -> None:
    # The default budget is 2 * timeout_s: the first test times out, the second is stopped
    # when the budget ends, the other eight are not run and count as failed.
    r = score(LOOP, runtime, policy="partial")
    assert ran(r) == 2
    assert [t.status for t in r.tests[:2]] == [Status.TIMEOUT, Status.TIMEOUT]
    assert r.tests[1].message == "stopped when the program's time budget (2 s) ran out"
    assert r.tests[2].message == "not run: the program's time budget (2 s) was used up"
    assert r.score == 0.0 and r.status is Status.TIMEOUT


def test_partial_budget_leaves_time_for_the_other_tests(runtime: LocalRuntime) -> None:
    r = score(LOOP_FIRST, runtime, policy="partial", limits=Limits(timeout_s=2))
    assert ran(r) == 10
    assert r.tests[0].status is Status.TIMEOUT and r.passed == 9 and r.score == 0.9


def test_budget_is_configurable(runtime: LocalRuntime) -> None:
    three = {"inputs": ["0\n", "1\n", "2\n"], "outputs": ["0\n", "1\n", "2\n"]}
    unbounded = Limits(timeout_s=0.5, budget_timeouts=None)
    assert ran(score(LOOP, runtime, three, policy="partial", limits=unbounded)) == 3
    # An explicit total budget holds whatever the policy (here binary without early stop).
    total = Limits(timeout_s=0.5, total_timeout_s=0.5)
    r = score(LOOP, runtime, three, stop_on_failure=False, limits=total)
    assert ran(r) == 1 and r.tests[1].status is Status.NOT_RUN
    with pytest.raises(verifiers.SpecError, match="stop_on_failure"):
        score(LOOP, runtime, stop_on_failure="yes")


def test_javascript_binary_ends_at_the_first_timeout(runtime: LocalRuntime) -> None:
    r = verifiers.score(
        "javascript", "while (true) {}", ECHO, runtime=runtime, limits=Limits(timeout_s=1)
    )
    assert r.status is Status.TIMEOUT and ran(r) == 1 and r.total == 10


def test_a_sleeping_program_is_never_run_again(runtime: LocalRuntime) -> None:
    # It waits for no CPU whatever the host's load: slow, not starved.
    r = score(SLEEP, runtime)
    assert r.tests[0].status is Status.TIMEOUT and not r.tests[0].rerun
    assert r.to_dict()["reruns"] == 0.0


def test_a_starved_timeout_is_run_again_once(runtime: LocalRuntime) -> None:
    # Three programs of eight busy processes each saturate the host's cores while the
    # looping program's first test runs: its main thread waits for a CPU most of the time.
    hog = "import os\nfor _ in range(3):\n    os.fork()\nwhile True:\n    pass\n"
    one = {"inputs": ["\n"], "outputs": ["\n"]}
    items = [{"language": "python", "completion": hog + f"# {n}\n", "tests": one} for n in range(3)]
    items.append({"language": "python", "completion": LOOP, "tests": ECHO})
    hogs, *_, looped = verifiers.score_batch(
        items, runtime=runtime, limits=Limits(timeout_s=1.5), max_concurrency=4
    )
    assert hogs.status is Status.TIMEOUT
    first = looped.tests[0]
    assert first.status is Status.TIMEOUT and first.rerun
    assert looped.to_dict()["reruns"] == 1.0 and ran(looped) == 1


def test_saturation_is_the_wait_for_a_cpu() -> None:
    def proc(wall: float, delay: float | None) -> ProcessResult:
        return ProcessResult(
            exit_code=None, signal=9, timed_out=True, wall_s=wall, run_delay_s=delay
        )

    assert host_saturated(proc(1.0, 0.5))
    assert host_saturated(proc(1.0, 0.25))
    assert not host_saturated(proc(1.0, 0.1))
    assert not host_saturated(proc(1.0, 0.0))


def test_run_delay_comes_from_the_kernel(runtime: LocalRuntime) -> None:
    # The agent reads a timed-out run's schedstat before killing it; a budget that ends
    # during a step stops that step.
    limits = Limits(timeout_s=0.5)
    step = Step(argv=("{python}", "-c", "while True: pass"), limits=limits.step_limits())

    async def go() -> list[ProcessResult]:
        async with runtime.session(Program(files={}, tests=()), limits) as session:
            return [
                *await session.run_many([step]),
                *await session.run_many([step, step], budget_s=0.7, stop_after_timeout=False),
                *await session.run_many([step, step], stop_after_timeout=True),
            ]

    timed, first, cut, stopped = run_sync(go())
    assert timed.timed_out and timed.run_delay_s is not None and not timed.budget_cut
    assert 0 <= timed.run_delay_s <= timed.wall_s
    assert first.timed_out and not first.budget_cut
    assert cut.timed_out and cut.budget_cut and cut.wall_s < 0.5
    assert stopped.timed_out  # and the second step never started: four results, not five


def test_run_delay_counts_every_thread(runtime: LocalRuntime) -> None:
    # The main thread sleeps in join() while helper threads (hashing releases the GIL)
    # outnumber the CPUs four to one: the run was starved although its main thread never
    # queued for a CPU, as a Node or JVM main thread waits for its helper threads.
    helpers = 4 * (os.cpu_count() or 1)
    code = (
        "import hashlib, threading\n"
        "threading.stack_size(1 << 18)\n"
        "data = bytes(1 << 20)\n"
        "def spin():\n"
        "    while True:\n"
        "        hashlib.sha256(data).digest()\n"
        f"threads = [threading.Thread(target=spin, daemon=True) for _ in range({helpers})]\n"
        "for t in threads:\n"
        "    t.start()\n"
        "threads[0].join()\n"
    )
    # The helpers together use a CPU second per core per second: the wall limit must end
    # the run, not the CPU limit.
    limits = Limits(timeout_s=1.0, cpu_time_s=60, max_processes=helpers + 16)
    step = Step(argv=("{python}", "-c", code), limits=limits.step_limits())

    async def go() -> ProcessResult:
        async with runtime.session(Program(files={}, tests=()), limits) as session:
            [proc] = await session.run_many([step])
            return proc

    proc = run_sync(go())
    assert proc.timed_out and proc.run_delay_s is not None, proc
    assert proc.run_delay_s >= 0.25 * proc.wall_s, proc
    assert host_saturated(proc)


@pytest.fixture(scope="module", params=["runc", "runsc"])
def docker_runtime(request: pytest.FixtureRequest) -> Iterator[Any]:
    """The Docker runtime, under runc and under gVisor (whose kernel keeps no schedstat)."""
    from verifiers.images import DEFAULT_IMAGE
    from verifiers.runtimes import DockerRuntime

    try:
        import docker  # noqa: F401
    except ImportError:
        need(False, "the docker Python package is not installed (pip install '.[docker]')")
    rt = DockerRuntime(image=DEFAULT_IMAGE, docker_runtime=request.param)
    verdict = rt.check()
    need(
        verdict.available, f"the docker runtime ({request.param}) is unavailable: {verdict.detail}"
    )
    yield rt
    verifiers.close_idle_sandboxes()


def test_docker_budgets(docker_runtime: Any) -> None:
    assert ran(score(LOOP, docker_runtime)) == 1
    assert ran(score(WRONG_THIRD, docker_runtime)) == 3
    r = score(LOOP, docker_runtime, policy="partial")
    assert ran(r) == 2 and r.tests[2].status is Status.NOT_RUN
    assert r.tests[1].message == "stopped when the program's time budget (2 s) ran out"


def test_item_options_keep_the_batch_options(runtime: LocalRuntime) -> None:
    # An item's override is merged with every batch option (stop_on_failure included).
    items = [
        {"language": "python", "completion": WRONG_THIRD, "tests": ECHO, "stop_on_failure": False},
        {"language": "python", "completion": WRONG_THIRD, "tests": ECHO, "max_tests": 5},
    ]
    every, capped = verifiers.score_batch(items, runtime=runtime, limits=Limits(timeout_s=1))
    assert ran(every) == 10 and every.passed == 9
    assert capped.total == 5 and ran(capped) <= 5
