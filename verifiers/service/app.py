"""The FastAPI application of the verification service.

Endpoints:

* ``POST /score``: one verification; the body has ``language``, ``completion``, ``tests``
  and optionally ``policy``, ``limits``, ``compare``, ``max_tests``, ``select``; the answer
  is the :class:`~verifiers.Result` as JSON.
* ``POST /score_batch``: ``{"items": [...], "policy": ..., "limits": ..., ...}``; the
  answer is the list of results, in the order of the items (identical items verified once).
* ``POST /run_code``: SandboxFusion's API (:mod:`verifiers.service.sandbox_fusion`).
* ``GET /health``: whether the sandbox works here, and the queue.
* ``GET /metrics``: Prometheus text format (:mod:`verifiers.service.metrics`).

Verifications run on the SDK's engine loop (as ``verifiers.score`` does), at most
``concurrency`` at once; the server's own loop only parses, admits and answers. Malformed
input is a 422 naming the field, a full queue a 503 with ``Retry-After``, a body or batch
too large a 413, a request over its time a 504. A request's time starts when it is
received (its body's arrival and its parsing count), and its admission counts what it
may cost (:func:`~verifiers.service.admission.request_cost`), not one place per
request. SQL specs may name database files only under the operator's ``sql_roots`` and
PostgreSQL servers only by the operator's ``postgres_sockets``; a path outside them and
one that does not exist get the same 422. See ``docs/service.md``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any, Literal
from urllib.parse import parse_qs, unquote, urlparse

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, TypeAdapter

import verifiers
from verifiers import registry
from verifiers._async import on_engine, run_shutdown_hooks
from verifiers.core import CodeVerifier, Job, Observer, Options, infra_result, make_options
from verifiers.errors import SpecError, UnknownNameError
from verifiers.extraction import MAX_COMPLETION_CHARS, Mode
from verifiers.limits import Limits
from verifiers.protocols import Runtime, delegates
from verifiers.results import Result
from verifiers.service.admission import Admission, Saturated, Ticket, TooLarge, request_cost
from verifiers.service.config import ServiceConfig
from verifiers.service.metrics import ServiceMetrics
from verifiers.service.middleware import (
    BODY,
    BearerAuth,
    BodyLimit,
    RequestMetrics,
    received_at,
    rough_values,
)
from verifiers.service.sandbox_fusion import (
    LANGUAGES,
    RunCodeRequest,
    RunCodeResponse,
    files_of,
    limits_of,
    sandbox_error,
    to_response,
    unsupported,
    workspace_of,
)
from verifiers.specs import SqlTests, StdioCase, StdioTests, parse_tests

log = logging.getLogger("verifiers.service")

_RESULTS = TypeAdapter(list[Result])


class ScoreRequest(BaseModel):
    """One verification (``POST /score``, and each item of a batch)."""

    model_config = ConfigDict(extra="forbid")

    language: str
    completion: str
    tests: Any
    policy: str | None = None
    limits: dict[str, Any] | None = None
    compare: dict[str, Any] | None = None
    max_tests: int | None = None
    select: Literal["last", "first"] | None = None
    extract: bool | None = None
    extraction: Mode | None = None
    max_completion_chars: int | None = None
    stop_on_failure: bool | None = None


class BatchRequest(BaseModel):
    """Many verifications (``POST /score_batch``); item fields override the batch's."""

    model_config = ConfigDict(extra="forbid")

    items: list[ScoreRequest]
    policy: str | None = None
    limits: dict[str, Any] | None = None
    compare: dict[str, Any] | None = None
    max_tests: int | None = None
    select: Literal["last", "first"] | None = None
    extract: bool | None = None
    extraction: Mode | None = None
    max_completion_chars: int | None = None
    stop_on_failure: bool | None = None


class RequestTimeout(Exception):
    """A request was not answered within the server's time (HTTP 504)."""


#: The same answer for a path outside the allowed roots and one that does not exist.
NOT_ALLOWED_FILE = (
    "not a database file this server may read (it reads files under its --sql-root "
    "directories only; send the schema and inserts inline instead)"
)
NOT_ALLOWED_URL = (
    "not a PostgreSQL server this server may use (it connects through the Unix sockets "
    "of its --postgres-socket directories only)"
)


