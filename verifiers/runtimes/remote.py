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
retries), answers an error or garbage, does not finish its answer in time, or answers
more than the size cap gives ``sandbox_error`` results saying why, never an exception.
The time is a total deadline per batch (sending, waiting, every byte of the answer,
retries included), not a bound on each read: a server that trickles its answer a byte
at a time is cut off at the deadline like one that says nothing. Answers are read as a
stream and dropped at the cap, so a huge answer costs the client the cap, not its size.
Only connection faults are retried (the request did not arrive, or the connection broke
before the answer), and a 503 (the server's queue is full; nothing ran), after its
``Retry-After``. Answers are never retried: a 4xx, a 504 or a verdict is final.

Uses ``httpx`` (``pip install 'verifiers-sdk[service]'``), imported on first use.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import time
from collections.abc import Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from pydantic import TypeAdapter

from verifiers import jsonio
from verifiers._async import on_shutdown
from verifiers.core import Job, infra_result
from verifiers.errors import RuntimeUnavailableError, SpecError
from verifiers.extraction import MAX_COMPLETION_CHARS
from verifiers.limits import DEFAULT_BUDGET_TIMEOUTS, Limits
from verifiers.program import Program
from verifiers.protocols import RuntimeCheck, Session
from verifiers.results import Result, Status

if TYPE_CHECKING:
    import httpx

log = logging.getLogger("verifiers.runtimes.remote")

URL_ENV = "VERIFIERS_REMOTE_URL"
TOKEN_ENV = "VERIFIERS_SERVICE_TOKEN"
DEFAULT_URL = "http://127.0.0.1:8080"
#: Longest wait a server's Retry-After may impose before one retry.
MAX_RETRY_AFTER_S = 30.0
#: Default cap on one answer's size (a batch of 32 results with many tests is a few MB).
MAX_RESPONSE_BYTES = 128 * 1024 * 1024
#: Total time and size of a ``GET /health`` answer.
HEALTH_TIMEOUT_S = 5.0
HEALTH_MAX_BYTES = 1024 * 1024
_RESULTS = TypeAdapter(list[Result])


class _Failed(Exception):
    """A batch could not be verified remotely; the message says why."""


class _TooLarge(Exception):
    """An answer went over the size cap (raised while it is read)."""


class _Encoded(_Failed):
    """An answer in a content encoding (identity was asked for)."""

    def __init__(self, encoding: str) -> None:
        super().__init__(
            f"an answer in the content encoding {encoding[:40]!r} (identity was asked)"
        )


def _over(limit: int) -> str:
    return f"an answer over {limit} bytes (max_response_bytes)"


class RemoteRuntime:
    """Verify on a verification service (``verifiers serve``) instead of on this machine.

    ``runtime="remote"`` uses one shared instance configured from the environment
    (``VERIFIERS_REMOTE_URL``, default ``http://127.0.0.1:8080``, and
    ``VERIFIERS_SERVICE_TOKEN``); pass an instance for anything else.

    Args:
        url: Base URL of the service.
        token: Bearer token (default: ``VERIFIERS_SERVICE_TOKEN``).
        timeout_s: Total seconds one batch may take, from sending it to the last byte of
            its answer, retries and waits included.
        retries: Times a request is sent again after a connection fault or a 503.
        batch_size: Verifications per request.
        max_in_flight: Requests outstanding at once (per event loop).
        backoff_s: First wait before a retry (doubled each time).
        connect_timeout_s: Seconds to open a connection.
        max_response_bytes: Largest answer read; a longer one is a ``sandbox_error``.

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
        max_response_bytes: int = MAX_RESPONSE_BYTES,
    ) -> None:
        if retries < 0:
            raise ValueError(f"retries: expected an integer >= 0, got {retries!r}")
        for field, value in (
            ("batch_size", batch_size),
            ("max_in_flight", max_in_flight),
            ("max_response_bytes", max_response_bytes),
        ):
            if value < 1:
                raise ValueError(f"{field}: expected a positive integer, got {value!r}")
        if not timeout_s > 0:
            raise ValueError(f"timeout_s: expected a positive number, got {timeout_s!r}")
        self.url = (url or os.environ.get(URL_ENV) or DEFAULT_URL).rstrip("/")
        self.token = token if token is not None else (os.environ.get(TOKEN_ENV) or None)
        self.timeout_s = timeout_s
        self.retries = retries
        self.batch_size = batch_size
        self.max_in_flight = max_in_flight
        self.backoff_s = backoff_s
        self.connect_timeout_s = connect_timeout_s
        self.max_response_bytes = max_response_bytes
        self._client: httpx.AsyncClient | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._slots: asyncio.Semaphore | None = None
        self._hooked = False

    @property
    def shown(self) -> str:
        """The URL as messages show it: without a password it may carry."""
        parts = urlsplit(self.url)
        if parts.password is None:
            return self.url
        host = parts.hostname or ""
        if parts.port is not None:
            host = f"{host}:{parts.port}"
        return urlunsplit(parts._replace(netloc=f"{parts.username or ''}:***@{host}"))

    def __repr__(self) -> str:
        return f"RemoteRuntime({self.shown!r})"

    # --- the Runtime surface ---------------------------------------------------------------

    def _headers(self) -> dict[str, str]:
        # identity: a compressed answer could expand past the cap within one chunk.
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "Accept-Encoding": "identity",
        }
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        return headers

    def check(self) -> RuntimeCheck:
        """Whether the service answers ``GET /health`` and can verify (blocking).

        At most ``HEALTH_TIMEOUT_S`` for the whole answer (plus one read), at most
        ``HEALTH_MAX_BYTES`` of it.
        """
        try:
            import httpx
        except ImportError:
            return RuntimeCheck(
                self.name, False, "needs httpx: pip install 'verifiers-sdk[service]'"
            )
        deadline = time.monotonic() + HEALTH_TIMEOUT_S
        try:
            with httpx.stream(
                "GET", f"{self.url}/health", headers=self._headers(), timeout=HEALTH_TIMEOUT_S
            ) as response:
                _refuse_encoding(response.headers)
                chunks: list[bytes] = []
                size = 0
                for chunk in response.iter_raw():
                    size += len(chunk)
                    chunks.append(chunk)
                    if size > HEALTH_MAX_BYTES:
                        raise _TooLarge
                    if time.monotonic() > deadline:
                        raise httpx.ReadTimeout("the answer took too long")
        except _TooLarge:
            return RuntimeCheck(self.name, False, f"{self.shown}: {_over(HEALTH_MAX_BYTES)}")
        except _Encoded as err:
            return RuntimeCheck(self.name, False, f"{self.shown}: {err}")
        except httpx.HTTPError as err:
            return RuntimeCheck(self.name, False, f"{self.shown}: {type(err).__name__}: {err}")
        return self._verdict(response.status_code, b"".join(chunks).decode(errors="replace"))

    async def ahealth(self) -> RuntimeCheck:
        """:meth:`check` for async callers (uses this runtime's connection pool)."""
        import httpx

        client, _ = self._connection()
        try:
            response, body = await asyncio.wait_for(
                self._exchange(client, "GET", f"{self.url}/health", None, HEALTH_MAX_BYTES),
                HEALTH_TIMEOUT_S,
            )
        except asyncio.TimeoutError:
            return RuntimeCheck(
                self.name, False, f"{self.shown}: no answer in {HEALTH_TIMEOUT_S:g}s"
            )
        except _TooLarge:
            return RuntimeCheck(self.name, False, f"{self.shown}: {_over(HEALTH_MAX_BYTES)}")
        except _Encoded as err:
            return RuntimeCheck(self.name, False, f"{self.shown}: {err}")
        except httpx.HTTPError as err:
            return RuntimeCheck(self.name, False, f"{self.shown}: {type(err).__name__}: {err}")
        return self._verdict(response.status_code, body.decode(errors="replace"))

    def _verdict(self, status: int, text: str) -> RuntimeCheck:
        try:
            body = jsonio.loads(text)
            runtime = body.get("runtime", {})
            detail = f"{self.shown} ({body.get('version', '?')}): {runtime.get('detail', '')}"
        except (ValueError, AttributeError, RecursionError):
            detail = f"{self.shown}: {text[:200]}"
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
        if job.options.workspace is not None:
            # Its files would be read back into this process's object, which a server
            # cannot fill: /run_code takes files and fetch_files itself.
            raise SpecError("workspace", "files cannot be sent to the remote runtime")

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
            "limits": options.limits.model_dump(
                mode="json",
                # Sent only when set, as the options below.
                exclude={"budget_timeouts"}
                if options.limits.budget_timeouts == DEFAULT_BUDGET_TIMEOUTS
                else None,
            ),
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
            **(
                {"stop_on_failure": options.stop_on_failure}
                if options.stop_on_failure is not None
                else {}
            ),
        }

    async def _exchange(
        self,
        client: httpx.AsyncClient,
        method: str,
        url: str,
        body: bytes | None,
        limit: int,
    ) -> tuple[httpx.Response, bytes]:
        """Send one request and read its answer as a stream, at most ``limit`` bytes.

        Raises:
            _TooLarge: The answer declares or sends more than ``limit`` bytes.
            httpx.HTTPError: A transport fault.
        """
        async with client.stream(method, url, content=body) as response:
            declared = response.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > limit:
                raise _TooLarge
            _refuse_encoding(response.headers)
            chunks: list[bytes] = []
            size = 0
            # Raw bytes: the cap counts what arrives, never what a compressed answer (which
            # identity was asked instead of) would unpack to.
            async for chunk in response.aiter_raw():
                size += len(chunk)
                if size > limit:
                    raise _TooLarge  # leaving the block closes the connection
                chunks.append(chunk)
        return response, b"".join(chunks)

    async def _post(self, jobs: list[Job]) -> list[Result]:
        """The results of ``jobs``, within one total deadline (retries and splits included)."""
        deadline = asyncio.get_running_loop().time() + self.timeout_s
        return await self._post_until(jobs, deadline)

    async def _post_until(self, jobs: list[Job], deadline: float) -> list[Result]:
        import httpx

        client, _ = self._connection()
        loop = asyncio.get_running_loop()
        url = f"{self.url}/score_batch"
        shown = f"{self.shown}/score_batch"
        late = f"no complete answer from {shown} within {self.timeout_s:g}s"
        body = jsonio.dumps({"items": [self._payload(job) for job in jobs]}).encode()
        for attempt in range(self.retries + 1):
            last = attempt == self.retries
            delay = self.backoff_s * 2**attempt
            left = deadline - loop.time()
            if left <= 0:
                raise _Failed(late)
            try:
                response, content = await asyncio.wait_for(
                    self._exchange(client, "POST", url, body, self.max_response_bytes), left
                )
            except asyncio.TimeoutError:
                raise _Failed(late) from None
            except _TooLarge:
                raise _Failed(f"{shown} sent {_over(self.max_response_bytes)}") from None
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
                    raise _Failed(f"cannot reach {shown}: {type(err).__name__}: {err}") from None
                await asyncio.sleep(min(delay, max(0.0, deadline - loop.time())))
                continue
            except httpx.TimeoutException:
                raise _Failed(late) from None
            except httpx.HTTPError as err:
                raise _Failed(f"{shown}: {type(err).__name__}: {err}") from None
            status = response.status_code
            if status == 503 and not last:
                wait = _retry_after(response.headers.get("retry-after"), delay)
                if loop.time() + wait >= deadline:
                    raise _Failed(f"{shown} stayed busy (HTTP 503) until the deadline")
                await asyncio.sleep(wait)
                continue
            if status == 413 and len(jobs) > 1:
                # Over the server's body or queue size: halves may fit (same deadline).
                half = len(jobs) // 2
                return await self._post_until(jobs[:half], deadline) + await self._post_until(
                    jobs[half:], deadline
                )
            text = content.decode(errors="replace")
            if status != 200:
                raise _Failed(f"{shown} answered HTTP {status}: {_detail(text)}")
            try:
                results = _RESULTS.validate_json(content)
            except ValueError as err:
                raise _Failed(f"{shown} answered something that is not results: {err}") from None
            if len(results) != len(jobs):
                raise _Failed(f"{shown} answered {len(results)} results for {len(jobs)} items")
            for job, result in zip(jobs, results, strict=True):
                wrong = _inconsistent(job, result)
                if wrong:
                    raise _Failed(f"{shown} answered a result that cannot be this item's: {wrong}")
            # Whether the server had it cached is the server's business: here it is new.
            return [r.model_copy(update={"cached": False}) if r.cached else r for r in results]
        raise _Failed(f"{shown} stayed busy (HTTP 503) after {self.retries} retries")


def _refuse_encoding(headers: Mapping[str, str]) -> None:
    """Refuse an answer in any content encoding but identity (which was asked for).

    A few kilobytes of stacked gzip unpack to gigabytes.
    """
    encoding = headers.get("content-encoding", "identity").strip().lower()
    if encoding not in ("", "identity"):
        raise _Encoded(encoding)


def _inconsistent(job: Job, result: Result) -> str:
    """Why ``result`` cannot be the server's verification of ``job`` (empty if it can).

    A server is another process, and maybe another operator's: its results are checked for
    what a verification of this job must hold before any reaches a reward or a cache.
    """
    if result.language != job.verifier.language.name:
        return f"a {result.language} result for a {job.verifier.language.name} item"
    tests = len(job.spec)
    if not 0 <= result.passed <= result.total <= tests or len(result.tests) > tests:
        return f"{result.passed} passed of {result.total} run, for {tests} tests"
    failed = [t for t in result.tests if t.status is not Status.PASSED]
    if result.status is Status.PASSED and failed:
        return "passed with a test that did not pass"
    if not (0.0 <= result.score <= 1.0) or not math.isfinite(result.duration_s):
        return "a score or duration out of range"
    return ""


def _retry_after(header: str | None, default: float) -> float:
    try:
        return min(MAX_RETRY_AFTER_S, max(0.0, float(header))) if header else default
    except ValueError:
        return default


def _detail(text: str) -> str:
    try:
        detail = jsonio.loads(text).get("detail", text)
    except (ValueError, AttributeError, RecursionError):
        detail = text
    return str(detail)[:500]
