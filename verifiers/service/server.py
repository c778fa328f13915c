"""Starting the service under uvicorn (what ``verifiers serve`` calls)."""

from __future__ import annotations

import contextlib
import math
import os
import shutil
import tempfile

from verifiers.errors import RuntimeUnavailableError
from verifiers.service.config import CONFIG_ENV, ServiceConfig
from verifiers.service.metrics import MULTIPROC_ENV


def require_service_extra() -> None:
    """Raise :class:`~verifiers.RuntimeUnavailableError` if the server's packages are missing."""
    missing = []
    for module in ("fastapi", "uvicorn", "prometheus_client"):
        try:
            __import__(module)
        except ImportError:
            missing.append(module)
    if missing:
        raise RuntimeUnavailableError(
            f"the service needs {', '.join(missing)}: pip install 'verifiers-sdk[service]'"
        )


def serve(config: ServiceConfig) -> None:
    """Serve until SIGINT or SIGTERM, then finish the requests in flight and stop.

    The configuration reaches uvicorn's worker processes through the environment
    (``VERIFIERS_SERVICE_CONFIG``); with several workers their metrics are added up in a
    temporary directory (``PROMETHEUS_MULTIPROC_DIR``), removed at the end.

    Raises:
        SpecError: The configuration would expose code execution without auth.
        RuntimeUnavailableError: The ``service`` extra is not installed.
    """
    config.check_exposure()
    require_service_extra()
    import uvicorn

    os.environ[CONFIG_ENV] = config.to_env()
    metrics_dir = None
    if config.workers > 1 and not os.environ.get(MULTIPROC_ENV):
        metrics_dir = tempfile.mkdtemp(prefix="verifiers-metrics-")
        os.environ[MULTIPROC_ENV] = metrics_dir
    try:
        uvicorn.run(
            "verifiers.service.app:app_from_env",
            factory=True,
            host=config.host,
            port=config.port,
            workers=config.workers,
            log_level=config.log_level,
            access_log=config.access_log,
            timeout_graceful_shutdown=math.ceil(config.graceful_shutdown_s),
        )
    finally:
        if metrics_dir is not None:
            os.environ.pop(MULTIPROC_ENV, None)
            with contextlib.suppress(OSError):
                shutil.rmtree(metrics_dir)
