"""Differential verification and test augmentation, with real sandboxed programs."""

from __future__ import annotations

import ast
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import verifiers
from verifiers.difftest import augment_tests, differential
from verifiers.runtimes import LocalRuntime
from verifiers.specs import CallTests, ExpressionTests, StdioTests
from verifiers.testing.datasets import dataset
from verifiers.testing.inputs import (
    python_literal,
    strategy_from_examples,
    strategy_from_signature,
)

from .languages.test_case_tables import toolchain_ready


@pytest.fixture(scope="module")
def humaneval() -> dict[str, dict[str, Any]]:
    return {r["task_id"]: r for r in dataset("humaneval").rows()}


def _spec(problem: dict[str, Any]) -> dict[str, Any]:
    return {
        "test": problem["test"],
        "entry_point": problem["entry_point"],
        "prompt": problem["prompt"],
    }


# --- the bug the original tests miss --------------------------------------------------------

# HumanEval/52: every number of l below t. max(l) < t agrees on every non-empty list, and
# the benchmark's six asserts have no empty one.
WRONG_ON_EMPTY = "    return max(l) < t\n"


def test_humaneval_tests_pass_a_program_that_is_wrong_on_empty_lists(
    runtime: LocalRuntime, humaneval: dict[str, dict[str, Any]]
) -> None:
    problem = humaneval["HumanEval/52"]
    candidate = problem["prompt"] + WRONG_ON_EMPTY
    result = verifiers.score("python", candidate, _spec(problem), runtime=runtime)
    assert result.status is verifiers.Status.PASSED


def test_differential_finds_the_empty_list_with_a_shrunk_counterexample(
    runtime: LocalRuntime, humaneval: dict[str, dict[str, Any]]
) -> None:
    problem = humaneval["HumanEval/52"]
    reference = problem["prompt"] + problem["canonical_solution"]
    candidate = problem["prompt"] + WRONG_ON_EMPTY
    # Arguments inferred from the reference's type hints (l: list, t: int).
    report = verifiers.differential(
        "python", candidate, reference, fn_name="below_threshold", runtime=runtime
    )
    assert not report.agree
    found = report.counterexample
    assert found is not None
    # Shrunk to the smallest input: an empty list and the simplest threshold.
    assert found.input == ([], 0)
    assert found.shown == "below_threshold([], 0)"
    assert found.status is verifiers.Status.RUNTIME_ERROR
    assert "max() arg is an empty sequence" in found.message
    assert found.reference_output == "True"
    # Found in the first batch (hypothesis draws simple inputs first): the search stopped.
    assert report.batches == 1 and report.examples == 10 and report.disagreements >= 1


def test_differential_agrees_on_an_equivalent_program(
    runtime: LocalRuntime, humaneval: dict[str, dict[str, Any]]
) -> None:
    problem = humaneval["HumanEval/52"]
    reference = problem["prompt"] + problem["canonical_solution"]
    candidate = problem["prompt"] + "    return all(x < t for x in l)\n"
    report = differential(
        "python", candidate, reference, fn_name="below_threshold", runtime=runtime
    )
    assert report.agree and report.counterexample is None
    assert report.examples >= 50 and report.disagreements == 0


def test_augmented_tests_catch_what_the_original_ones_miss(
    runtime: LocalRuntime, humaneval: dict[str, dict[str, Any]]
) -> None:
    problem = humaneval["HumanEval/52"]
    spec = _spec(problem)
    # The reference is body-only, as in HumanEval: the prompt supplies the signature.
    augmented = augment_tests(problem["canonical_solution"], spec, n=40, runtime=runtime)
    assert augmented.added >= 20
    wrong = problem["prompt"] + WRONG_ON_EMPTY
    right = problem["prompt"] + problem["canonical_solution"]
    assert verifiers.score("python", wrong, spec, runtime=runtime).passed == 1
    caught = verifiers.score("python", wrong, augmented.spec, runtime=runtime)
    assert caught.status is verifiers.Status.RUNTIME_ERROR
    kept = verifiers.score("python", right, augmented.spec, runtime=runtime)
    assert kept.status is verifiers.Status.PASSED
    # The original check still runs first.
    assert problem["test"].strip() in augmented.spec.test


