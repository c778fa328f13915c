"""Real checkers and interactors on real data: Library Checker's testlib checkers and the
Kattis output validators and interactor, compiled with the sandbox's g++.

Every set is the shared copy when present, else the records bundled with the package.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Mapping
from typing import Any

import pytest

import verifiers
from tests.conftest import need
from verifiers import Status
from verifiers.cases import fenced
from verifiers.registry import language_names
from verifiers.runtimes import LocalRuntime
from verifiers.testing import datasets

LIBRARY_CHECKER = datasets.rows("library_checker")
KATTIS = datasets.rows("kattis_validators")
VERDICTS = {
    "accepted": Status.PASSED,
    "wrong_answer": Status.FAILED,
    "time_limit_exceeded": Status.TIMEOUT,
    "runtime_error": Status.RUNTIME_ERROR,
    "run_time_error": Status.RUNTIME_ERROR,
}
#: problemtools' language ids -> the SDK's languages.
KATTIS_LANGUAGES = {
    "python3": "python",
    "cpp": "cpp",
    "c": "c",
    "java": "java",
    "javascript": "javascript",
    "go": "go",
    "rust": "rust",
}
_INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"[^\n]*$', re.M)


@pytest.fixture(scope="module", autouse=True)
def _gxx() -> None:
    need(shutil.which("g++") is not None, "g++ is not installed (apt-get install g++)")


def self_contained(source: str, files: Mapping[str, str], where: str = "sol") -> str:
    """A Library Checker solution with its quoted includes inlined (a completion is one file).

    Includes resolve as ``g++ -I common`` does: beside the including file, then ``common``.
    """
    seen: set[str] = set()

    def expand(text: str, directory: str) -> str:
        def one(match: re.Match[str]) -> str:
            for base in (directory, "common", ""):
                path = os.path.normpath(os.path.join(base, match.group(1)))
                if path in files:
                    if path in seen:
                        return ""
                    seen.add(path)
                    return expand(files[path], os.path.dirname(path))
            raise AssertionError(f"no {match.group(1)} for {directory}")

        return _INCLUDE.sub(one, text)

    return expand(source, where)


def library_checker_spec(
    problem: Mapping[str, Any], tests: list[Mapping[str, Any]]
) -> dict[str, Any]:
    return {
        "tests": [{"input": t["input"], "answer": t["answer"]} for t in tests],
        "checker": {
            "language": problem["checker_language"],
            "source": problem["checker_source"],
            "files": problem["support_files"],
            "protocol": "testlib",
        },
        "time_limit_s": problem["time_limit_s"],
    }


def _id(row: Mapping[str, Any]) -> str:
    return str(row["problem_id"])


@pytest.mark.parametrize("problem", LIBRARY_CHECKER, ids=_id)
def test_library_checker_solutions_get_their_verdicts(
    runtime: LocalRuntime, problem: Mapping[str, Any]
) -> None:
    spec = library_checker_spec(problem, problem["tests"])
    solutions = problem["solutions"]
    assert solutions[0]["name"] == "correct.cpp"
    items = [
        {
            "language": "cpp",
            "completion": self_contained(s["source"], problem["support_files"]),
            "tests": spec,
        }
        for s in solutions
    ]
    results = verifiers.score_batch(items, runtime=runtime)
    for solution, result in zip(solutions, results, strict=True):
        expected = VERDICTS[solution["expected_verdict"]]
        assert result.status is expected, (solution["name"], result.feedback[:1500])
        per_test = [t.passed for t in result.tests]
        assert per_test == [v == "AC" for v in solution["verdicts_per_test"]], solution["name"]


@pytest.mark.parametrize(
    "problem", [p for p in LIBRARY_CHECKER if p["alternative_outputs"]], ids=_id
)
def test_library_checker_alternative_outputs_pass_the_checker_only(
    runtime: LocalRuntime, problem: Mapping[str, Any]
) -> None:
    by_name = {t["name"]: t for t in problem["tests"]}
    items = []
    for alternative in problem["alternative_outputs"]:
        test = by_name[alternative["test"]]
        program = fenced("python", f"import sys\nsys.stdout.write({alternative['output']!r})\n")
        judged = library_checker_spec(problem, [test])
        plain = {"inputs": [test["input"]], "outputs": [test["answer"]]}
        items += [
            {"language": "python", "completion": program, "tests": judged},
            {"language": "python", "completion": program, "tests": plain},
        ]
    results = verifiers.score_batch(items, runtime=runtime, compare={"mode": "tokens"})
    for n, alternative in enumerate(problem["alternative_outputs"]):
        judged, plain = results[2 * n], results[2 * n + 1]
        assert judged.status is Status.PASSED, (alternative["note"], judged.feedback[:1000])
        assert plain.status is Status.FAILED, alternative["note"]


def test_a_wrong_output_is_rejected_by_a_library_checker(runtime: LocalRuntime) -> None:
    problem = next(p for p in LIBRARY_CHECKER if p["alternative_outputs"])
    test = problem["tests"][0]
    r = verifiers.score(
        "python", "print(0)", library_checker_spec(problem, [test]), runtime=runtime
    )
    assert r.status is Status.FAILED and not r.infra_error
    assert "checker" in r.tests[0].message


@pytest.mark.parametrize("output", ["-1", "2000000000"])
def test_an_output_that_crashes_a_library_checker_is_a_wrong_answer(
    runtime: LocalRuntime, output: str
) -> None:
    """tree/common_interval_decomposition_tree's checker reads an unchecked M and builds
    `vector(M)`: -1 aborts it (length_error), 2e9 too (bad_alloc). It accepts the jury's
    answer, so the crash is the output's doing: failed, never sandbox_error (round 2)."""
    problem = next(
        (
            p
            for p in LIBRARY_CHECKER
            if p["problem_id"] == "tree/common_interval_decomposition_tree"
        ),
        None,
    )
    need(problem is not None, "the shared Library Checker set has no such problem")
    assert problem is not None
    spec = library_checker_spec(problem, problem["tests"][:2])
    r = verifiers.score("python", f"print({output})", spec, runtime=runtime, policy="partial")
    assert r.status is Status.FAILED and not r.infra_error, r.feedback[:1000]
    assert r.passed == 0 and "SIGABRT" in r.feedback
    assert r.hack_suspected and "checker" in r.hack_suspected