@dataclasses.dataclass(frozen=True)
class Received:
    """What the middleware learnt of a request before it was parsed."""

    at: float
    body_bytes: int = 0
    json_values: int = 0

    @classmethod
    def of(cls, request: Request) -> Received:
        """The receipt of ``request`` (now, for a request no middleware saw)."""
        size, values = request.scope.get(BODY, (0, 0))
        return cls(received_at(request.scope), size, values)


def _inside(path: str, root: str) -> bool:
    return os.path.commonpath([path, root]) == root


def _url_hosts(url: str) -> list[str]:
    """Every host a libpq URL names: its netloc's and each ``host`` parameter's."""
    parsed = urlparse(url)
    hosts = [unquote(h) for h in parsed.netloc.rpartition("@")[2].split(",") if h]
    for value in parse_qs(parsed.query).get("host", []):
        hosts += value.split(",")
    return hosts


class Service:
    """The state of one server process: configuration, queue, metrics and verifiers."""

    def __init__(self, config: ServiceConfig) -> None:
        self.config = config
        self.metrics = ServiceMetrics()
        self.metrics.capacity.set(config.max_queue)
        self.admission = Admission(
            config.max_queue,
            self.metrics.queue_changed,
            memory_capacity=int(config.max_queue_mb * 1024 * 1024),
        )
        self._sql_roots = [os.path.realpath(r) for r in config.sql_roots]
        self._sockets = [os.path.realpath(r) for r in config.postgres_sockets]
        runtime = registry.get_runtime(config.runtime)
        if delegates(runtime):
            raise SpecError("runtime", f"{config.runtime!r} verifies elsewhere; serve a sandbox")
        self.runtime: Runtime = runtime
        self._verifiers: dict[str, CodeVerifier] = {}
        self._slots: asyncio.Semaphore | None = None  # made on the engine loop

    # --- requests into jobs ---------------------------------------------------------------

    def verifier(self, language: str) -> CodeVerifier:
        """The verifier of a language on this server's runtime."""
        name = registry.canonical_language(language)
        found = self._verifiers.get(name)
        if found is None:
            found = self._verifiers[name] = CodeVerifier(registry.get_language(name), self.runtime)
        return found

    def check_limits(self, limits: Limits, field: str = "limits") -> None:
        """Refuse limits over the server's bounds (a client may not take the machine)."""
        for name, cap in self.config.max_limits.items():
            value = getattr(limits, name, None)
            if value is not None and value > cap:
                raise SpecError(f"{field}.{name}", f"at most {cap:g} on this server, got {value:g}")

    def options(
        self, item: ScoreRequest | BatchRequest, base: BatchRequest | None = None
    ) -> Options:
        """Validated options of a request (an item's fields over its batch's)."""

        def pick(name: str) -> Any:
            value = getattr(item, name)
            return value if value is not None or base is None else getattr(base, name)

        cap = pick("max_completion_chars")
        options = make_options(
            pick("policy"),
            pick("limits"),
            pick("compare"),
            pick("max_tests"),
            pick("select") or "last",
            extraction=pick("extraction") or "auto",
            max_completion_chars=MAX_COMPLETION_CHARS if cap is None else cap,
            stop_on_failure=pick("stop_on_failure"),
        )
        self.check_limits(options.limits)
        if pick("extract") is False:
            # The completion is the code itself (no fence or <think> is looked for).
            options = dataclasses.replace(options, extract=False)
        return options

    def job(self, item: ScoreRequest, base: BatchRequest | None = None) -> Job:
        """A validated job (raises SpecError or UnknownNameError naming the field)."""
        verifier = self.verifier(item.language)
        options = self.options(item, base)
        tests = item.tests
        if verifier.language.name == "sql":
            # Before the language looks at the files: it would say which ones exist.
            tests = self.allowed_databases(parse_tests(tests))
        return Job(verifier, item.completion, verifier.parse_tests(tests), options)

    def allowed_databases(self, spec: Any) -> Any:
        """``spec`` with its database paths resolved inside the allowed roots.

        Raises:
            SpecError: A path outside ``sql_roots`` or missing (one answer for both), or a
                PostgreSQL URL whose hosts are not all allowed socket directories.
        """
        if not isinstance(spec, SqlTests):
            return spec
        databases = []
        for n, db in enumerate(spec.databases):
            if db.url is not None and not self._allowed_url(db.url):
                raise SpecError(f"tests.databases[{n}].url", NOT_ALLOWED_URL)
            if db.path is None:
                databases.append(db)
                continue
            found = self._allowed_file(db.path)
            if found is None:
                raise SpecError(f"tests.databases[{n}].path", NOT_ALLOWED_FILE)
            databases.append(db.model_copy(update={"path": found}))
        return spec.model_copy(update={"databases": databases})

    def _allowed_url(self, url: str) -> bool:
        """Whether every host of a libpq URL is an allowed socket directory."""
        hosts = _url_hosts(url)
        return bool(hosts) and all(
            os.path.isabs(h) and os.path.realpath(h) in self._sockets for h in hosts
        )

    def _allowed_file(self, path: str) -> str | None:
        """The real path of a regular file under an allowed root, or None."""
        for root in self._sql_roots:
            # A relative path is taken inside the root; symlinks are resolved first.
            found = os.path.realpath(os.path.join(root, path))
            if _inside(found, root) and os.path.isfile(found):
                return found
        return None

    def embedded(self, items: Sequence[ScoreRequest], received: Received) -> Received:
        """``received`` counting the JSON inside string-encoded ``tests`` too.

        A spec sent as a JSON string is one value of the body, but parsing it makes as
        many values as it holds: they count against ``max_json_values`` and the cost the
        same way. The count is the rough upper bound (every separator inside the string,
        encoded twice or not), so no encoding hides values from it.

        Raises:
            TooLarge: More JSON values than this server parses for one request (413).
        """
        limit = self.config.max_json_values
        total = received.json_values
        for item in items:
            if isinstance(item.tests, str):
                total += rough_values(item.tests.encode("utf-8", errors="replace"))
                if total > limit:
                    raise TooLarge(
                        f"more than {limit} JSON values in one request (its tests "
                        "included): split it"
                    )
        return dataclasses.replace(received, json_values=total)

    def cost(self, jobs: Sequence[Job], received: Received) -> int:
        """What admitting ``jobs`` costs (body, JSON values, tests to run)."""
        tests = 0
        for job in jobs:
            count = len(job.spec)
            if job.options.max_tests is not None:
                count = min(count, job.options.max_tests)
            tests += max(1, count)
        return request_cost(received.body_bytes, received.json_values, tests)

    # --- running ----------------------------------------------------------------------------

    async def run(
        self,
        jobs: Sequence[Job],
        observers: Sequence[Observer | None] | None = None,
        received: Received | None = None,
    ) -> list[Result]:
        """Admit, verify on the engine loop within the request's time, count verdicts.

        Args:
            jobs: The validated jobs.
            observers: One observer per job, or None.
            received: When the request arrived and what its body held (default: now,
                nothing); its time runs from then, parsing included.

        Raises:
            Saturated: The queue is full (503).
            TooLarge: More jobs, or more cost, than the queue holds (413).
            RequestTimeout: Not done in time (504); the verifications are cancelled.
        """
        received = received or Received(time.monotonic())
        late = RequestTimeout(
            f"not done within {self.config.request_timeout_s:g}s; send fewer items "
            "at once or ask the operator for a longer --request-timeout"
        )
        left = received.at + self.config.request_timeout_s - time.monotonic()
        if left <= 0:
            raise late  # its body and parsing took its time
        ticket = self.admission.admit(len(jobs), self.cost(jobs, received))
        try:
            results = await asyncio.wait_for(
                on_engine(self._verify_all(list(jobs), ticket, observers)), left
            )
        except asyncio.TimeoutError:
            raise late from None
        finally:
            ticket.close()
        for result in results:
            self.metrics.verdicts.labels(result.status.value).inc()
        return results

    async def _verify_all(
        self, jobs: list[Job], ticket: Ticket, observers: Sequence[Observer | None] | None
    ) -> list[Result]:
        # On the engine loop: one semaphore bounds every request's verifications.
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.config.concurrency)
        slots = self._slots
        unique: dict[str, list[int]] = {}
        for index, job in enumerate(jobs):
            key = job.key() if observers is None else str(index)
            unique.setdefault(key, []).append(index)
        ticket.drop(len(jobs) - len(unique))
        results: list[Result | None] = [None] * len(jobs)

        async def one(indices: list[int]) -> None:
            job = jobs[indices[0]]
            observe = observers[indices[0]] if observers is not None else None
            async with slots:
                if not ticket.start():
                    result = infra_result(job, "the request was abandoned")
                else:
                    try:
                        result = await self._verify(job, observe)
                    finally:
                        ticket.finish()
            for index in indices:
                results[index] = result

        await asyncio.gather(*(one(indices) for indices in unique.values()))
        assert all(r is not None for r in results)
        return results  # type: ignore[return-value]

    async def _verify(self, job: Job, observe: Observer | None) -> Result:
        try:
            return await job.verifier.verify(job.completion, job.spec, job.options, observe)
        except SpecError:
            raise
        except Exception as err:
            # A fault of the SDK is this result's sandbox_error, as in every batch.
            log.exception("verification failed inside the SDK")
            return infra_result(job, f"{type(err).__name__}: {err}")

    # --- SandboxFusion ----------------------------------------------------------------------

    async def run_code(
        self, request: RunCodeRequest, received: Received | None = None
    ) -> RunCodeResponse:
        """One SandboxFusion run: a stdin/stdout test with one case, no code extraction."""
        why = unsupported(request)
        if why is not None:
            return sandbox_error(why)
        language = LANGUAGES[request.language]
        verifier = self.verifier(language)
        wanted, notes = limits_of(request, Limits(), self.config.max_limits)
        try:
            limits = Limits.model_validate(wanted)
        except ValueError as err:
            raise SpecError("run_timeout/compile_timeout/memory_limit_MB", str(err)) from None
        self.check_limits(limits, "limits")
        workspace = workspace_of(request)
        options = Options(limits=limits, extract=False, workspace=workspace)
        spec = StdioTests(cases=[StdioCase(input=request.stdin or "", output="")])
        stdout: list[str] = []

        def observe(index: int, outcome: Any) -> None:
            stdout.append(outcome.actual)

        [result] = await self.run([Job(verifier, request.code, spec, options)], [observe], received)
        answer = to_response(result, verifier.language.name, stdout[0] if stdout else None)
        if workspace is not None:
            notes += [f"{path} not fetched: {why}" for path, why in workspace.skipped.items()]
        message = "; ".join(part for part in (answer.message, *notes) if part)
        return answer.model_copy(update={"files": files_of(workspace), "message": message})

    # --- health -----------------------------------------------------------------------------

    async def health(self) -> tuple[bool, dict[str, Any]]:
        """Whether this server can verify, and what it is doing."""
        check = await asyncio.to_thread(self.runtime.check)
        a = self.admission
        return check.available, {
            "status": "ok" if check.available else "unavailable",
            "version": verifiers.__version__,
            "runtime": {"name": check.name, "available": check.available, "detail": check.detail},
            "languages": registry.language_names(),
            "sandbox_fusion_languages": sorted(LANGUAGES),
            "queue": {
                "capacity": a.capacity,
                "waiting": a.waiting,
                "running": a.running,
                "cost_mb": round(a.cost / 2**20, 3),
                "capacity_mb": round(a.memory_capacity / 2**20, 3),
            },
            "concurrency": self.config.concurrency,
        }