def test_augmenting_call_tests_from_their_own_examples(runtime: LocalRuntime) -> None:
    # No type hints: arguments are generated from the given examples' types and ranges.
    spec = {"fn_name": "clamp_sum", "inputs": [[[1, 2, 3], 10], [[5, 5], 4]], "outputs": [6, 4]}
    reference = "def clamp_sum(xs, cap):\n    return min(sum(xs), cap)\n"
    augmented = augment_tests(reference, spec, n=30, runtime=runtime)
    new = augmented.spec
    assert isinstance(new, CallTests)
    assert len(new.inputs) == 2 + augmented.added and augmented.added >= 15
    assert all(isinstance(a[0], list) and isinstance(a[1], int) for a in new.inputs)
    # Wrong when the sum is negative: the two given tests cannot see it.
    wrong = "def clamp_sum(xs, cap):\n    return min(abs(sum(xs)), cap)\n"
    assert verifiers.score("python", wrong, spec, runtime=runtime).status == "passed"
    assert verifiers.score("python", wrong, new, runtime=runtime).status == "failed"
    assert verifiers.score("python", reference, new, runtime=runtime).status == "passed"


def test_augmenting_mbpp_asserts(runtime: LocalRuntime) -> None:
    spec = {
        "test_list": [
            "assert second_largest([1, 2, 3]) == 2",
            "assert second_largest([10, 20, 5, 7]) == 10",
        ]
    }
    reference = (
        "def second_largest(xs):\n    s = sorted(set(xs))\n"
        "    return s[-2] if len(s) > 1 else None\n"
    )
    augmented = augment_tests(reference, spec, n=30, runtime=runtime)
    assert augmented.added >= 10
    wrong = "def second_largest(xs):\n    return sorted(xs)[-2]\n"  # duplicates break it
    assert verifiers.score("python", wrong, spec, runtime=runtime).status == "passed"
    assert verifiers.score("python", wrong, augmented.spec, runtime=runtime).status != "passed"
    assert verifiers.score("python", reference, augmented.spec, runtime=runtime).status == "passed"


# --- stdin programs in every language --------------------------------------------------------

MAX_INPUTS = st.lists(st.integers(-50, 50), max_size=6).map(
    lambda xs: f"{len(xs)}\n{' '.join(map(str, xs))}\n"
)

MAX_PROGRAMS = {
    "python": (
        "n = int(input())\nxs = list(map(int, input().split())) if n else []\n"
        "print(max(xs) if xs else 0)\n",
        "n = int(input())\nxs = list(map(int, input().split())) if n else []\n"
        "best = 0\nfor x in xs:\n    best = max(best, x)\nprint(best)\n",
    ),
    "javascript": (
        "const v = require('fs').readFileSync(0, 'utf8').trim().split(/\\s+/).map(Number);\n"
        "const xs = v.slice(1, 1 + v[0]);\nconsole.log(xs.length ? Math.max(...xs) : 0);\n",
        "const v = require('fs').readFileSync(0, 'utf8').trim().split(/\\s+/).map(Number);\n"
        "const xs = v.slice(1, 1 + v[0]);\nconsole.log(Math.max(0, ...xs));\n",
    ),
    "go": (
        'package main\n\nimport "fmt"\n\nfunc main() {\n\tvar n int\n\tfmt.Scan(&n)\n'
        "\tbest := 0\n\tfor i := 0; i < n; i++ {\n\t\tvar x int\n\t\tfmt.Scan(&x)\n"
        "\t\tif i == 0 || x > best {\n\t\t\tbest = x\n\t\t}\n\t}\n\tfmt.Println(best)\n}\n",
        'package main\n\nimport "fmt"\n\nfunc main() {\n\tvar n int\n\tfmt.Scan(&n)\n'
        "\tbest := 0\n\tfor i := 0; i < n; i++ {\n\t\tvar x int\n\t\tfmt.Scan(&x)\n"
        "\t\tif x > best {\n\t\t\tbest = x\n\t\t}\n\t}\n\tfmt.Println(best)\n}\n",
    ),
    "rust": (
        "use std::io::Read;\nfn main() {\n    let mut s = String::new();\n"
        "    std::io::stdin().read_to_string(&mut s).unwrap();\n"
        "    let v: Vec<i64> = s.split_whitespace().map(|x| x.parse().unwrap()).collect();\n"
        "    let xs = &v[1..1 + v[0] as usize];\n"
        '    println!("{}", xs.iter().copied().max().unwrap_or(0));\n}\n',
        "use std::io::Read;\nfn main() {\n    let mut s = String::new();\n"
        "    std::io::stdin().read_to_string(&mut s).unwrap();\n"
        "    let v: Vec<i64> = s.split_whitespace().map(|x| x.parse().unwrap()).collect();\n"
        "    let xs = &v[1..1 + v[0] as usize];\n"
        '    println!("{}", xs.iter().copied().fold(0, i64::max));\n}\n',
    ),
}


