"""SQL harness: runs a candidate query (and the gold query) on one database in the sandbox.

Stdlib only, plus the engine's driver (sqlite3 built in; duckdb or psycopg when the
spec asks for them). Called as ``main([program_dir, index])``; reads ``spec.json``
and ``solution.sql``, builds or opens database ``index`` and writes one JSON record
on fd 3: ``result`` (rows and column names of the gold and of the candidate, or
database states when writes are allowed) or ``sql_error`` (with a kind:
``syntax``, ``semantic``, ``runtime``, ``timeout``, ``fixture``).

An answer is exactly one statement, as the engine's own parser or protocol counts
them: SQLite's prepare refuses a tail, DuckDB's parser extracts the statements, and
PostgreSQL gets the answer as one extended-protocol Parse, which refuses several. It
cannot change the fixture: SQLite opens it read-only with an authorizer that allows
reads only (when writes are not allowed); DuckDB opens it read-only with external
access off and admits a SELECT only; PostgreSQL runs it inside ``BEGIN READ ONLY``
(so ``COMMIT`` can only end that transaction, and nothing follows it), then rolls
back and closes the session, so no setting outlives the verification. PostgreSQL's
``statement_timeout`` is set before the statement starts, which the statement itself
cannot lift (a change applies to later statements, and there are none); the harness
reports its server backends on the channel so the host can end them if the sandbox
is killed first.
"""

from __future__ import annotations

import base64
import json
import math
import os
import shutil
import sys
import time
from typing import Any

#: The program's files by absolute path when a warm sandbox keeps them in memory (the
#: sandbox agent sets this after loading the harness); otherwise they are on disk.
PROGRAM_FILES: dict[str, bytes] = {}


def program_file(directory: str, name: str) -> bytes:
    path = os.path.join(directory, name)
    data = PROGRAM_FILES.get(path)
    if data is None:
        with open(path, "rb") as f:
            data = f.read()
    return data


def on_disk(path: str) -> str:
    """A path the engines can open: a database held in memory is written to /tmp first."""
    data = PROGRAM_FILES.get(path)
    if data is None:
        return path
    copy = "/tmp/memory-" + os.path.basename(path)
    with open(copy, "wb") as f:
        f.write(data)
    return copy


CHANNEL_FD = 3
NONCE_FD = 4
#: More rows than this is an output flood, not an answer.
MAX_ROWS = 100_000


class TooManyRows(Exception):
    pass


def fetch(cursor: Any) -> list[Any]:
    rows: list[Any] = cursor.fetchmany(MAX_ROWS + 1)
    if len(rows) > MAX_ROWS:
        raise TooManyRows
    return rows


class SqlFailure(Exception):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def emit(record: dict[str, Any]) -> None:
    data = (json.dumps(record) + "\n").encode("utf-8", errors="surrogatepass")
    view = memoryview(data)
    try:
        while view:
            view = view[os.write(CHANNEL_FD, view) :]
    except OSError:
        pass


def read_nonce() -> str:
    try:
        return os.read(NONCE_FD, 256).decode(errors="replace").strip()
    except OSError:
        return ""


def cell(v: Any) -> Any:
    if v is None or isinstance(v, bool | str):
        return v
    if isinstance(v, int):
        return v if -(2**53) < v < 2**53 else {"$int": hex(v)}
    if isinstance(v, float):
        if math.isfinite(v):
            return v
        return {"$float": "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")}
    if isinstance(v, bytes | bytearray | memoryview):
        return {"$bytes": base64.b64encode(bytes(v)).decode("ascii")}
    if type(v).__name__ == "Decimal":
        return cell(float(v))
    if isinstance(v, list | tuple):
        return [cell(x) for x in v]
    if isinstance(v, dict):
        return {"$dict": [[cell(k), cell(x)] for k, x in v.items()]}
    if hasattr(v, "isoformat"):
        return v.isoformat()
    return str(v)


#: Part of the per-test time kept back from PostgreSQL's statement timeout, so that the
#: server cancels a slow query (a ``timeout``) before the sandbox kills the harness.
MARGIN_MS = 500


