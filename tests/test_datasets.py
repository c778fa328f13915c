"""The shared public benchmarks: every reference solution passes, broken ones fail right."""

from __future__ import annotations

import collections
from pathlib import Path

import pytest

import verifiers
from verifiers import Status
from verifiers.demo import _variants
from verifiers.runtimes import LocalRuntime

from .conftest import load_jsonl

pytestmark = pytest.mark.slow


def _humaneval(datasets: Path) -> list[dict]:  # type: ignore[type-arg]
    return load_jsonl(datasets / "humaneval" / "humaneval.jsonl.gz")


def test_every_humaneval_canonical_solution_passes(datasets: Path, runtime: LocalRuntime) -> None:
    rows = _humaneval(datasets)
    items = [
        {
            "language": "python",
            "completion": r["prompt"] + r["canonical_solution"],
            "tests": {"test": r["test"], "entry_point": r["entry_point"]},
        }
        for r in rows
    ]
    results = verifiers.score_batch(items, runtime=runtime)
    failures = [
        (r["task_id"], res.feedback) for r, res in zip(rows, results, strict=True) if not res.ok
    ]
    assert not failures, failures[:3]
    assert len(results) == len(rows) >= 100


def test_humaneval_body_completions_pass_with_the_prompt(
    datasets: Path, runtime: LocalRuntime
) -> None:
    rows = _humaneval(datasets)[:20]
    items = [
        {
            "language": "python",
            "completion": r["canonical_solution"],
            "tests": {"test": r["test"], "entry_point": r["entry_point"], "prompt": r["prompt"]},
        }
        for r in rows
    ]
    assert all(r.ok for r in verifiers.score_batch(items, runtime=runtime))


def test_broken_humaneval_variants_fail_with_the_right_status(
    datasets: Path, runtime: LocalRuntime
) -> None:
    rows = _humaneval(datasets)[::8]
    items, expected = [], []
    for r in rows:
        tests = {"test": r["test"], "entry_point": r["entry_point"]}
        for name, (completion, status) in _variants(r).items():
            if name in ("infinite loop", "canonical"):
                continue
            items.append({"language": "python", "completion": completion, "tests": tests})
            expected.append((r["task_id"], name, status))
    results = verifiers.score_batch(
        items, runtime=runtime, limits={"timeout_s": 2, "memory_mb": 256}
    )
    wrong = [
        (e, res.status, res.feedback[:200])
        for e, res in zip(expected, results, strict=True)
        if res.status is not e[2]
    ]
    assert not wrong, wrong[:3]


def test_every_mbpp_reference_passes_assert_by_assert(
    datasets: Path, runtime: LocalRuntime
) -> None:
    rows = load_jsonl(datasets / "mbpp_sanitized" / "mbpp_sanitized.jsonl.gz")
    items = [
        {
            "language": "python",
            "completion": r["code"],
            "tests": {"test_list": r["test_list"], "test_imports": r["test_imports"]},
        }
        for r in rows
    ]
    # Some references are slow by design (MBPP 123 sums amicable numbers below 10,000 in
    # 3.6 s on an idle core): a verdict test, not a speed test, so a generous limit.
    results = verifiers.score_batch(items, runtime=runtime, limits={"timeout_s": 30})
    failures = [
        (r["task_id"], res.feedback) for r, res in zip(rows, results, strict=True) if not res.ok
    ]
    assert not failures, failures[:3]
    assert sum(res.total for res in results) == sum(len(r["test_list"]) for r in rows)


def test_mbpp_wrong_solutions_fail(datasets: Path, runtime: LocalRuntime) -> None:
    rows = load_jsonl(datasets / "mbpp_sanitized" / "mbpp_sanitized.jsonl.gz")[:40]
    items = []
    for r in rows:
        names = [
            line.split("def ", 1)[1].split("(")[0]
            for line in r["code"].splitlines()
            if line.startswith("def ")
        ]
        broken = r["code"] + "".join(f"\ndef {n}(*a, **k):\n    return None\n" for n in names)
        items.append(
            {
                "language": "python",
                "completion": broken,
                "tests": {"test_list": r["test_list"], "test_imports": r["test_imports"]},
            }
        )
    results = verifiers.score_batch(items, runtime=runtime)
    statuses = collections.Counter(res.status for res in results)
    assert statuses[Status.PASSED] == 0, statuses
    assert set(statuses) <= {Status.FAILED, Status.RUNTIME_ERROR}


def test_every_leetcode_reference_passes_with_the_prelude(
    datasets: Path, runtime: LocalRuntime
) -> None:
    rows = load_jsonl(datasets / "leetcode_deepcoder" / "leetcode_deepcoder.jsonl.gz")
    items = [
        {
            "language": "python",
            "completion": r["solution"],
            "tests": {"test": r["test"], "prelude": "leetcode"},
        }
        for r in rows
    ]
    results = verifiers.score_batch(items, runtime=runtime)
    failures = [(r["id"], res.feedback) for r, res in zip(rows, results, strict=True) if not res.ok]
    assert not failures, failures[:3]


def test_kattis_python_submissions_get_their_verdicts(
    datasets: Path, runtime: LocalRuntime
) -> None:
    rows = [
        r
        for r in load_jsonl(datasets / "kattis_examples" / "kattis_examples.jsonl.gz")
        if r["language"] in ("python", "python2")
    ]
    expected = {
        "accepted": Status.PASSED,
        "partially_accepted": Status.RUNTIME_ERROR,
        "slow_accepted": Status.TIMEOUT,
    }
    for r in rows:
        result = verifiers.score(
            "python",
            r["source"],
            r["tests"],
            runtime=runtime,
            compare={"mode": "tokens"},
            limits={"timeout_s": 2},
        )
        if r["language"] == "python2":
            assert result.status is Status.SYNTAX_ERROR, r["submission"]
            continue
        assert result.status is expected[r["expected_verdict"]], (r["submission"], result.feedback)
        if r["expected_verdict"] == "partially_accepted":
            assert 0 < result.passed < result.total


def test_codecontests_plumbing_rejects_a_wrong_program(
    datasets: Path, runtime: LocalRuntime
) -> None:
    rows = load_jsonl(datasets / "codecontests_test_stdio" / "codecontests_test_stdio.jsonl.gz")
    items = [
        {
            "language": "python",
            "completion": "import sys\nprint(sys.stdin.read())",
            "tests": r["tests"],
        }
        for r in rows[:30]
    ]
    results = verifiers.score_batch(items, runtime=runtime, max_tests=5, compare={"mode": "tokens"})
    assert all(
        res.total == min(5, len(r["tests"])) for r, res in zip(rows[:30], results, strict=True)
    )
    assert not any(res.ok for res in results)
    assert not any(res.infra_error for res in results)
