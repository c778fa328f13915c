"""SQL harness: runs a candidate query (and the gold query) on one database in the sandbox.

Stdlib only, plus the engine's driver (sqlite3 built in; duckdb or psycopg when the
spec asks for them). Called as ``main([program_dir, index])``; reads ``spec.json``
and ``solution.sql``, builds or opens database ``index`` and writes one JSON record
on fd 3: ``result`` (rows and column names of the gold and of the candidate, or
database states when writes are allowed) or ``sql_error`` (with a kind:
``syntax``, ``semantic``, ``runtime``, ``timeout``, ``fixture``).

The candidate cannot change the fixture (read-only connections; an authorizer
that denies ATTACH, writes and extension loading in SQLite; external access off
in DuckDB; read-only transactions that are rolled back in PostgreSQL), cannot
read other files, and is bounded by the sandbox's limits.
"""

from __future__ import annotations

import base64
import json
import math
import os
import re
import shutil
import sys
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


def single_statement(query: str) -> str:
    """The query without trailing semicolons and whitespace."""
    return re.sub(r"[\s;]+$", "", query.strip())


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
        denied = {s.SQLITE_ATTACH, s.SQLITE_DETACH}
        if not self.writable:
            denied |= {
                s.SQLITE_INSERT,
                s.SQLITE_UPDATE,
                s.SQLITE_DELETE,
                s.SQLITE_ALTER_TABLE,
                s.SQLITE_CREATE_TABLE,
                s.SQLITE_CREATE_INDEX,
                s.SQLITE_CREATE_TRIGGER,
                s.SQLITE_CREATE_VIEW,
                s.SQLITE_CREATE_TEMP_TABLE,
                s.SQLITE_CREATE_TEMP_INDEX,
                s.SQLITE_CREATE_TEMP_TRIGGER,
                s.SQLITE_CREATE_TEMP_VIEW,
                s.SQLITE_DROP_TABLE,
                s.SQLITE_DROP_INDEX,
                s.SQLITE_DROP_TRIGGER,
                s.SQLITE_DROP_VIEW,
                s.SQLITE_DROP_TEMP_TABLE,
                s.SQLITE_DROP_TEMP_INDEX,
                s.SQLITE_DROP_TEMP_TRIGGER,
                s.SQLITE_DROP_TEMP_VIEW,
                s.SQLITE_REINDEX,
                s.SQLITE_ANALYZE,
                s.SQLITE_PRAGMA,
            }
        if action == s.SQLITE_FUNCTION and args[1] in ("load_extension", "fts3_tokenizer"):
            return int(s.SQLITE_DENY)
        return int(s.SQLITE_DENY if action in denied else s.SQLITE_OK)

    def lock(self) -> None:
        self.conn.set_authorizer(self._authorize)

    def run(self, query: str) -> tuple[list[Any], list[str]]:
        s = self.sqlite3
        try:
            cursor = self.conn.execute(single_statement(query))
            rows = fetch(cursor)
            columns = [d[0] for d in cursor.description or []]
            if self.writable:
                self.conn.commit()
        except s.Warning as exc:  # more than one statement
            raise SqlFailure("semantic", str(exc)) from exc
        except s.ProgrammingError as exc:
            raise SqlFailure("semantic", str(exc)) from exc
        except s.DatabaseError as exc:
            raise SqlFailure(classify_sqlite(str(exc)), str(exc)) from exc
        return [list(r) for r in rows], columns

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
        config: dict[str, Any] = {"threads": 1, "memory_limit": f"{max(64, memory_mb // 2)}MB"}
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
        self.conn.execute("SET enable_external_access = false")
        self.conn.execute("SET lock_configuration = true")

    def run(self, query: str) -> tuple[list[Any], list[str]]:
        d = self.duckdb
        try:
            statements = d.extract_statements(single_statement(query))
            if len(statements) != 1:
                raise SqlFailure("semantic", "the answer must be exactly one SQL statement")
            if not self.writable and statements[0].type != d.StatementType.SELECT:
                raise SqlFailure("semantic", "only a read query is allowed")
            cursor = self.conn.execute(single_statement(query))
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
    def __init__(self, db: dict[str, Any], timeout_ms: int) -> None:
        import psycopg

        self.psycopg = psycopg
        try:
            self.conn = psycopg.connect(db["url"], connect_timeout=10, autocommit=False)
            self.conn.execute("SET default_transaction_read_only = on")
            self.conn.execute(f"SET statement_timeout = {int(timeout_ms)}")
            self.conn.commit()
        except psycopg.Error as exc:
            raise SqlFailure("fixture", f"could not connect to the database: {exc}") from exc

    def lock(self) -> None:
        pass

    def run(self, query: str) -> tuple[list[Any], list[str]]:
        errors = self.psycopg.errors
        try:
            cursor = self.conn.execute(single_statement(query))
            rows = fetch(cursor) if cursor.description else []
            columns = [c.name for c in cursor.description or []]
        except errors.SyntaxError as exc:
            raise SqlFailure("syntax", str(exc)) from exc
        except errors.ReadOnlySqlTransaction as exc:
            raise SqlFailure("semantic", f"only a read query is allowed: {exc}") from exc
        except errors.QueryCanceled as exc:
            raise SqlFailure("timeout", str(exc)) from exc
        except self.psycopg.Error as exc:
            code = getattr(exc, "sqlstate", "") or ""
            raise SqlFailure("semantic" if code.startswith("42") else "runtime", str(exc)) from exc
        finally:
            self.conn.rollback()
        return [list(r) for r in rows], columns

    def state(self) -> dict[str, Any]:
        raise SqlFailure("fixture", "allow_writes is not supported with postgresql")


def connect(spec: dict[str, Any], db: dict[str, Any], writable: bool) -> Any:
    engine = spec["engine"]
    if engine == "sqlite":
        return Sqlite(db, writable)
    if engine == "duckdb":
        return DuckDB(db, writable, int(spec.get("memory_mb", 512)))
    return Postgres(db, int(spec.get("timeout_ms", 5000)))


def open_database(spec: dict[str, Any], db: dict[str, Any], writable: bool) -> Any:
    try:
        return connect(spec, db, writable)
    except SqlFailure:
        raise
    except Exception as exc:
        raise SqlFailure("fixture", f"the database could not be opened: {exc}") from exc


def main(argv: list[str]) -> int:
    program_dir, index = argv[0], int(argv[1])
    spec = json.loads(program_file(program_dir, "spec.json"))
    candidate = program_file(program_dir, "solution.sql").decode("utf-8", "surrogateescape")
    db = dict(spec["databases"][index])
    if db.get("path"):
        db["path"] = on_disk(db["path"].replace("{program_dir}", program_dir))
    writes = bool(spec.get("allow_writes"))
    record: dict[str, Any] = {"event": "result"}
    stage = "fixture"
    try:
        if spec.get("gold_query"):
            gold = open_database(spec, db, writes)
            gold.lock()
            stage = "gold"
            rows, columns = gold.run(spec["gold_query"])
            record["gold"] = cell(gold.state() if writes else rows)
            record["gold_columns"] = columns
            stage = "fixture"
        runner = open_database(spec, db, writes)
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
