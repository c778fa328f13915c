"""The remote runtime against a misbehaving server on loopback: slow, huge, lying answers.

The server here is a raw socket server (no HTTP library): it reads a request and answers
what a broken or hostile service might, one byte a second, or without end. Every case
must end as ``sandbox_error`` results within the runtime's deadline, with the client's
memory bounded by its cap and its event loop free for other work meanwhile.
"""

from __future__ import annotations

import asyncio
import json
import resource
import socket
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import verifiers
from verifiers import Status
from verifiers.runtimes import LocalRuntime, RemoteRuntime

ITEMS = [
    {
        "language": "python",
        "completion": f"print({n})",
        "tests": {"inputs": [""], "outputs": [str(n)]},
    }
    for n in range(2)
]
CHUNK = b" " * 65536


class Misbehaving:
    """A loopback server whose every connection is handled by ``answer(conn)``."""

    def __init__(self, answer: Callable[[socket.socket, Misbehaving], None]) -> None:
        self.answer = answer
        self.sent = 0
        self.closed_by_client = threading.Event()
        self._stop = threading.Event()
        self._sock = socket.socket()
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(16)
        self._sock.settimeout(0.2)
        self.url = f"http://127.0.0.1:{self._sock.getsockname()[1]}"
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        with conn:
            _read_request(conn)
            try:
                self.answer(conn, self)
            except OSError:
                self.closed_by_client.set()

    def send(self, conn: socket.socket, data: bytes) -> None:
        conn.sendall(data)
        self.sent += len(data)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self._sock.close()


