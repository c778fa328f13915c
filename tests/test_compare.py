"""Output and value comparison in the trusted parent."""

from __future__ import annotations

import contextlib
import math

import pytest

from verifiers import CompareOptions
from verifiers.compare import (
    DecodeError,
    Opaque,
    canonical,
    check_spread,
    decode_value,
    outputs_match,
    values_equal,
)


def test_default_mode_ignores_trailing_whitespace_and_blank_lines() -> None:
    assert outputs_match("1 2\n3\n", "1 2   \n3\n\n\n")
    assert outputs_match("a\r\nb", "a\nb\n")
    assert not outputs_match("1 2\n3\n", "1  2\n3\n")  # inner whitespace matters
    assert not outputs_match("a\n\nb", "a\nb")  # inner blank lines matter
    assert not outputs_match("x", " x")  # leading whitespace matters


def test_exact_mode() -> None:
    opts = CompareOptions(mode="exact")
    assert outputs_match("a\n", "a\n", opts)
    assert not outputs_match("a\n", "a", opts)


def test_tokens_and_float_tolerance() -> None:
    assert outputs_match("1 2 3", "1\n2\n3\n", CompareOptions(mode="tokens"))
    loose = CompareOptions(float_abs_tol=1e-6)
    assert outputs_match("0.333333", "0.3333331", loose)
    assert not outputs_match("0.333333", "0.3334", loose)
    assert not outputs_match("abc 1", "abd 1", loose)
    rel = CompareOptions(float_rel_tol=1e-3)
    assert outputs_match("1000000", "1000500", rel)


def test_case_insensitive() -> None:
    assert outputs_match("YES", "yes", CompareOptions(case_sensitive=False))
    assert not outputs_match("YES", "yes")


def test_decode_tags() -> None:
    assert decode_value({"$tuple": [1, 2]}) == (1, 2)
    assert decode_value({"$set": [1, 2]}) == {1, 2}
    assert decode_value({"$dict": [[1, "a"]]}) == {1: "a"}
    assert decode_value({"$bytes": "aGk="}) == b"hi"
    assert math.isnan(decode_value({"$float": "nan"}))
    assert decode_value({"$int": hex(10**30)}) == 10**30
    assert decode_value({"$complex": [1.0, 2.0]}) == 1 + 2j
    assert isinstance(decode_value({"$object": "m.C", "repr": "<C>"}), Opaque)
    with pytest.raises(DecodeError):
        decode_value({"$evil": 1})


def test_values_equal_rules() -> None:
    assert values_equal([1, 2], (1, 2))
    assert values_equal({"1": "a"}, {1: "a"})
    assert values_equal(1, 1.0)
    assert values_equal(True, 1)
    assert not values_equal("1", 1)
    assert not values_equal([1, 2], [2, 1])
    assert values_equal(float("nan"), float("nan"))
    assert values_equal(0.1 + 0.2, 0.3, CompareOptions(float_abs_tol=1e-9))
    assert not values_equal(0.1 + 0.2, 0.3)
    assert not values_equal(None, 0)
    assert values_equal({1, 2}, frozenset({2, 1}))


def test_opaque_equals_nothing() -> None:
    anything = Opaque("x.Anything", "<Anything>")
    assert not values_equal(5, anything)
    assert not values_equal(anything, anything)
    assert anything != anything


@pytest.mark.parametrize(
    "data",
    [
        {"$complex": ["1", 2]},
        {"$complex": [[1], 2]},
        {"$complex": [{"$int": "f" * 400}, 0]},
        {"$complex": [True, {"$dict": []}]},
        {"$bytes": "é"},
        {"$int": "xyz"},
        {"$dict": [[1]]},
        {"$set": [[1, [2, {"$dict": [[[3], {"$set": []}]]}]]]},  # decodes: keys are frozen
    ],
)
def test_decoding_raises_nothing_but_decode_error(data: object) -> None:
    # Data from the sandbox: any other exception would be taken for the SDK's own fault.
    with contextlib.suppress(DecodeError):
        decode_value(data)


def test_canonical_forms_are_hashable_and_equal_as_values_are() -> None:
    values = [
        {"a": 1, "b": [1, 2]},
        {"b": (1, 2), "a": 1.0},
        {1: "x"},
        {"1": "x"},
        [{"k": {"n": float("nan")}}],
        [{"k": {"n": float("nan")}}],
        {frozenset({(1, (2,))}): 3},
        {(1, 2), (1, 3)},
        [1, 2],
        (1, 2),
        "Ab",
        b"x",
        None,
        Opaque("T", "t"),
    ]
    for a in values:
        for b in values:
            same = canonical(a) == canonical(b)
            hash(canonical(a))
            assert same == values_equal(a, b) or isinstance(a, Opaque), (a, b)
    # A dict is not the set of its pairs; a value nested too deeply equals nothing.
    assert canonical({"a": 1}) != canonical({("a", 1)})
    deep: list[object] = []
    for _ in range(300):
        deep = [deep]
    assert canonical(deep) != canonical(deep)
    assert canonical("Ab", casefold=True) == canonical("aB", casefold=True)


def test_repeated_items_are_not_a_hash_collision() -> None:
    # A query's rows repeat freely (Spider dev/97: 230 rows of 28 values); equal items
    # sharing a hash cost nothing to count, so only unequal ones sharing a hash are refused.
    rows = [("name", i % 28) for i in range(230)]
    assert check_spread(rows) is rows
    assert check_spread([7] * 1000) == [7] * 1000
    colliding = [j * (2**61 - 1) for j in range(1, 201)]
    with pytest.raises(DecodeError, match="200 items of which 200 or more distinct ones share"):
        check_spread(colliding)
    # Honest values that happen to collide (hash(-1) == hash(-2)) come in small groups,
    # however many of each there are: 30 rows of -1 and 40 of -2 (the review's case), and
    # (x, -1) beside (x, -2) for every x.
    assert len(check_spread([-1, -2, *range(100)])) == 102
    assert len(check_spread([-1] * 30 + [-2] * 40)) == 70
    pairs = [(x, end) for x in range(1000) for end in (-1, -2)]
    assert check_spread(pairs) is pairs
    # A chain of a few distinct values per hash is free; past it, every new one counts.
    assert len(check_spread(colliding[:72])) == 72
    with pytest.raises(DecodeError):
        check_spread(colliding[:73] + list(range(10_000)))
