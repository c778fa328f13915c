"""SQL: a query judged by execution match (Spider, BIRD, test-suite accuracy).

The candidate query and the gold query run in the sandbox (``_sql_harness.py``) on
each database of the spec, read-only; rows come back as data and are compared
here: as a multiset, or as a list when order matters. SQLite is built in; DuckDB
(``pip install verifiers-sdk[sql]``) and PostgreSQL (``psycopg``, a connection URL
whose server listens on a Unix socket the sandbox can see) are optional.

Statuses: ``syntax_error`` (the engine's own parser, in the sandbox; tree-sitter-sql
only finds the query in prose), ``compile_error`` (unknown table or column, more than
one statement, a write when writes are not allowed), ``runtime_error``, ``timeout``,
``failed`` with a diff of the rows. A fixture that cannot be built is
``sandbox_error``: never the model's fault.

No engine ever reads the answer in this process: preparing a query is not bounded (SQLite
inlines ``NOT MATERIALIZED`` CTEs at prepare time, 2^k work for k levels) and can act on
the whole process (``PRAGMA hard_heap_limit`` applies while the statement is prepared).
Here the answer meets only tree-sitter (linear, within ``TREE_SITTER_LIMIT``), and the
rows that come back are compared in canonical, hashable forms that never raise.
"""

from __future__ import annotations

import collections
import dataclasses
import logging
import os
import re
import sqlite3
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, urlparse

from verifiers import jsonio
from verifiers.cases import QUERY_KINDS, Case, table
from verifiers.compare import (
    DecodeError,
    canonical,
    check_spread,
    decode_value,
    describe_value,
    values_equal,
)
from verifiers.errors import SpecError
from verifiers.languages.common import forged, limit_outcome, records
from verifiers.limits import Limits
from verifiers.parsing import TREE_SITTER_LIMIT, SyntaxIssue, tree_sitter_check
from verifiers.program import ProcessResult, Program, ProgramTest, Step
from verifiers.protocols import TestOutcome
from verifiers.results import Status
from verifiers.specs import CompareOptions, SqlTests, TestSpec, parse_tests

log = logging.getLogger("verifiers.languages.sql")

GRAMMAR = "tree_sitter_sql"
#: Database files up to this size are copied into the sandbox; bigger ones are mounted
#: read-only from where they are (they must then be readable by every user).
COPY_LIMIT = 64 * 1024 * 1024
HARNESS = "{program_dir}/harness.py"
_STATUS = {
    "syntax": Status.SYNTAX_ERROR,
    "semantic": Status.COMPILE_ERROR,
    "runtime": Status.RUNTIME_ERROR,
    "timeout": Status.TIMEOUT,
    "fixture": Status.SANDBOX_ERROR,
}
_STARTS_LIKE_SQL = re.compile(
    r"\s*(?:SEL|WITH|INS|UPD|DEL|CREATE|DROP|ALTER|PRAGMA|EXPLAIN|VALUES|REPLACE)\w*\b", re.I
)
_STRINGS = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|--[^\n]*|/\*.*?\*/", re.S)


def top_level_order_by(query: str) -> bool:
    """Whether a query sorts its result (ORDER BY outside any parentheses)."""
    text = _STRINGS.sub(" ", query)
    depth = 0
    flat = []
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth = max(0, depth - 1)
        elif depth == 0:
            flat.append(char)
    return re.search(r"\border\s+by\b", "".join(flat), re.I) is not None


#: Records of a harness that ran to its end (its sessions are closed).
_FINISHED = frozenset({"result", "sql_error", "too_many_rows"})
#: The PostgreSQL backends a harness opened, as it reported them before any query ran.
_BACKENDS = ("gold_backend", "backend")


