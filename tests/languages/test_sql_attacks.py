"""SQL answers that try to write, to outlive their verification or to run on: every engine.

PostgreSQL tests use a schema of their own (``attacks``) in the test database, so that
other test sessions sharing the server do not disturb the before/after comparisons; the
role and database settings they check are the shared ones (an attack that got through
would change them for everyone, which is the point of checking).
"""

from __future__ import annotations

import importlib.util
import shutil
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import verifiers
from verifiers import Status
from verifiers.languages.sql import end_backends
from verifiers.runtimes import LocalRuntime
from verifiers.testing.datasets import dataset

from ..conftest import need
from .test_sql import PG_URL

ATTACK_URL = PG_URL + ("&" if "?" in PG_URL else "?") + "options=-csearch_path%3Dattacks"
GOLD = "SELECT name FROM singer WHERE age > 40"
FIXTURE = """
CREATE SCHEMA IF NOT EXISTS attacks;
SET search_path = attacks;
DROP TABLE IF EXISTS singer, pwned;
DROP SEQUENCE IF EXISTS ids;
DROP PROCEDURE IF EXISTS commit_then_insert();
CREATE TABLE singer(id int, name text, age int);
INSERT INTO singer VALUES (1, 'Ann', 30), (2, 'Bo', 41), (3, 'Cy', 52);
CREATE SEQUENCE ids;
CREATE PROCEDURE commit_then_insert() LANGUAGE plpgsql AS $$
BEGIN COMMIT; INSERT INTO singer VALUES (9, 'Mallory', 99); END $$;
"""
#: What an attack could change, read as the role itself: the schema's tables and rows,
#: the sequence, large objects, comments, and the settings of the role and database.
SNAPSHOT = """
SELECT string_agg(table_name, ',' ORDER BY table_name) FROM information_schema.tables
  WHERE table_schema = 'attacks';
SELECT string_agg(id || ':' || name || ':' || age, ',' ORDER BY id) FROM attacks.singer;
SELECT last_value || ':' || is_called FROM attacks.ids;
SELECT count(*) FROM pg_largeobject_metadata;
SELECT coalesce(obj_description('attacks.singer'::regclass), '-');
SELECT coalesce(string_agg(array_to_string(setconfig, ';'), '|'), '-') FROM pg_db_role_setting
  WHERE setrole = (SELECT oid FROM pg_roles WHERE rolname = current_user)
     OR setdatabase = (SELECT oid FROM pg_database WHERE datname = current_database());
SELECT rolsuper || ':' || rolcreaterole || ':' || rolcreatedb || ':' || rolconnlimit
  FROM pg_roles WHERE rolname = current_user;
"""
#: Answers that write, commit, or change a setting beyond their session. Each must be
#: refused before it runs, by the protocol (one statement) or by the read-only transaction.
REFUSED = [
    # Several statements with a COMMIT between them (a wrong answer passed this way).
    f"INSERT INTO singer VALUES (4, 'Eve', 60); COMMIT; CREATE TABLE pwned(a int); {GOLD}",
    f"{GOLD}; COMMIT; INSERT INTO singer VALUES (4, 'Eve', 60)",
    "COMMIT; INSERT INTO singer VALUES (4, 'Eve', 60)",
    "ROLLBACK; CREATE TABLE pwned(a int)",
    "END; DELETE FROM singer",
    "COMMIT; ALTER ROLE CURRENT_USER SET default_transaction_read_only = off",
    "COMMIT; ALTER ROLE CURRENT_USER SET statement_timeout = 0",
    "COMMIT; ALTER DATABASE verifiers_test SET statement_timeout = 0",
    "SET statement_timeout = 0; SELECT pg_sleep(25)",
    f"{GOLD}; -- one statement, then a comment\nDELETE FROM singer",
    # One statement, refused by the read-only transaction.
    "ALTER ROLE CURRENT_USER SET default_transaction_read_only = off",
    "ALTER ROLE CURRENT_USER SET statement_timeout = 0",
    "ALTER DATABASE verifiers_test SET default_transaction_read_only = off",
    "INSERT INTO singer VALUES (4, 'Eve', 60)",
    "WITH gone AS (DELETE FROM singer RETURNING *) SELECT name FROM gone",
    "CREATE TABLE pwned AS SELECT * FROM singer",
    "CREATE TEMP TABLE pwned(a int)",
    "TRUNCATE singer",
    "COMMENT ON TABLE singer IS 'pwned'",
    "SELECT nextval('ids')",
    # Transaction control inside one statement: not allowed within our transaction.
    "DO $$BEGIN COMMIT; INSERT INTO singer VALUES (4, 'Eve', 60); END$$",
    "DO $$BEGIN SET transaction_read_only = off; DELETE FROM singer; END$$",
    "CALL commit_then_insert()",
    # Statements that return no rows are not answers (an empty gold would match them).
    "COMMIT",
    "SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE",
    "SET default_transaction_read_only = off",
]