def _error(status: int, detail: str, **extra: Any) -> JSONResponse:
    return JSONResponse({"detail": detail, **extra}, status_code=status)


def create_app(config: ServiceConfig | None = None) -> FastAPI:
    """The ASGI application for ``config`` (default: :class:`ServiceConfig` defaults).

    The configuration's exposure is not checked here (``verifiers serve`` does, before
    binding): an application object does not know where it will be served.
    """
    config = config or ServiceConfig()
    service = Service(config)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        check = await asyncio.to_thread(service.runtime.check)
        if check.available:
            log.info("verifying on %s: %s", check.name, check.detail)
        else:
            log.error("runtime %s is unavailable here: %s", check.name, check.detail)
        yield
        # In-flight requests are done (uvicorn waited for them): release the sandboxes.
        await on_engine(run_shutdown_hooks())
        service.metrics.worker_exited()

    app = FastAPI(
        title="verifiers",
        version=verifiers.__version__,
        summary="Verify model-written code by running it in a sandbox.",
        lifespan=lifespan,
    )
    app.state.service = service

    @app.exception_handler(SpecError)
    async def spec_error(request: Request, err: SpecError) -> JSONResponse:
        return _error(422, str(err), field=err.field, problem=err.problem)

    @app.exception_handler(UnknownNameError)
    async def unknown_name(request: Request, err: UnknownNameError) -> JSONResponse:
        return _error(422, str(err), field=err.kind, problem=str(err))

    @app.exception_handler(Saturated)
    async def saturated(request: Request, err: Saturated) -> JSONResponse:
        response = _error(503, f"server busy: {err}; retry later")
        response.headers["Retry-After"] = str(config.retry_after_s)
        return response

    @app.exception_handler(TooLarge)
    async def too_large(request: Request, err: TooLarge) -> JSONResponse:
        return _error(413, str(err))

    @app.exception_handler(RequestTimeout)
    async def timed_out(request: Request, err: RequestTimeout) -> JSONResponse:
        return _error(504, str(err))

    @app.post("/score", response_model=Result)
    async def score(body: ScoreRequest, request: Request) -> Response:
        """Verify one completion; the answer is its Result."""
        received = service.embedded([body], Received.of(request))
        [result] = await service.run([service.job(body)], received=received)
        return Response(result.model_dump_json(), media_type="application/json")

    @app.post("/score_batch", response_model=list[Result])
    async def score_batch(body: BatchRequest, request: Request) -> Response:
        """Verify many completions; the answer is their Results, in order."""
        received = service.embedded(body.items, Received.of(request))
        jobs = []
        for index, item in enumerate(body.items):
            try:
                jobs.append(service.job(item, body))
            except SpecError as err:
                raise SpecError(f"items[{index}].{err.field}", err.problem) from None
            except UnknownNameError as err:
                raise SpecError(f"items[{index}].{err.kind}", str(err)) from None
        results = await service.run(jobs, received=received)
        return Response(_RESULTS.dump_json(results), media_type="application/json")

    @app.post("/run_code", response_model=RunCodeResponse)
    async def run_code(body: RunCodeRequest, request: Request) -> RunCodeResponse:
        """SandboxFusion's run_code: run one program on its stdin."""
        return await service.run_code(body, Received.of(request))

    @app.get("/health")
    async def health() -> JSONResponse:
        """200 when this server can verify (the sandbox works), 503 otherwise."""
        ok, body = await service.health()
        return JSONResponse(body, status_code=200 if ok else 503)

    @app.get("/metrics")
    async def metrics() -> Response:
        """Prometheus metrics (text format)."""
        return Response(service.metrics.render(), media_type=service.metrics.content_type)

    # Added innermost first: metrics see every answer (and start the request's clock),
    # auth refuses before the body is read.
    app.add_middleware(
        BodyLimit,
        max_bytes=config.max_body_bytes,
        max_values=config.max_json_values,
        deadline_s=config.request_timeout_s,
        check_cost=service.admission.check_cost,
    )
    if config.token:
        app.add_middleware(BearerAuth, token=config.token)
    app.add_middleware(RequestMetrics, metrics=service.metrics)
    return app


def app_from_env() -> FastAPI:
    """The application for the configuration ``verifiers serve`` left in the environment.

    uvicorn's worker processes call this factory (``--factory``).
    """
    return create_app(ServiceConfig.from_env())


__all__ = ["BatchRequest", "ScoreRequest", "Service", "app_from_env", "create_app"]