def end_backends(url: str, backends: list[dict[str, Any]]) -> int:
    """Terminate the server backends of a harness that was killed; how many were ended.

    A killed client does not stop its query on the server: without this, a query would
    run on until its statement timeout. A backend is named by its pid and its start
    time, so a pid reused by another session is never touched. Faults are logged,
    never raised (the verdict is already decided).
    """
    wanted = [
        (b["pid"], b["started"])
        for b in backends
        if isinstance(b.get("pid"), int) and isinstance(b.get("started"), str)
    ]
    if not wanted:
        return 0
    try:
        import psycopg

        with psycopg.connect(url, connect_timeout=3, autocommit=True) as conn:
            ended = 0
            for pid, started in wanted:
                row = conn.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                    " WHERE pid = %s AND backend_start::text = %s",
                    (pid, started),
                ).fetchone()
                ended += bool(row and row[0])
            return ended
    except Exception as err:  # psycopg missing, the server gone: nothing left to end
        log.warning("could not end the PostgreSQL backends %s: %s", wanted, err)
        return 0


def _rows_equal(
    expected: list[Any], actual: list[Any], ordered: bool, opts: CompareOptions
) -> bool:
    if not isinstance(expected, list) or not isinstance(actual, list):
        return values_equal(expected, actual, opts)  # not rows: as values, never raising
    if len(expected) != len(actual):
        return False
    if ordered:
        return all(_row_equal(e, a, opts) for e, a in zip(expected, actual, strict=True))
    if not opts.has_tolerance:
        fold = not opts.case_sensitive
        return _bag(expected, fold) == _bag(actual, fold)
    remaining = list(actual)
    for row in expected:
        for n, candidate in enumerate(remaining):
            if _row_equal(row, candidate, opts):
                del remaining[n]
                break
        else:
            return False
    return True


def _cell(value: Any) -> Any:
    # Spider's gold results decode BLOBs as UTF-8.
    return value.decode("utf-8", errors="replace") if isinstance(value, bytes) else value


def _row_equal(expected: Any, actual: Any, opts: CompareOptions) -> bool:
    if not isinstance(expected, list | tuple) or not isinstance(actual, list | tuple):
        return values_equal(expected, actual, opts)
    return len(expected) == len(actual) and all(
        values_equal(_cell(e), _cell(a), opts) for e, a in zip(expected, actual, strict=True)
    )


def _key(row: Any, casefold: bool = False) -> Any:
    """A row's hashable canonical form (STRUCT and MAP cells, LIST cells, NaN included).

    Counting rows never raises, whatever the query returned.
    """
    if isinstance(row, list | tuple):
        return tuple(canonical(_cell(c), casefold) for c in row)
    return canonical(_cell(row), casefold)


def _bag(rows: list[Any], casefold: bool = False) -> collections.Counter[Any]:
    return collections.Counter(_key(r, casefold) for r in rows)


def _diff(expected: list[Any], actual: list[Any]) -> str:
    want, got = _bag(expected), _bag(actual)
    missing, extra = want - got, got - want
    # Rows are shown as they came (a dict as a dict), not in their canonical form.
    original: dict[Any, Any] = {}
    for row in (*expected, *actual):
        original.setdefault(_key(row), row)
    lines = [f"expected {len(expected)} rows, got {len(actual)}"]
    if missing:
        shown = [describe_value(original[r], 200) for r in list(missing.elements())[:5]]
        lines.append("missing: " + "; ".join(shown))
    if extra:
        shown = [describe_value(original[r], 200) for r in list(extra.elements())[:5]]
        lines.append("unexpected: " + "; ".join(shown))
    if not missing and not extra:
        lines.append("the same rows in a different order")
    return "\n".join(lines)


