"""Every recognised test format, and clear errors for malformed ones."""

from __future__ import annotations

import json

import pytest

from verifiers import (
    AssertListTests,
    AssertScriptTests,
    CallTests,
    ExpressionTests,
    SpecError,
    StdioTests,
    parse_tests,
)


def test_stdio_inputs_outputs() -> None:
    spec = parse_tests({"inputs": ["1 2\n", "3 4\n"], "outputs": ["3\n", "7\n"]})
    assert isinstance(spec, StdioTests)
    assert [c.input for c in spec.cases] == ["1 2\n", "3 4\n"]
    assert len(spec) == 2


def test_stdio_as_json_string_and_list_of_cases() -> None:
    raw = json.dumps({"inputs": ["a"], "outputs": ["b"]})
    assert isinstance(parse_tests(raw), StdioTests)
    spec = parse_tests([{"input": "x", "output": "y"}, {"input": "z", "output": "w", "name": "n"}])
    assert isinstance(spec, StdioTests) and len(spec) == 2


def test_stdio_python_literal_string() -> None:
    spec = parse_tests(str([{"input": "1\n", "output": "2\n"}]))
    assert isinstance(spec, StdioTests)


def test_stdio_lines_lists_are_joined() -> None:
    spec = parse_tests({"inputs": [["1", "2"]], "outputs": [["3"]]})
    assert isinstance(spec, StdioTests)
    assert spec.cases[0].input == "1\n2\n"


def test_call_based() -> None:
    spec = parse_tests({"fn_name": "f", "inputs": [[1, 2], [3, 4]], "outputs": [3, 7]})
    assert isinstance(spec, CallTests)
    assert spec.inputs == [[1, 2], [3, 4]]


def test_call_based_bare_argument_becomes_a_list() -> None:
    spec = parse_tests({"fn_name": "f", "inputs": [5, "x"], "outputs": [1, 2]})
    assert isinstance(spec, CallTests)
    assert spec.inputs == [[5], ["x"]]


def test_expression_pairs() -> None:
    spec = parse_tests([["add(1, 2)", 3], ["add(0, 0)", 0]])
    assert isinstance(spec, ExpressionTests)
    assert spec.cases[0].expression == "add(1, 2)" and spec.cases[0].expected == 3


def test_humaneval_and_mbpp() -> None:
    he = parse_tests({"test": "def check(c):\n    assert c() == 1\n", "entry_point": "f"})
    assert isinstance(he, AssertScriptTests) and len(he) == 1
    mbpp = parse_tests(
        {"test_list": ["assert f(1) == 1", "assert f(2) == 2"], "test_imports": ["import math"]}
    )
    assert isinstance(mbpp, AssertListTests) and len(mbpp) == 2
    assert mbpp.imports == ["import math"]
    bare = parse_tests(["assert f(1) == 1"])
    assert isinstance(bare, AssertListTests)


def test_explicit_kind_and_models_pass_through() -> None:
    spec = parse_tests({"kind": "stdio", "cases": [{"input": "", "output": "hi"}]})
    assert isinstance(spec, StdioTests)
    assert parse_tests(spec) is spec


@pytest.mark.parametrize(
    ("raw", "field", "problem"),
    [
        ({"inputs": ["1"], "outputs": ["1", "2"]}, "tests.outputs", "one output per input"),
        ({"inputs": ["1"]}, "tests.outputs", "missing"),
        ({"outputs": ["1"]}, "tests.inputs", "missing"),
        ({"inputs": [], "outputs": []}, "tests.inputs", "empty"),
        ({"inputs": [1.5j], "outputs": ["x"]}, "tests.inputs[0]", "expected a string"),
        ({"fn_name": "f", "inputs": [[1]], "outputs": []}, "tests", "one output per input"),
        ({"fn_name": "not valid", "inputs": [[1]], "outputs": [1]}, "tests", "not an identifier"),
        ({"test": 5}, "tests.test", "string"),
        ({"test_list": "assert x"}, "tests.test_list", "list of assert"),
        ({"kind": "nope"}, "tests.kind", "unknown kind"),
        ({"foo": 1}, "tests", "unrecognised test format"),
        ([], "tests", "empty"),
        ([1, 2], "tests", "a list must hold"),
        ([["f()"]], "tests[0]", "pair"),
        ("not json {", "tests", "JSON"),
        (42, "tests", "expected a dict"),
        ([{"input": "x"}], "tests[0].output", "missing"),
    ],
)
def test_malformed_specs_name_the_field(raw: object, field: str, problem: str) -> None:
    with pytest.raises(SpecError) as info:
        parse_tests(raw)
    assert info.value.field == field
    assert problem in info.value.problem
