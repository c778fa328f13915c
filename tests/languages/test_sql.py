"""SQL: Spider execution match, test-suite accuracy, engines, safety."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

import verifiers
from verifiers import SpecError, Status
from verifiers.languages.sql import top_level_order_by
from verifiers.runtimes import LocalRuntime
from verifiers.testing.datasets import dataset

from ..conftest import need

PG_URL = os.environ.get(
    "VERIFIERS_TEST_PG_URL",
    "postgresql://verifiers:verifiers@/verifiers_test?host=/var/run/postgresql",
)


def spider() -> list[dict[str, Any]]:
    return dataset("spider_dev").rows()


def db_path(db_id: str) -> str:
    return str(dataset("spider_dev").database(db_id))


@pytest.mark.slow
def test_every_spider_gold_query_matches_its_gold_result(runtime: LocalRuntime) -> None:
    rows = spider()
    items = [
        {
            "language": "sql",
            "completion": r["query"],
            "tests": {
                "database": db_path(r["db_id"]),
                "expected_rows": r["gold_result"],
                "ordered": r["order_matters"],
            },
        }
        for r in rows
    ]
    results = verifiers.score_batch(items, runtime=runtime)
    wrong = [
        (r["id"], res.feedback[:200]) for r, res in zip(rows, results, strict=True) if not res.ok
    ]
    assert not wrong, wrong[:3]
    assert len(results) == len(rows) > 0


def test_gold_query_against_itself_and_wrong_queries(runtime: LocalRuntime) -> None:
    row = next(r for r in spider() if "WHERE" in r["query"] and r["gold_result"])
    tests = {"database": db_path(row["db_id"]), "gold_query": row["query"]}
    assert verifiers.score("sql", f"```sql\n{row['query']}\n```", tests, runtime=runtime).ok
    wrong = row["query"].split("WHERE")[0]  # runnable, but without its filter
    result = verifiers.score("sql", wrong, tests, runtime=runtime)
    assert result.status is Status.FAILED
    assert "expected" in result.feedback and "rows" in result.feedback


def test_order_matters_only_for_a_top_level_order_by(runtime: LocalRuntime) -> None:
    assert top_level_order_by("SELECT a FROM t ORDER BY a")
    assert not top_level_order_by("SELECT a FROM (SELECT a FROM t ORDER BY a LIMIT 3)")
    assert not top_level_order_by("SELECT 'order by' FROM t")
    db = db_path("concert_singer")
    gold = "SELECT name FROM singer ORDER BY age"
    unsorted = verifiers.score(
        "sql", "SELECT name FROM singer", {"database": db, "gold_query": gold}, runtime=runtime
    )
    assert unsorted.status is Status.FAILED
    bag = verifiers.score(
        "sql",
        "SELECT name FROM singer",
        {"database": db, "gold_query": gold, "ordered": False},
        runtime=runtime,
    )
    assert bag.ok


def test_test_suite_accuracy_over_two_databases(runtime: LocalRuntime) -> None:
    fixture = "CREATE TABLE t(a INTEGER);"
    databases = [
        {"schema": fixture, "inserts": ["INSERT INTO t VALUES (1), (2), (3)"]},
        {"schema": fixture, "inserts": ["INSERT INTO t VALUES (1), (5)"]},
    ]
    tests = {"database": databases, "gold_query": "SELECT a FROM t WHERE a < 3"}
    # Right on the first database only: the second one has a 5.
    half = verifiers.score(
        "sql", "SELECT a FROM t WHERE a <> 3", tests, runtime=runtime, policy="partial"
    )
    assert (half.passed, half.total, half.score) == (1, 2, 0.5)
    assert verifiers.score("sql", "SELECT a FROM t WHERE a <= 2", tests, runtime=runtime).ok


def test_writes_compare_database_states(runtime: LocalRuntime) -> None:
    tests = {
        "database": {
            "schema": "CREATE TABLE t(a INTEGER);",
            "inserts": ["INSERT INTO t VALUES (1), (2)"],
        },
        "gold_query": "UPDATE t SET a = a * 10",
        "allow_writes": True,
    }
    assert verifiers.score("sql", "UPDATE t SET a = 10 * a", tests, runtime=runtime).ok
    wrong = verifiers.score("sql", "DELETE FROM t WHERE a = 1", tests, runtime=runtime)
    assert wrong.status is Status.FAILED and "different state" in wrong.feedback


def test_the_fixture_cannot_be_changed(runtime: LocalRuntime, tmp_path: Path) -> None:
    copy = tmp_path / "db.sqlite"
    shutil.copyfile(db_path("concert_singer"), copy)
    before = copy.read_bytes()
    tests = {"database": str(copy), "gold_query": "SELECT count(*) FROM singer"}
    for query in (
        "DELETE FROM singer",
        "DROP TABLE singer",
        "UPDATE singer SET age = 0",
        "ATTACH DATABASE 'x.db' AS x",
        "PRAGMA writable_schema = 1",
    ):
        result = verifiers.score("sql", query, tests, runtime=runtime)
        assert result.status is Status.COMPILE_ERROR, (query, result.feedback)
    assert copy.read_bytes() == before


def test_spec_errors_for_sql() -> None:
    with pytest.raises(SpecError, match=r"databases\[0\]\.path"):
        verifiers.get_verifier("sql").parse_tests(
            {"database": "/no/such.sqlite", "gold_query": "SELECT 1"}
        )
    with pytest.raises(SpecError, match="exactly one of gold_query and expected_rows"):
        verifiers.parse_tests({"database": {"schema": "CREATE TABLE t(a)"}})


def test_bad_fixture_is_never_the_queries_fault(runtime: LocalRuntime) -> None:
    tests = {"database": {"schema": "CREATE TABLE t(a"}, "gold_query": "SELECT 1"}
    result = verifiers.score("sql", "SELECT 1", tests, runtime=runtime)
    assert result.status is Status.SANDBOX_ERROR and result.infra_error


def test_duckdb(runtime: LocalRuntime) -> None:
    tests = {
        "database": {
            "schema": "CREATE TABLE t(a INTEGER, b VARCHAR);",
            "inserts": ["INSERT INTO t VALUES (1, 'x'), (2, 'y')"],
        },
        "gold_query": "SELECT b FROM t WHERE a > 1",
        "engine": "duckdb",
    }
    assert verifiers.score("sql", "SELECT b FROM t WHERE a = 2", tests, runtime=runtime).ok
    assert (
        verifiers.score("sql", "SELECT c FROM t", tests, runtime=runtime).status
        is Status.COMPILE_ERROR
    )
    assert (
        verifiers.score("sql", "SELEC b FROM t", tests, runtime=runtime).status
        is Status.SYNTAX_ERROR
    )
    reads_file = verifiers.score(
        "sql", "SELECT * FROM read_text('/etc/hostname')", tests, runtime=runtime
    )
    assert not reads_file.ok


def _postgres_ready() -> None:
    need(shutil.which("psql") is not None, "PostgreSQL is not installed (scripts/postgres.sh)")
    done = subprocess.run(
        [
            "psql",
            PG_URL,
            "-qAt",
            "-c",
            "DROP TABLE IF EXISTS singer; CREATE TABLE singer(id int, name text, age int);"
            "INSERT INTO singer VALUES (1, 'Ann', 30), (2, 'Bo', 41), (3, 'Cy', 52);",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    need(done.returncode == 0, f"no PostgreSQL server at {PG_URL}: {done.stderr.strip()}")


def test_postgresql(runtime: LocalRuntime) -> None:
    _postgres_ready()
    tests = {
        "database": {"url": PG_URL},
        "engine": "postgresql",
        "gold_query": "SELECT name FROM singer WHERE age > 40",
    }
    assert verifiers.score(
        "sql", "SELECT name FROM singer WHERE age >= 41", tests, runtime=runtime
    ).ok
    assert (
        verifiers.score("sql", "SELECT nam FROM singer", tests, runtime=runtime).status
        is Status.COMPILE_ERROR
    )
    refused = verifiers.score("sql", "DELETE FROM singer", tests, runtime=runtime)
    assert refused.status is Status.COMPILE_ERROR
    slow = verifiers.score(
        "sql", "SELECT pg_sleep(30)", tests, runtime=runtime, limits={"timeout_s": 1}
    )
    assert slow.status is Status.TIMEOUT
    assert (
        "verifiers:***@"
        in verifiers.score("sql", "SELECT 1", tests, runtime=runtime).tests[0].input
    )
    count = subprocess.run(
        ["psql", PG_URL, "-qAt", "-c", "SELECT count(*) FROM singer"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert count == "3"


def test_duckdb_structs_maps_and_lists_are_compared_never_a_fault(runtime: LocalRuntime) -> None:
    # STRUCT and MAP cells decode to dicts, which could not be counted as rows: every such
    # answer was a sandbox_error, never counted against the model.
    need(importlib.util.find_spec("duckdb") is not None, "duckdb is not installed")
    db = {"schema": "CREATE TABLE t(x INTEGER);", "inserts": ["INSERT INTO t VALUES (1), (2)"]}

    def score(gold: str, answer: str) -> verifiers.Result:
        tests = {"database": db, "gold_query": gold, "engine": "duckdb"}
        return verifiers.score("sql", answer, tests, runtime=runtime)

    for gold, answer in [
        ("SELECT x FROM t", "SELECT x + 1 FROM t"),
        ("SELECT x FROM t", "SELECT {'a': x} FROM t"),
        ("SELECT x FROM t", "SELECT MAP {'k': 1}"),
        ("SELECT x FROM t ORDER BY x", "SELECT {'a': 1}"),
        ("SELECT {'a': x} FROM t", "SELECT {'a': x + 1} FROM t"),
        ("SELECT MAP {[x]: 'v'} FROM t", "SELECT MAP {[x, x]: 'v'} FROM t"),
        ("SELECT {'a': [x], 'b': {'c': 'nan'::DOUBLE}} FROM t", "SELECT {'a': [x]} FROM t"),
    ]:
        wrong = score(gold, answer)
        assert wrong.status is Status.FAILED and not wrong.infra_error, (answer, wrong.feedback)
    for gold, answer in [
        (
            "SELECT {'a': x, 'b': [x, 2]} FROM t",
            "SELECT {'a': x, 'b': [x, 2]} FROM t ORDER BY x DESC",
        ),
        ("SELECT MAP {[x]: {'k': x}} FROM t", "SELECT MAP {[x]: {'k': x}} FROM t"),
        (
            "SELECT {'n': 'nan'::DOUBLE, 'x': x} FROM t",
            "SELECT {'n': 'nan'::DOUBLE, 'x': x} FROM t",
        ),
    ]:
        right = score(gold, answer)
        assert right.ok, (answer, right.feedback)