class Deadline:
    """The harness's time: the test's wall-clock limit, less a margin."""

    def __init__(self, timeout_ms: int, started: float) -> None:
        budget = timeout_ms - min(MARGIN_MS, timeout_ms // 5)
        self.end = started + budget / 1000

    def left_ms(self) -> int:
        return int((self.end - time.monotonic()) * 1000)


NOT_A_QUERY = "the answer must be one query that returns rows"


# --- SQLite ----------------------------------------------------------------------------------


class Sqlite:
    def __init__(self, db: dict[str, Any], writable: bool) -> None:
        import sqlite3

        self.sqlite3 = sqlite3
        self.writable = writable
        if db.get("path"):
            if writable:
                copy = "/tmp/fixture-" + os.path.basename(db["path"])
                shutil.copyfile(db["path"], copy)
                self.conn = sqlite3.connect(copy)
            else:
                uri = "file:" + db["path"] + "?mode=ro&immutable=1"
                self.conn = sqlite3.connect(uri, uri=True)
        else:
            self.conn = sqlite3.connect(":memory:")
            try:
                self.conn.executescript(db.get("ddl") or "")
                for statement in db.get("inserts") or []:
                    self.conn.execute(statement)
                self.conn.commit()
            except sqlite3.Error as exc:
                raise SqlFailure("fixture", f"the test database could not be built: {exc}") from exc
        self.conn.text_factory = lambda b: b.decode("utf-8", errors="surrogateescape")

    def _authorize(self, action: int, *args: Any) -> int:
        s = self.sqlite3
        if action == s.SQLITE_FUNCTION and args[1] in ("load_extension", "fts3_tokenizer"):
            return int(s.SQLITE_DENY)
        if self.writable:
            # A copy of the fixture: anything but reaching other database files.
            return int(
                s.SQLITE_DENY if action in (s.SQLITE_ATTACH, s.SQLITE_DETACH) else s.SQLITE_OK
            )
        # Read-only: an allow-list, so that no kind of statement but a query gets through.
        allowed = (s.SQLITE_SELECT, s.SQLITE_READ, s.SQLITE_FUNCTION, s.SQLITE_RECURSIVE)
        return int(s.SQLITE_OK if action in allowed else s.SQLITE_DENY)

    def lock(self) -> None:
        self.conn.set_authorizer(self._authorize)

    def run(self, query: str) -> tuple[list[Any], list[str]]:
        s = self.sqlite3
        try:
            # sqlite3 prepares one statement and refuses a non-empty tail.
            cursor = self.conn.execute(query)
            if cursor.description is None and not self.writable:
                raise SqlFailure("semantic", NOT_A_QUERY)
            rows = fetch(cursor)
            columns = [d[0] for d in cursor.description or []]
            if self.writable:
                self.conn.commit()
        except s.Warning as exc:  # more than one statement (older Pythons)
            raise SqlFailure("semantic", str(exc)) from exc
        except s.ProgrammingError as exc:
            raise SqlFailure("semantic", str(exc)) from exc
        except s.DatabaseError as exc:
            raise SqlFailure(classify_sqlite(str(exc)), str(exc)) from exc
        return [list(r) for r in rows], columns

    def close(self) -> None:
        self.conn.close()

    def state(self) -> dict[str, Any]:
        tables = self.conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
        ).fetchall()
        out = {}
        for (name,) in tables:
            rows = self.conn.execute(f'SELECT * FROM "{name}"').fetchall()
            out[name] = sorted((list(r) for r in rows), key=repr)
        return out


def classify_sqlite(message: str) -> str:
    text = message.lower()
    if "syntax error" in text or "incomplete input" in text or "unrecognized token" in text:
        return "syntax"
    if "interrupted" in text:
        return "timeout"
    semantic = (
        "no such",
        "ambiguous column",
        "misuse of",
        "wrong number of arguments",
        "not authorized",
        "authorization denied",
        "has no column",
        "already exists",
        "not allowed",
        "must appear",
        "is not a function",
        "row value misused",
        "only execute one",
    )
    if any(marker in text for marker in semantic):
        return "semantic"
    return "runtime"


# --- DuckDB ----------------------------------------------------------------------------------


