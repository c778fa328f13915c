"""Python: the case table, every spec format, options, and verdict details."""

from __future__ import annotations

import asyncio

import pytest

import verifiers
from verifiers import Limits, SpecError, Status
from verifiers.languages.python import PythonLanguage, _imports
from verifiers.runtimes import LocalRuntime
from verifiers.testing.cases import Case, case_tables

ADD = {"test": "def check(candidate):\n    assert candidate(1, 2) == 3\n", "entry_point": "add"}


@pytest.mark.parametrize(
    "case",
    [
        c
        for c in case_tables()["python"]
        if c.kind in ("ok", "wrong_answer", "runtime_error", "early_exit")
    ],
    ids=lambda c: f"{c.kind}:{c.name}",
)
def test_interpreter_per_test_mode_agrees(runtime: LocalRuntime, case: Case) -> None:
    verifier = verifiers.CodeVerifier(PythonLanguage(fork=False), runtime)
    result = verifier.score(case.completion, case.tests, limits=case.limits)
    assert result.status is case.expected, result.feedback


def test_call_based_and_leetcode_method(runtime: LocalRuntime) -> None:
    tests = {
        "fn_name": "twice",
        "inputs": [[1], [[1, 2]], ["ab"]],
        "outputs": [2, [1, 2, 1, 2], "abab"],
    }
    r = verifiers.score("python", "def twice(x):\n    return x * 2\n", tests, runtime=runtime)
    assert r.status is Status.PASSED and r.passed == 3
    method = "class Solution:\n    def twice(self, x):\n        return x * 2\n"
    assert verifiers.score("python", method, tests, runtime=runtime).ok


def test_call_based_apps_conventions(runtime: LocalRuntime) -> None:
    # APPS wraps single return values in a list and has no tuples.
    tests = {"fn_name": "pair", "inputs": [[1]], "outputs": [[[1, 2]]]}
    r = verifiers.score("python", "def pair(x):\n    return (x, x + 1)\n", tests, runtime=runtime)
    assert r.ok, r.feedback


def test_call_based_missing_function(runtime: LocalRuntime) -> None:
    tests = {"fn_name": "f", "inputs": [[1]], "outputs": [1]}
    r = verifiers.score("python", "def g(x):\n    return x\n", tests, runtime=runtime)
    assert r.status is Status.RUNTIME_ERROR
    assert "'f' is not defined" in r.feedback


def test_call_based_values_are_compared_outside(runtime: LocalRuntime) -> None:
    tests = {"fn_name": "f", "inputs": [[1]], "outputs": [{"a": [1, 2.5, None]}]}
    code = "def f(x):\n    return {'a': [1, 2.5, None]}\n"
    assert verifiers.score("python", code, tests, runtime=runtime).ok
    wrong = "def f(x):\n    return {'a': [1, 2.5]}\n"
    r = verifiers.score("python", wrong, tests, runtime=runtime)
    assert r.status is Status.FAILED
    assert r.tests[0].actual == "{'a': [1, 2.5]}"


def test_expression_pairs(runtime: LocalRuntime) -> None:
    tests = [["add(1, 2)", 3], ["add('a', 'b')", "ab"], ["add([1], [2])", [1, 2]]]
    code = "def add(a, b):\n    return a + b\n"
    r = verifiers.score("python", code, tests, runtime=runtime, policy="partial")
    assert r.ok and r.score == 1.0


def test_mbpp_one_test_per_assert(runtime: LocalRuntime) -> None:
    tests = {
        "test_list": ["assert sq(2) == 4", "assert sq(3) == 9", "assert sq(4) == 15"],
        "test_imports": ["import math"],
    }
    r = verifiers.score(
        "python", "def sq(x):\n    return x * x\n", tests, runtime=runtime, policy="partial"
    )
    assert r.total == 3 and r.passed == 2
    assert r.status is Status.FAILED
    assert r.score == pytest.approx(2 / 3)
    assert "sq(4) == 15" in r.tests[2].message and "16 == 15" in r.tests[2].message


def test_humaneval_body_only_completion_gets_the_prompt(runtime: LocalRuntime) -> None:
    tests = {**ADD, "prompt": 'def add(a, b):\n    """Add."""\n'}
    r = verifiers.score("python", "    return a + b\n", tests, runtime=runtime)
    assert r.ok, r.feedback
    assert r.code is not None and r.code.startswith("def add")


def test_feedback_for_wrong_stdio_answer(runtime: LocalRuntime) -> None:
    tests = {"inputs": ["2 3\n"], "outputs": ["5\n"]}
    r = verifiers.score("python", "print(6)", tests, runtime=runtime)
    assert r.status is Status.FAILED
    assert "Input:\n2 3" in r.feedback and "Expected:\n5" in r.feedback and "Got:\n6" in r.feedback


def test_feedback_for_runtime_error_has_line_numbers(runtime: LocalRuntime) -> None:
    code = "x = 1\ny = 0\nprint(x / y)\n"
    r = verifiers.score("python", code, {"inputs": [""], "outputs": [""]}, runtime=runtime)
    assert r.status is Status.RUNTIME_ERROR
    assert 'File "solution.py", line 3' in r.feedback and "ZeroDivisionError" in r.feedback


def test_syntax_error_starts_no_process(runtime: LocalRuntime) -> None:
    r = verifiers.score("python", "```python\ndef f(:\n    pass\n```", ADD, runtime=runtime)
    assert r.status is Status.SYNTAX_ERROR
    assert "line 1" in r.feedback
    assert all(t.wall_s == 0 for t in r.tests)