class SqlLanguage:
    """SQL queries on SQLite (default), DuckDB or PostgreSQL."""

    #: Python distributions its programs (or its harness) import in the sandbox.
    python_packages = ("duckdb", "psycopg", "psycopg-binary")
    #: The kinds of outcome its case table covers (see :mod:`verifiers.cases`).
    case_kinds = QUERY_KINDS

    def cases(self) -> list[Case]:
        """Real programs, one or more per kind of outcome, and the verdict each must get."""
        return _cases()

    name = "sql"
    aliases = ("sql", "sqlite", "sqlite3", "postgresql", "postgres", "psql", "duckdb", "mysql")
    #: The answer is one query: regions of SQL separated by prose are alternatives.
    code_regions = "one"

    def __init__(self) -> None:
        self._harness = resources.files("verifiers.languages").joinpath("_sql_harness.py")
        self._harness_source = self._harness.read_bytes()

    def toolchain(self) -> str:
        """Engines available here (for ``verifiers doctor``)."""
        engines = [f"sqlite {sqlite3.sqlite_version}"]
        for module, label in (("duckdb", "duckdb"), ("psycopg", "postgresql (psycopg)")):
            try:
                found = __import__(module)
                engines.append(f"{label} {getattr(found, '__version__', '')}".strip())
            except ImportError:
                engines.append(f"{label}: not installed (pip install verifiers-sdk[sql])")
        return "; ".join(engines)

    def external_inputs(self, spec: TestSpec) -> tuple[list[str], bool]:
        """The database files results depend on; a server's database is never cacheable."""
        if not isinstance(spec, SqlTests):
            return [], True
        paths = [db.path for db in spec.databases if db.path]
        return paths, not any(db.url for db in spec.databases)

    def parse_tests(self, raw: Any) -> TestSpec:
        """A SQL spec; database paths must exist."""
        spec = parse_tests(raw)
        if not isinstance(spec, SqlTests):
            raise SpecError("tests", f"sql runs sql tests, not {spec.kind} tests")
        databases = []
        for n, db in enumerate(spec.databases):
            if db.path is None:
                databases.append(db)
                continue
            path = os.path.abspath(db.path)
            if not os.path.isfile(path):
                raise SpecError(f"tests.databases[{n}].path", f"no such file: {db.path}")
            databases.append(db.model_copy(update={"path": path}))
        return spec.model_copy(update={"databases": databases})

    def prepare(self, code: str, spec: TestSpec) -> str:
        """The query, without surrounding whitespace."""
        return code.strip() + "\n"

    def check_syntax(self, code: str, spec: TestSpec | None = None) -> SyntaxIssue | None:
        """tree-sitter-sql's first error, ``deferred``: the engine in the sandbox decides.

        tree-sitter-sql rejects valid SQLite (``JOIN`` without ``ON``), so its error only
        guides extraction; the engine's parser in the sandbox makes a syntax error of the
        query, which is then ``syntax_error``. No engine runs here: preparing a statement
        costs what the statement asks (2^k for k nested ``NOT MATERIALIZED`` CTEs) and a
        ``PRAGMA`` such as ``hard_heap_limit`` would act on this whole process. A query
        over ``TREE_SITTER_LIMIT`` is not checked here at all.
        """
        if len(code) > TREE_SITTER_LIMIT:
            return None
        issue = tree_sitter_check(GRAMMAR, code)
        return dataclasses.replace(issue, deferred=True) if issue is not None else None

    def parses(self, text: str) -> bool:
        """Whether text is a query: tree-sitter-sql reads it, or it starts like one.

        A typo in ``SELECT`` is a syntax error of the answer, not the absence of one.
        """
        return self.check_syntax(text) is None or _STARTS_LIKE_SQL.match(text) is not None

    def describe_test(self, spec: TestSpec, index: int) -> tuple[str, str]:
        """The database, and the gold query or expected rows."""
        assert isinstance(spec, SqlTests)
        db = spec.databases[index]
        # Never show a password of a connection URL in results or logs.
        url = re.sub(r"(//[^:/@]*:)[^@]*@", r"\1***@", db.url) if db.url else None
        where = db.path or url or "schema fixture"
        expected = spec.gold_query or describe_value(spec.expected_rows, 2000)
        return f"database: {where}", expected

    def interpret_build(self, proc: ProcessResult, limits: Limits) -> TestOutcome:
        """SQL has no build step."""
        return TestOutcome(Status.PASSED)

    def build_program(
        self, code: str, spec: TestSpec, selected: list[int], limits: Limits
    ) -> Program:
        """One harness run per selected database."""
        assert isinstance(spec, SqlTests)
        host_paths = set()
        databases = []
        copies: dict[str, bytes] = {}
        for n, db in enumerate(spec.databases):
            entry = {"path": db.path, "ddl": db.ddl, "inserts": db.inserts, "url": db.url}
            if db.path and os.path.getsize(db.path) <= COPY_LIMIT:
                name = f"db/{n}/{os.path.basename(db.path)}"
                with open(db.path, "rb") as f:
                    copies[name] = f.read()
                entry["path"] = f"{{program_dir}}/{name}"
            elif db.path:
                host_paths.add(os.path.dirname(db.path))
            if db.url:
                socket_dir = parse_qs(urlparse(db.url).query).get("host", [""])[0]
                host = urlparse(db.url).hostname or socket_dir
                if host and host.startswith("/"):
                    host_paths.add(host)
            databases.append(entry)
        meta = {
            "engine": spec.engine,
            "databases": databases,
            "gold_query": spec.gold_query,
            "allow_writes": spec.allow_writes,
            "memory_mb": limits.memory_mb,
            "timeout_ms": int(limits.timeout_s * 1000),
        }
        step_limits = limits.step_limits()
        tests = tuple(
            ProgramTest(
                index=i,
                step=Step(
                    argv=("{program_dir}", str(i)), limits=step_limits, kind="call", module=HARNESS
                ),
            )
            for i in selected
        )
        driver = {"sqlite": "sqlite3", "duckdb": "duckdb", "postgresql": "psycopg"}[spec.engine]
        return Program(
            files={
                "harness.py": self._harness_source,
                "solution.sql": code.encode("utf-8", errors="surrogateescape"),
                "spec.json": jsonio.dumps(meta).encode(),
                **copies,
            },
            tests=tests,
            preload_modules=(driver,),
            preload_entries=(HARNESS,),
            host_paths=tuple(sorted(host_paths)),
            files_in_memory=True,
        )

    def interpret(
        self,
        test: ProgramTest,
        spec: TestSpec,
        proc: ProcessResult,
        limits: Limits,
        compare: CompareOptions | None,
    ) -> TestOutcome:
        """Errors by kind, then the rows (or database states) against the expected ones."""
        assert isinstance(spec, SqlTests)
        by_event = records(proc.channel)
        url = spec.databases[test.index].url
        if url and not _FINISHED & by_event.keys():
            # Killed before it closed its sessions: their queries may still be running.
            end_backends(url, [by_event[e] for e in _BACKENDS if e in by_event])
        limit = limit_outcome(proc, limits, by_event)
        if limit is not None:
            return limit
        if "too_many_rows" in by_event:
            limit_rows = by_event["too_many_rows"].get("limit")
            return TestOutcome(
                Status.OUTPUT_LIMIT, f"the query returned more than {limit_rows} rows"
            )
        error = by_event.get("sql_error")
        if error is not None:
            status = _STATUS.get(str(error.get("kind")), Status.RUNTIME_ERROR)
            message = str(error.get("message", ""))
            if status is Status.SANDBOX_ERROR:
                message = f"the test database is unusable (not the query's fault): {message}"
            return TestOutcome(status, message, fatal=status is Status.SYNTAX_ERROR)
        result = by_event.get("result")
        if result is None:
            return TestOutcome(Status.RUNTIME_ERROR, "the query ended without a result")
        if result.get("nonce") != proc.nonce or not proc.nonce:
            return forged()
        try:
            actual = decode_value(result.get("rows"))
            expected = (
                decode_value(result.get("gold"))
                if spec.gold_query is not None
                else spec.expected_rows
            )
            # Rows are counted as a multiset: never rows built to hash alike (a query can
            # return thousands of integers that do, and counting them is quadratic).
            tables = actual.values() if isinstance(actual, dict) else [actual]
            for rows in tables:
                if isinstance(rows, list):
                    check_spread([_key(r) for r in rows])
        except DecodeError as err:
            return TestOutcome(Status.RUNTIME_ERROR, f"unreadable result: {err}")
        if not isinstance(actual, dict if spec.allow_writes else list):
            return TestOutcome(Status.RUNTIME_ERROR, "unreadable result: not rows")
        opts = compare or spec.compare
        shown = describe_value(actual, 2000)
        if spec.allow_writes:
            same = (
                isinstance(expected, dict)
                and isinstance(actual, dict)
                and (
                    expected.keys() == actual.keys()
                    and all(_rows_equal(expected[t], actual[t], False, opts) for t in expected)
                )
            )
            return TestOutcome(
                Status.PASSED if same else Status.FAILED,
                "" if same else "the database ends in a different state",
                shown,
            )
        ordered = (
            spec.ordered
            if spec.ordered is not None
            else bool(spec.gold_query and top_level_order_by(spec.gold_query))
        )
        if spec.column_names_matter and spec.gold_query is not None:
            want = _names(result.get("gold_columns"))
            got = _names(result.get("columns"))
            if want != got:
                return TestOutcome(Status.FAILED, f"columns {got}, expected {want}", shown)
        if _rows_equal(list(expected or []), list(actual or []), ordered, opts):
            return TestOutcome(Status.PASSED, actual=shown)
        return TestOutcome(Status.FAILED, _diff(list(expected or []), list(actual or [])), shown)


