"""What a request may reach and cost on a real server: database files, memory, time.

* SQL files only under the operator's ``--sql-root`` (none by default), PostgreSQL only
  through its ``--postgres-socket`` directories; a forbidden path and a missing one get
  the same answer, so nothing says whether a file exists.
* The memory a request may cost is bounded by what it asks and counted by admission:
  a million empty tests are refused before they are parsed into a million objects.
* A request's time starts when it is received: a body that trickles in gets its 504.
"""

from __future__ import annotations

import json
import shutil
import socket
import sqlite3
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from verifiers.runtimes import LocalRuntime
from verifiers.service.app import NOT_ALLOWED_FILE, NOT_ALLOWED_URL
from verifiers.service.middleware import json_values

from ..conftest import need
from ..languages.test_sql import PG_URL
from .conftest import Server, post


def _database(path: Path, rows: list[tuple[str]]) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE secrets(value TEXT)")
        conn.executemany("INSERT INTO secrets VALUES (?)", rows)
    conn.close()


@pytest.fixture(scope="module")
def roots(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("roots")
    allowed, outside = base / "allowed", base / "outside"
    allowed.mkdir()
    outside.mkdir()
    _database(allowed / "shop.sqlite", [("public",)])
    _database(outside / "secret.sqlite", [("the-secret-row",)])
    (allowed / "link.sqlite").symlink_to(outside / "secret.sqlite")
    return {"allowed": allowed, "outside": outside}


@pytest.fixture(scope="module")
def bounded(
    runtime: LocalRuntime, tmp_path_factory: pytest.TempPathFactory, roots: dict[str, Path]
) -> Iterator[Server]:
    """Files under one root, PostgreSQL's socket, 8 MB of admission, 4 s per request."""
    started = Server(
        tmp_path_factory.mktemp("bounded") / "bounded.log",
        "--sql-root",
        str(roots["allowed"]),
        "--postgres-socket",
        "/var/run/postgresql",
        "--max-queue-mb",
        "8",
        "--max-body-mb",
        "16",
        "--request-timeout",
        "4",
        "--concurrency",
        "1",
    )
    yield started
    assert not started.stop(), "sandboxes outlived the server"


def _sql(database: Any, query: str = "SELECT value FROM secrets") -> dict[str, Any]:
    return {
        "language": "sql",
        "completion": query,
        "tests": {"database": database, "expected_rows": []},
    }


def test_no_database_file_is_readable_by_default(server: Server, roots: dict[str, Path]) -> None:
    secret = roots["outside"] / "secret.sqlite"
    answers = []
    for path in (str(secret), str(roots["outside"] / "missing.sqlite"), "/etc/passwd", "x"):
        response = post(server, "/score", _sql(path))
        assert response.status_code == 422, response.text
        assert "the-secret-row" not in response.text
        answers.append(response.json())
    # Existing, missing, not a database: one answer, so no path's existence shows.
    assert all(a == answers[0] for a in answers), answers
    assert answers[0]["field"] == "tests.databases[0].path"
    assert answers[0]["problem"] == NOT_ALLOWED_FILE
    # A batch names the item; the answer is the same.
    batch = post(server, "/score_batch", {"items": [_sql(str(secret))]})
    assert batch.status_code == 422 and batch.json()["field"] == "items[0].tests.databases[0].path"
    # Inline databases need no file.
    inline = {"schema": "CREATE TABLE secrets(value TEXT)", "inserts": []}
    assert post(server, "/score", _sql(inline)).json()["status"] == "passed"


def test_database_files_only_under_the_allowed_roots(
    bounded: Server, roots: dict[str, Path]
) -> None:
    allowed, outside = roots["allowed"], roots["outside"]
    for path in (str(allowed / "shop.sqlite"), "shop.sqlite", "./shop.sqlite"):
        response = post(bounded, "/score", _sql(path, "SELECT value FROM secrets WHERE 0"))
        assert response.status_code == 200, (path, response.text)
        assert response.json()["status"] == "passed"
    answers = []
    for path in (
        str(outside / "secret.sqlite"),
        str(allowed / ".." / "outside" / "secret.sqlite"),
        "../outside/secret.sqlite",
        str(allowed / "link.sqlite"),  # a symlink out of the root
        str(allowed / "missing.sqlite"),
        str(allowed),  # the root itself is not a file
    ):
        response = post(bounded, "/score", _sql(path))
        assert response.status_code == 422, (path, response.text)
        assert "the-secret-row" not in response.text
        answers.append(response.json()["detail"])
    assert len(set(answers)) == 1, answers


def test_postgresql_only_through_the_allowed_sockets(server: Server, bounded: Server) -> None:
    tests = {"database": {"url": PG_URL}, "engine": "postgresql", "expected_rows": [[1]]}
    item = {"language": "sql", "completion": "SELECT 1", "tests": tests}
    refused = post(server, "/score", item)
    assert refused.status_code == 422 and refused.json()["problem"] == NOT_ALLOWED_URL
    for url in (
        PG_URL.replace("/var/run/postgresql", "/tmp"),
        PG_URL + "&host=/tmp",  # a second host that is not allowed
        "postgresql://verifiers@localhost/verifiers_test",  # TCP
    ):
        other = {**item, "tests": {**tests, "database": {"url": url}}}
        response = post(bounded, "/score", other)
        assert response.status_code == 422, (url, response.text)
        assert response.json()["problem"] == NOT_ALLOWED_URL
    need(shutil.which("psql") is not None, "PostgreSQL is not installed (scripts/postgres.sh)")
    ready = subprocess.run(["psql", PG_URL, "-c", "SELECT 1"], capture_output=True, check=False)
    need(ready.returncode == 0, f"no PostgreSQL server at {PG_URL}")
    allowed = post(bounded, "/score", item)
    assert allowed.status_code == 200 and allowed.json()["status"] == "passed", allowed.text


def _peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM")


def test_a_million_empty_tests_are_refused_before_they_are_parsed(bounded: Server) -> None:
    body = {
        "language": "python",
        "completion": "print(input())",
        "tests": {"inputs": [""] * 1_000_000, "outputs": [""] * 1_000_000},
    }
    before = _peak_rss_mb(bounded.proc.pid)
    started = time.perf_counter()
    response = post(bounded, "/score", body)
    assert response.status_code == 413, response.text
    assert "JSON values" in response.json()["detail"]
    assert time.perf_counter() - started < 10
    # The server grew by about the body it read, not by a million parsed tests.
    assert _peak_rss_mb(bounded.proc.pid) - before < 100
    # Tests sent as one JSON string are one value of the body: counted all the same.
    tests = {"inputs": [""] * 300_000, "outputs": [""] * 300_000}
    encoded = {**body, "tests": json.dumps(tests)}
    response = post(bounded, "/score_batch", {"items": [encoded]})
    assert response.status_code == 413, response.text
    assert "its tests included" in response.json()["detail"]
    assert _peak_rss_mb(bounded.proc.pid) - before < 150


def test_long_integers_are_refused_before_they_are_parsed(bounded: Server) -> None:
    # Twenty integers of 99,999 digits held the server (every request) for 6.6 s: their
    # reading and writing costs quadratic time under the GIL. Refused unread, in or out of
    # a string; two such integers are still served.
    big = "9" * 99_999
    raw = '{"language": "python", "completion": "print(1)", "tests": {"inputs": ["1"], '
    many = raw + '"outputs": [' + ", ".join([big] * 20) + "]}}"
    started = time.perf_counter()
    response = bounded_post(bounded, "/score", many)
    assert response.status_code == 413, response.text
    assert "integers too long" in response.json()["detail"]
    assert time.perf_counter() - started < 3
    inside = '{"inputs": ["1"], "outputs": [[' + ", ".join([big] * 3) + "]]}"
    encoded = '{"language": "python", "completion": "print(1)", "tests": ' + json.dumps(inside)
    assert bounded_post(bounded, "/score", encoded + "}").status_code == 413
    two = raw + '"outputs": [' + ", ".join([big] * 2) + "]}}"
    assert bounded_post(bounded, "/score", two).status_code == 422  # read; two outputs


def bounded_post(server: Server, path: str, body: str) -> httpx.Response:
    """A raw JSON body (integers json.dumps would refuse to write) posted to ``server``."""
    headers = {"content-type": "application/json", **server.headers()}
    return httpx.post(server.url + path, content=body, headers=headers, timeout=60)


def test_admission_counts_what_a_request_costs(bounded: Server) -> None:
    # 700 tests of a program that sleeps: held until the 4 s request time ends.
    def item(tests: int) -> dict[str, Any]:
        return {
            "language": "python",
            "completion": "import time\ntime.sleep(3)\nprint(input())",
            "tests": {"inputs": ["1"] * tests, "outputs": ["1"] * tests},
        }

    # One verification of 2000 tests could never fit 8 MB: too large, at once.
    response = post(bounded, "/score", item(2000))
    assert response.status_code == 413 and "split the batch" in response.text
    box: dict[str, Any] = {}
    holder = threading.Thread(target=lambda: box.update(r=post(bounded, "/score", item(700))))
    holder.start()
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
        queue = httpx.get(f"{bounded.url}/health").json()["queue"]
        if queue["cost_mb"] > 5:
            break
        time.sleep(0.05)
    assert queue["cost_mb"] > 5 and queue["capacity_mb"] == 8, queue
    # One place of the queue is free, but not the memory: busy.
    busy = post(bounded, "/score", item(700))
    assert busy.status_code == 503, busy.text
    assert "MB taken" in busy.json()["detail"]
    holder.join(30)
    assert box["r"].status_code == 504
    assert httpx.get(f"{bounded.url}/health").json()["queue"]["cost_mb"] == 0


def test_the_request_time_starts_when_it_is_received(bounded: Server) -> None:
    body = (
        b'{"language": "python", "completion": "print(1)", "tests": [{"input": "", "output": "1"}]}'
    )
    host, port = "127.0.0.1", bounded.port
    started = time.perf_counter()
    with socket.create_connection((host, port), timeout=30) as conn:
        head = (
            f"POST /score HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        ).encode()
        conn.sendall(head)
        answer = b""
        for byte in body:  # two bytes a second: about 50 s of body
            try:
                conn.sendall(bytes([byte]))
            except OSError:
                break
            conn.settimeout(0.5)
            try:
                answer += conn.recv(65536)
            except TimeoutError:
                continue
            if answer:
                break
        conn.settimeout(5)
        while b"within" not in answer:  # the rest of the answer, if it came in pieces
            more = conn.recv(65536)
            if not more:
                break
            answer += more
    took = time.perf_counter() - started
    assert answer.startswith(b"HTTP/1.1 504"), answer[:200]
    assert b"did not arrive within 4s" in answer
    assert took < 8, took


def test_json_values_are_counted_before_parsing() -> None:
    assert json_values(b'{"a": [1, 2, {"b": null}]}', 100) == 8  # keys count too
    # Separators inside strings count only when the rough count is over the limit.
    code = b'{"completion": "' + b"f(a, b), [c]: {d}" * 1000 + b'"}'
    assert json_values(code, 10**6) > 1000
    assert json_values(code, 10) == 3
    assert json_values(b"[" + b"[]," * 1000 + b"[]]", 100) == 101