def test_partial_credit_counts_every_selected_test(runtime: LocalRuntime) -> None:
    tests = {"inputs": [str(i) for i in range(10)], "outputs": [str(i % 5) for i in range(10)]}
    code = "n = int(input())\nprint(n if n < 5 else -1)"
    r = verifiers.score("python", code, tests, runtime=runtime, policy="partial")
    assert (r.passed, r.total, r.score) == (5, 10, 0.5)
    r = verifiers.score("python", code, tests, runtime=runtime, policy="partial", max_tests=4)
    assert r.total == 4 and r.tests_available == 10
    assert [t.index for t in r.tests] == sorted(t.index for t in r.tests)


def test_compare_options(runtime: LocalRuntime) -> None:
    tests = {"inputs": [""], "outputs": ["0.3333333"]}
    code = "print(1/3)"
    assert verifiers.score("python", code, tests, runtime=runtime).status is Status.FAILED
    loose = verifiers.score("python", code, tests, runtime=runtime, compare={"float_abs_tol": 1e-6})
    assert loose.ok


def test_total_time_budget(runtime: LocalRuntime) -> None:
    tests = {"inputs": ["1"] * 6, "outputs": ["1"] * 6}
    r = verifiers.score(
        "python",
        "import time\ntime.sleep(10)",
        tests,
        runtime=runtime,
        limits=Limits(timeout_s=1, total_timeout_s=2),
        stop_on_failure=False,  # binary would end at the first timeout
    )
    assert r.status is Status.TIMEOUT and r.total == 6
    assert any("budget" in t.message for t in r.tests)
    assert sum(t.status is Status.NOT_RUN for t in r.tests) == 4


def test_stdin_bytes_and_unicode(runtime: LocalRuntime) -> None:
    tests = {"inputs": ["héllo wörld ✓\n"], "outputs": ["HÉLLO WÖRLD ✓\n"]}
    assert verifiers.score("python", "print(input().upper())", tests, runtime=runtime).ok


def test_program_reading_all_stdin(runtime: LocalRuntime) -> None:
    data = "\n".join(str(i) for i in range(200_000)) + "\n"
    tests = {"inputs": [data], "outputs": [str(sum(range(200_000)))]}
    code = "import sys\nprint(sum(map(int, sys.stdin.buffer.read().split())))"
    assert verifiers.score("python", code, tests, runtime=runtime).ok


def test_main_guard_runs_for_stdio_but_not_for_functions(runtime: LocalRuntime) -> None:
    stdio = "def main():\n    print(int(input()) * 2)\nif __name__ == '__main__':\n    main()\n"
    assert verifiers.score("python", stdio, {"inputs": ["2"], "outputs": ["4"]}, runtime=runtime).ok
    func = (
        "def add(a, b):\n    return a + b\nif __name__ == '__main__':\n    print(add(input(), 1))\n"
    )
    assert verifiers.score("python", func, ADD, runtime=runtime).ok


def test_malformed_test_code_is_a_spec_error(runtime: LocalRuntime) -> None:
    with pytest.raises(SpecError, match=r"tests\.test"):
        verifiers.score(
            "python", "x = 1", {"test": "def check(:\n", "entry_point": "f"}, runtime=runtime
        )
    with pytest.raises(SpecError, match=r"tests\[0\]\[0\]"):
        verifiers.score("python", "x = 1", [["f(", 1]], runtime=runtime)


def test_verifier_protocol(runtime: LocalRuntime) -> None:
    v = verifiers.get_verifier("py", runtime=runtime, policy="partial")
    assert isinstance(v, verifiers.Verifier)
    spec = v.parse_tests(ADD)
    r = asyncio.run(v.ascore("def add(a, b):\n    return a + b", spec))
    assert r.ok and r.policy == "partial" and r.language == "python"


def test_a_program_that_patches_builtins_is_named_in_hack_suspected(runtime: LocalRuntime) -> None:
    # The zygote copies the builtins before any program runs; the program's process
    # compares against that copy, in assert-style and call-based tests alike.
    code = "import builtins\nbuiltins.sorted = lambda x: []\ndef f(x):\n    return x + 1\n"
    specs = [
        {"test": "def check(c):\n    assert c(1) == 3\n", "entry_point": "f"},
        {"fn_name": "f", "inputs": [[1]], "outputs": [3]},
    ]
    for spec in specs:
        result = verifiers.score("python", code, spec, runtime=runtime)
        assert result.status is Status.FAILED, result.feedback
        assert result.tests[0].hack_suspected == "the program modified builtins.sorted"
    honest = "def f(x):\n    return x + 1\n"
    for spec in specs:
        result = verifiers.score("python", honest, spec, runtime=runtime)
        assert result.status is Status.FAILED and not result.tests[0].hack_suspected


SOURCE_WITH_IMPORTS_EVERYWHERE = """
import os, sys.path as p
from a.b import c
from . import relative
def f():
    import json
    class C:
        def g(self):
            from collections import deque
    try:
        import x1
    except ImportError:
        import x2
    else:
        import x3
    finally:
        import x4
    match y:
        case 1:
            import x5
    with open(z) as q:
        import x6
    for i in r:
        import x7
    else:
        import x8
    while w:
        import x9
    if a:
        import x10
    elif b:
        import x11
    async def h():
        async with k:
            import x12
        async for j in k:
            import x13
try:
    pass
except* ValueError:
    import x14
lambda: __import__("not_a_statement")
"""


def test_imports_are_found_in_every_kind_of_block() -> None:
    # The modules a program imports are preloaded in the zygote; only statements are
    # visited, and an import in any block of any statement is found.
    expected = {"os", "sys", "a", "json", "collections", *(f"x{i}" for i in range(1, 15))}
    assert _imports(SOURCE_WITH_IMPORTS_EVERYWHERE) == expected
    assert _imports("def f(:\n") == frozenset()
    assert _imports("x = 1\n") == frozenset()
