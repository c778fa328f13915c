"""The property suite on every language's verifier, and proof that it can fail."""

from __future__ import annotations

import os
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import verifiers
from verifiers.results import Result, Status
from verifiers.runtimes import LocalRuntime
from verifiers.testing.properties import check_result, check_verifier
from verifiers.testing.strategies import (
    PROGRAM_LANGUAGES,
    SUM_TESTS,
    completions,
    malformed_specs,
    programs,
    valid_specs,
)

from .languages.test_case_tables import toolchain_ready

pytest_plugins = ["verifiers.testing.pytest_plugin"]

# Sized for CI's 2 cores: about a minute per compiled language.
EXAMPLES = {"python": 25, "javascript": 15, "go": 8, "rust": 8}


@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.parametrize("language", PROGRAM_LANGUAGES)
def test_every_language_passes_the_property_suite(
    runtime: LocalRuntime, language: str, verifier_properties: Any
) -> None:
    toolchain_ready(language)
    examples = int(os.environ.get("VERIFIERS_FUZZ_EXAMPLES", EXAMPLES[language]))
    report = verifier_properties(
        verifiers.get_verifier(language, runtime=runtime), max_examples=examples
    )
    assert report.verifications >= examples
    # The generated programs reached more than one verdict.
    assert len(report.statuses) >= 3, report.statuses


class _Wrapper:
    """A verifier around the real one, for the broken variants below."""

    name = "python"

    def __init__(self) -> None:
        self.inner = verifiers.get_verifier("python")

    def parse_tests(self, tests: Any) -> Any:
        return self.inner.parse_tests(tests)

    async def ascore(self, completion: str, tests: Any, **options: Any) -> Result:
        raise NotImplementedError


class _Lenient(_Wrapper):
    """A broken verifier: it answers 1.0 for anything (a reward hack's dream)."""

    def score(self, completion: str, tests: Any, **options: Any) -> Result:
        result = self.inner.score(completion, tests, **options)
        return result.model_copy(update={"status": Status.PASSED, "score": 1.0})


class _Fragile(_Wrapper):
    """A broken verifier: it raises on NUL bytes in the completion."""

    def score(self, completion: str, tests: Any, **options: Any) -> Result:
        if "\0" in completion:
            raise ValueError("NUL byte")
        return self.inner.score(completion, tests, **options)


@pytest.mark.parametrize("broken", [_Lenient, _Fragile], ids=["lenient", "fragile"])
def test_the_suite_catches_a_broken_verifier(runtime: LocalRuntime, broken: type) -> None:
    with pytest.raises((AssertionError, ValueError)) as err:
        check_verifier(broken(), max_examples=40, seed=1)
    # Hypothesis shrinks the example and attaches it to the failure.
    notes = "\n".join(getattr(err.value, "__notes__", []))
    assert "Falsifying example" in notes or "Failing test case" in notes, notes
    assert "model_input_never_raises(" in notes


def test_check_result_rejects_inconsistent_results(runtime: LocalRuntime) -> None:
    good = verifiers.score("python", "print(1)", {"inputs": [""], "outputs": ["2"]})
    check_result(good)
    for bad in (
        {"passed": 1},  # passed more than the tests say
        {"status": Status.PASSED},  # passed with a failing test
        {"score": 1.0},  # not what the binary policy gives a failure
        {"infra_error": True},  # an infrastructure fault that is not sandbox_error
        {"pass_rate": 0.5},
    ):
        with pytest.raises(AssertionError):
            check_result(good.model_copy(update=bad))
    with pytest.raises(AssertionError):
        check_result({"status": "passed"})


@settings(max_examples=60, deadline=None)
@given(completions("python"))
def test_completions_are_strings_with_every_shape(text: str) -> None:
    assert isinstance(text, str)
    text.encode("utf-8")  # no lone surrogates: real model output is valid text


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(PROGRAM_LANGUAGES).flatmap(programs))
def test_programs_carry_their_verdicts(program: Any) -> None:
    assert program.expected and program.code in program.completion
    assert program.language in PROGRAM_LANGUAGES


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(PROGRAM_LANGUAGES).flatmap(valid_specs))
def test_valid_specs_parse(tests: Any) -> None:
    assert len(verifiers.parse_tests(tests)) >= 1


@settings(max_examples=30, deadline=None)
@given(malformed_specs())
def test_malformed_specs_are_refused_before_anything_runs(tests: Any) -> None:
    with pytest.raises(verifiers.SpecError):
        verifiers.score("python", "print(1)", tests)


def test_sum_tests_accept_the_right_program(runtime: LocalRuntime) -> None:
    right = "a, b = map(int, input().split())\nprint(a + b)"
    assert verifiers.score("python", right, SUM_TESTS, runtime=runtime).score == 1.0
