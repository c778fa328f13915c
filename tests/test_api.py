"""The public API: score, ascore, score_batch, get_verifier, errors and infrastructure faults."""

from __future__ import annotations

import asyncio

import pytest

import verifiers
from verifiers import Limits, SpecError, Status, UnknownNameError
from verifiers.runtimes import LocalRuntime

ADD = {"test": "def check(candidate):\n    assert candidate(1, 2) == 3\n", "entry_point": "add"}
GOOD = "```python\ndef add(a, b):\n    return a + b\n```"
BAD = "```python\ndef add(a, b):\n    return a - b\n```"


def test_public_surface() -> None:
    for name in (
        "score",
        "ascore",
        "score_batch",
        "get_verifier",
        "Result",
        "Status",
        "Limits",
        "TestResult",
        "StepResult",
        "Verifier",
        "SpecError",
    ):
        assert name in verifiers.__all__
    assert [s.value for s in Status] == [
        "passed",
        "failed",
        "no_code",
        "syntax_error",
        "compile_error",
        "runtime_error",
        "timeout",
        "memory_limit",
        "output_limit",
        "sandbox_error",
        "not_run",
    ]


def test_score_result_fields(runtime: LocalRuntime) -> None:
    r = verifiers.score("python", GOOD, ADD, runtime=runtime)
    assert (r.status, r.score, r.pass_rate, r.passed, r.total) == (Status.PASSED, 1.0, 1.0, 1, 1)
    assert r.format_ok and r.code == "def add(a, b):\n    return a + b\n"
    assert r.language == "python" and r.runtime == "local" and r.policy == "binary"
    assert r.duration_s > 0 and r.feedback.startswith("All 1 tests passed")
    assert r.tests[0].wall_s > 0
    assert r.to_dict()["status_passed"] == 1.0


def test_ascore_and_score_inside_a_running_loop(runtime: LocalRuntime) -> None:
    async def main() -> tuple[verifiers.Result, verifiers.Result]:
        inside = verifiers.score("python", GOOD, ADD, runtime=runtime)  # blocking, own loop
        awaited = await verifiers.ascore("python", BAD, ADD, runtime=runtime)
        return inside, awaited

    inside, awaited = asyncio.run(main())
    assert inside.ok and awaited.status is Status.FAILED


def test_score_batch_keeps_order_and_dedups(runtime: LocalRuntime) -> None:
    items = [
        {"language": "python", "completion": c, "tests": ADD}
        for c in (GOOD, BAD, GOOD, "no code here", GOOD, BAD)
    ]
    seen: list[tuple[int, int]] = []
    results = verifiers.score_batch(
        items,
        runtime=runtime,
        max_concurrency=2,
        progress=lambda done, total: seen.append((done, total)),
    )
    assert [r.status for r in results] == [
        Status.PASSED,
        Status.FAILED,
        Status.PASSED,
        Status.NO_CODE,
        Status.PASSED,
        Status.FAILED,
    ]
    assert results[0] is results[2] is results[4]  # identical work ran once
    assert seen[-1] == (6, 6)


def test_score_batch_per_item_options(runtime: LocalRuntime) -> None:
    tests = {"inputs": ["1", "2"], "outputs": ["1", "3"]}
    items = [
        {"language": "python", "completion": "print(input())", "tests": tests},
        {"language": "py", "completion": "print(input())", "tests": tests, "policy": "partial"},
    ]
    binary, partial = verifiers.score_batch(items, runtime=runtime)
    assert binary.score == 0.0 and partial.score == 0.5


