"""Status precedence, scoring policies and deterministic test selection."""

from __future__ import annotations

import pytest

from verifiers import STATUS_PRECEDENCE, SpecError, Status
from verifiers.results import Result, overall_status
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