@pytest.mark.parametrize("language", sorted(MAX_PROGRAMS))
def test_stdin_differential_shrinks_to_one_negative_number(
    runtime: LocalRuntime, language: str
) -> None:
    toolchain_ready(language)
    reference, candidate = (f"```{language}\n{code}\n```" for code in MAX_PROGRAMS[language])

    def against_reference(program: str, examples: int) -> Any:
        return differential(
            language,
            program,
            reference,
            inputs=MAX_INPUTS,
            max_examples=examples,
            runtime=runtime,
        )

    report = against_reference(candidate, 60)
    assert not report.agree and report.counterexample is not None
    # The smallest disagreement: one number, the largest negative one.
    assert report.counterexample.input == "1\n-1\n"
    assert report.counterexample.candidate_output.strip() == "0"
    assert report.counterexample.reference_output.strip() == "-1"
    same = against_reference(reference, 20)
    assert same.agree and same.examples >= 10


def test_stdin_augmentation_in_go(runtime: LocalRuntime) -> None:
    toolchain_ready("go")
    reference, candidate = MAX_PROGRAMS["go"]
    spec = {"inputs": ["2\n3 5\n"], "outputs": ["5\n"]}
    augmented = augment_tests(reference, spec, language="go", inputs=MAX_INPUTS, n=25)
    assert isinstance(augmented.spec, StdioTests)
    assert augmented.added >= 15 and len(augmented.spec.cases) == 1 + augmented.added
    assert verifiers.score("go", candidate, spec, runtime=runtime).status == "passed"
    assert verifiers.score("go", candidate, augmented.spec, runtime=runtime).status == "failed"


# --- time limits from the reference's time -------------------------------------------------


def test_candidate_timeout_follows_the_reference(runtime: LocalRuntime) -> None:
    # The reference takes 0.3 s per call; a right candidate twice as slow must not time
    # out, a candidate that never returns must, within the derived limit.
    reference = "import time\ndef f(x: int):\n    time.sleep(0.3)\n    return x * 2\n"
    slow = "import time\ndef f(x: int):\n    time.sleep(0.6)\n    return x + x\n"
    hang = "def f(x: int):\n    while True:\n        pass\n"
    inputs = st.integers(0, 3).map(lambda x: (x,))
    report = differential(
        "python", slow, reference, fn_name="f", inputs=inputs, max_examples=4, runtime=runtime
    )
    assert report.agree
    assert 1.5 <= report.candidate_timeout_s <= 5.0  # 5 x the slowest reference run
    stuck = differential(
        "python",
        hang,
        reference,
        fn_name="f",
        inputs=inputs,
        max_examples=2,
        runtime=runtime,
        shrink_budget_s=5,
    )
    assert not stuck.agree and stuck.counterexample is not None
    assert stuck.counterexample.status is verifiers.Status.TIMEOUT


def test_leetcode_methods_and_reference_rejections(runtime: LocalRuntime) -> None:
    reference = (
        "class Solution:\n    def kth(self, xs: list[int], k: int) -> int:\n"
        "        return sorted(xs)[k]\n"
    )
    candidate = (
        "class Solution:\n    def kth(self, xs, k):\n"
        "        return sorted(xs)[k] if k else min(xs)\n"
    )
    report = differential("python", candidate, reference, fn_name="Solution().kth", runtime=runtime)
    # Inputs the reference fails on (k out of range) are outside the domain, not bugs.
    assert report.agree and report.reference_rejected > 0 and report.examples > 0