class DuckDB:
    def __init__(self, db: dict[str, Any], writable: bool, memory_mb: int) -> None:
        import duckdb

        self.duckdb = duckdb
        self.writable = writable
        # No file or network access from the start: the fixture's own DDL included.
        config: dict[str, Any] = {
            "threads": 1,
            "memory_limit": f"{max(64, memory_mb // 2)}MB",
            "enable_external_access": False,
        }
        if db.get("path"):
            if writable:
                copy = "/tmp/fixture-" + os.path.basename(db["path"])
                shutil.copyfile(db["path"], copy)
                self.conn = duckdb.connect(copy, config=config)
            else:
                self.conn = duckdb.connect(db["path"], read_only=True, config=config)
        else:
            self.conn = duckdb.connect(":memory:", config=config)
            try:
                self.conn.execute(db.get("ddl") or "")
                for statement in db.get("inserts") or []:
                    self.conn.execute(statement)
            except duckdb.Error as exc:
                raise SqlFailure("fixture", f"the test database could not be built: {exc}") from exc

    def lock(self) -> None:
        self.conn.execute("SET lock_configuration = true")

    def close(self) -> None:
        self.conn.close()

    def run(self, query: str) -> tuple[list[Any], list[str]]:
        d = self.duckdb
        try:
            # DuckDB's own parser splits and types the statements; the one extracted
            # is what runs (the text is not parsed a second time).
            statements = d.extract_statements(query)
            if len(statements) != 1:
                raise SqlFailure("semantic", "the answer must be exactly one SQL statement")
            if not self.writable and statements[0].type != d.StatementType.SELECT:
                raise SqlFailure("semantic", "only a read query is allowed")
            cursor = self.conn.execute(statements[0])
            rows = fetch(cursor) if cursor.description else []
            columns = [c[0] for c in cursor.description or []]
        except d.ParserException as exc:
            raise SqlFailure("syntax", str(exc)) from exc
        except (d.CatalogException, d.BinderException) as exc:
            raise SqlFailure("semantic", str(exc)) from exc
        except d.InterruptException as exc:
            raise SqlFailure("timeout", str(exc)) from exc
        except d.Error as exc:
            raise SqlFailure("runtime", str(exc)) from exc
        return [list(r) for r in rows], columns

    def state(self) -> dict[str, Any]:
        tables = self.conn.execute(
            "SELECT table_name FROM information_schema.tables ORDER BY table_name"
        ).fetchall()
        return {
            name: sorted(
                (list(r) for r in self.conn.execute(f'SELECT * FROM "{name}"').fetchall()), key=repr
            )
            for (name,) in tables
        }


# --- PostgreSQL ------------------------------------------------------------------------------


