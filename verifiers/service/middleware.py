"""ASGI middleware of the service: request metrics, bearer-token auth, body limits.

Plain ASGI (no framework), so that a refusal costs no parsing: a request without the
token, with a body over the size limit, with more JSON values than the server parses, or
whose parsing alone would cost more memory than the server admits, is answered before
the application sees it. The request's clock starts here, when it is received: reading
its body and parsing it count against ``--request-timeout`` like the verifications do.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import re
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from verifiers.jsonio import big_ints
from verifiers.service.admission import TooLarge, request_cost
from verifiers.service.metrics import ServiceMetrics

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: Routes with a label of their own in the metrics (anything else is ``other``).
ENDPOINTS = frozenset({"/score", "/score_batch", "/run_code", "/health", "/metrics"})
#: Paths served without the token (load balancers and orchestrators probe it).
OPEN_PATHS = frozenset({"/health"})
#: A refused request's body is read (and dropped) up to this size before the answer, so
#: that the client, still sending, reads the answer instead of a reset connection.
DRAIN_BYTES = 4 * 1024 * 1024
#: Scope keys: when the request was received (``time.monotonic()``), and its body's size
#: and JSON values, for the request's deadline and its admission cost.
RECEIVED = "verifiers.received"
BODY = "verifiers.body"
_STRUCTURE = (b",", b":", b"[", b"{")
# A JSON string (skipped whole: possessive, so a 3 MB string keeps no 140 MB of backtracking
# state) or one structural character.
_TOKEN = re.compile(rb'"(?:[^"\\]++|\\.)*+"|[,:\[{]')


#: Integers of many digits cost quadratic time to read and to write (CPython: 0.09 s to
#: read one of 100,000 digits, 0.26 s to write it), under the GIL: every request of the
#: server waits meanwhile. A request's runs of digits may cost at most as much as two such
#: integers (the sum of their squared lengths); the digits inside strings count too (a
#: spec sent as a JSON string), and shorter runs than :data:`_LONG_DIGITS` are free.
MAX_DIGIT_WORK = 2 * 100_000**2
_LONG_DIGITS = re.compile(rb"[0-9]{1000,}")


def digit_work(body: bytes) -> int:
    """The sum of the squared lengths of ``body``'s runs of 1,000 digits or more."""
    return sum((m.end() - m.start()) ** 2 for m in _LONG_DIGITS.finditer(body))


def received_at(scope: Scope) -> float:
    """When the request was received (stamped by the outermost middleware)."""
    return float(scope.setdefault(RECEIVED, time.monotonic()))


def rough_values(body: bytes) -> int:
    """An upper bound of the JSON values and keys in ``body`` (its separators, plus one)."""
    return 1 + sum(body.count(c) for c in _STRUCTURE)


def json_values(body: bytes, limit: int) -> int:
    """How many JSON values and keys ``body`` holds, or any number over ``limit``.

    Every value but the first follows a ``[``, ``{``, ``,`` or ``:``; counting those
    characters is an upper bound that costs one pass in C. Only when it is over
    ``limit`` (characters inside strings counted too) are the strings skipped and the
    count made exact, stopping as soon as it passes ``limit``.
    """
    rough = rough_values(body)
    if rough <= limit:
        return rough
    count = 1
    for token in _TOKEN.finditer(body):
        if token.end() - token.start() == 1 and body[token.start()] != 0x22:
            count += 1
            if count > limit:
                break
    return count