def test_a_candidate_that_does_not_compile_disagrees_at_once(runtime: LocalRuntime) -> None:
    report = differential(
        "python", "def f(x:\n", "def f(x: int):\n    return x\n", fn_name="f", runtime=runtime
    )
    assert not report.agree and report.counterexample is not None
    assert report.counterexample.status is verifiers.Status.SYNTAX_ERROR
    assert report.counterexample.input == (0,)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"fn_name": "f", "inputs": [1, 2]}, "inputs"),
        ({"mode": "stdio"}, "inputs"),
        ({"fn_name": "f(); import os"}, "fn_name"),
        ({"fn_name": "g"}, "reference"),
        ({"fn_name": "f", "max_examples": 0}, "max_examples"),
        ({"mode": "call"}, "fn_name"),
    ],
)
def test_malformed_arguments_name_the_field(kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(verifiers.SpecError) as err:
        differential("python", "def f(x): return x", "def f(x: int): return x", **kwargs)
    assert err.value.field.startswith(field)


def test_a_broken_reference_is_the_callers_error(runtime: LocalRuntime) -> None:
    with pytest.raises(verifiers.SpecError) as err:
        differential(
            "python",
            "def f(x): return x",
            "def f(x: int)\n    return x",
            fn_name="f",
            inputs=st.just((1,)),
            runtime=runtime,
        )
    assert err.value.field == "reference"
    with pytest.raises(verifiers.SpecError, match="stdin"):
        differential("go", "x", "y", fn_name="f")


def test_expression_tests_are_extended_with_new_calls(runtime: LocalRuntime) -> None:
    spec = [["double(2)", 4], ["double(-1)", -2]]
    augmented = augment_tests("def double(x):\n    return 2 * x\n", spec, n=10, runtime=runtime)
    assert isinstance(augmented.spec, ExpressionTests)
    assert len(augmented.spec.cases) == 2 + augmented.added
    assert all(c.expected == 2 * ast.literal_eval(c.expression[7:-1]) for c in augmented.spec.cases)


# --- input strategies ----------------------------------------------------------------------

_data = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text() | st.binary(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.lists(inner, max_size=3).map(tuple)
        | st.dictionaries(st.text(max_size=3), inner, max_size=3)
        | st.frozensets(st.integers(), max_size=3)
    ),
    max_leaves=10,
)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return (a != a and b != b) or (a == b and str(a) == str(b))
    if type(a) is not type(b):
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return bool(a == b)


@given(_data)
def test_python_literal_round_trips(value: Any) -> None:
    assert _same(eval(python_literal(value)), value)


@given(
    strategy_from_signature(
        "from typing import Optional\n"
        "def f(a: int, b: list[str], c: Optional[dict[str, float]], d: tuple[int, ...]):\n"
        "    pass",
        "f",
    )
)
def test_signature_strategies_follow_the_hints(args: tuple[Any, ...]) -> None:
    a, b, c, d = args
    assert isinstance(a, int) and isinstance(b, list) and all(isinstance(s, str) for s in b)
    assert c is None or all(isinstance(v, float) for v in c.values())
    assert isinstance(d, tuple)


@given(strategy_from_examples([([1, 2], "ab", 1.5), ([], "b", -2.0)]))
def test_example_strategies_keep_types(args: tuple[Any, ...]) -> None:
    xs, s, x = args
    assert isinstance(xs, list) and all(isinstance(v, int) for v in xs)
    assert isinstance(s, str) and isinstance(x, float)


def test_hints_without_a_strategy_are_refused() -> None:
    with pytest.raises(verifiers.SpecError, match="no type hint"):
        strategy_from_signature("def f(x):\n    pass", "f")
    with pytest.raises(verifiers.SpecError, match="cannot generate"):
        strategy_from_signature("def f(x: Widget):\n    pass", "f")
