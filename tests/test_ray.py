"""The Ray executor on a real local Ray cluster: same verdicts, lost workers, early errors.

One cluster (4 logical CPUs, so that a second executor's worker can be placed) serves the
module. Under CI=true a missing ray fails instead of skipping.
"""

from __future__ import annotations

import asyncio
import json
import os
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
from verifiers import (
    Limits,
    ResultCache,
    RuntimeUnavailableError,
    SpecError,
    Status,
    UnknownNameError,
)
from verifiers.executors import LOCAL, RayExecutor, resolve_executor
from verifiers.runtimes import LocalRuntime
from verifiers.testing.cases import case_tables

from .conftest import _our_agents, need

try:
    import ray
except ImportError:  # the test fails or skips below, through need()
    ray = None

BENCH = Path(__file__).resolve().parents[1] / "bench"
#: Executors whose warm sandboxes the tests close (they live in the workers' processes).
EXECUTORS: list[RayExecutor] = []


@pytest.fixture(scope="module")
def cluster(runtime: LocalRuntime) -> Iterator[None]:
    need(ray is not None, "ray is not installed (pip install 'verifiers-sdk[ray]')")
    assert ray is not None
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=4, include_dashboard=False, log_to_driver=False)
    yield
    for executor in EXECUTORS:
        executor.shutdown()
    EXECUTORS.clear()
    if started:
        ray.shutdown()


@pytest.fixture(scope="module")
def executor(cluster: None) -> RayExecutor:
    ex = RayExecutor(num_workers=2, max_retries=3)
    ex.start()
    EXECUTORS.append(ex)
    return ex