class Postgres:
    """One session per run: opened here, closed after its one statement."""

    def __init__(self, db: dict[str, Any], deadline: Deadline, event: str) -> None:
        import psycopg

        self.psycopg = psycopg
        self.deadline = deadline
        try:
            # autocommit: psycopg sends no BEGIN of its own; the transaction is ours.
            self.conn = psycopg.connect(
                db["url"], connect_timeout=max(2, deadline.left_ms() // 1000), autocommit=True
            )
            info = self.conn.execute(
                "SELECT pg_backend_pid(), backend_start::text FROM pg_stat_activity"
                " WHERE pid = pg_backend_pid()"
            ).fetchone()
            if info is not None:
                # Before any answer runs: the host ends this backend if the sandbox dies first.
                emit({"event": event, "pid": info[0], "started": info[1]})
            self.conn.execute("SET default_transaction_read_only = on")
            self.conn.execute("SET idle_in_transaction_session_timeout = 60000")
        except psycopg.Error as exc:
            raise SqlFailure("fixture", f"could not connect to the database: {exc}") from exc
        try:
            # PostgreSQL 14+: a backend whose client is gone stops its query within 1 s.
            self.conn.execute("SET client_connection_check_interval = 1000")
        except psycopg.Error:
            pass

    def lock(self) -> None:
        pass

    def close(self) -> None:
        self.conn.close()

    def run(self, query: str) -> tuple[list[Any], list[str]]:
        errors = self.psycopg.errors
        left = self.deadline.left_ms()
        if left <= 0:
            raise SqlFailure("timeout", "no time left for the query")
        try:
            # Armed before the statement starts: a SET inside it cannot lift it.
            self.conn.execute(f"SET statement_timeout = {left}")
            self.conn.execute("BEGIN READ ONLY")
            cursor = self.conn.cursor()
            # prepare=True: the text goes to the server as one extended-protocol Parse,
            # which refuses more than one statement (the simple protocol would run them all).
            cursor.execute(query, prepare=True)
            if cursor.description is None:
                raise SqlFailure("semantic", NOT_A_QUERY)
            rows = fetch(cursor)
            columns = [c.name for c in cursor.description]
        except errors.SyntaxError as exc:
            if "multiple commands" in str(exc):
                raise SqlFailure(
                    "semantic", "the answer must be exactly one SQL statement"
                ) from exc
            raise SqlFailure("syntax", str(exc)) from exc
        except errors.ReadOnlySqlTransaction as exc:
            raise SqlFailure("semantic", f"only a read query is allowed: {exc}") from exc
        except errors.QueryCanceled as exc:
            raise SqlFailure("timeout", str(exc)) from exc
        except self.psycopg.Error as exc:
            code = getattr(exc, "sqlstate", "") or ""
            # 42: unknown names, privileges; 25 and 2D: transaction control refused.
            semantic = code.startswith(("42", "25", "2D"))
            raise SqlFailure("semantic" if semantic else "runtime", str(exc)) from exc
        finally:
            self.end()
        return [list(r) for r in rows], columns

    def end(self) -> None:
        """Roll back whatever the statement left open (after a COMMIT: a no-op)."""
        try:
            self.conn.execute("ROLLBACK")
        except self.psycopg.Error:
            pass

    def state(self) -> dict[str, Any]:
        raise SqlFailure("fixture", "allow_writes is not supported with postgresql")


def connect(
    spec: dict[str, Any], db: dict[str, Any], writable: bool, deadline: Deadline, event: str
) -> Any:
    engine = spec["engine"]
    if engine == "sqlite":
        return Sqlite(db, writable)
    if engine == "duckdb":
        return DuckDB(db, writable, int(spec.get("memory_mb", 512)))
    return Postgres(db, deadline, event)


def open_database(
    spec: dict[str, Any], db: dict[str, Any], writable: bool, deadline: Deadline, event: str
) -> Any:
    try:
        return connect(spec, db, writable, deadline, event)
    except SqlFailure:
        raise
    except Exception as exc:
        raise SqlFailure("fixture", f"the database could not be opened: {exc}") from exc


def clear_copies() -> None:
    """Remove the copies earlier tests of this program left in /tmp (a test killed at its
    time limit removes nothing): a writing answer can leave 64 MB per database, and with
    them /tmp full, a later test's copy, or its gold query, would fail for want of room."""
    try:
        names = os.listdir("/tmp")
    except OSError:
        return
    for name in names:
        if name.startswith(("fixture-", "memory-")):
            try:
                os.unlink(os.path.join("/tmp", name))
            except OSError:
                pass


def main(argv: list[str]) -> int:
    started = time.monotonic()
    clear_copies()
    program_dir, index = argv[0], int(argv[1])
    spec = json.loads(program_file(program_dir, "spec.json"))
    candidate = program_file(program_dir, "solution.sql").decode("utf-8", "surrogateescape")
    db = dict(spec["databases"][index])
    if db.get("path"):
        db["path"] = on_disk(db["path"].replace("{program_dir}", program_dir))
    writes = bool(spec.get("allow_writes"))
    deadline = Deadline(int(spec.get("timeout_ms", 5000)), started)
    record: dict[str, Any] = {"event": "result"}
    stage = "fixture"
    try:
        if spec.get("gold_query"):
            gold = open_database(spec, db, writes, deadline, "gold_backend")
            gold.lock()
            stage = "gold"
            rows, columns = gold.run(spec["gold_query"])
            record["gold"] = cell(gold.state() if writes else rows)
            record["gold_columns"] = columns
            # Closed before the answer runs: its session is gone, not there to look at.
            gold.close()
            stage = "fixture"
        runner = open_database(spec, db, writes, deadline, "backend")
        runner.lock()
        stage = "candidate"
        rows, columns = runner.run(candidate)
        record["rows"] = cell(runner.state() if writes else rows)
        record["columns"] = columns
    except SqlFailure as exc:
        kind = exc.kind if stage == "candidate" else "fixture"
        emit({"event": "sql_error", "kind": kind, "stage": stage, "message": str(exc)[:3000]})
        return 1
    except TooManyRows:
        emit({"event": "too_many_rows", "limit": MAX_ROWS})
        return 1
    except MemoryError:
        emit({"event": "error", "type": "MemoryError", "message": "out of memory"})
        return 1
    record["nonce"] = read_nonce()
    emit(record)
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