def _names(columns: Any) -> list[str]:
    """Column names from a result record, lower case (anything else: no names)."""
    if not isinstance(columns, list):
        return []
    return [str(c).lower()[:1000] for c in columns[:10_000]]


# --- the case table ------------------------------------------------------------------------

_DB = {
    "database": {
        "schema": "CREATE TABLE singer(id INTEGER, name TEXT, age INTEGER);",
        "inserts": ["INSERT INTO singer VALUES (1, 'Ann', 30), (2, 'Bo', 41), (3, 'Cy', 52)"],
    },
    "gold_query": "SELECT name FROM singer WHERE age > 40",
}
_COUNTER = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c"


def _cases() -> list[Case]:
    """One program per kind of outcome (see :mod:`verifiers.cases`)."""
    return table(
        "sql",
        {
            "ok:filter": ("SELECT name FROM singer WHERE age >= 41", _DB, Status.PASSED),
            "ok:bare query": (
                "SELECT s.name FROM singer AS s WHERE s.age > 40;",
                _DB,
                Status.PASSED,
            ),
            "wrong_answer:wrong filter": (
                "SELECT name FROM singer WHERE age > 20",
                _DB,
                Status.FAILED,
            ),
            "no_code:prose": ("I would look at the singer table.", _DB, Status.NO_CODE),
            "syntax_error:garbled": ("SELECT name FROM WHERE age >", _DB, Status.SYNTAX_ERROR),
            "compile_error:unknown table": ("SELECT name FROM singers", _DB, Status.COMPILE_ERROR),
            "compile_error:a write is refused": ("DELETE FROM singer", _DB, Status.COMPILE_ERROR),
            "compile_error:ATTACH is refused": (
                "ATTACH DATABASE '/etc/passwd' AS x",
                _DB,
                Status.COMPILE_ERROR,
            ),
            "runtime_error:integer overflow": (
                "SELECT abs(-9223372036854775807 - 1)",
                _DB,
                Status.RUNTIME_ERROR,
            ),
            "timeout:endless recursion": (
                _COUNTER + ") SELECT count(*) FROM c",
                _DB,
                Status.TIMEOUT,
            ),
            "memory_limit:huge string": (
                _COUNTER + " LIMIT 30) SELECT length(group_concat(zeroblob(50000000))) FROM c",
                _DB,
                Status.MEMORY_LIMIT,
            ),
            "output_flood:millions of rows": (
                _COUNTER + " LIMIT 10000000) SELECT hex(randomblob(64)) FROM c",
                _DB,
                Status.OUTPUT_LIMIT,
            ),
        },
    )