def test_batch_spec_errors_name_the_item_before_running(runtime: LocalRuntime) -> None:
    items = [
        {"language": "python", "completion": GOOD, "tests": ADD},
        {"language": "python", "completion": GOOD, "tests": {"inputs": ["1"]}},
    ]
    with pytest.raises(SpecError) as info:
        verifiers.score_batch(items, runtime=runtime)
    assert info.value.field == "items[1].tests.outputs"
    with pytest.raises(SpecError, match=r"items\[0\]\.completion"):
        verifiers.score_batch([{"language": "python", "tests": ADD}], runtime=runtime)
    with pytest.raises(SpecError, match=r"items\[0\]\.completion"):
        verifiers.score_batch([{"language": "python", "completion": 5, "tests": ADD}])


def test_bad_options_are_clear_errors(runtime: LocalRuntime) -> None:
    with pytest.raises(UnknownNameError, match="known: go, javascript, python, regex, rust, sql"):
        verifiers.score("cobol", GOOD, ADD)
    with pytest.raises(UnknownNameError, match="runtime"):
        verifiers.score("python", GOOD, ADD, runtime="mainframe")
    with pytest.raises(SpecError, match=r"limits\.timeout_s"):
        verifiers.score("python", GOOD, ADD, limits={"timeout_s": -1})
    with pytest.raises(SpecError, match=r"limits\.memroy_mb"):
        verifiers.score("python", GOOD, ADD, limits={"memroy_mb": 1})
    with pytest.raises(SpecError, match="policy"):
        verifiers.score("python", GOOD, ADD, policy="lenient")
    with pytest.raises(SpecError, match="max_tests"):
        verifiers.score("python", GOOD, ADD, max_tests=0)
    with pytest.raises(SpecError, match="max_concurrency"):
        verifiers.score_batch(
            [{"language": "python", "completion": GOOD, "tests": ADD}],
            max_concurrency=-1,
            runtime=runtime,
        )


def test_unavailable_runtime_is_a_sandbox_error_with_a_hint() -> None:
    r = verifiers.score("python", GOOD, ADD, runtime=LocalRuntime(bwrap="/nope/bwrap"))
    assert r.status is Status.SANDBOX_ERROR and r.infra_error
    assert "apt-get install bubblewrap" in r.feedback


def test_sandbox_fault_is_an_infra_error_not_a_model_failure(runtime: LocalRuntime) -> None:
    broken = LocalRuntime()
    assert broken.check().available
    broken.start_timeout_s = 0.0001  # every sandbox now fails to start in time
    r = verifiers.score("python", GOOD, ADD, runtime=broken)
    assert r.status is Status.SANDBOX_ERROR and r.infra_error
    assert r.total == 1 and r.tests[0].status is Status.SANDBOX_ERROR
    assert "not the program's fault" in r.feedback
    assert r.to_dict()["infra_error"] == 1.0
    # A syntax error needs no sandbox, so it is still judged.
    assert verifiers.score("python", "def f(:", ADD, runtime=broken).status is Status.SYNTAX_ERROR


def test_get_verifier_defaults(runtime: LocalRuntime) -> None:
    v = verifiers.get_verifier(
        "python", runtime=runtime, limits=Limits(timeout_s=1), policy="partial"
    )
    r = v.score("import time\ntime.sleep(5)", {"inputs": ["", ""], "outputs": ["", ""]})
    assert r.status is Status.TIMEOUT and r.policy == "partial"
    assert all(t.wall_s < 4 for t in r.tests)


def test_verifier_options_as_dicts_are_checked(runtime: LocalRuntime) -> None:
    # Found by the property suite: a limits dict passed to a verifier's score() reached
    # the sandbox unconverted and every such call became a sandbox_error.
    v = verifiers.get_verifier("python", runtime=runtime)
    r = v.score(GOOD, ADD, limits={"timeout_s": 2}, compare={"mode": "tokens"})
    assert r.status is Status.PASSED
    with pytest.raises(verifiers.SpecError, match=r"limits\.timeout_s"):
        v.score(GOOD, ADD, limits={"timeout_s": -1})
    with pytest.raises(verifiers.SpecError, match="policy"):
        v.score(GOOD, ADD, policy="no such policy")
