"""Output and value comparison in the trusted parent."""

from __future__ import annotations

import math

import pytest

from verifiers import CompareOptions
from verifiers.compare import DecodeError, Opaque, decode_value, outputs_match, values_equal


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
