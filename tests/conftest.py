"""Shared fixtures. Under CI=true a missing sandbox or toolchain fails instead of skipping.

Benchmark data never skips: each set is the full shared copy when present, else the records
bundled with the package (``verifiers.testing.datasets``); the report header says which.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

import verifiers
from verifiers.runtimes import LocalRuntime
from verifiers.testing import datasets

CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def need(condition: bool, reason: str) -> None:
    """Skip when a requirement is missing; fail instead under CI=true."""
    if condition:
        return
    if CI:
        pytest.fail(f"{reason} (CI=true: a missing requirement fails the run)")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def runtime() -> LocalRuntime:
    rt = LocalRuntime()
    verdict = rt.check()
    need(verdict.available, f"the local sandbox is unavailable: {verdict.detail}")
    return rt


def pytest_report_header() -> list[str]:
    return [f"benchmark data from {line}" for line in datasets.summary().splitlines()]


def _stat(pid: str) -> tuple[int, int] | None:
    """(parent pid, start time in clock ticks) of a process."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return int(fields[1]), int(fields[19])


def _our_agents() -> list[str]:
    """Sandbox agents started by this test session: descendants of this process, or orphans
    started after it (other jobs on the machine may run sandboxes of their own)."""
    me = _stat(str(os.getpid()))
    assert me is not None
    stats = {pid: _stat(pid) for pid in os.listdir("/proc") if pid.isdigit()}
    children: dict[int, list[int]] = {}
    for pid, stat in stats.items():
        if stat is not None:
            children.setdefault(stat[0], []).append(int(pid))
    ours, stack = set(), [os.getpid()]
    while stack:
        for child in children.get(stack.pop(), []):
            ours.add(child)
            stack.append(child)
    left = []
    for pid, stat in stats.items():
        if stat is None:
            continue
        orphan = stat[0] == 1 and stat[1] >= me[1]
        if int(pid) not in ours and not orphan:
            continue
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"/opt/agent/agent.py" in cmdline:
            left.append(pid)
    return left


@pytest.fixture(autouse=True)
def _no_stray_sandboxes() -> Iterator[None]:
    """Every test must leave no sandbox process behind (once warm sandboxes are released)."""
    yield
    verifiers.close_idle_sandboxes()
    left = _our_agents()
    assert not left, f"sandbox agents still running after the test: {left}"
