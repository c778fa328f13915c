"""Backpressure, limits, auth and shutdown of a real server; exposure rules of the CLI."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import verifiers
from verifiers import SpecError, Status
from verifiers.runtimes import LocalRuntime, RemoteRuntime
from verifiers.service.config import ServiceConfig, is_loopback

from .conftest import Server, post

TOKEN = "s3cret-token-for-tests"


def sleeper(seconds: float, n: int = 0) -> dict[str, Any]:
    return {
        "language": "python",
        "completion": f"import time\ntime.sleep({seconds})\nprint({n})",
        "tests": {"inputs": [""], "outputs": [str(n)]},
    }


@pytest.fixture(scope="module")
def small(runtime: LocalRuntime, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One worker, one verification at a time, two places, a token, 4 s per request."""
    started = Server(
        tmp_path_factory.mktemp("small") / "small.log",
        "--concurrency",
        "1",
        "--max-queue",
        "2",
        "--request-timeout",
        "4",
        token=TOKEN,
    )
    yield started
    assert not started.stop(), "sandboxes outlived the server"


def test_requests_without_the_token_are_401(small: Server) -> None:
    import httpx

    body = sleeper(0)
    assert httpx.post(f"{small.url}/score", json=body).status_code == 401
    wrong = {"Authorization": "Bearer nope"}
    response = httpx.post(f"{small.url}/score", json=body, headers=wrong)
    assert response.status_code == 401 and response.headers["www-authenticate"] == "Bearer"
    assert httpx.get(f"{small.url}/metrics").status_code == 401
    assert (
        httpx.post(f"{small.url}/run_code", json={"code": "", "language": "python"}).status_code
        == 401
    )
    assert httpx.get(f"{small.url}/health").status_code == 200  # probes need no token
    assert post(small, "/score", body).status_code == 200


def test_the_remote_runtime_reports_a_wrong_token_as_a_sandbox_error(small: Server) -> None:
    wrong = RemoteRuntime(small.url, token="nope")
    result = verifiers.score(
        "python", "print(1)", {"inputs": [""], "outputs": ["1"]}, runtime=wrong
    )
    assert result.status is Status.SANDBOX_ERROR and "401" in result.feedback
    right = RemoteRuntime(small.url, token=TOKEN)
    result = verifiers.score(
        "python", "print(1)", {"inputs": [""], "outputs": ["1"]}, runtime=right
    )
    assert result.status is Status.PASSED


def test_a_full_queue_is_503_with_retry_after_at_once(small: Server) -> None:
    box: dict[str, Any] = {}
    busy = threading.Thread(
        target=lambda: box.update(
            r=post(small, "/score_batch", {"items": [sleeper(1.0, 1), sleeper(1.0, 2)]})
        )
    )
    busy.start()
    time.sleep(0.5)  # both places taken
    started = time.perf_counter()
    refused = post(small, "/score", sleeper(0))
    assert time.perf_counter() - started < 1.0  # answered at once, not queued
    assert refused.status_code == 503, refused.text
    assert refused.headers["retry-after"] == "1"
    busy.join(30)
    assert box["r"].status_code == 200
    assert [r["status"] for r in box["r"].json()] == ["passed", "passed"]
    # The remote runtime waits and retries a 503 (nothing ran).
    runtime = RemoteRuntime(small.url, token=TOKEN, retries=5, backoff_s=0.2)
    items = [sleeper(1.0, 3), sleeper(1.0, 4)]
    holder = threading.Thread(target=lambda: post(small, "/score_batch", {"items": items}))
    holder.start()
    time.sleep(0.5)
    result = verifiers.score(
        "python", "print(5)", {"inputs": [""], "outputs": ["5"]}, runtime=runtime
    )
    holder.join(30)
    assert result.status is Status.PASSED


def test_a_batch_larger_than_the_queue_is_413(small: Server) -> None:
    response = post(small, "/score_batch", {"items": [sleeper(0, n) for n in range(3)]})
    assert response.status_code == 413 and "split the batch" in response.text
    # The remote runtime splits it until the halves fit.
    items = [sleeper(0, n) for n in range(3)]
    results = verifiers.score_batch(items, runtime=RemoteRuntime(small.url, token=TOKEN))
    assert [r.status for r in results] == [Status.PASSED] * 3


def test_a_request_over_its_time_is_504_and_its_work_cancelled(small: Server) -> None:
    import httpx

    started = time.perf_counter()
    response = post(small, "/score", {**sleeper(30), "limits": {"timeout_s": 40}})
    assert response.status_code == 504, response.text
    assert time.perf_counter() - started < 10
    health = httpx.get(f"{small.url}/health").json()
    assert health["queue"]["waiting"] == 0
    # Freed: the next request runs.
    assert post(small, "/score", sleeper(0)).status_code == 200


def test_sigterm_finishes_the_requests_in_flight(runtime: LocalRuntime, tmp_path: Path) -> None:
    server = Server(tmp_path / "graceful.log")
    box: dict[str, Any] = {}
    thread = threading.Thread(target=lambda: box.update(r=post(server, "/score", sleeper(1.5))))
    thread.start()
    time.sleep(0.7)
    left = server.stop()  # SIGTERM while the request runs
    thread.join(30)
    assert box["r"].status_code == 200 and box["r"].json()["status"] == "passed"
    # uvicorn re-raises the SIGTERM it handled once it has shut down.
    assert server.proc.returncode in (0, -signal.SIGTERM), server.output()
    assert "Traceback" not in server.output()
    assert not left


def test_no_token_is_refused_off_loopback() -> None:
    with pytest.raises(SpecError, match="--token"):
        ServiceConfig(host="0.0.0.0").check_exposure()
    ServiceConfig(host="0.0.0.0", token="t").check_exposure()
    ServiceConfig(host="0.0.0.0", insecure_no_auth=True).check_exposure()
    ServiceConfig(host="127.0.0.1").check_exposure()
    with pytest.raises(SpecError, match="remote"):
        ServiceConfig(runtime="remote").check_exposure()
    assert is_loopback("localhost") and is_loopback("::1") and is_loopback("127.0.0.2")
    assert not is_loopback("0.0.0.0") and not is_loopback("10.0.0.1")
    assert not is_loopback("example.com")
    done = subprocess.run(
        [sys.executable, "-m", "verifiers.cli", "serve", "--host", "0.0.0.0", "--port", "1"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 2 and "--insecure-no-auth" in done.stdout + done.stderr


def test_importing_verifiers_imports_no_web_framework() -> None:
    code = (
        "import sys, verifiers, verifiers.runtimes, verifiers.service\n"
        "print(sorted(m for m in ('fastapi', 'uvicorn', 'httpx', 'starlette') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "[]"
