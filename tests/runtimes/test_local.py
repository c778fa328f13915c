"""The local (bubblewrap) runtime passes the runtime conformance suite, and fails clearly."""

from __future__ import annotations

import asyncio
import os

import pytest

from verifiers import Limits, RuntimeUnavailableError, close_idle_sandboxes, score, score_batch
from verifiers.program import Program
from verifiers.runtimes import LocalRuntime
from verifiers.runtimes import local as local_runtime
from verifiers.runtimes.local import UNSAFE_ENV
from verifiers.testing.conformance import RUNTIME_CHECKS, Check, run_one, sh

from ..conftest import need


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


AFFINITY = (
    "import os, time\ntime.sleep(0.5)\n"
    "print(len(os.sched_getaffinity(0)), min(os.sched_getaffinity(0)))\n"
)
C_AFFINITY = (
    "#define _GNU_SOURCE\n#include <sched.h>\n#include <stdio.h>\n"
    "int main(void) {\n  cpu_set_t s;\n  sched_getaffinity(0, sizeof s, &s);\n"
    '  printf("%d\\n", CPU_COUNT(&s));\n  return 0;\n}\n'
)


def test_each_sandbox_at_work_runs_on_a_cpu_of_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    # Two programs at once on a machine of two CPUs or more: each sandbox on one CPU, not
    # the same one; a sandbox that builds (C) keeps every CPU, and so does every sandbox of
    # a runtime made with pin_cpus=False.
    allowed = len(os.sched_getaffinity(0))
    need(allowed >= 2, "pinning needs two CPUs")
    monkeypatch.setattr(local_runtime, "PIN_MAX_LOAD", 1e9)  # whatever else runs here
    tests = {"inputs": [""], "outputs": [""]}
    for pin in (True, False):
        rt = LocalRuntime(pin_cpus=pin)
        items = [
            {"language": "python", "completion": AFFINITY + f"# {n}\n", "tests": tests}
            for n in range(2)
        ]
        seen = [r.tests[0].actual.split() for r in score_batch(items, runtime=rt)]
        if pin:
            assert [count for count, _ in seen] == ["1", "1"], seen
            assert seen[0][1] != seen[1][1], f"two sandboxes at work on one CPU: {seen}"
        else:
            assert all(count == str(allowed) for count, _ in seen), seen
        built = score("c", C_AFFINITY, tests, runtime=rt)
        assert built.tests[0].actual.strip() == str(allowed), built.feedback
    close_idle_sandboxes()
