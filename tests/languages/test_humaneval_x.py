"""HumanEval-X in JavaScript, Go, Rust, C++ and Java, and the Kattis examples in every language."""

from __future__ import annotations

import collections
import re
from typing import Any

import pytest

import verifiers
from verifiers import Status
from verifiers.runtimes import LocalRuntime
from verifiers.testing.datasets import dataset

from .test_case_tables import toolchain_ready

pytestmark = pytest.mark.slow

#: Upstream defects (verifiers/data/datasets/README.md): JS 112 and 155 fail their own tests,
#: JS 162 needs the npm package js-md5, which cannot be installed offline.
#: Go/95's canonical solution stops after the second key of a map, and Go randomises map
#: iteration order: it passes about 5 runs in 6 (observed 10/12), through no fault of ours.
NONDETERMINISTIC = {"Go/95"}
JS_DEFECTS = {
    "JavaScript/112": Status.FAILED,
    "JavaScript/155": Status.FAILED,
    "JavaScript/162": Status.RUNTIME_ERROR,
}


def solution(language: str, row: dict[str, Any]) -> str:
    head = row["declaration"] if language == "rust" else row["prompt"]
    return head + row["canonical_solution"]


def tests_of(language: str, row: dict[str, Any]) -> dict[str, Any]:
    # The declared signature: Go and Rust refuse a program that changes it.
    tests = {"test": row["test"], "declaration": row["declaration"]}
    if language == "go":
        tests["test_setup"] = row["test_setup"]
    return tests


def rows(language: str) -> list[dict[str, Any]]:
    short = {"javascript": "js", "go": "go", "rust": "rust", "cpp": "cpp", "java": "java"}
    return dataset("humaneval_x").rows(f"humaneval_x_{short[language]}")


LANGUAGES = ["javascript", "go", "rust", "cpp", "java"]


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_canonical_solution_passes(runtime: LocalRuntime, language: str) -> None:
    toolchain_ready(language)
    data = rows(language)
    items = [
        {"language": language, "completion": solution(language, r), "tests": tests_of(language, r)}
        for r in data
    ]
    results = verifiers.score_batch(items, runtime=runtime)
    unexpected = []
    for row, result in zip(data, results, strict=True):
        expected = JS_DEFECTS.get(row["task_id"], Status.PASSED)
        if row["task_id"] in NONDETERMINISTIC and result.status in (Status.PASSED, Status.FAILED):
            continue
        if result.status is not expected:
            unexpected.append((row["task_id"], result.status, result.feedback[:300]))
    assert not unexpected, unexpected[:3]
    assert len(results) == len(data) > 0


def _broken(language: str, row: dict[str, Any]) -> list[tuple[str, Status]]:
    head = row["declaration"] if language == "rust" else row["prompt"]
    body = row["canonical_solution"]
    early = {
        "javascript": "  return undefined;\n",
        "go": '    panic("broken")\n',
        "rust": '    panic!("broken");\n',
        "cpp": "    throw 1;\n",
        "java": '        if (true) throw new IllegalStateException("broken");\n',
    }[language]
    crash = Status.FAILED if language == "javascript" else Status.RUNTIME_ERROR
    undefined = {
        "javascript": "  return undefinedName + 1;\n",
        "go": "    undefinedName()\n",
        "rust": "    undefined_name();\n",
        "cpp": "    undefined_name();\n",
        "java": "        undefinedName();\n",
    }[language]
    undefined_status = Status.RUNTIME_ERROR if language == "javascript" else Status.COMPILE_ERROR
    unclosed = head + body.rstrip().rstrip("}") + "\n"
    variants = [
        (head + early + body, crash),
        (head + undefined + body, undefined_status),
        (unclosed, Status.SYNTAX_ERROR),
    ]
    spin = {
        "cpp": "    for (volatile int spin = 1; spin;) {\n    }\n",
        "java": "        while (System.nanoTime() > 0) {\n        }\n",
    }
    if language in spin:
        variants.append((head + spin[language] + body, Status.TIMEOUT))
    if language == "cpp":
        # A default value of the declared type: the tests' assertions fail.
        variants.append((head + "    return {};\n" + body, Status.FAILED))
    return variants


@pytest.mark.parametrize("language", LANGUAGES)
def test_broken_variants_fail_with_the_right_status(runtime: LocalRuntime, language: str) -> None:
    toolchain_ready(language)
    sound = [
        r
        for r in rows(language)
        if r["task_id"] not in JS_DEFECTS and r["task_id"] not in NONDETERMINISTIC
    ]
    # Eight problems spread over the set, however large the loaded set is.
    data = sound[:: max(1, len(sound) // 8)][:8]
    assert data
    items, expected = [], []
    for row in data:
        for code, status in _broken(language, row):
            items.append(
                {"language": language, "completion": code, "tests": tests_of(language, row)}
            )
            expected.append((row["task_id"], status))
    results = verifiers.score_batch(items, runtime=runtime, limits={"timeout_s": 3})
    wrong = [
        (e, r.status, r.feedback[:300])
        for e, r in zip(expected, results, strict=True)
        if r.status is not e[1]
    ]
    assert not wrong, wrong[:3]


KATTIS = {
    "accepted": {Status.PASSED},
    "wrong_answer": {Status.FAILED},
    "time_limit_exceeded": {Status.TIMEOUT},
    "slow_accepted": {Status.TIMEOUT},
    "partially_accepted": {Status.RUNTIME_ERROR},
    # Kattis reports a program over the memory limit as a run-time error; here it is the
    # finer memory_limit when the runtime says so (std::bad_alloc), else a crash.
    "run_time_error": {Status.RUNTIME_ERROR, Status.MEMORY_LIMIT},
}


def _kattis_memory_mb(row: dict[str, Any]) -> int:
    """The problem's memory limit (``limits: memory:`` in problem.yaml), else the default."""
    found = re.search(r"^\s*memory:\s*(\d+)", row.get("problem_yaml") or "", re.MULTILINE)
    return int(found.group(1)) if found else 1024


@pytest.mark.parametrize("language", [*LANGUAGES, "c"])
def test_kattis_examples_get_their_verdicts(runtime: LocalRuntime, language: str) -> None:
    toolchain_ready(language)
    data = [r for r in dataset("kattis_examples").rows() if r["language"] == language]
    assert data, f"no Kattis example in {language}"
    verdicts = collections.Counter()
    for row in data:
        result = verifiers.score(
            language,
            row["source"],
            row["tests"],
            runtime=runtime,
            compare={"mode": "tokens"},
            limits={"timeout_s": 5, "memory_mb": _kattis_memory_mb(row)},
        )
        assert result.status in KATTIS[row["expected_verdict"]], (
            row["submission"],
            result.feedback[:300],
        )
        verdicts[result.status] += 1
    assert verdicts[Status.PASSED] >= 1


def test_build_cache_compiles_each_program_once(runtime: LocalRuntime) -> None:
    toolchain_ready("rust")
    code = 'fn main() {\n    println!("{}", 40 + 2);\n}\n'
    first = verifiers.score("rust", code, {"inputs": [""], "outputs": ["42"]}, runtime=runtime)
    second = verifiers.score("rust", code, {"inputs": ["x"], "outputs": ["42"]}, runtime=runtime)
    assert first.ok and second.ok
    assert first.compile is not None and not first.compile.cached
    assert second.compile is not None and second.compile.cached
