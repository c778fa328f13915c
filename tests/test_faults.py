"""Faults of our own machinery and bad input: a clear error or sandbox_error, never a crash.

Each fault is real (a missing binary, a missing toolchain, an unwritable directory, sandboxes
killed from outside), the batch always completes with every result, and verification
resumes by itself once the fault is gone.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import tempfile
import threading
import time
import warnings
from pathlib import Path

import pytest

import verifiers
from verifiers import SpecError, Status
from verifiers.core import CodeVerifier
from verifiers.languages.go import GoLanguage
from verifiers.runtimes import LocalRuntime
from verifiers.runtimes.local import UNSAFE_ENV

GOOD = "def add(a, b):\n    return a + b\n"
WRONG = "def add(a, b):\n    return a - b\n"
TESTS = {"test_list": ["assert add(1, 2) == 3"]}
GO_GOOD = "func Add(a, b int) int {\n    return a + b\n}\n"
GO_TESTS = {
    "test": (
        'func TestAdd(t *testing.T) {\n    if Add(1, 2) != 3 {\n        t.Fatal("bad")\n    }\n}\n'
    ),
    "test_setup": 'package main\n\nimport "testing"\n',
}


def test_missing_sandbox_binary_then_fixed(tmp_path: Path) -> None:
    bwrap = tmp_path / "bin" / "bwrap"
    rt = LocalRuntime(bwrap=str(bwrap))
    rt.probe_retry_s = 0.0
    items = [{"language": "python", "completion": c, "tests": TESTS} for c in (GOOD, WRONG) * 3]
    broken = verifiers.score_batch(items, runtime=rt)
    assert len(broken) == 6
    assert all(r.status is Status.SANDBOX_ERROR and r.infra_error for r in broken)
    assert "bubblewrap" in broken[0].feedback and "apt-get install" in broken[0].feedback
    # The binary appears: the next call works without a new runtime object.
    bwrap.parent.mkdir()
    real = shutil.which("bwrap")
    assert real is not None
    bwrap.symlink_to(real)
    fixed = verifiers.score_batch(items, runtime=rt)
    assert [r.status for r in fixed] == [Status.PASSED, Status.FAILED] * 3


def test_missing_toolchain_then_fixed(
    monkeypatch: pytest.MonkeyPatch, runtime: LocalRuntime
) -> None:
    verifier = CodeVerifier(GoLanguage(), runtime)
    path = os.environ["PATH"]
    monkeypatch.setenv("PATH", "/nonexistent")
    broken = verifier.score(GO_GOOD, GO_TESTS)
    assert broken.status is Status.SANDBOX_ERROR
    assert "go not found" in broken.feedback
    monkeypatch.setenv("PATH", path)
    assert verifier.score(GO_GOOD, GO_TESTS).status is Status.PASSED


def test_unwritable_work_directory_then_fixed(monkeypatch: pytest.MonkeyPatch) -> None:
    # The unsandboxed mode keeps its work directory on the host: point it at a file.
    monkeypatch.setenv(UNSAFE_ENV, "1")
    rt = LocalRuntime(isolation="none")
    monkeypatch.setattr(tempfile, "tempdir", "/etc/hostname")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the unsafe mode's (once a process)
        broken = verifiers.score("python", GOOD, TESTS, runtime=rt)
    assert broken.status is Status.SANDBOX_ERROR
    assert "hostname" in broken.feedback
    monkeypatch.setattr(tempfile, "tempdir", None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert verifiers.score("python", GOOD, TESTS, runtime=rt).status is Status.PASSED


def _sandboxes() -> list[int]:
    out = []
    for pid in os.listdir("/proc"):
        try:
            if (
                pid.isdigit()
                and b"/opt/agent/agent.py" in Path(f"/proc/{pid}/cmdline").read_bytes()
            ):
                out.append(int(pid))
        except OSError:
            continue
    return out


def test_sandboxes_killed_mid_batch(runtime: LocalRuntime) -> None:
    slow = "import time\ntime.sleep(0.4)\n" + GOOD
    items = [
        {"language": "python", "completion": slow + f"# {n}\n", "tests": TESTS} for n in range(12)
    ]
    stop = threading.Event()

    def killer() -> None:
        while not stop.is_set():
            for pid in _sandboxes():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.05)

    thread = threading.Thread(target=killer)
    thread.start()
    try:
        results = verifiers.score_batch(items, runtime=runtime)
    finally:
        stop.set()
        thread.join()
    assert len(results) == 12
    # Killed under its feet, a verification is retried once, then reported as ours.
    assert {r.status for r in results} <= {Status.PASSED, Status.SANDBOX_ERROR}
    assert any(r.status is Status.SANDBOX_ERROR for r in results)
    assert all(r.infra_error for r in results if r.status is Status.SANDBOX_ERROR)
    # And the next batch works.
    assert verifiers.score("python", GOOD, TESTS, runtime=runtime).status is Status.PASSED


# --- bad input ---------------------------------------------------------------------------------


def test_non_string_completion_names_the_item(runtime: LocalRuntime) -> None:
    items = [
        {"language": "python", "completion": GOOD, "tests": TESTS},
        {"language": "python", "completion": b"bytes", "tests": TESTS},
    ]
    with pytest.raises(SpecError, match=r"items\[1\]\.completion"):
        verifiers.score_batch(items, runtime=runtime)
    with pytest.raises(SpecError, match="completion"):
        verifiers.score("python", None, TESTS, runtime=runtime)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("tests", "field"),
    [
        ({"test_list": "assert True"}, "test_list"),
        ({"inputs": ["1"], "outputs": []}, "outputs"),
        ({"nonsense": 1}, "tests"),
        ("{not json", "tests"),
        (None, "tests"),
    ],
)
def test_malformed_specs_name_the_field(runtime: LocalRuntime, tests: object, field: str) -> None:
    with pytest.raises(SpecError, match=field):
        verifiers.score("python", GOOD, tests, runtime=runtime)


def test_nul_bytes(runtime: LocalRuntime) -> None:
    r = verifiers.score("python", "x = 1\x00\n" + GOOD, TESTS, runtime=runtime)
    assert r.status is Status.SYNTAX_ERROR
    echo = verifiers.score(
        "python",
        "import sys\nsys.stdout.write(sys.stdin.read())",
        {"inputs": ["a\x00b"], "outputs": ["a\x00b"]},
        runtime=runtime,
    )
    assert echo.status is Status.PASSED


def test_gigantic_completion_is_judged_in_bounded_time(runtime: LocalRuntime) -> None:
    # 20,000 comment lines inside a function: tree-sitter-python is quadratic on those
    # (it took 99 s for 10,000 before the host check moved to CPython's parser).
    code = "def add(a, b):\n" + ("    # " + "x" * 90 + "\n") * 20000 + "    return a + b\n"
    started = time.perf_counter()
    r = verifiers.score("python", code, TESTS, runtime=runtime, max_completion_chars=len(code))
    assert r.status is Status.PASSED
    assert time.perf_counter() - started < 30
    # By default a completion of 2 MB is over max_completion_chars: no code, nothing parsed.
    capped = verifiers.score("python", code, TESTS, runtime=runtime)
    assert capped.status is Status.NO_CODE and "max_completion_chars" in capped.feedback


def test_gigantic_tests_run(runtime: LocalRuntime) -> None:
    line = "x" * 100_000 + "\n"
    tests = {"inputs": [line] * 200, "outputs": [line] * 200}
    r = verifiers.score("python", "print(input())", tests, runtime=runtime, policy="partial")
    assert r.status is Status.PASSED and r.passed == 200


def test_a_batch_with_every_kind_of_bad_program_completes(runtime: LocalRuntime) -> None:
    programs = [
        GOOD,
        "import os\nos.kill(1, 9)\nwhile True: os.fork()",
        "x = [0] * (10 ** 10)",
        "import sys\nsys.setrecursionlimit(10 ** 6)\ndef f(n): return f(n + 1)\nf(0)",
        "\x00\x01\x02",
        "```python\nprint(\n```",
        "import os\nos.close(1)\nos.close(2)\n" + GOOD,
        "",
    ]
    items = [{"language": "python", "completion": p, "tests": TESTS} for p in programs]
    results = verifiers.score_batch(items, runtime=runtime, limits={"timeout_s": 2})
    assert len(results) == len(programs)
    assert results[0].status is Status.PASSED
    assert all(r.status is not Status.SANDBOX_ERROR for r in results), [
        (r.status, r.feedback[:80]) for r in results
    ]
