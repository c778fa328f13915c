"""Every knob of the verification service, in one validated model."""

from __future__ import annotations

import ipaddress
import json
import os

from pydantic import BaseModel, ConfigDict, Field

from verifiers.engine import default_concurrency
from verifiers.errors import SpecError

#: Environment variable carrying the configuration to uvicorn's worker processes.
CONFIG_ENV = "VERIFIERS_SERVICE_CONFIG"
#: Environment variable holding the bearer token (``--token`` takes precedence).
TOKEN_ENV = "VERIFIERS_SERVICE_TOKEN"


class ServiceConfig(BaseModel):
    """Configuration of one server process (each uvicorn worker has its own queue).

    Attributes:
        host: Address to listen on (loopback by default).
        port: TCP port.
        workers: uvicorn worker processes; each runs its own engine and sandboxes.
        token: Bearer token every request but ``GET /health`` must carry (None: no auth,
            allowed on loopback only unless ``insecure_no_auth``).
        insecure_no_auth: Serve a non-loopback address without a token.
        runtime: Runtime the server verifies on (a registered name, not ``remote``).
        concurrency: Verifications running at once in one worker (default: one per core).
        max_queue: Verifications admitted at once in one worker, running or waiting; a
            request that would exceed it is answered 503 with ``Retry-After``, and a batch
            larger than it 413.
        max_body_bytes: Largest request body (413 beyond).
        max_json_values: Most JSON values (and keys) in one request body, counted from the
            raw bytes before anything is parsed (413 beyond): with the body size, this
            bounds what parsing a request may cost.
        max_queue_mb: Memory the admitted requests may cost at once, as estimated from what
            they ask (body, JSON values, tests); a request that would exceed it is answered
            503, one that could never fit 413.
        sql_roots: Directories whose SQLite and DuckDB files requests may name (resolved,
            symlinks included, before the check); none by default, so requests bring their
            databases inline (``schema`` and ``inserts``). A path outside them and a path
            that does not exist get the same answer.
        postgres_sockets: Unix-socket directories of PostgreSQL servers requests may name
            in a ``url``; none by default.
        request_timeout_s: A request not answered in this time is answered 504 and its
            verifications are cancelled.
        retry_after_s: The ``Retry-After`` of a 503.
        max_limits: Upper bounds on the :class:`~verifiers.Limits` a request may ask for
            (field name to largest value); a request over one is answered 422.
        graceful_shutdown_s: On SIGTERM, how long in-flight requests may take to finish.
        log_level: uvicorn's log level.
        access_log: Log every request.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    host: str = "127.0.0.1"
    port: int = Field(default=8080, ge=0, le=65535)
    workers: int = Field(default=1, ge=1)
    token: str | None = None
    insecure_no_auth: bool = False
    runtime: str = "local"
    concurrency: int = Field(default_factory=default_concurrency, ge=1)
    max_queue: int = Field(default=256, ge=1)
    max_body_bytes: int = Field(default=32 * 1024 * 1024, ge=1024)
    max_json_values: int = Field(default=500_000, ge=100)
    max_queue_mb: float = Field(default=1024.0, gt=0)
    sql_roots: tuple[str, ...] = ()
    postgres_sockets: tuple[str, ...] = ()
    request_timeout_s: float = Field(default=300.0, gt=0)
    retry_after_s: int = Field(default=1, ge=0)
    max_limits: dict[str, float] = Field(
        default_factory=lambda: {
            "timeout_s": 60.0,
            "cpu_time_s": 60.0,
            "total_timeout_s": 600.0,
            "memory_mb": 4096.0,
            "build_timeout_s": 300.0,
            "build_memory_mb": 4096.0,
            "max_processes": 256.0,
            "max_output_bytes": 64.0 * 1024 * 1024,
            "max_file_mb": 256.0,
            "disk_mb": 1024.0,
        }
    )
    graceful_shutdown_s: float = Field(default=30.0, ge=0)
    log_level: str = "info"
    access_log: bool = True

    def check_exposure(self) -> None:
        """Refuse a configuration that would serve code execution to a network without auth.

        Raises:
            SpecError: A non-loopback host without a token and without ``insecure_no_auth``,
                an empty token, or the ``remote`` runtime (a server calling itself).
        """
        if self.token is not None and not self.token.strip():
            raise SpecError("token", "empty; give a secret or no token at all")
        if self.runtime == "remote":
            raise SpecError("runtime", "a server cannot verify on the remote runtime")
        if self.token is None and not self.insecure_no_auth and not is_loopback(self.host):
            raise SpecError(
                "host",
                f"{self.host} is reachable from other machines and this server runs the "
                "code it is sent: give a --token (or VERIFIERS_SERVICE_TOKEN), or "
                "--insecure-no-auth on a network you trust",
            )

    def to_env(self) -> str:
        """The configuration as JSON, for the environment of worker processes."""
        return self.model_dump_json()

    @classmethod
    def from_env(cls) -> ServiceConfig:
        """The configuration a parent process left in the environment (or the defaults)."""
        raw = os.environ.get(CONFIG_ENV)
        config = cls.model_validate(json.loads(raw)) if raw else cls()
        if config.token is None and os.environ.get(TOKEN_ENV):
            config = config.model_copy(update={"token": os.environ[TOKEN_ENV]})
        return config


def is_loopback(host: str) -> bool:
    """Whether ``host`` is reachable from this machine only (``localhost``, 127.0.0.0/8, ::1)."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a name other than localhost may resolve to anything
