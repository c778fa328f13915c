"""The result cache: repeated work comes from memory or disk; infrastructure faults never do."""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import stat
from decimal import Decimal
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


def test_specs_that_differ_only_in_a_value_s_type_never_share_a_key(
    runtime: LocalRuntime,
) -> None:
    # JSON writes Decimal("1.5") as "1.5": keyed by the JSON form, the spec expecting the
    # string gave its pass to the one expecting the Decimal (a review found it).
    cache = ResultCache()
    code = 'def f():\n    return "1.5"\n'
    as_text = {"fn_name": "f", "inputs": [[]], "outputs": ["1.5"]}
    as_decimal = {"fn_name": "f", "inputs": [[]], "outputs": [Decimal("1.5")]}
    as_bytes = {"fn_name": "f", "inputs": [[]], "outputs": [b"1.5"]}
    assert verifiers.score("python", code, as_text, runtime=runtime, cache=cache).ok
    for spec in (as_decimal, as_bytes):
        result = verifiers.score("python", code, spec, runtime=runtime, cache=cache)
        assert result.status is Status.FAILED and not result.cached, result.feedback
    # Keys JSON cannot hold (a tuple) are hashed too, and a repeat is still a hit.
    tupled = {"fn_name": "f", "inputs": [[]], "outputs": [{(1, 2): "1.5"}]}
    first = verifiers.score("python", code, tupled, runtime=runtime, cache=cache)
    again = verifiers.score("python", code, tupled, runtime=runtime, cache=cache)
    assert again.cached and again.status is first.status


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


def _sqlite_db(path: Path, values: list[int]) -> None:
    path.unlink(missing_ok=True)
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE t(a INTEGER)")
        conn.executemany("INSERT INTO t VALUES (?)", [(v,) for v in values])
    conn.close()


