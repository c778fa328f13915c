"""The local (bubblewrap) runtime passes the runtime conformance suite, and fails clearly."""

from __future__ import annotations

import asyncio
import os

import pytest

from verifiers import Limits, RuntimeUnavailableError
from verifiers.program import Program
from verifiers.runtimes import LocalRuntime
from verifiers.runtimes import local as local_runtime
from verifiers.runtimes.local import UNSAFE_ENV
from verifiers.testing.conformance import RUNTIME_CHECKS, Check, run_one, sh


@pytest.mark.parametrize("check", RUNTIME_CHECKS, ids=lambda c: c.__name__)
def test_conformance(runtime: LocalRuntime, check: Check) -> None:
    asyncio.run(check(runtime))


def test_missing_bubblewrap_is_a_clear_error() -> None:
    rt = LocalRuntime(bwrap="/nonexistent/bwrap")
    verdict = rt.check()
    assert not verdict.available
    assert "apt-get install bubblewrap" in verdict.detail
    with pytest.raises(RuntimeUnavailableError, match="bubblewrap"):
        rt.session(Program(files={}, tests=()), Limits())


def test_unsafe_mode_needs_the_environment_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(UNSAFE_ENV, raising=False)
    rt = LocalRuntime(isolation="none")
    with pytest.raises(RuntimeUnavailableError, match=UNSAFE_ENV):
        rt.session(Program(files={}, tests=()), Limits())


def test_unsafe_mode_runs_and_warns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(UNSAFE_ENV, "1")
    # The warning is given once per process: another test may have had it already.
    monkeypatch.setattr(local_runtime, "_warned", False)
    rt = LocalRuntime(isolation="none")
    with pytest.warns(RuntimeWarning, match="WITHOUT A SANDBOX"):
        result = asyncio.run(
            run_one(rt, sh("echo hi; cat {program_dir}/f"), Program(files={"f": b"data"}, tests=()))
        )
    assert result.stdout == b"hi\ndata"


def test_invalid_isolation_is_rejected() -> None:
    with pytest.raises(ValueError, match="isolation"):
        LocalRuntime(isolation="chroot")  # type: ignore[arg-type]


def test_sessions_leave_nothing_behind(runtime: LocalRuntime) -> None:
    before = set(os.listdir("/tmp"))
    asyncio.run(run_one(runtime, sh("echo x > {work_dir}/f; sleep 30 &")))
    after = set(os.listdir("/tmp"))
    assert not {p for p in after - before if p.startswith("verifiers")}
