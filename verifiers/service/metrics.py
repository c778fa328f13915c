"""Prometheus metrics of the service (``GET /metrics``).

* ``verifiers_service_requests_total{endpoint,code}``: requests answered, by route and
  HTTP status (401, 413, 503, 504 included);
* ``verifiers_service_request_seconds{endpoint}``: latency histogram;
* ``verifiers_service_verdicts_total{status}``: results returned, by verdict;
* ``verifiers_service_queue_depth``: verifications admitted and waiting for a slot;
* ``verifiers_service_in_flight``: verifications running;
* ``verifiers_service_capacity``: places of the queue (waiting plus running).

With several uvicorn workers, ``prometheus_client``'s multiprocess mode adds up the
workers' numbers (``verifiers serve`` sets ``PROMETHEUS_MULTIPROC_DIR`` for them), so any
worker answers for the whole server.
"""

from __future__ import annotations

import os

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
#: Seconds: from a cached answer to a long compiled batch.
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)


class ServiceMetrics:
    """The metrics of one server process, in a registry of their own."""

    content_type = CONTENT_TYPE_LATEST

    def __init__(self) -> None:
        self.multiprocess = bool(os.environ.get(MULTIPROC_ENV))
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.requests = Counter(
            "verifiers_service_requests",
            "HTTP requests answered, by endpoint and status code.",
            ["endpoint", "code"],
            registry=r,
        )
        self.latency = Histogram(
            "verifiers_service_request_seconds",
            "Time to answer a request, by endpoint.",
            ["endpoint"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.verdicts = Counter(
            "verifiers_service_verdicts",
            "Verification results returned, by status.",
            ["status"],
            registry=r,
        )
        # livesum: in multiprocess mode, the sum over the workers that are alive.
        self.queue_depth = Gauge(
            "verifiers_service_queue_depth",
            "Verifications admitted and waiting for a slot.",
            registry=r,
            multiprocess_mode="livesum",
        )
        self.in_flight = Gauge(
            "verifiers_service_in_flight",
            "Verifications running.",
            registry=r,
            multiprocess_mode="livesum",
        )
        self.capacity = Gauge(
            "verifiers_service_capacity",
            "Verifications the queue admits at once (waiting plus running).",
            registry=r,
            multiprocess_mode="livesum",
        )

    def queue_changed(self, waiting: int, running: int) -> None:
        """Set the queue gauges (called by :class:`~verifiers.service.admission.Admission`)."""
        self.queue_depth.set(waiting)
        self.in_flight.set(running)

    def render(self) -> bytes:
        """The text exposition format, for every worker in multiprocess mode."""
        if self.multiprocess:
            from prometheus_client import multiprocess

            registry = CollectorRegistry()
            multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
            return generate_latest(registry)
        return generate_latest(self.registry)

    def worker_exited(self) -> None:
        """Drop this worker's live gauges from the shared directory (multiprocess mode)."""
        if self.multiprocess:
            from prometheus_client import multiprocess

            multiprocess.mark_process_dead(os.getpid())  # type: ignore[no-untyped-call]