@pytest.fixture(autouse=True)
def _no_stray_sandboxes() -> Iterator[None]:
    """Overrides conftest's: the workers' warm sandboxes are closed by asking the workers."""
    yield
    for ex in EXECUTORS:
        ex.close_idle_sandboxes()
    verifiers.close_idle_sandboxes()
    deadline = time.monotonic() + 10  # a killed worker's sandboxes die with it, shortly after
    while (left := _our_agents()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not left, f"sandbox agents still running after the test: {left}"


def _case(language: str, kind: str, n: int = 0) -> dict[str, Any]:
    case = [c for c in case_tables()[language] if c.kind == kind][n]
    return {
        "language": language,
        "completion": case.completion,
        "tests": case.tests,
        "limits": case.limits,
    }


def mixed_batch() -> list[dict[str, Any]]:
    quick = Limits(timeout_s=1, memory_mb=256)
    items = [
        _case("python", "ok"),
        _case("python", "ok", 1),
        _case("python", "wrong_answer"),
        _case("python", "wrong_answer", 1),
        _case("python", "syntax_error"),
        _case("python", "no_code"),
        _case("python", "runtime_error"),
        {
            "language": "python",
            "completion": "```python\nwhile True:\n    pass\n```",
            "tests": {"inputs": ["1 2\n"], "outputs": ["3\n"]},
            "limits": quick,
        },
        _case("javascript", "ok"),
        _case("javascript", "wrong_answer", 1),
        _case("javascript", "syntax_error"),
        _case("sql", "ok"),
        _case("sql", "wrong_answer"),
        _case("sql", "compile_error"),
        _case("regex", "ok"),
        _case("regex", "wrong_answer"),
    ]
    return [*items, items[0], items[2], items[8]]  # duplicates are verified once


def verdicts(results: list[verifiers.Result]) -> list[tuple[Status, float, int, int]]:
    return [(r.status, r.score, r.passed, r.total) for r in results]


def test_same_verdicts_as_local(executor: RayExecutor) -> None:
    items = mixed_batch()
    local = verifiers.score_batch(items)
    sent = executor.stats.items_sent
    remote = verifiers.score_batch(items, executor=executor)
    assert verdicts(remote) == verdicts(local)
    assert {r.status for r in remote} >= {
        Status.PASSED,
        Status.FAILED,
        Status.SYNTAX_ERROR,
        Status.NO_CODE,
        Status.RUNTIME_ERROR,
        Status.TIMEOUT,
        Status.COMPILE_ERROR,
    }
    assert {r.language for r in remote} == {"python", "javascript", "sql", "regex"}
    assert executor.stats.items_sent - sent == len(items) - 3
    assert remote[-3] is remote[0]  # a duplicate shares its twin's result, as locally


def test_async_entry_point_and_callable_policy(executor: RayExecutor) -> None:
    items = mixed_batch()[:4]

    def half(tally: Any) -> float:
        return 0.5 * tally.pass_rate

    async def main() -> list[verifiers.Result]:
        return await verifiers.ascore_batch(items, executor=executor, policy=half)

    remote = asyncio.run(main())
    local = verifiers.score_batch(items, policy=half)
    assert verdicts(remote) == verdicts(local)
    assert remote[0].score == 0.5 and remote[0].policy == "half"


def test_cache_and_progress_stay_on_the_driver(executor: RayExecutor) -> None:
    items = mixed_batch()[:6] + mixed_batch()[8:10]
    cache = ResultCache()
    seen: list[tuple[int, int]] = []
    first = verifiers.score_batch(
        items, executor=executor, cache=cache, progress=lambda d, t: seen.append((d, t))
    )
    assert seen[-1] == (len(items), len(items))
    assert [d for d, _ in seen] == sorted({d for d, _ in seen})
    sent = executor.stats.chunks_sent
    again = verifiers.score_batch(items, executor=executor, cache=cache)
    assert executor.stats.chunks_sent == sent  # every answer came from the cache
    assert all(r.cached for r in again) and verdicts(again) == verdicts(first)


def test_spec_errors_are_raised_before_anything_runs(executor: RayExecutor) -> None:
    sent = executor.stats.chunks_sent
    good = _case("python", "ok")
    bad = {"language": "python", "completion": "print(1)", "tests": {"inputs": ["1\n"]}}
    with pytest.raises(SpecError) as err:
        verifiers.score_batch([good, bad], executor=executor)
    assert err.value.field.startswith("items[1].tests")
    with pytest.raises(UnknownNameError):
        verifiers.score_batch([good, {**good, "language": "cobol"}], executor=executor)
    # Runtimes are rebuilt by name on the workers: a configured instance cannot be sent.
    with pytest.raises(SpecError) as err:
        verifiers.score_batch([good], executor=executor, runtime=LocalRuntime())
    assert err.value.field == "items[0].runtime"
    lock = threading.Lock()
    with pytest.raises(SpecError) as err:
        verifiers.score_batch(
            [good], executor=executor, policy=lambda t: float(lock.locked() or t.pass_rate)
        )
    assert err.value.field == "items[0].policy"
    with pytest.raises(SpecError, match="executor"):
        verifiers.score_batch([good], executor="dask")
    assert executor.stats.chunks_sent == sent


def stdio_items(count: int, sleep_s: float) -> list[dict[str, Any]]:
    """Distinct programs, each printing its own number: a misplaced result would show."""
    return [
        {
            "language": "python",
            "completion": f"```python\nimport time\ntime.sleep({sleep_s})\nprint({n})\n```",
            "tests": {"inputs": [""], "outputs": [f"{n}\n"]},
        }
        for n in range(count)
    ]


def test_a_worker_killed_mid_batch_loses_nothing(executor: RayExecutor) -> None:
    items = stdio_items(16, 0.3)
    pids = executor.worker_pids()
    before = (executor.stats.results, executor.stats.chunks_retried)
    replaced = executor.stats.workers_replaced
    seen: list[int] = []

    def progress(done: int, total: int) -> None:
        if not seen:  # both workers still hold chunks: kill one of them
            os.kill(pids[0], signal.SIGKILL)
        seen.append(done)

    results = verifiers.score_batch(items, executor=executor, progress=progress)
    assert len(results) == len(items)
    for n, result in enumerate(results):
        assert result.status is Status.PASSED, result.feedback
        assert result.code is not None and f"print({n})" in result.code
    assert seen == sorted(set(seen)) and seen[-1] == len(items)  # each item delivered once
    assert executor.stats.results - before[0] == len(items)
    assert executor.stats.chunks_retried > before[1]
    assert executor.stats.workers_replaced == replaced + 1
    assert pids[0] not in executor.worker_pids()  # a fresh worker took the dead one's place


def test_exhausted_retries_give_sandbox_errors_not_gaps(cluster: None) -> None:
    ex = RayExecutor(num_workers=1, max_retries=0, chunk_size=1, max_in_flight=2)
    EXECUTORS.append(ex)
    items = stdio_items(5, 0.2)
    [pid] = ex.worker_pids()
    seen: list[int] = []

    def progress(done: int, total: int) -> None:
        if not seen:  # the second chunk is on the worker now
            os.kill(pid, signal.SIGKILL)
        seen.append(done)

    results = verifiers.score_batch(items, executor=ex, progress=progress)
    statuses = [r.status for r in results]
    assert len(results) == len(items) and seen[-1] == len(items)
    # The chunk on the worker when it died, and perhaps one sent before the death was seen.
    lost = statuses.count(Status.SANDBOX_ERROR)
    assert 1 <= lost <= 2 and ex.stats.chunks_failed == lost
    assert statuses[0] is statuses[-1] is Status.PASSED  # the restarted worker took the rest
    for n, result in enumerate(results):
        if result.status is Status.SANDBOX_ERROR:
            assert result.infra_error and "Ray worker failed" in result.feedback
        else:
            assert result.status is Status.PASSED and f"print({n})" in (result.code or "")
    ex.shutdown()


def test_names_and_configs_give_shared_executors(cluster: None) -> None:
    assert resolve_executor(None) is LOCAL and resolve_executor("local") is LOCAL
    assert resolve_executor("ray") is resolve_executor("ray")
    config = {"type": "ray", "num_workers": 1, "max_retries": 1}
    shared = resolve_executor(config)
    assert isinstance(shared, RayExecutor) and shared is resolve_executor(dict(config))
    assert (shared.num_workers, shared.max_retries) == (1, 1)
    with pytest.raises(SpecError, match="executor"):
        resolve_executor({"type": "ray", "workers": 3})
    with pytest.raises(SpecError, match="executor"):
        resolve_executor({"type": "ray", "num_workers": 0})
    with pytest.raises(SpecError, match=r"executor\.type"):
        resolve_executor({"type": "spark"})


def test_integrations_take_an_executor(executor: RayExecutor) -> None:
    from verifiers.integrations import trl, verl

    config = {"type": "ray", "num_workers": 1, "max_retries": 1}
    shared = resolve_executor(config)
    assert isinstance(shared, RayExecutor)
    EXECUTORS.append(shared)
    good = "```python\nprint(sum(map(int, input().split())))\n```"
    truth = {"inputs": ["1 2\n"], "outputs": ["3\n"]}
    rows = verl.compute_score_batch(
        ["apps", "apps", "apps"],
        [good, "print(0)", good],
        [truth, truth, {"inputs": ["1"]}],  # the last row is malformed: scored 0, not raised
        executor=config,
    )
    assert [r["score"] for r in rows] == [1.0, 0.0, 0.0] and rows[2]["spec_error"] == 1.0
    assert shared.stats.results == 2
    reward = trl.reward_function("python", executor=executor)
    sent = executor.stats.items_sent
    assert reward(completions=[good, "print(0)"], tests=[truth, truth]) == [1.0, 0.0]
    assert executor.stats.items_sent == sent + 2


def test_without_ray_the_error_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # what a missing package looks like
    with pytest.raises(RuntimeUnavailableError, match=r"verifiers-sdk\[ray\]"):
        verifiers.score_batch([_case("python", "ok")], executor=RayExecutor(num_workers=1))


def test_the_benchmark_runs_on_a_small_slice(cluster: None, tmp_path: Path) -> None:
    out = tmp_path / "ray.json"
    args = ["--problems", "3", "--repeat", "1", "--rounds", "1", "--json", str(out)]
    done = subprocess.run(
        [sys.executable, str(BENCH / "ray_throughput.py"), *args],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads(out.read_text())
    names = ["local", "ray 1 worker", "ray 1 worker x 2", "ray 2 workers"]
    assert [r["name"] for r in report["runs"]] == names
    assert report["differences"] == dict.fromkeys(names[1:], 0)
    assert report["sizes"]["payload_bytes"] > 0 and report["round_trip"]["rtt_p50_ms"] > 0
