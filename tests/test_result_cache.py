"""The result cache: repeated work comes from memory or disk; infrastructure faults never do."""

from __future__ import annotations

from pathlib import Path

import pytest

import verifiers
from verifiers import ResultCache, Status
from verifiers.results import Result
from verifiers.runtimes import LocalRuntime

CODE = "def add(a, b):\n    return a + b\n"
TESTS = {"test_list": ["assert add(1, 2) == 3"]}


def test_a_repeated_verification_comes_from_the_cache(runtime: LocalRuntime) -> None:
    cache = ResultCache()
    first = verifiers.score("python", CODE, TESTS, runtime=runtime, cache=cache)
    again = verifiers.score("python", CODE, TESTS, runtime=runtime, cache=cache)
    assert first.status is Status.PASSED and not first.cached
    assert again.cached and again.status is Status.PASSED
    assert again.model_dump(exclude={"cached"}) == first.model_dump(exclude={"cached"})
    assert (cache.hits, cache.misses) == (1, 1)


def test_options_are_part_of_the_key(runtime: LocalRuntime) -> None:
    cache = ResultCache()
    verifiers.score("python", CODE, TESTS, runtime=runtime, cache=cache)
    other = verifiers.score(
        "python", CODE, TESTS, runtime=runtime, cache=cache, limits={"timeout_s": 3}
    )
    assert not other.cached
    changed = verifiers.score("python", CODE + "\n", TESTS, runtime=runtime, cache=cache)
    assert not changed.cached


def test_batches_fill_and_use_the_cache(runtime: LocalRuntime) -> None:
    cache = ResultCache()
    items = [{"language": "python", "completion": CODE, "tests": TESTS}] * 3 + [
        {"language": "python", "completion": "def add(a, b):\n    return a\n", "tests": TESTS}
    ]
    first = verifiers.score_batch(items, runtime=runtime, cache=cache)
    assert [r.cached for r in first] == [False] * 4
    second = verifiers.score_batch(items, runtime=runtime, cache=cache)
    assert [r.cached for r in second] == [True] * 4
    assert [r.status for r in second] == [Status.PASSED] * 3 + [Status.FAILED]


def test_the_disk_cache_outlives_the_process_object(runtime: LocalRuntime, tmp_path: Path) -> None:
    path = tmp_path / "results.sqlite"
    first = verifiers.score("python", CODE, TESTS, runtime=runtime, cache=ResultCache(path=path))
    fresh = ResultCache(path=path)
    again = verifiers.score("python", CODE, TESTS, runtime=runtime, cache=fresh)
    assert again.cached and again.score == first.score and again.tests == first.tests


def test_infrastructure_faults_are_not_cached() -> None:
    cache = ResultCache()
    fault = Result(
        status=Status.SANDBOX_ERROR,
        score=0.0,
        pass_rate=0.0,
        passed=0,
        total=1,
        tests_available=1,
        infra_error=True,
    )
    cache.put("k", fault)
    assert cache.get("k") is None


def test_memory_is_bounded() -> None:
    cache = ResultCache(max_entries=2)
    ok = Result(
        status=Status.PASSED, score=1.0, pass_rate=1.0, passed=1, total=1, tests_available=1
    )
    for key in ("a", "b", "c"):
        cache.put(key, ok)
    assert len(cache) == 2 and cache.get("a") is None and cache.get("c") is not None


def test_bad_arguments_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="max_entries"):
        ResultCache(max_entries=0)
    with pytest.raises(ValueError, match="path"):
        ResultCache(path=tmp_path)  # a directory