def fenced(query: str) -> str:
    """An answer in a fenced block: what reaches the engine is the query, whatever it is."""
    return f"```sql\n{query}\n```"


def _psql(url: str, sql: str) -> str:
    done = subprocess.run(
        ["psql", url, "-v", "ON_ERROR_STOP=1", "-qAt", "-c", sql],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _snapshot() -> str:
    return _psql(PG_URL, SNAPSHOT)


def _running(marker: str) -> list[str]:
    """Backends of any session still running a query that contains ``marker``."""
    found = _psql(
        PG_URL,
        "SELECT pid FROM pg_stat_activity WHERE state = 'active' AND pid <> pg_backend_pid()"
        f" AND strpos(query, '{marker}') > 0",
    )
    return found.split()


def _settled(marker: str, within_s: float = 2.0) -> list[str]:
    """Backends still running ``marker`` after ``within_s`` (termination is asynchronous)."""
    deadline = time.monotonic() + within_s
    left = _running(marker)
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = _running(marker)
    return left


@pytest.fixture(scope="module")
def pg() -> Iterator[dict[str, Any]]:
    need(shutil.which("psql") is not None, "PostgreSQL is not installed (scripts/postgres.sh)")
    ready = subprocess.run(
        ["psql", PG_URL, "-qAt", "-c", "SELECT 1"], capture_output=True, text=True, check=False
    )
    need(ready.returncode == 0, f"no PostgreSQL server at {PG_URL}: {ready.stderr.strip()}")
    _psql(PG_URL, FIXTURE)
    yield {"database": {"url": ATTACK_URL}, "engine": "postgresql", "gold_query": GOLD}
    _psql(PG_URL, "DROP SCHEMA attacks CASCADE")


def test_postgresql_answers_that_write_or_commit_are_refused_and_change_nothing(
    pg: dict[str, Any], runtime: LocalRuntime
) -> None:
    before = _snapshot()
    results = verifiers.score_batch(
        [{"language": "sql", "completion": fenced(q), "tests": pg} for q in REFUSED],
        runtime=runtime,
    )
    for query, result in zip(REFUSED, results, strict=True):
        assert result.status is Status.COMPILE_ERROR, (query, result.status, result.feedback)
    several = results[0].tests[0].message
    assert "exactly one SQL statement" in several, several
    assert "returns rows" in results[REFUSED.index("COMMIT")].tests[0].message
    assert _snapshot() == before
    # The session settings an answer may change die with its session.
    assert verifiers.score("sql", GOLD, pg, runtime=runtime).ok


def test_postgresql_session_settings_do_not_outlive_the_verification(
    pg: dict[str, Any], runtime: LocalRuntime
) -> None:
    before = _snapshot()
    for query in (
        "SELECT set_config('default_transaction_read_only', 'off', false)",
        "SELECT set_config('statement_timeout', '0', false)",
        "SELECT pg_advisory_lock(4242)",
        "SELECT lo_create(0)",
    ):
        result = verifiers.score("sql", fenced(query), pg, runtime=runtime)
        assert result.status is Status.FAILED, (query, result.feedback)
    # A write after each of those is still refused, and nothing is left behind.
    refused = verifiers.score("sql", "DELETE FROM singer", pg, runtime=runtime)
    assert refused.status is Status.COMPILE_ERROR
    locks = _psql(PG_URL, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'")
    assert locks.strip() == "0"
    assert _snapshot() == before


@pytest.mark.parametrize(
    "query",
    [
        # The statement lifts its own timeout: too late, the timer was armed before it.
        "SELECT set_config('statement_timeout', '0', false), pg_sleep(25.101)",
        "SELECT set_config('client_connection_check_interval', '0', false),"
        " set_config('statement_timeout', '0', false), pg_sleep(25.102)",
        "SELECT pg_advisory_lock(4243), pg_sleep(25.103)",
        "SELECT count(*) FROM generate_series(1, 1000000000) a, singer WHERE a > -25.104",
    ],
)
def test_postgresql_work_ends_when_the_verifications_time_ends(
    pg: dict[str, Any], runtime: LocalRuntime, query: str
) -> None:
    marker = query.split("25.", 1)[1][:3]
    marker = f"25.{marker}"
    started = time.perf_counter()
    result = verifiers.score("sql", fenced(query), pg, runtime=runtime, limits={"timeout_s": 2})
    assert result.status is Status.TIMEOUT, result.feedback
    assert time.perf_counter() - started < 15
    assert not _settled(marker), f"the server still runs {query!r}"
    locks = _psql(PG_URL, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'")
    assert locks.strip() == "0"
    assert verifiers.score("sql", GOLD, pg, runtime=runtime).ok


def test_end_backends_ends_the_named_backend_and_no_other(pg: dict[str, Any]) -> None:
    sleeper = subprocess.Popen(
        ["psql", PG_URL, "-qAt", "-c", "SELECT pg_sleep(25.201)"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while not _running("25.201") and time.monotonic() < deadline:
            time.sleep(0.05)
        [pid] = _running("25.201")
        started = _psql(
            PG_URL, f"SELECT backend_start::text FROM pg_stat_activity WHERE pid = {pid}"
        ).strip()
        # The same pid with another start time is another session: left alone.
        assert end_backends(PG_URL, [{"pid": int(pid), "started": started + "1"}]) == 0
        assert _running("25.201") == [pid]
        assert end_backends(PG_URL, [{"pid": int(pid), "started": started}]) == 1
        assert not _settled("25.201")
        assert sleeper.wait(10) != 0  # its session was terminated under it
    finally:
        sleeper.kill()
        sleeper.wait(10)
    # Garbage in the records, or a server that cannot be reached, is logged, not raised.
    assert end_backends(PG_URL, [{"pid": "1", "started": 2}]) == 0
    assert end_backends("postgresql://x@/db?host=/nonexistent", [{"pid": 1, "started": "t"}]) == 0


def test_sqlite_answers_are_one_read_only_query(runtime: LocalRuntime, tmp_path: Path) -> None:
    copy = tmp_path / "db.sqlite"
    source = dataset("spider_dev").database("concert_singer")
    shutil.copyfile(source, copy)
    before = copy.read_bytes()
    empty = {"database": str(copy), "gold_query": "SELECT name FROM singer WHERE age > 1000"}
    for query in (
        "SELECT name FROM singer WHERE age > 1000; DELETE FROM singer",
        "DELETE FROM singer; SELECT name FROM singer WHERE age > 1000",
        "SELECT 1; ATTACH DATABASE '/tmp/x.db' AS x",
        "BEGIN",
        "SAVEPOINT s",
        "VACUUM INTO '/tmp/copy.db'",
        "PRAGMA query_only = 0",
        "SELECT load_extension('/tmp/x')",
        "REINDEX",
        "ANALYZE",
    ):
        result = verifiers.score("sql", fenced(query), empty, runtime=runtime)
        assert result.status is Status.COMPILE_ERROR, (query, result.status, result.feedback)
    assert copy.read_bytes() == before
    inline = {
        "database": {
            "schema": "CREATE TABLE t(a INTEGER);",
            "inserts": ["INSERT INTO t VALUES (1)"],
        },
        "gold_query": "SELECT a FROM t WHERE a > 5",
    }
    for query in ("SELECT a FROM t WHERE a > 5; DROP TABLE t", "CREATE TABLE u(b)", "BEGIN"):
        result = verifiers.score("sql", fenced(query), inline, runtime=runtime)
        assert result.status is Status.COMPILE_ERROR, (query, result.feedback)
    assert verifiers.score("sql", "SELECT a FROM t WHERE a > 5;", inline, runtime=runtime).ok


def test_duckdb_answers_are_one_read_only_query(runtime: LocalRuntime, tmp_path: Path) -> None:
    need(importlib.util.find_spec("duckdb") is not None, "duckdb is not installed")
    import duckdb

    path = tmp_path / "fixture.duckdb"
    with duckdb.connect(str(path)) as conn:
        conn.execute("CREATE TABLE t(a INTEGER); INSERT INTO t VALUES (1), (2)")
    before = path.read_bytes()
    tests = {"database": str(path), "gold_query": "SELECT a FROM t WHERE a > 5", "engine": "duckdb"}
    for query in (
        "SELECT a FROM t WHERE a > 5; DROP TABLE t",
        "DELETE FROM t",
        "COPY t TO '/tmp/out.csv'",
        "ATTACH '/tmp/other.duckdb' AS other",
        "SET enable_external_access = true",
        "PRAGMA database_list",
        "CALL pragma_version()",
        "BEGIN TRANSACTION",
    ):
        result = verifiers.score("sql", fenced(query), tests, runtime=runtime)
        assert result.status is Status.COMPILE_ERROR, (query, result.status, result.feedback)
    assert path.read_bytes() == before
    # The fixture's own DDL runs with external access off, like the answer.
    reads = {
        "database": {"schema": "CREATE TABLE t AS SELECT * FROM read_text('/etc/hostname')"},
        "gold_query": "SELECT 1",
        "engine": "duckdb",
    }
    assert verifiers.score("sql", "SELECT 1", reads, runtime=runtime).status is Status.SANDBOX_ERROR
    assert verifiers.score("sql", "SELECT a FROM t WHERE a > 5", tests, runtime=runtime).ok


# --- the host: no engine reads an answer there ---------------------------------------------

SINGERS = {
    "database": {
        "schema": "CREATE TABLE singer(id INTEGER, name TEXT, age INTEGER);",
        "inserts": ["INSERT INTO singer VALUES (1, 'Ann', 30), (2, 'Bo', 41), (3, 'Cy', 52)"],
    },
    "gold_query": GOLD,
}
#: Valid SQLite that tree-sitter-sql rejects (JOIN without ON), right and wrong.
JOIN_RIGHT = "SELECT s.name FROM singer AS s JOIN singer AS t WHERE s.id = t.id AND s.age > 40"
JOIN_WRONG = "SELECT s.name FROM singer AS s JOIN singer AS t WHERE s.id = t.id"


def _inlined_ctes(levels: int) -> str:
    """Chained NOT MATERIALIZED CTEs: SQLite inlines them when it prepares the statement,
    2^levels work and memory (19 levels took the host to 1.5 GB and 44 s)."""
    parts = ["c0 AS (SELECT 1 AS x)"]
    for i in range(1, levels + 1):
        parts.append(
            f"c{i} AS NOT MATERIALIZED (SELECT x FROM c{i - 1} UNION ALL SELECT x FROM c{i - 1})"
        )
    return "WITH " + ", ".join(parts) + f" SELECT count(*) FROM c{levels} JOIN c0"


class _EngineCalls:
    """Every SQLite connection and DuckDB parse or connection this process makes."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: list[str] = []
        targets: list[tuple[Any, str]] = [(sqlite3, "connect")]
        if importlib.util.find_spec("duckdb") is not None:
            import duckdb

            targets += [(duckdb, "connect"), (duckdb, "extract_statements")]
        for module, attr in targets:
            monkeypatch.setattr(module, attr, self._wrap(f"{module.__name__}.{attr}"))

    def _wrap(self, name: str) -> Any:
        def refused(*args: Any, **kwargs: Any) -> Any:
            self.calls.append(name)
            raise AssertionError(f"{name} called in the host")

        return refused


def test_the_host_never_prepares_an_answer(
    runtime: LocalRuntime, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _EngineCalls(monkeypatch)
    duck = {**SINGERS, "engine": "duckdb"}
    answers = [
        (_inlined_ctes(12), SINGERS),
        (JOIN_RIGHT, SINGERS),
        (f"The query is:\n\n{JOIN_WRONG}\n\nDone.", SINGERS),
        ("SELECT name FROM WHERE age >", SINGERS),
        ("SELEC name FROM singer", duck),
        (GOLD, SINGERS),
    ]
    items = [{"language": "sql", "completion": a, "tests": t} for a, t in answers]
    ctes, right, wrong, garbled, duck_typo, honest = verifiers.score_batch(items, runtime=runtime)
    assert calls.calls == []
    assert ctes.status is Status.FAILED and "4096" in ctes.feedback, ctes.feedback
    assert right.ok and honest.ok
    assert wrong.status is Status.FAILED and "unexpected" in wrong.feedback
    # Syntax errors are the engine's, reported from the sandbox.
    assert garbled.status is Status.SYNTAX_ERROR and not garbled.infra_error, garbled.feedback
    assert duck_typo.status is Status.SYNTAX_ERROR, duck_typo.feedback


def test_a_pragma_in_an_answer_changes_nothing_in_the_host(
    runtime: LocalRuntime, tmp_path: Path
) -> None:
    # SQLite applies `hard_heap_limit` to the whole process while it prepares the
    # statement: prepared in the host, it made every later SQL verification (and a disk
    # result cache) fail with MemoryError.
    cache = verifiers.ResultCache(path=tmp_path / "cache.sqlite")
    for pragma in ("PRAGMA hard_heap_limit=1", "PRAGMA soft_heap_limit=1", "PRAGMA threads=0"):
        hostile = verifiers.score("sql", pragma, SINGERS, runtime=runtime, cache=cache)
        assert hostile.status is Status.COMPILE_ERROR and not hostile.infra_error, hostile.feedback
    assert sqlite3.connect(":memory:").execute("SELECT 1").fetchall() == [(1,)]
    for query in (GOLD, JOIN_RIGHT, f"The query is:\n\n{GOLD}\n\nIt keeps the older singers."):
        assert verifiers.score("sql", query, SINGERS, runtime=runtime, cache=cache).ok
    again = verifiers.score("sql", GOLD, SINGERS, runtime=runtime, cache=cache)
    assert again.ok and again.cached and cache.errors == 0


def test_a_writing_answer_cannot_fill_tmp_for_its_later_tests(
    runtime: LocalRuntime, tmp_path: Path
) -> None:
    # Each test copies its database to /tmp; an answer that grows its copy to the file-size
    # limit left 63 MB per database, and with /tmp full a later test's copy or gold query
    # failed (a runtime error, or a fixture fault that is never the program's). Every test
    # starts from an emptied /tmp: the answer's verdict is the same on each.
    paths = []
    for name in "abcdef":
        path = tmp_path / f"{name}.sqlite"
        with sqlite3.connect(path) as conn:
            conn.execute("CREATE TABLE t(x)")
            conn.execute("INSERT INTO t VALUES (1)")
        conn.close()
        paths.append(str(path))
    spec = {"database": paths, "gold_query": "INSERT INTO t VALUES (7)", "allow_writes": True}
    filler = (
        "INSERT INTO t WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c "
        "LIMIT 60) SELECT zeroblob(1048000) FROM c"
    )
    result = verifiers.score("sql", filler, spec, runtime=runtime, policy="partial")
    statuses = {t.status for t in result.tests}
    assert len(statuses) == 1 and not result.infra_error, [t.message for t in result.tests]
    assert Status.RUNTIME_ERROR not in statuses and Status.SANDBOX_ERROR not in statuses
    right = verifiers.score("sql", "INSERT INTO t VALUES (7)", spec, runtime=runtime)
    assert right.ok and right.passed == 6
