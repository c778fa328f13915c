"""Real servers for the service tests: ``verifiers serve`` in subprocesses on loopback ports.

Under CI=true a missing fastapi, uvicorn or httpx fails every test here (see ``need``).
"""

from __future__ import annotations

import contextlib
import importlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import verifiers
from verifiers.runtimes import LocalRuntime

from ..conftest import need

SERVICE_MODULES = ("fastapi", "uvicorn", "httpx", "prometheus_client")
#: Processes of the servers started here: their sandboxes are theirs, not the test's.
SERVER_PIDS: set[int] = set()


def _missing() -> list[str]:
    missing = []
    for module in SERVICE_MODULES:
        try:
            importlib.import_module(module)
        except ImportError:
            missing.append(module)
    return missing


@pytest.fixture(autouse=True)
def _service_extra() -> None:
    missing = _missing()
    need(not missing, f"{', '.join(missing)} not installed (pip install 'verifiers-sdk[service]')")


def _children() -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(stat[1]), []).append(int(entry))
    return children


def _is_agent(pid: int) -> bool:
    try:
        return b"/opt/agent/agent.py" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def agents_under(root: int, skip: set[int] | frozenset[int] = frozenset()) -> list[int]:
    """Sandbox agents among the descendants of ``root``, not looking under ``skip``."""
    children = _children()
    found, stack = [], [root]
    while stack:
        for child in children.get(stack.pop(), []):
            if child in skip:
                continue
            if _is_agent(child):
                found.append(child)
            stack.append(child)
    return found


@pytest.fixture(autouse=True)
def _no_stray_sandboxes() -> Iterator[None]:
    """This process's sandboxes are released after each test (the servers' are theirs)."""
    yield
    verifiers.close_idle_sandboxes()
    left = agents_under(os.getpid(), SERVER_PIDS)
    assert not left, f"sandbox agents still running after the test: {left}"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """``verifiers serve`` in a subprocess, on a free loopback port."""

    def __init__(self, log: Path, *args: str, token: str | None = None) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.token = token
        self.log = log
        command = [sys.executable, "-m", "verifiers.cli", "serve", "--port", str(self.port)]
        command += ["--log-level", "warning", *args]
        if token:
            command += ["--token", token]
        env = {
            k: v
            for k, v in os.environ.items()
            if k
            not in (
                "VERIFIERS_SERVICE_TOKEN",
                "VERIFIERS_SERVICE_CONFIG",
                "PROMETHEUS_MULTIPROC_DIR",
            )
        }
        self._log_file = open(log, "wb")  # noqa: SIM115 (closed in stop)
        self.proc = subprocess.Popen(
            command,
            stdout=self._log_file,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
        SERVER_PIDS.add(self.proc.pid)
        self._wait_ready()

    def _wait_ready(self, timeout_s: float = 90.0) -> None:
        import httpx

        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(
                    f"the server exited ({self.proc.returncode}):\n{self.output()}"
                )
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.url}/health", timeout=2).status_code == 200:
                    return
            time.sleep(0.1)
        self.stop()
        raise AssertionError(f"the server did not become ready:\n{self.output()}")

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    def output(self) -> str:
        return self.log.read_text(errors="replace")[-4000:]

    def kill(self) -> None:
        """SIGKILL, as a crash would (the sandboxes die with it: bwrap --die-with-parent)."""
        self.proc.kill()
        self.proc.wait(10)

    def stop(self) -> list[int]:
        """SIGTERM, as an orchestrator would; returns the sandbox agents that outlived it."""
        agents = agents_under(self.proc.pid)
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
        self._log_file.close()
        deadline = time.monotonic() + 10
        left = [pid for pid in agents if _is_agent(pid)]
        while left and time.monotonic() < deadline:
            time.sleep(0.1)
            left = [pid for pid in left if _is_agent(pid)]
        return left


@pytest.fixture(scope="package")
def server(runtime: LocalRuntime, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The shared server: two workers, no token (loopback), a 2 MB body limit."""
    missing = _missing()
    need(not missing, f"{', '.join(missing)} not installed (pip install 'verifiers-sdk[service]')")
    started = Server(
        tmp_path_factory.mktemp("server") / "server.log",
        "--workers",
        "2",
        "--max-body-mb",
        "2",
        "--max-queue",
        "512",
    )
    yield started
    left = started.stop()
    assert started.proc.returncode in (0, -signal.SIGTERM), started.output()
    assert not left, f"sandboxes outlived the server: {left}"


def post(server: Server, path: str, body: Any, timeout: float = 120) -> Any:
    """POST JSON to a server, returning the httpx response."""
    import httpx

    return httpx.post(f"{server.url}{path}", json=body, headers=server.headers(), timeout=timeout)