def test_a_changed_database_is_never_answered_from_the_cache(
    runtime: LocalRuntime, tmp_path: Path
) -> None:
    db = tmp_path / "fixture.sqlite"
    _sqlite_db(db, [1, 2])
    tests = {"database": str(db), "expected_rows": [[1], [2]]}
    path = tmp_path / "results.sqlite"
    cache = ResultCache(path=path)
    first = verifiers.score("sql", "SELECT a FROM t", tests, runtime=runtime, cache=cache)
    assert first.ok and not first.cached
    assert verifiers.score("sql", "SELECT a FROM t", tests, runtime=runtime, cache=cache).cached
    _sqlite_db(db, [1, 2, 3])  # the same path, other contents
    stale = verifiers.score("sql", "SELECT a FROM t", tests, runtime=runtime, cache=cache)
    assert stale.status is Status.FAILED and not stale.cached
    # Another process's cache: the verdict it finds is the one for these contents.
    other = verifiers.score(
        "sql", "SELECT a FROM t", tests, runtime=runtime, cache=ResultCache(path=path)
    )
    assert other.status is Status.FAILED and other.cached
    # Rewritten in place to the same size with its old mtime: the inode's ctime moved.
    before = db.stat()
    other_db = tmp_path / "other.sqlite"
    _sqlite_db(other_db, [1, 2, 4])
    with open(db, "r+b") as f:  # the same inode, the same size, other contents
        f.write(other_db.read_bytes())
    os.utime(db, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert (db.stat().st_size, db.stat().st_ino) == (before.st_size, before.st_ino)
    changed = verifiers.score(
        "sql", "SELECT a FROM t WHERE a < 4", tests, runtime=runtime, cache=cache
    )
    assert changed.ok and not changed.cached
    again = verifiers.score("sql", "SELECT a FROM t", tests, runtime=runtime, cache=cache)
    assert not again.cached and again.status is Status.FAILED
    # The same contents again: the same key (it is the contents, not the path's history).
    _sqlite_db(db, [1, 2])
    assert verifiers.score("sql", "SELECT a FROM t", tests, runtime=runtime, cache=cache).cached


def test_a_tampered_cache_file_never_gives_a_verdict(
    runtime: LocalRuntime, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "results.sqlite"
    cache = ResultCache(path=path)
    wrong = "def add(a, b):\n    return a - b\n"
    assert verifiers.score("python", wrong, TESTS, runtime=runtime, cache=cache).status is (
        Status.FAILED
    )
    assert verifiers.score("python", CODE, TESTS, runtime=runtime, cache=cache).ok
    cache.close()
    secret = Path(str(path) + ".key")
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT key, result, mac FROM signed_results").fetchall()
        [(bad_key, bad, _)] = [r for r in rows if '"status":"failed"' in r[1]]
        [(_, good, good_mac)] = [r for r in rows if '"status":"passed"' in r[1]]
        # 1: the failed result edited into a pass, its old code kept.
        forged = json.loads(bad)
        forged.update(status="passed", score=1.0, pass_rate=1.0, passed=1)
        conn.execute(
            "UPDATE signed_results SET result = ? WHERE key = ?", (json.dumps(forged), bad_key)
        )
    conn.close()
    fresh = ResultCache(path=path)
    with caplog.at_level(logging.WARNING, logger="verifiers.result_cache"):
        again = verifiers.score("python", wrong, TESTS, runtime=runtime, cache=fresh)
    assert again.status is Status.FAILED and not again.cached
    assert fresh.rejected == 1 and "does not verify" in caplog.text
    assert "rejected=1" in repr(fresh)
    fresh.close()
    with sqlite3.connect(path) as conn:
        # 2: a genuine pass, with its genuine code, moved under the failing program's key.
        conn.execute(
            "UPDATE signed_results SET result = ?, mac = ? WHERE key = ?",
            (good, good_mac, bad_key),
        )
        # 3: the unsigned table of the format before.
        conn.execute("CREATE TABLE IF NOT EXISTS results (key TEXT PRIMARY KEY, result TEXT)")
        conn.execute("INSERT OR REPLACE INTO results VALUES (?, ?)", (bad_key, good))
    conn.close()
    fresh = ResultCache(path=path)
    again = verifiers.score("python", wrong, TESTS, runtime=runtime, cache=fresh)
    assert again.status is Status.FAILED and not again.cached and fresh.rejected == 1
    # Re-verified and stored again: the entry verifies from now on.
    assert verifiers.score("python", wrong, TESTS, runtime=runtime, cache=fresh).cached
    # A cache file under another secret is as good as tampered.
    fresh.close()
    secret.unlink()
    other = ResultCache(path=path)
    assert not verifiers.score("python", CODE, TESTS, runtime=runtime, cache=other).cached
    assert other.rejected == 1


def test_the_secret_must_be_the_owners_alone(tmp_path: Path) -> None:
    path = tmp_path / "results.sqlite"
    ResultCache(path=path).close()
    secret = Path(str(path) + ".key")
    secret.chmod(0o644)
    with pytest.raises(ValueError, match="readable or writable by others"):
        ResultCache(path=path)
    secret.chmod(0o600)
    secret.write_text("short")
    with pytest.raises(ValueError, match="32-byte key"):
        ResultCache(path=path)
    secret.unlink()
    secret.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(ValueError, match="cannot read the cache's secret"):
        ResultCache(path=path)
    secret.unlink()
    if os.geteuid() == 0:  # only root can give a file away
        ResultCache(path=path).close()
        os.chown(secret, 12345, -1)
        with pytest.raises(ValueError, match="not a file of this user"):
            ResultCache(path=path)


def test_results_from_a_postgresql_server_are_never_cached(runtime: LocalRuntime) -> None:
    from .languages.test_sql import PG_URL, _postgres_ready

    _postgres_ready()
    cache = ResultCache()
    tests = {"database": {"url": PG_URL}, "engine": "postgresql", "expected_rows": [[3]]}
    for _ in range(2):
        result = verifiers.score(
            "sql", "SELECT count(*) FROM singer", tests, runtime=runtime, cache=cache
        )
        assert result.ok and not result.cached
    assert len(cache) == 0


class _Failing:
    """A disk copy whose every statement fails, as SQLite does under a heap limit."""

    def __init__(self, error: BaseException) -> None:
        self.error = error

    def execute(self, *args: object) -> object:
        raise self.error

    def rollback(self) -> None:
        raise self.error


@pytest.mark.parametrize(
    "error", [MemoryError(), sqlite3.OperationalError("disk I/O error"), RuntimeError("?")]
)
def test_a_failing_disk_copy_is_a_miss_and_never_loses_a_result(
    runtime: LocalRuntime,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    error: BaseException,
) -> None:
    cache = ResultCache(path=tmp_path / "results.sqlite")
    real = cache._db
    cache._db = _Failing(error)  # type: ignore[assignment]
    with caplog.at_level(logging.WARNING, logger="verifiers.result_cache"):
        first = verifiers.score("python", CODE, TESTS, runtime=runtime, cache=cache)
        batch = verifiers.score_batch(
            [{"language": "python", "completion": CODE + "\n", "tests": TESTS}] * 2,
            runtime=runtime,
            cache=cache,
        )
    assert first.ok and not first.cached and all(r.ok for r in batch)
    assert cache.errors >= 2 and "going on without it" in caplog.text
    # Kept in memory all the same.
    assert verifiers.score("python", CODE, TESTS, runtime=runtime, cache=cache).cached
    cache._db = real
    cache.close()
