"""runtime="remote": verifications sent whole to a real server, and its faults as results."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

import verifiers
from verifiers import SpecError, Status, registry
from verifiers.runtimes import LocalRuntime, RemoteRuntime
from verifiers.scoring import Tally
from verifiers.testing.datasets import dataset

from .conftest import Server, free_port
from .test_service import humaneval_items


def test_remote_verdicts_equal_local_ones(server: Server, runtime: LocalRuntime) -> None:
    items = humaneval_items(5)
    rows = dataset("kattis_examples").rows()
    for row in rows:
        if row["submission"] in ("js.py", "sol.py", "different.go"):
            tests = {
                "inputs": [t["input"] for t in row["tests"]],
                "outputs": [t["output"] for t in row["tests"]],
            }
            language = "go" if row["submission"].endswith(".go") else "python"
            items.append({"language": language, "completion": row["source"], "tests": tests})
    remote = RemoteRuntime(server.url, batch_size=3)
    got = verifiers.score_batch(items, runtime=remote, policy="partial")
    want = verifiers.score_batch(items, policy="partial")
    assert [(r.status, r.score) for r in got] == [(r.status, r.score) for r in want]
    assert {r.status for r in got} >= {Status.PASSED, Status.FAILED}
    assert not any(r.infra_error for r in got)


def test_runtime_by_name_uses_the_environment(
    server: Server, runtime: LocalRuntime, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VERIFIERS_REMOTE_URL", server.url)
    monkeypatch.delitem(registry._instances, ("runtime", "remote"), raising=False)
    try:
        result = verifiers.score(
            "python",
            "print(input()[::-1])",
            {"inputs": ["abc"], "outputs": ["cba"]},
            runtime="remote",
        )
        assert result.status is Status.PASSED
        assert registry.get_runtime("remote").check().available
    finally:
        registry._instances.pop(("runtime", "remote"), None)


def test_async_and_single_verifications(server: Server, runtime: LocalRuntime) -> None:
    import asyncio

    remote = RemoteRuntime(server.url)
    tests = {"inputs": ["1 2\n"], "outputs": ["3\n"]}

    async def both() -> list[Any]:
        return await asyncio.gather(
            verifiers.ascore(
                "python", "print(sum(map(int, input().split())))", tests, runtime=remote
            ),
            verifiers.ascore("python", "print(0)", tests, runtime=remote),
        )

    ok, wrong = asyncio.run(both())
    assert (ok.status, wrong.status) == (Status.PASSED, Status.FAILED)
    assert asyncio.run(remote.ahealth()).available


def test_a_scoring_function_cannot_be_sent(server: Server) -> None:
    def policy(tally: Tally) -> float:
        return 1.0

    with pytest.raises(SpecError, match="policy"):
        verifiers.score(
            "python",
            "print(1)",
            {"inputs": [""], "outputs": ["1"]},
            runtime=RemoteRuntime(server.url),
            policy=policy,
        )


def test_a_service_that_is_down_gives_sandbox_errors() -> None:
    down = RemoteRuntime(f"http://127.0.0.1:{free_port()}", retries=2, backoff_s=0.05)
    assert not down.check().available
    items = [
        {
            "language": "python",
            "completion": f"print({n})",
            "tests": {"inputs": [""], "outputs": [str(n)]},
        }
        for n in range(5)
    ]
    started = time.perf_counter()
    results = verifiers.score_batch(items, runtime=down)
    assert time.perf_counter() - started < 10
    assert [r.status for r in results] == [Status.SANDBOX_ERROR] * 5
    assert all(r.infra_error and "cannot reach" in r.feedback for r in results)
    assert all(r.runtime == "remote" and r.total == 1 for r in results)


def test_killing_the_server_mid_batch_gives_sandbox_errors_not_a_crash(
    runtime: LocalRuntime, tmp_path: Path
) -> None:
    victim = Server(tmp_path / "victim.log", "--concurrency", "2")
    try:
        # 0.3 s each, two at a time: about 6 s of work, killed after 1.5 s.
        items = [
            {
                "language": "python",
                "completion": f"import time\ntime.sleep(0.3)\nprint({n})",
                "tests": {"inputs": [""], "outputs": [str(n)]},
            }
            for n in range(40)
        ]
        remote = RemoteRuntime(victim.url, batch_size=4, retries=2, backoff_s=0.1)
        box: dict[str, Any] = {}
        thread = threading.Thread(
            target=lambda: box.update(results=verifiers.score_batch(items, runtime=remote))
        )
        thread.start()
        time.sleep(1.5)
        victim.kill()
        thread.join(60)
        assert not thread.is_alive()
    finally:
        victim.stop()
    results = box["results"]
    assert len(results) == len(items)
    statuses = [r.status for r in results]
    assert set(statuses) <= {Status.PASSED, Status.SANDBOX_ERROR}, statuses
    assert Status.SANDBOX_ERROR in statuses
    for result in results:
        if result.status is Status.SANDBOX_ERROR:
            assert result.infra_error and result.score == 0


def test_the_result_cache_stays_with_the_caller(server: Server, runtime: LocalRuntime) -> None:
    cache = verifiers.ResultCache()
    items = [
        {
            "language": "python",
            "completion": f"print({n})",
            "tests": {"inputs": [""], "outputs": ["1"]},
        }
        for n in range(3)
    ]
    first = verifiers.score_batch(items, runtime=RemoteRuntime(server.url), cache=cache)
    assert [r.status for r in first] == [Status.FAILED, Status.PASSED, Status.FAILED]
    # Answered from the cache: nothing is sent (this server does not exist).
    down = RemoteRuntime(f"http://127.0.0.1:{free_port()}", retries=0)
    again = verifiers.score_batch(items, runtime=down, cache=cache)
    assert [r.status for r in again] == [r.status for r in first]
    assert all(r.cached for r in again)


def test_the_verl_reward_function_on_the_remote_runtime(server: Server) -> None:
    from verifiers.integrations import verl

    truths = ['{"inputs": ["2\\n"], "outputs": ["4\\n"]}'] * 2
    solutions = ["```python\nprint(int(input()) * 2)\n```", "```python\nprint(0)\n```"]
    scores = verl.compute_score_batch(
        ["codecontests"] * 2, solutions, truths, runtime=RemoteRuntime(server.url)
    )
    assert [s["score"] for s in scores] == [1.0, 0.0]
    assert all(s["infra_error"] == 0.0 for s in scores)
