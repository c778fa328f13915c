"""Status precedence, scoring policies and deterministic test selection."""

from __future__ import annotations

import pytest

from verifiers import STATUS_PRECEDENCE, SpecError, Status
from verifiers.results import Result, overall_status
from verifiers.runtimes import LocalRuntime
from verifiers.scoring import Tally, binary, partial, resolve_policy, select_tests


def test_every_failure_status_has_a_rank() -> None:
    assert set(STATUS_PRECEDENCE) == set(Status) - {Status.PASSED}


def test_precedence() -> None:
    assert overall_status([Status.PASSED, Status.PASSED]) is Status.PASSED
    assert overall_status([Status.FAILED, Status.TIMEOUT]) is Status.TIMEOUT
    assert overall_status([Status.FAILED, Status.RUNTIME_ERROR, Status.TIMEOUT]) is (
        Status.RUNTIME_ERROR
    )
    assert overall_status([Status.PASSED, Status.SANDBOX_ERROR, Status.FAILED]) is (
        Status.SANDBOX_ERROR
    )


def test_policies() -> None:
    assert binary(Tally(Status.PASSED, 3, 3, True)) == 1.0
    assert binary(Tally(Status.FAILED, 2, 3, True)) == 0.0
    assert partial(Tally(Status.FAILED, 2, 4, True)) == 0.5
    assert partial(Tally(Status.NO_CODE, 0, 0, False)) == 0.0
    with pytest.raises(SpecError, match="policy"):
        resolve_policy("generous")


def test_selection_is_deterministic_and_spread() -> None:
    first = select_tests(100, 10, "key-a")
    assert first == select_tests(100, 10, "key-a")
    assert first != select_tests(100, 10, "key-b")
    assert len(first) == 10 and first == sorted(first) and max(first) > 10
    assert select_tests(5, 10, "k") == [0, 1, 2, 3, 4]
    assert select_tests(5, None, "k") == [0, 1, 2, 3, 4]


def test_result_to_dict_is_flat_numbers() -> None:
    r = Result(
        status=Status.FAILED,
        score=0.0,
        pass_rate=0.5,
        passed=1,
        total=2,
        tests_available=2,
        language="python",
    )
    flat = r.to_dict()
    assert all(isinstance(v, float) for v in flat.values())
    assert flat["status_failed"] == 1.0 and flat["status_passed"] == 0.0
    assert flat["pass_rate"] == 0.5


def test_layered_policy() -> None:
    from verifiers.scoring import layered

    policy = layered()
    assert policy(Tally(Status.PASSED, 3, 3, False)) == 1.0
    assert policy(Tally(Status.NO_CODE, 0, 3, False)) == 0.0
    assert policy(Tally(Status.SYNTAX_ERROR, 0, 3, True)) == pytest.approx(0.2)
    assert policy(Tally(Status.FAILED, 0, 3, True)) == pytest.approx(0.5)
    assert policy(Tally(Status.FAILED, 2, 4, True)) == pytest.approx(0.5 + 0.25)
    # Format never outweighs the tests: a fenced wrong answer scores below an unfenced
    # answer that passes half of the tests.
    assert policy(Tally(Status.FAILED, 0, 2, True)) < policy(Tally(Status.FAILED, 1, 2, False))
    with pytest.raises(SpecError):
        layered(format_weight=0.5)


def test_penalties_and_length() -> None:
    from verifiers.scoring import length_penalty, penalized

    policy = penalized()
    assert policy(Tally(Status.TIMEOUT, 1, 2, True)) == pytest.approx(0.3)
    assert policy(Tally(Status.RUNTIME_ERROR, 0, 2, True)) == pytest.approx(-0.1)
    assert policy(Tally(Status.PASSED, 2, 2, True)) == 1.0
    short = length_penalty(budget_chars=100, weight=0.2)
    assert short(Tally(Status.PASSED, 1, 1, True, completion_chars=100)) == 1.0
    assert short(Tally(Status.PASSED, 1, 1, True, completion_chars=150)) == pytest.approx(0.9)
    assert short(Tally(Status.PASSED, 1, 1, True, completion_chars=10_000)) == pytest.approx(0.8)


def test_policies_by_name_and_callable(runtime: LocalRuntime) -> None:
    import verifiers

    tests = {"inputs": ["1", "2"], "outputs": ["1", "3"]}
    fenced = "```python\nprint(input())\n```"
    layered_result = verifiers.score("python", fenced, tests, policy="layered", runtime=runtime)
    assert layered_result.score == pytest.approx(0.2 + 0.3 + 0.5 * 0.5)
    crash = verifiers.score("python", "print(1 / 0)", tests, policy="penalized", runtime=runtime)
    assert crash.score == pytest.approx(-0.1)
    custom = verifiers.score(
        "python", fenced, tests, runtime=runtime, policy=lambda t: 0.25 if t.format_ok else 0.0
    )
    assert custom.score == 0.25 and custom.policy == "<lambda>"