async def reply(
    send: Send, status: int, detail: str, headers: dict[str, str] | None = None
) -> None:
    """Send a JSON error answer ``{"detail": ...}``."""
    body = json.dumps({"detail": detail}).encode()
    raw = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    raw += [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


async def drain(receive: Receive, limit: int) -> None:
    """Read and drop the rest of a request body, up to ``limit`` bytes."""
    seen = 0
    while seen <= limit:
        message = await receive()
        if message["type"] != "http.request":
            return
        seen += len(message.get("body", b""))
        if not message.get("more_body"):
            return


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return None


class RequestMetrics:
    """Counts every answer by endpoint and status code, and times it."""

    def __init__(self, app: ASGIApp, metrics: ServiceMetrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on; count and time its answer."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope.get("path", "")
        endpoint = path if path in ENDPOINTS else "other"
        started = time.perf_counter()
        scope[RECEIVED] = time.monotonic()
        code = 500

        async def sending(message: Message) -> None:
            nonlocal code
            if message["type"] == "http.response.start":
                code = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            self.metrics.requests.labels(endpoint, str(code)).inc()
            self.metrics.latency.labels(endpoint).observe(time.perf_counter() - started)


class BearerAuth:
    """Requires ``Authorization: Bearer <token>`` on every path but the open ones."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on if it carries the token (or needs none), else answer 401."""
        if scope["type"] != "http" or scope.get("path") in OPEN_PATHS:
            await self.app(scope, receive, send)
            return
        given = _header(scope, b"authorization") or ""
        scheme, _, credential = given.partition(" ")
        # Constant-time comparison: the answer's timing says nothing about the token.
        if scheme.lower() == "bearer" and hmac.compare_digest(
            credential.strip().encode(), self.token
        ):
            await self.app(scope, receive, send)
            return
        await drain(receive, DRAIN_BYTES)
        await reply(
            send,
            401,
            "missing or wrong bearer token (Authorization: Bearer <token>)",
            {"WWW-Authenticate": "Bearer"},
        )


class BodyLimit:
    """Reads the body within the request's time and bounds what parsing it may cost.

    A body over ``max_bytes`` (declared or streamed), with more than ``max_values`` JSON
    values, or whose parse would cost more than ``check_cost`` admits is answered 413;
    a body still arriving at ``deadline_s`` after the request was received, 504.
    """

    def __init__(
        self,
        app: ASGIApp,
        max_bytes: int,
        max_values: int = 1_000_000,
        deadline_s: float = 300.0,
        check_cost: Callable[[int, str], None] | None = None,
    ) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.max_values = max_values
        self.deadline_s = deadline_s
        self.check_cost = check_cost

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on with its body read, or answer 413 or 504."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        deadline = received_at(scope) + self.deadline_s
        too_large = f"request body over {self.max_bytes} bytes"
        declared = _header(scope, b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            if int(declared) <= self.max_bytes + DRAIN_BYTES:
                await drain(receive, int(declared))
            await reply(send, 413, too_large)
            return
        # Read the whole body here (it is bounded), then hand it to the application.
        chunks: list[bytes] = []
        size = 0
        while True:
            try:
                message = await asyncio.wait_for(receive(), deadline - time.monotonic())
            except asyncio.TimeoutError:
                await reply(
                    send, 504, f"the request body did not arrive within {self.deadline_s:g}s"
                )
                return
            if message["type"] != "http.request":
                return  # the client went away
            body = bytes(message.get("body", b""))
            size += len(body)
            if size > self.max_bytes:
                await drain(receive, DRAIN_BYTES)
                await reply(send, 413, too_large)
                return
            chunks.append(body)
            if not message.get("more_body"):
                break
        whole = b"".join(chunks)
        if digit_work(whole) > MAX_DIGIT_WORK:
            await reply(
                send,
                413,
                "integers too long in total in one request (their conversion costs quadratic "
                "time): at most two of 100,000 digits, or more of fewer; split it",
            )
            return
        values = json_values(whole, self.max_values)
        if values > self.max_values:
            await reply(
                send, 413, f"more than {self.max_values} JSON values in one request: split it"
            )
            return
        if self.check_cost is not None:
            try:
                self.check_cost(request_cost(size, values, 0), "parsing this request")
            except TooLarge as err:
                await reply(send, 413, str(err))
                return
        scope[BODY] = (size, values)
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": whole, "more_body": False}
            return await receive()

        # Specs and results may hold big integers (verifiers.jsonio); their cost is bounded
        # by the body's size, read above.
        with big_ints():
            await self.app(scope, replay, send)
