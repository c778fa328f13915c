"""The remote runtime: verifications sent whole to a verification service (``verifiers serve``).

This is not a sandbox runtime: the :class:`~verifiers.protocols.Runtime` protocol is about
sessions running a program's steps, and shipping every step over the network would put a
round trip between each test and its judgement. A :class:`RemoteRuntime` is a
:class:`~verifiers.protocols.DelegatingRuntime` instead: the engine hands it validated
jobs (language, completion, parsed tests, options) in batches, it posts them to the
server's ``/score_batch``, and the server runs the same pipeline on its own sandboxes.
Validation, deduplication, the :class:`~verifiers.ResultCache` and the order of results
stay on the caller's side, as with any runtime.

Faults of the service are never the model's: a server that cannot be reached (after
retries), answers an error or garbage, or does not answer in time gives ``sandbox_error``
results saying why, never an exception. Only connection faults are retried (the request
did not arrive, or the connection broke before the answer), and a 503 (the server's queue
is full; nothing ran), after its ``Retry-After``. Answers are never retried: a 4xx, a 504
or a verdict is final.

Uses ``httpx`` (``pip install 'verifiers-sdk[service]'``), imported on first use.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any

from pydantic import TypeAdapter

from verifiers._async import on_shutdown
from verifiers.core import Job, infra_result
from verifiers.errors import RuntimeUnavailableError, SpecError
from verifiers.extraction import MAX_COMPLETION_CHARS
from verifiers.limits import Limits
from verifiers.program import Program
from verifiers.protocols import RuntimeCheck, Session
from verifiers.results import Result

if TYPE_CHECKING:
    import httpx

log = logging.getLogger("verifiers.runtimes.remote")

URL_ENV = "VERIFIERS_REMOTE_URL"
TOKEN_ENV = "VERIFIERS_SERVICE_TOKEN"
DEFAULT_URL = "http://127.0.0.1:8080"
#: Longest wait a server's Retry-After may impose before one retry.
MAX_RETRY_AFTER_S = 30.0
_RESULTS = TypeAdapter(list[Result])


class _Failed(Exception):
    """A batch could not be verified remotely; the message says why."""


class RemoteRuntime:
    """Verify on a verification service (``verifiers serve``) instead of on this machine.

    ``runtime="remote"`` uses one shared instance configured from the environment
    (``VERIFIERS_REMOTE_URL``, default ``http://127.0.0.1:8080``, and
    ``VERIFIERS_SERVICE_TOKEN``); pass an instance for anything else.

    Args:
        url: Base URL of the service.
        token: Bearer token (default: ``VERIFIERS_SERVICE_TOKEN``).
        timeout_s: Seconds to wait for the answer to one batch request.
        retries: Times a request is sent again after a connection fault or a 503.
        batch_size: Verifications per request.
        max_in_flight: Requests outstanding at once (per event loop).
        backoff_s: First wait before a retry (doubled each time).
        connect_timeout_s: Seconds to open a connection.

    Example:
        >>> remote = RemoteRuntime("http://verifier:8080", token=secret)
        >>> verifiers.score_batch(items, runtime=remote)
    """

    name = "remote"

    def __init__(
        self,
        url: str | None = None,
        token: str | None = None,
        *,
        timeout_s: float = 600.0,
        retries: int = 3,
        batch_size: int = 32,
        max_in_flight: int = 8,
        backoff_s: float = 0.5,
        connect_timeout_s: float = 10.0,
    ) -> None:
        if retries < 0:
            raise ValueError(f"retries: expected an integer >= 0, got {retries!r}")
        for field, value in (("batch_size", batch_size), ("max_in_flight", max_in_flight)):
            if value < 1:
                raise ValueError(f"{field}: expected a positive integer, got {value!r}")
        self.url = (url or os.environ.get(URL_ENV) or DEFAULT_URL).rstrip("/")
        self.token = token if token is not None else (os.environ.get(TOKEN_ENV) or None)
        self.timeout_s = timeout_s
        self.retries = retries
        self.batch_size = batch_size
        self.max_in_flight = max_in_flight
        self.backoff_s = backoff_s
        self.connect_timeout_s = connect_timeout_s
        self._client: httpx.AsyncClient | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._slots: asyncio.Semaphore | None = None
        self._hooked = False

    def __repr__(self) -> str:
        return f"RemoteRuntime({self.url!r})"

    # --- the Runtime surface ---------------------------------------------------------------

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        return headers

    def check(self) -> RuntimeCheck:
        """Whether the service answers ``GET /health`` and can verify (blocking)."""
        try:
            import httpx
        except ImportError:
            return RuntimeCheck(
                self.name, False, "needs httpx: pip install 'verifiers-sdk[service]'"
            )
        try:
            response = httpx.get(f"{self.url}/health", headers=self._headers(), timeout=5.0)
        except httpx.HTTPError as err:
            return RuntimeCheck(self.name, False, f"{self.url}: {type(err).__name__}: {err}")
        return self._verdict(response.status_code, response.text)

    async def ahealth(self) -> RuntimeCheck:
        """:meth:`check` for async callers (uses this runtime's connection pool)."""
        import httpx

        client, _ = self._connection()
        try:
            response = await client.get(f"{self.url}/health", timeout=5.0)
        except httpx.HTTPError as err:
            return RuntimeCheck(self.name, False, f"{self.url}: {type(err).__name__}: {err}")
        return self._verdict(response.status_code, response.text)

    def _verdict(self, status: int, text: str) -> RuntimeCheck:
        try:
            body = json.loads(text)
            runtime = body.get("runtime", {})
            detail = f"{self.url} ({body.get('version', '?')}): {runtime.get('detail', '')}"
        except (ValueError, AttributeError):
            detail = f"{self.url}: {text[:200]}"
        return RuntimeCheck(self.name, status == 200, f"HTTP {status}, {detail}")

    def session(self, program: Program, limits: Limits) -> AbstractAsyncContextManager[Session]:
        """Not available: this runtime verifies whole jobs on the service, not steps here."""
        raise RuntimeUnavailableError(
            "the remote runtime verifies whole programs on a server and opens no session "
            "here (differential testing and observers need a local runtime)"
        )

    # --- the DelegatingRuntime surface ----------------------------------------------------

    def validate_job(self, job: Job) -> None:
        """Refuse what cannot cross the wire (a scoring function rather than a name)."""
        if job.options.policy is not None and not isinstance(job.options.policy, str):
            raise SpecError(
                "policy", "a function cannot be sent to the remote runtime; use a policy name"
            )

    async def verify_jobs(self, jobs: Sequence[Job]) -> list[Result]:
        """Verify ``jobs`` on the service (one request, split if the server finds it too big).

        Returns one result per job, in order; faults are ``sandbox_error`` results.
        """
        if not jobs:
            return []
        _, slots = self._connection()
        try:
            async with slots:
                return await self._post(list(jobs))
        except _Failed as err:
            log.warning("remote verification failed: %s", err)
            return [infra_result(job, str(err)) for job in jobs]

    # --- HTTP -------------------------------------------------------------------------------

    def _connection(self) -> tuple[httpx.AsyncClient, asyncio.Semaphore]:
        """The client and request slots of the running loop (made on first use there)."""
        import httpx

        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop or self._slots is None:
            self._client = httpx.AsyncClient(
                headers=self._headers(),
                timeout=httpx.Timeout(self.timeout_s, connect=self.connect_timeout_s),
                limits=httpx.Limits(
                    max_connections=self.max_in_flight,
                    max_keepalive_connections=self.max_in_flight,
                ),
            )
            self._loop = loop
            self._slots = asyncio.Semaphore(self.max_in_flight)
            if not self._hooked:
                self._hooked = True
                on_shutdown(self.aclose)
        return self._client, self._slots

    async def aclose(self) -> None:
        """Close the connection pool (it is made again on the next request)."""
        client, self._client = self._client, None
        if client is not None and self._loop is asyncio.get_running_loop():
            with contextlib.suppress(Exception):
                await client.aclose()

    def _payload(self, job: Job) -> dict[str, Any]:
        options = job.options
        return {
            "language": job.verifier.language.name,
            "completion": job.completion,
            "tests": job.spec.model_dump(mode="json", by_alias=True),
            "policy": options.policy,
            "limits": options.limits.model_dump(mode="json"),
            "compare": options.compare.model_dump(mode="json") if options.compare else None,
            "max_tests": options.max_tests,
            "select": options.select,
            "extract": options.extract,
            # Sent only when set, so that servers older than these options still answer.
            **({"extraction": options.extraction} if options.extraction != "auto" else {}),
            **(
                {"max_completion_chars": options.max_completion_chars}
                if options.max_completion_chars != MAX_COMPLETION_CHARS
                else {}
            ),
        }

    async def _post(self, jobs: list[Job]) -> list[Result]:
        import httpx

        client, _ = self._connection()
        url = f"{self.url}/score_batch"
        body = json.dumps({"items": [self._payload(job) for job in jobs]}).encode()
        for attempt in range(self.retries + 1):
            last = attempt == self.retries
            delay = self.backoff_s * 2**attempt
            try:
                response = await client.post(url, content=body)
            except (
                httpx.ConnectError,
                httpx.ConnectTimeout,
                httpx.RemoteProtocolError,
                httpx.ReadError,
                httpx.WriteError,
                httpx.PoolTimeout,
            ) as err:
                # The request did not arrive, or the connection broke before the answer:
                # verifying again is safe (a verification has no effect outside it).
                if last:
                    raise _Failed(f"cannot reach {url}: {type(err).__name__}: {err}") from None
                await asyncio.sleep(delay)
                continue
            except httpx.TimeoutException:
                raise _Failed(f"no answer from {url} within {self.timeout_s:g}s") from None
            except httpx.HTTPError as err:
                raise _Failed(f"{url}: {type(err).__name__}: {err}") from None
            status = response.status_code
            if status == 503 and not last:
                await asyncio.sleep(_retry_after(response.headers.get("retry-after"), delay))
                continue
            if status == 413 and len(jobs) > 1:
                # Over the server's body or queue size: halves may fit.
                half = len(jobs) // 2
                return await self._post(jobs[:half]) + await self._post(jobs[half:])
            if status != 200:
                raise _Failed(f"{url} answered HTTP {status}: {_detail(response.text)}")
            try:
                results = _RESULTS.validate_json(response.content)
            except ValueError as err:
                raise _Failed(f"{url} answered something that is not results: {err}") from None
            if len(results) != len(jobs):
                raise _Failed(f"{url} answered {len(results)} results for {len(jobs)} items")
            return results
        raise _Failed(f"{url} stayed busy (HTTP 503) after {self.retries} retries")


def _retry_after(header: str | None, default: float) -> float:
    try:
        return min(MAX_RETRY_AFTER_S, max(0.0, float(header))) if header else default
    except ValueError:
        return default


def _detail(text: str) -> str:
    try:
        detail = json.loads(text).get("detail", text)
    except (ValueError, AttributeError):
        detail = text
    return str(detail)[:500]