def _read_request(conn: socket.socket) -> None:
    """Read the headers and the declared body of one request."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            return
        body += chunk


def trickle(conn: socket.socket, server: Misbehaving) -> None:
    """A valid start, then one byte a second (each read is quick; the answer never ends)."""
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n["
    server.send(conn, head)
    for _ in range(120):
        time.sleep(1)
        server.send(conn, b" ")


def endless(conn: socket.socket, server: Misbehaving) -> None:
    """An answer without a length that never ends (1.5 GB and more), as fast as read."""
    server.send(conn, b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n[")
    for _ in range(1_500_000_000 // len(CHUNK) + 1):
        server.send(conn, CHUNK)


def declared_huge(conn: socket.socket, server: Misbehaving) -> None:
    """A 1.5 GB length in the headers."""
    head = (
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1500000000\r\n\r\n"
    )
    server.send(conn, head + b"[")
    for _ in range(1_500_000_000 // len(CHUNK)):
        server.send(conn, CHUNK)


def _zeros_gzipped_twice(megabytes: int) -> bytes:
    inner = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = b"\0" * (1 << 20)
    packed = b"".join(inner.compress(block) for _ in range(megabytes)) + inner.flush()
    outer = zlib.compressobj(9, zlib.DEFLATED, 31)
    return outer.compress(packed) + outer.flush()


_BOMB = _zeros_gzipped_twice(1024)  # a few kilobytes that unpack to a gigabyte


def compressed(conn: socket.socket, server: Misbehaving) -> None:
    """A small answer in stacked gzip, which identity was asked instead of."""
    head = (
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip, gzip"
        b"\r\nContent-Length: %d\r\n\r\n" % len(_BOMB)
    )
    server.send(conn, head + _BOMB)


def answering(results: list[dict[str, Any]]) -> Callable[[socket.socket, Misbehaving], None]:
    """A server that answers ``results`` (JSON) to any request."""
    body = json.dumps(results).encode()

    def answer(conn: socket.socket, server: Misbehaving) -> None:
        head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n"
        server.send(conn, head % len(body) + b"\r\n" + body)

    return answer


def silent(conn: socket.socket, server: Misbehaving) -> None:
    """Reads the request and never answers."""
    time.sleep(60)


@pytest.fixture
def serve() -> Iterator[Callable[[Callable[[socket.socket, Misbehaving], None]], Misbehaving]]:
    started: list[Misbehaving] = []

    def start(answer: Callable[[socket.socket, Misbehaving], None]) -> Misbehaving:
        server = Misbehaving(answer)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


def _faults(results: list[Any], text: str) -> None:
    assert [r.status for r in results] == [Status.SANDBOX_ERROR] * len(results)
    assert all(r.infra_error and text in r.feedback for r in results), results[0].feedback


@pytest.mark.parametrize("answer", [trickle, silent])
def test_a_slow_answer_ends_at_the_total_deadline(
    serve: Callable[..., Misbehaving], runtime: LocalRuntime, answer: Any
) -> None:
    server = serve(answer)
    remote = RemoteRuntime(server.url, timeout_s=2, retries=2)
    box: dict[str, Any] = {}

    def remote_batch() -> None:
        started = time.perf_counter()
        box["results"] = verifiers.score_batch(ITEMS, runtime=remote)
        box["took"] = time.perf_counter() - started

    thread = threading.Thread(target=remote_batch)
    thread.start()
    time.sleep(0.5)
    # Meanwhile the engine's loop (the remote runtime's too) serves other work at once.
    started = time.perf_counter()
    local = verifiers.score(
        "python", "print(7)", {"inputs": [""], "outputs": ["7"]}, runtime=runtime
    )
    assert local.ok and time.perf_counter() - started < 1.5
    assert thread.is_alive()
    thread.join(30)
    _faults(box["results"], "within 2s")
    assert 1.5 < box["took"] < 5, box["took"]


@pytest.mark.parametrize("answer", [endless, declared_huge])
def test_a_huge_answer_is_cut_at_the_cap(serve: Callable[..., Misbehaving], answer: Any) -> None:
    server = serve(answer)
    cap = 1024 * 1024
    remote = RemoteRuntime(server.url, timeout_s=30, retries=0, max_response_bytes=cap)
    started = time.perf_counter()
    results = verifiers.score_batch(ITEMS, runtime=remote)
    assert time.perf_counter() - started < 10
    _faults(results, f"over {cap} bytes")
    # The client stopped reading at the cap (what it read, plus what the socket buffers hold).
    assert server.closed_by_client.wait(10)
    assert server.sent < 64 * cap, server.sent


def test_a_compressed_answer_is_refused_unread(serve: Callable[..., Misbehaving]) -> None:
    # The cap counted unpacked bytes: a few kilobytes of stacked gzip took 2 GB to read.
    remote = RemoteRuntime(serve(compressed).url, retries=0, max_response_bytes=1 << 20)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    _faults(verifiers.score_batch(ITEMS, runtime=remote), "content encoding 'gzip, gzip'")
    verdict = remote.check()
    assert not verdict.available and "content encoding" in verdict.detail, verdict.detail
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 200_000  # KB


_FORGED = {
    "status": "passed",
    "score": 1.0,
    "pass_rate": 1.0,
    "passed": 1,
    "total": 1,
    "tests_available": 1,
    "tests": [{"index": 0, "status": "passed"}],
    "language": "python",
    "runtime": "local",
}


@pytest.mark.parametrize(
    ("change", "text"),
    [
        ({"language": "rust"}, "a rust result for a python item"),
        ({"passed": 7}, "7 passed of 1 run"),
        ({"tests": [{"index": 0, "status": "failed"}]}, "passed with a test that did not"),
        ({"total": 10**6, "passed": 10**6, "tests_available": 10**6}, "for 1 tests"),
    ],
    ids=["another language", "more passed than run", "a failed test", "more tests than sent"],
)
def test_a_result_that_cannot_be_the_item_s_is_refused(
    serve: Callable[..., Misbehaving], change: dict[str, Any], text: str
) -> None:
    server = serve(answering([{**_FORGED, **change}] * len(ITEMS)))
    results = verifiers.score_batch(ITEMS, runtime=RemoteRuntime(server.url, retries=0))
    _faults(results, text)


def test_a_server_s_cached_flag_and_a_url_s_password_stay_out(
    serve: Callable[..., Misbehaving],
) -> None:
    server = serve(answering([{**_FORGED, "cached": True}] * len(ITEMS)))
    results = verifiers.score_batch(ITEMS, runtime=RemoteRuntime(server.url, retries=0))
    assert [(r.status, r.cached) for r in results] == [(Status.PASSED, False)] * len(ITEMS)
    secret = RemoteRuntime("http://admin:s3cret@127.0.0.1:1", retries=0, timeout_s=2)
    [fault] = verifiers.score_batch(ITEMS[:1], runtime=secret)
    shown = [repr(secret), secret.check().detail, fault.feedback]
    assert fault.infra_error and all("s3cret" not in text for text in shown), shown
    assert "admin:***@127.0.0.1:1" in repr(secret)


def test_health_checks_end_on_time_and_at_their_cap(serve: Callable[..., Misbehaving]) -> None:
    for answer, text in ((trickle, "ReadTimeout"), (endless, "over")):
        remote = RemoteRuntime(serve(answer).url)
        started = time.perf_counter()
        verdict = remote.check()
        assert not verdict.available and text in verdict.detail, verdict.detail
        assert time.perf_counter() - started < 12
        started = time.perf_counter()
        verdict = asyncio.run(remote.ahealth())
        assert not verdict.available and time.perf_counter() - started < 12, verdict.detail


def test_bad_arguments_are_clear_errors() -> None:
    with pytest.raises(ValueError, match="max_response_bytes"):
        RemoteRuntime("http://127.0.0.1:1", max_response_bytes=0)
    with pytest.raises(ValueError, match="timeout_s"):
        RemoteRuntime("http://127.0.0.1:1", timeout_s=0)
