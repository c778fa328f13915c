"""The Ray executor: chunks of a batch verified on long-lived Ray actors (see ``docs/scaling.md``).

Each actor runs this SDK's engine with its own local runtime, so warm sandboxes and build
caches persist between chunks and batches. Ray is imported when a Ray executor is first
used (``pip install verifiers-sdk[ray]``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import queue
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from verifiers import registry
from verifiers._async import in_engine, on_engine, run_shutdown_hooks
from verifiers.core import CodeVerifier, Job, Options, guarded, infra_result
from verifiers.engine import Collector, Progress
from verifiers.errors import RuntimeUnavailableError, SpecError
from verifiers.executors.base import Executor
from verifiers.result_cache import ResultCache
from verifiers.results import Result
from verifiers.specs import TestSpec

log = logging.getLogger("verifiers.executors.ray")

T = TypeVar("T")

#: What crosses the wire for one item: language, runtime name, completion, tests, options.
Payload = tuple[str, str, str, TestSpec, Options]
#: Guards the process-wide starter thread.
_starter_lock = threading.Lock()


def _import_ray() -> Any:
    try:
        import ray
    except ImportError as err:
        raise RuntimeUnavailableError(
            f"the Ray executor needs ray (pip install 'verifiers-sdk[ray]'): {err}"
        ) from None
    return ray


#: A daemon thread that starts local Ray clusters. Ray's child processes (GCS, raylet) are
#: tied to the thread that spawned them by a parent-death signal, so a cluster started from
#: a short-lived thread dies with it; this one lives as long as the process.
_starter: queue.SimpleQueue[tuple[Callable[[], Any], queue.SimpleQueue[Any]]] | None = None


def _on_lasting_thread(fn: Callable[[], T]) -> T:
    global _starter
    if threading.current_thread() is threading.main_thread():
        return fn()
    with _starter_lock:
        if _starter is None:
            requests: queue.SimpleQueue[tuple[Callable[[], Any], queue.SimpleQueue[Any]]]
            requests = queue.SimpleQueue()

            def serve() -> None:
                while True:
                    call, reply = requests.get()
                    try:
                        reply.put((True, call()))
                    except BaseException as err:
                        reply.put((False, err))

            threading.Thread(target=serve, name="verifiers-ray-start", daemon=True).start()
            _starter = requests
    reply: queue.SimpleQueue[Any] = queue.SimpleQueue()
    _starter.put((fn, reply))
    ok, value = reply.get()
    if not ok:
        raise value
    return value  # type: ignore[no-any-return]


_remote_worker: Any = None


def _worker_class(ray: Any) -> Any:
    """The Ray actor class of :class:`_Worker`, made once (Ray exports it once)."""
    global _remote_worker
    if _remote_worker is None:
        _remote_worker = ray.remote(_Worker)
    return _remote_worker


class _Worker:
    """The body of one Ray actor: the local engine, kept warm between chunks.

    Chunks that arrive while others run share one limit on verifications at once, so a
    chunk's slow tail never leaves the worker's other slots idle.
    """

    def __init__(self, concurrency: int) -> None:
        self.concurrency = concurrency
        self._verifiers: dict[tuple[str, str], CodeVerifier] = {}
        self._limits: dict[int, asyncio.Semaphore] = {}

    async def ping(self) -> int:
        """The worker's process id (also proves the worker is up)."""
        return os.getpid()

    async def verify(self, payloads: list[Payload], limit: int | None) -> list[Result]:
        """Verify one chunk; one result per payload, in order."""
        return await on_engine(self._verify(payloads, limit or self.concurrency))

    async def close_idle_sandboxes(self) -> None:
        """Stop this worker's warm sandboxes."""
        await on_engine(run_shutdown_hooks())

    async def _verify(self, payloads: list[Payload], limit: int) -> list[Result]:
        # Runs on the engine loop, where the semaphores live.
        semaphore = self._limits.get(limit)
        if semaphore is None:
            semaphore = self._limits[limit] = asyncio.Semaphore(limit)

        async def one(payload: Payload) -> Result:
            language, runtime, completion, spec, options = payload
            verifier = self._verifiers.get((language, runtime))
            if verifier is None:
                verifier = self._verifiers[(language, runtime)] = CodeVerifier(
                    registry.get_language(language), registry.get_runtime(runtime)
                )
            job = Job(verifier, completion, spec, options)
            async with semaphore:
                try:
                    return await guarded(job)
                except Exception as err:  # SpecError cannot happen (validated by the driver)
                    return infra_result(job, f"{type(err).__name__} on a Ray worker: {err}")

        return list(await asyncio.gather(*(one(p) for p in payloads)))


