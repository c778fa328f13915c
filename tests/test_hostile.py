"""The hostile-program battery in every language and runtime: the sandbox holds, the host stays.

For each attack: the expected status, the wall time bounded by the limit plus a margin,
and the host checked before and after: canary files intact and unread, no new process
(the warm sandboxes released first), no new entry of ours in /tmp, no connection seen by a
listener on the host's loopback, no file written at the paths the program aimed at.
"""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import verifiers
from verifiers.runtimes import LocalRuntime
from verifiers.testing.hostile import HOSTILE, WRITE_TARGETS, Hostile

CASES = [(language, case) for language, cases in HOSTILE.items() for case in cases]
# Go, Rust, C, C++ and Java compile before running: time for the build on top of the limit.
BUILD_ALLOWANCE_S = {"go": 60.0, "rust": 60.0, "c": 60.0, "cpp": 60.0, "java": 60.0}
MARGIN_S = 3.0
SANDBOX_UID = 65534


@dataclass
class Host:
    """The host-side bait and the state to compare."""

    secret: str
    env: str
    home_file: Path
    cwd_file: Path
    host_dir: Path
    host_file: Path
    port: int
    connections: list[tuple[str, int]]
    canary: subprocess.Popen[bytes]

    def fill(self, code: str) -> str:
        values = {
            "@@PORT@@": str(self.port),
            "@@HOST_PID@@": str(self.canary.pid),
            "@@ENV@@": self.env,
            "@@HOME_FILE@@": str(self.home_file),
            "@@CWD_FILE@@": str(self.cwd_file),
            "@@HOST_FILE@@": str(self.host_file),
            "@@HOST_DIR@@": str(self.host_dir),
            "@@HOME@@": str(Path.home()),
        }
        for key, value in values.items():
            code = code.replace(key, value)
        return code


def _descendants() -> set[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(entry))
    out: set[int] = set()
    stack = [os.getpid()]
    while stack:
        for child in children.get(stack.pop(), []):
            out.add(child)
            stack.append(child)
    return out


def _sandbox_user(pids: set[int]) -> set[int]:
    """Which of ``pids`` run as the sandbox user (other jobs on this host may run sandboxes)."""
    out = set()
    for pid in pids:
        try:
            if os.stat(f"/proc/{pid}").st_uid == SANDBOX_UID:
                out.add(pid)
        except OSError:
            continue
    return out


def _ours(name: str) -> bool:
    """Whether a /tmp entry could come from us: the SDK's prefix, or the sandbox user."""
    try:
        return name.startswith("verifiers") or os.lstat(f"/tmp/{name}").st_uid == SANDBOX_UID
    except OSError:
        return False


@pytest.fixture
def host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Host]:
    secret = secrets.token_hex(16)
    env = f"VERIFIERS_CANARY_{secrets.token_hex(4).upper()}"
    monkeypatch.setenv(env, secret)
    home_file = Path.home() / f".verifiers-canary-{secrets.token_hex(4)}"
    cwd_file = Path.cwd() / f".verifiers-canary-{secrets.token_hex(4)}"
    host_dir = tmp_path / "host"
    host_dir.mkdir()
    host_file = host_dir / "canary"
    for path in (home_file, cwd_file, host_file):
        path.write_text(secret)
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    connections: list[tuple[str, int]] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, peer = listener.accept()
            except (TimeoutError, OSError):
                continue
            connections.append(peer)
            conn.close()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    canary = subprocess.Popen(["sleep", "600"])
    try:
        yield Host(
            secret,
            env,
            home_file,
            cwd_file,
            host_dir,
            host_file,
            listener.getsockname()[1],
            connections,
            canary,
        )
    finally:
        stop.set()
        thread.join()
        listener.close()
        canary.kill()
        canary.wait()
        for path in (home_file, cwd_file):
            path.unlink(missing_ok=True)


def attack(runtime: Any, host: Host, language: str, case: Hostile) -> verifiers.Result:
    """Score one attack on ``runtime``: its verdict, its time bounds, the host unchanged."""
    started = time.perf_counter()
    result = verifiers.score(
        language,
        f"```{language}\n{host.fill(case.code)}\n```",
        case.tests,
        runtime=runtime,
        limits=case.limits,
    )
    wall = time.perf_counter() - started

    # The verdict.
    assert result.status in case.expected, (case.kind, result.status, result.feedback[:600])
    assert host.secret not in result.model_dump_json()
    # Bounded time: every test within its limit, the whole within limit + build + margin.
    limit = case.limits.timeout_s
    assert all(t.wall_s <= limit + MARGIN_S for t in result.tests), [t.wall_s for t in result.tests]
    assert wall <= limit * len(result.tests) + BUILD_ALLOWANCE_S.get(language, 0.0) + 3 * MARGIN_S

    # The host.
    verifiers.close_idle_sandboxes()
    assert host.canary.poll() is None, "the host process was killed"
    for path in (host.home_file, host.cwd_file, host.host_file):
        assert path.read_text() == host.secret, f"{path} changed"
    assert host.connections == [], "the program reached the host's loopback"
    for target in WRITE_TARGETS:
        assert not Path(host.fill(target)).exists(), f"the program wrote {host.fill(target)}"
    return result


@pytest.mark.parametrize(
    ("language", "case"), CASES, ids=[f"{lang}-{case.kind}" for lang, case in CASES]
)
def test_hostile_program(runtime: LocalRuntime, host: Host, language: str, case: Hostile) -> None:
    verifiers.close_idle_sandboxes()
    before_processes = _descendants()
    before_tmp = set(os.listdir("/tmp"))
    attack(runtime, host, language, case)
    deadline = time.monotonic() + 5
    while (left := _descendants() - before_processes - {host.canary.pid}) and (
        time.monotonic() < deadline
    ):
        time.sleep(0.05)  # sandboxes being torn down
    assert not left, f"processes left behind: {left} (sandbox user: {_sandbox_user(left)})"
    new_tmp = {name for name in set(os.listdir("/tmp")) - before_tmp if _ours(name)}
    assert not new_tmp, f"left in /tmp: {new_tmp}"
