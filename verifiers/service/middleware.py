"""ASGI middleware of the service: request metrics, bearer-token auth, body size limit.

Plain ASGI (no framework), so that a refusal costs no parsing: a request without the
token, or with a body over the limit, is answered before the application sees it.
"""

from __future__ import annotations

import hmac
import json
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

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
    """Answers 413 to a request body over ``max_bytes`` (declared or streamed)."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on with its body read, or answer 413."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
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
            message = await receive()
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
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": b"".join(chunks), "more_body": False}
            return await receive()

        await self.app(scope, replay, send)