@dataclass
class RayStats:
    """What a :class:`RayExecutor` has done so far (cumulative over calls).

    Attributes:
        chunks_sent: Chunks submitted to workers, resubmissions included.
        chunks_retried: Chunks resubmitted after a failure.
        chunks_failed: Chunks that ran out of retries (their items got ``sandbox_error``).
        items_sent: Distinct items submitted (a resubmitted item counts again).
        results: Distinct results received from workers and put in place.
        workers_replaced: Workers that died (or were lost) and were started again.
    """

    chunks_sent: int = 0
    chunks_retried: int = 0
    chunks_failed: int = 0
    items_sent: int = 0
    results: int = 0
    workers_replaced: int = 0


#: Seconds during which a failed start is reported again instead of being tried again.
_START_AGAIN_AFTER_S = 5.0


class _Slot:
    """One worker position of the pool: the current actor there and its load."""

    def __init__(self, actor: Any) -> None:
        self.actor = actor
        self.ready = False
        self.in_flight = 0
        self.restarting: asyncio.Task[None] | None = None


class RayExecutor(Executor):
    """Verify on a Ray cluster: chunks of work go to long-lived actors, one per worker.

    Each actor runs this SDK's local engine with its own ``local`` runtime (bubblewrap on
    its node), so warm sandboxes and build caches persist between chunks and batches. The
    driver validates, deduplicates and consults the cache; only distinct work that the
    cache does not hold is sent. At most ``max_in_flight`` chunks are outstanding. A chunk
    whose worker dies is sent again (to another worker, the dead one being replaced) up to
    ``max_retries`` times; after that its items get ``sandbox_error`` results. Every item
    gets exactly one result.

    Every node must be able to import ``verifiers`` (install the package on each node, or
    pass a ``runtime_env``) and needs bubblewrap and the toolchains of the languages used.
    Runtimes are named on the workers: an item's runtime must be a registered name (or the
    shared instance of one), and a callable policy must be picklable.

    Args:
        address: Address of an existing cluster (``"auto"``, ``"ray://host:10001"``). By
            default an already initialised Ray is used, then ``RAY_ADDRESS``, else a local
            cluster is started.
        num_workers: Actors to start (default: the cluster's CPUs divided by the CPUs of
            one actor).
        resources: Ray resources of one actor: ``CPU`` (default 1), ``GPU`` (default 0),
            ``memory`` (bytes) and custom resources (``{"verifier_node": 1}``).
        max_in_flight: Chunks outstanding at once, over all calls (default: per worker,
            its ``concurrency_per_worker``, at least 2).
        max_retries: Times a chunk is sent again after its worker died.
        chunk_size: Items per chunk (default: what makes twice as many chunks as
            ``max_in_flight``, between 1 and 32).
        concurrency_per_worker: Verifications at once inside one actor (default: its CPU
            resource). A batch's ``max_concurrency`` overrides it.
        num_cpus: CPUs of a local cluster started here (default: this machine's).
        runtime_env: Ray runtime environment of the actors (for example
            ``{"py_modules": [verifiers]}`` or ``{"pip": [...]}``).
        init_kwargs: More keyword arguments for ``ray.init``.
        start_timeout_s: How long to wait for the workers to come up.
        chunk_timeout_s: A chunk not back after this long counts as a lost worker (default:
            no limit; the per-test limits already bound a healthy worker).

    Example:
        >>> executor = RayExecutor(address="auto", resources={"CPU": 4})
        >>> results = verifiers.score_batch(items, executor=executor)
    """

    name = "ray"

    def __init__(
        self,
        address: str | None = None,
        num_workers: int | None = None,
        resources: Mapping[str, float] | None = None,
        max_in_flight: int | None = None,
        max_retries: int = 3,
        *,
        chunk_size: int | None = None,
        concurrency_per_worker: int | None = None,
        num_cpus: int | None = None,
        runtime_env: Mapping[str, Any] | None = None,
        init_kwargs: Mapping[str, Any] | None = None,
        start_timeout_s: float = 120.0,
        chunk_timeout_s: float | None = None,
    ) -> None:
        for name, value in (
            ("num_workers", num_workers),
            ("max_in_flight", max_in_flight),
            ("chunk_size", chunk_size),
            ("concurrency_per_worker", concurrency_per_worker),
            ("num_cpus", num_cpus),
        ):
            if value is not None and (not isinstance(value, int) or value < 1):
                raise ValueError(f"{name}: expected a positive integer, got {value!r}")
        if not isinstance(max_retries, int) or max_retries < 0:
            raise ValueError(f"max_retries: expected an integer >= 0, got {max_retries!r}")
        resources = dict(resources if resources is not None else {"CPU": 1})
        if any(not isinstance(v, (int, float)) or v < 0 for v in resources.values()):
            raise ValueError(f"resources: expected non-negative numbers, got {resources!r}")
        self.address = address
        self.num_workers = num_workers
        self.resources = resources
        self.max_in_flight = max_in_flight
        self.max_retries = max_retries
        self.chunk_size = chunk_size
        self.concurrency_per_worker = concurrency_per_worker or max(
            1, math.ceil(float(resources.get("CPU", 1)))
        )
        self.num_cpus = num_cpus
        self.runtime_env = dict(runtime_env) if runtime_env else None
        self.init_kwargs = dict(init_kwargs or {})
        self.start_timeout_s = start_timeout_s
        self.chunk_timeout_s = chunk_timeout_s
        self.stats = RayStats()
        self._lock = threading.Lock()
        self._slots: list[_Slot] = []
        self._owns_cluster = False
        self._failed: tuple[float, Exception] | None = None
        self._window: asyncio.Semaphore | None = None
        self._slot_ready: asyncio.Event | None = None

    def __repr__(self) -> str:
        return (
            f"RayExecutor(address={self.address!r}, workers={len(self._slots) or self.num_workers},"
            f" resources={self.resources!r})"
        )

    def __enter__(self) -> RayExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()

    # --- driver side: checks ----------------------------------------------------------------

    def validate(self, jobs: list[Job]) -> None:
        """Raise SpecError for work a worker could not rebuild (nothing is sent).

        Raises:
            SpecError: An item's runtime is an instance the registry does not name, or a
                callable policy cannot be pickled.
            RuntimeUnavailableError: Ray is not installed.
        """
        self._payloads(jobs)

    def _payloads(self, jobs: list[Job]) -> list[Payload]:
        ray = _import_ray()
        runtimes: dict[int, str] = {}
        policies: set[int] = set()
        out: list[Payload] = []
        for index, job in enumerate(jobs):
            runtime = job.verifier.runtime
            name = runtimes.get(id(runtime))
            if name is None:
                name = str(runtime.name)
                shared = None
                with contextlib.suppress(Exception):
                    shared = registry.get_runtime(name)
                if shared is not runtime:
                    raise SpecError(
                        f"items[{index}].runtime",
                        f"the Ray executor builds runtimes by name on its workers; pass the "
                        f"name {name!r} (or register a configured runtime under a name) "
                        f"instead of a {type(runtime).__name__} instance",
                    )
                runtimes[id(runtime)] = name
            policy = job.options.policy
            if callable(policy) and id(policy) not in policies:
                try:
                    ray.cloudpickle.dumps(policy)
                except Exception as err:
                    raise SpecError(
                        f"items[{index}].policy",
                        f"a callable policy must be picklable to reach Ray workers: {err}",
                    ) from None
                policies.add(id(policy))
            out.append((job.verifier.language.name, name, job.completion, job.spec, job.options))
        return out

    # --- driver side: the pool ----------------------------------------------------------------

    def start(self) -> None:
        """Connect to (or start) the cluster and start the workers; blocks until they are up.

        Raises:
            RuntimeUnavailableError: Ray is not installed.
            Exception: Ray's own error when the cluster cannot be reached or the workers
                cannot be placed in ``start_timeout_s``.
        """
        ray = _import_ray()
        with self._lock:
            if self._slots:
                return
            failed = self._failed
            if failed is not None and time.monotonic() - failed[0] < _START_AGAIN_AFTER_S:
                raise failed[1]  # a start that failed just now is not tried again at once
            try:
                _on_lasting_thread(lambda: self._init(ray))
                count = self.num_workers or self._default_workers(ray)
                slots = [_Slot(self._spawn(ray)) for _ in range(count)]
                try:
                    ray.get([s.actor.ping.remote() for s in slots], timeout=self.start_timeout_s)
                except BaseException:
                    for slot in slots:
                        with contextlib.suppress(Exception):
                            ray.kill(slot.actor, no_restart=True)
                    raise
            except Exception as err:
                self._failed = (time.monotonic(), err)
                raise
            self._failed = None
            for slot in slots:
                slot.ready = True
            self._slots = slots
            log.info("Ray executor: %d workers up (%s each)", count, self.resources)

    def _init(self, ray: Any) -> None:
        if ray.is_initialized():
            if self.address is not None:
                log.info("Ray is already initialised; address %r not used", self.address)
            return
        if self.address is not None or os.environ.get("RAY_ADDRESS"):
            ray.init(address=self.address, **self.init_kwargs)
            return
        kwargs: dict[str, Any] = {
            "num_cpus": self.num_cpus or os.cpu_count() or 1,
            "include_dashboard": False,
            "log_to_driver": False,
        }
        kwargs.update(self.init_kwargs)
        ray.init(**kwargs)
        self._owns_cluster = True

    def _default_workers(self, ray: Any) -> int:
        cpus = float(ray.cluster_resources().get("CPU", 1))
        per_actor = float(self.resources.get("CPU", 1))
        return max(1, int(cpus // per_actor) if per_actor > 0 else int(cpus))

    def _spawn(self, ray: Any) -> Any:
        custom = {k: v for k, v in self.resources.items() if k not in ("CPU", "GPU", "memory")}
        options: dict[str, Any] = {
            "num_cpus": self.resources.get("CPU", 1),
            "num_gpus": self.resources.get("GPU", 0),
            # Restarts are ours (a fresh actor in the slot), so that a retry is counted once.
            "max_restarts": 0,
            "max_task_retries": 0,
        }
        if "memory" in self.resources:
            options["memory"] = self.resources["memory"]
        if custom:
            options["resources"] = custom
        if self.runtime_env:
            options["runtime_env"] = self.runtime_env
        return _worker_class(ray).options(**options).remote(self.concurrency_per_worker)

    @property
    def actors(self) -> list[Any]:
        """The current actor handles, one per worker slot (empty before :meth:`start`)."""
        return [slot.actor for slot in self._slots]

    def worker_pids(self) -> list[int]:
        """The process id of every worker (blocking; starts the pool if needed)."""
        self.start()
        ray = _import_ray()
        return [int(p) for p in ray.get([a.ping.remote() for a in self.actors])]

    def close_idle_sandboxes(self) -> None:
        """Stop the warm sandboxes of every worker (they also stop on their own)."""
        if not self._slots:
            return
        ray = _import_ray()
        refs = [slot.actor.close_idle_sandboxes.remote() for slot in self._slots if slot.ready]
        for ref in refs:
            with contextlib.suppress(Exception):
                ray.get(ref, timeout=60)

    def shutdown(self) -> None:
        """Stop the workers (and the local cluster, if this executor started it)."""
        with self._lock:
            slots, self._slots = self._slots, []
            self._window = self._slot_ready = None
        if not slots and not self._owns_cluster:
            return
        ray = _import_ray()
        for slot in slots:
            task = slot.restarting
            if task is not None:  # it runs on the engine loop: cancel it there
                with contextlib.suppress(RuntimeError):
                    task.get_loop().call_soon_threadsafe(task.cancel)
            with contextlib.suppress(Exception):
                ray.kill(slot.actor, no_restart=True)
        if self._owns_cluster:
            self._owns_cluster = False
            _on_lasting_thread(ray.shutdown)

    # --- driver side: a batch -----------------------------------------------------------------

    async def run(
        self,
        jobs: list[Job],
        *,
        max_concurrency: int | None = None,
        progress: Progress | None = None,
        cache: ResultCache | None = None,
    ) -> list[Result]:
        """Verify ``jobs`` on the cluster; results in input order.

        ``max_concurrency`` caps verifications at once inside each worker (default:
        ``concurrency_per_worker``). Lost workers and exhausted retries give
        ``sandbox_error`` results, as any infrastructure fault does.

        Raises:
            SpecError: A job cannot be sent to a worker (nothing has been sent).
            RuntimeUnavailableError: Ray is not installed.
        """
        if not in_engine():
            return await on_engine(
                self.run(jobs, max_concurrency=max_concurrency, progress=progress, cache=cache)
            )
        if max_concurrency is not None and max_concurrency < 1:
            raise SpecError("max_concurrency", f"must be at least 1, got {max_concurrency}")
        payloads = self._payloads(jobs)
        collector = Collector(jobs, progress)
        deliver = collector.deliver
        # The cache is the driver's: a hit is never sent.
        todo: list[tuple[list[int], str]] = []
        for indices in collector.groups.values():
            key = jobs[indices[0]].result_key() if cache is not None else ""
            hit = cache.get(key) if cache is not None else None
            if hit is not None:
                deliver(indices, hit)
            else:
                todo.append((indices, key))
        if todo:
            try:
                if not self._slots:
                    await asyncio.to_thread(self.start)
            except RuntimeUnavailableError:
                raise
            except Exception as err:
                log.error("the Ray executor could not start: %s", err)
                for indices, _ in todo:
                    deliver(indices, infra_result(jobs[indices[0]], f"Ray unavailable: {err}"))
            else:
                for slot in self._slots:  # a slot left empty by a failed restart: try again
                    if not slot.ready and slot.restarting is None:
                        self._replace(slot, slot.actor)
                await self._dispatch(jobs, payloads, todo, max_concurrency, deliver, cache)
        return collector.results()

    def _window_size(self) -> int:
        # A worker with S slots needs S chunks outstanding to fill them (2 at least, so that
        # the next chunk is there when one comes back).
        return self.max_in_flight or len(self._slots) * max(2, self.concurrency_per_worker)

    def _chunk_size(self, items: int) -> int:
        if self.chunk_size is not None:
            return self.chunk_size
        # Twice as many chunks as the window holds: the second half goes to whichever
        # worker frees up first (load balance). 32 bounds the work lost with a worker.
        return max(1, min(32, math.ceil(items / (2 * self._window_size()))))

    async def _dispatch(
        self,
        jobs: list[Job],
        payloads: list[Payload],
        todo: list[tuple[list[int], str]],
        limit: int | None,
        deliver: Callable[[list[int], Result], None],
        cache: ResultCache | None,
    ) -> None:
        if self._window is None:
            self._window = asyncio.Semaphore(self._window_size())
            self._slot_ready = asyncio.Event()
        size = self._chunk_size(len(todo))
        chunks = [todo[n : n + size] for n in range(0, len(todo), size)]

        async def one(chunk: list[tuple[list[int], str]]) -> None:
            work = [payloads[indices[0]] for indices, _ in chunk]
            outcome = await self._send(work, limit)
            if isinstance(outcome, str):
                self.stats.chunks_failed += 1
                for indices, _ in chunk:
                    deliver(indices, infra_result(jobs[indices[0]], outcome))
                return
            self.stats.results += len(chunk)
            for (indices, key), result in zip(chunk, outcome, strict=True):
                if cache is not None:
                    cache.put(key, result)
                deliver(indices, result)

        await asyncio.gather(*(one(chunk) for chunk in chunks))

    async def _send(self, work: list[Payload], limit: int | None) -> list[Result] | str:
        """Results of one chunk, or why it could not be verified."""
        assert self._window is not None
        ray = _import_ray()
        failures = 0
        while True:
            async with self._window:
                slot = await self._pick()
                if slot is None:
                    return "no Ray worker is available (they died and could not be restarted)"
                actor = slot.actor
                slot.in_flight += 1
                self.stats.chunks_sent += 1
                self.stats.items_sent += len(work)
                ref = actor.verify.remote(work, limit)
                try:
                    outcome = await asyncio.wait_for(
                        asyncio.wrap_future(ref.future()), self.chunk_timeout_s
                    )
                    if isinstance(outcome, list) and len(outcome) == len(work):
                        return outcome
                    error: BaseException = RuntimeError(f"a worker answered {type(outcome)}")
                except asyncio.CancelledError:
                    with contextlib.suppress(Exception):
                        ray.cancel(ref)
                    raise
                except Exception as err:
                    error = err
                finally:
                    slot.in_flight -= 1
            failures += 1
            lost = isinstance(
                error,
                (
                    ray.exceptions.RayActorError,
                    ray.exceptions.WorkerCrashedError,
                    ray.exceptions.NodeDiedError,
                    ray.exceptions.LocalRayletDiedError,
                    asyncio.TimeoutError,
                ),
            )
            reason = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
            if lost:
                self._replace(slot, actor)
            if failures > self.max_retries:
                log.error("a chunk failed %d times on Ray workers: %s", failures, reason)
                return f"the Ray worker failed {failures} times ({reason})"
            log.warning("a Ray worker failed a chunk (%s); sending it again", reason)
            self.stats.chunks_retried += 1

    async def _pick(self) -> _Slot | None:
        """The ready worker with the least work in flight (waits for one that restarts)."""
        assert self._slot_ready is not None
        deadline = time.monotonic() + self.start_timeout_s
        while True:
            ready = [s for s in self._slots if s.ready]
            if ready:
                return min(ready, key=lambda s: s.in_flight)
            if not any(s.restarting is not None for s in self._slots):
                return None
            self._slot_ready.clear()
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._slot_ready.wait(), left)

    def _replace(self, slot: _Slot, actor: Any) -> None:
        """Put a fresh actor in a dead worker's slot (once, however many chunks it failed)."""
        if slot.actor is not actor or slot.restarting is not None or slot not in self._slots:
            return
        slot.ready = False
        self.stats.workers_replaced += 1
        slot.restarting = asyncio.get_running_loop().create_task(self._restart(slot, actor))

    async def _restart(self, slot: _Slot, dead: Any) -> None:
        ray = _import_ray()
        with contextlib.suppress(Exception):
            ray.kill(dead, no_restart=True)
        try:
            for attempt in range(3):
                actor = slot.actor = self._spawn(ray)
                try:
                    await asyncio.wait_for(
                        asyncio.wrap_future(actor.ping.remote().future()), self.start_timeout_s
                    )
                except asyncio.CancelledError:  # shut down meanwhile
                    with contextlib.suppress(Exception):
                        ray.kill(actor, no_restart=True)
                    raise
                except Exception as err:
                    log.warning("a Ray worker did not restart (try %d): %s", attempt + 1, err)
                    with contextlib.suppress(Exception):
                        ray.kill(actor, no_restart=True)
                    continue
                if slot not in self._slots:  # shut down meanwhile
                    with contextlib.suppress(Exception):
                        ray.kill(actor, no_restart=True)
                    return
                slot.ready = True
                return
            log.error("a Ray worker could not be restarted; the pool has one worker less")
        finally:
            slot.restarting = None
            if self._slot_ready is not None:
                self._slot_ready.set()