def test_a_checker_that_does_not_build_is_a_judge_failure(runtime: LocalRuntime) -> None:
    spec = {
        "inputs": ["1"],
        "outputs": ["1"],
        "checker": {"language": "cpp", "source": "int main( {", "protocol": "testlib"},
    }
    r = verifiers.score("python", "print(1)", spec, runtime=runtime)
    assert r.status is Status.SANDBOX_ERROR and r.infra_error
    assert "does not build" in r.feedback


def test_a_crashing_cpp_checker_is_a_judge_failure(runtime: LocalRuntime) -> None:
    crash = "#include <cstdlib>\nint main() { std::abort(); }\n"
    spec = {
        "inputs": ["1"],
        "outputs": ["1"],
        "checker": {"language": "cpp", "source": crash, "protocol": "kattis"},
    }
    r = verifiers.score("python", "print(1)", spec, runtime=runtime)
    assert r.status is Status.SANDBOX_ERROR and "SIGABRT" in r.feedback


def kattis_spec(problem: Mapping[str, Any]) -> dict[str, Any]:
    # The package's validator directory is the judge program's root.
    files = {path.split("/", 1)[1]: text for path, text in problem["validator_files"].items()}
    judge = {"language": problem["validator_language"], "files": files, "protocol": "kattis"}
    key = "interactor" if problem["kind"] == "interactive" else "checker"
    return {
        "tests": [{"input": t["input"], "answer": t["answer"]} for t in problem["tests"]],
        key: judge,
    }


@pytest.mark.parametrize("problem", KATTIS, ids=_id)
def test_kattis_submissions_get_their_verdicts(
    runtime: LocalRuntime, problem: Mapping[str, Any]
) -> None:
    known = set(language_names())
    spec = kattis_spec(problem)
    chosen = [
        s
        for s in problem["submissions"]
        if s["expected_verdict"] in VERDICTS and KATTIS_LANGUAGES.get(s["language"]) in known
    ]
    assert chosen, "no submission in a registered language"
    items = [
        {
            "language": KATTIS_LANGUAGES[s["language"]],
            "completion": fenced(KATTIS_LANGUAGES[s["language"]], s["source"]),
            "tests": spec,
        }
        for s in chosen
    ]
    # problemtools' limit for these problems is 1 s; twice that keeps a busy machine fair.
    results = verifiers.score_batch(items, runtime=runtime, limits={"timeout_s": 2})
    for submission, result in zip(chosen, results, strict=True):
        expected = VERDICTS[submission["expected_verdict"]]
        assert result.status is expected, (submission["name"], result.feedback[:1000])
