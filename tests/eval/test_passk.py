"""The unbiased pass@k estimator against values computed by hand."""

from __future__ import annotations

from math import comb

import pytest

import verifiers
from verifiers.eval import mean_pass_at_k, pass_at_k, pass_at_ks


@pytest.mark.parametrize(
    ("n", "c", "k", "expected"),
    [
        (10, 3, 1, 0.3),  # pass@1 is the pass rate
        (10, 3, 5, 1 - 21 / 252),  # 1 - C(7,5)/C(10,5)
        (4, 2, 2, 1 - 1 / 6),  # 1 - C(2,2)/C(4,2)
        (5, 0, 3, 0.0),
        (5, 5, 1, 1.0),
        (10, 8, 3, 1.0),  # n - c < k: every draw of 3 holds a pass
        (200, 1, 100, 0.5),  # 1 - C(199,100)/C(200,100) = 100/200
    ],
)
def test_hand_computed(n: int, c: int, k: int, expected: float) -> None:
    assert pass_at_k(n, c, k) == pytest.approx(expected, abs=1e-12)


def test_matches_the_binomial_formula_on_a_grid() -> None:
    for n in range(1, 16):
        for c in range(n + 1):
            for k in range(1, n + 1):
                exact = 1 - comb(n - c, k) / comb(n, k)
                assert pass_at_k(n, c, k) == pytest.approx(exact, abs=1e-12)


def test_means_over_problems() -> None:
    assert mean_pass_at_k([(2, 1), (2, 0)], 1) == pytest.approx(0.25)
    # k beyond the fewest samples of any problem is left out, not made up.
    assert pass_at_ks({"a": (4, 1), "b": (2, 2)}, [1, 2, 4]) == pytest.approx(
        {1: (0.25 + 1) / 2, 2: (0.5 + 1) / 2}
    )


@pytest.mark.parametrize(
    ("n", "c", "k", "field"),
    [
        (0, 0, 1, "n"),
        (3, 4, 1, "c"),
        (3, -1, 1, "c"),
        (3, 1, 4, "k"),
        (3, 1, 0, "k"),
        (3.0, 1, 1, "n"),
    ],
)
def test_bad_arguments_name_the_field(n: int, c: int, k: int, field: str) -> None:
    with pytest.raises(verifiers.SpecError) as err:
        pass_at_k(n, c, k)
    assert err.value.field == field
