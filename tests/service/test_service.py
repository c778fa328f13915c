"""Our HTTP API on a real server: /score, /score_batch, errors, health, metrics, load."""

from __future__ import annotations

import asyncio
import re
import time
from typing import Any

import pytest

import verifiers
from verifiers import Result, Status
from verifiers.runtimes import LocalRuntime, RemoteRuntime
from verifiers.testing.datasets import dataset

from .conftest import Server, post

ADD = {"test": "def check(candidate):\n    assert candidate(1, 2) == 3\n", "entry_point": "add"}


def humaneval_items(count: int) -> list[dict[str, Any]]:
    """Canonical solutions and a broken variant (wrong answer) of the first problems."""
    items = []
    for row in dataset("humaneval").rows()[:count]:
        tests = {"test": row["test"], "entry_point": row["entry_point"]}
        right = row["prompt"] + row["canonical_solution"]
        wrong = row["prompt"] + "    return None\n"
        items.append({"language": "python", "completion": right, "tests": tests})
        items.append({"language": "python", "completion": wrong, "tests": tests})
    return items


def test_score_returns_the_result_json(server: Server, runtime: LocalRuntime) -> None:
    completion = "```python\ndef add(a, b):\n    return a + b\n```"
    response = post(
        server, "/score", {"language": "python", "completion": completion, "tests": ADD}
    )
    assert response.status_code == 200, response.text
    result = Result.model_validate_json(response.content)
    assert result.status is Status.PASSED and result.score == 1.0 and result.format_ok
    local = verifiers.score("python", completion, ADD)
    assert (result.feedback, result.code, result.total) == (local.feedback, local.code, local.total)


def test_score_batch_matches_local_verification_in_order(
    server: Server, runtime: LocalRuntime
) -> None:
    items = humaneval_items(6)
    items.append(items[0])  # a duplicate gets the same verdict
    response = post(server, "/score_batch", {"items": items, "limits": {"timeout_s": 5}})
    assert response.status_code == 200, response.text
    remote = [Result.model_validate(r) for r in response.json()]
    local = verifiers.score_batch(items, limits={"timeout_s": 5})
    assert [r.status for r in remote] == [r.status for r in local]
    assert [r.status for r in remote][:4] == [Status.PASSED, Status.FAILED] * 2
    assert [r.code for r in remote] == [r.code for r in local]


def test_batch_options_and_item_overrides(server: Server, runtime: LocalRuntime) -> None:
    tests = {"inputs": ["1\n", "2\n"], "outputs": ["1\n", "3\n"]}
    item = {"language": "python", "completion": "print(input())", "tests": tests}
    body = {"items": [item, {**item, "policy": "binary"}], "policy": "partial", "max_tests": 2}
    response = post(server, "/score_batch", body)
    assert response.status_code == 200, response.text
    partial, binary = (Result.model_validate(r) for r in response.json())
    assert (partial.policy, partial.score) == ("partial", 0.5)
    assert (binary.policy, binary.score) == ("binary", 0.0)


@pytest.mark.parametrize(
    ("body", "status", "needle"),
    [
        ({"language": "python", "completion": "x"}, 422, "tests"),
        ({"language": "python", "completion": "x", "tests": {"inputs": ["1"]}}, 422, "outputs"),
        ({"language": "cobol", "completion": "x", "tests": ADD}, 422, "unknown language"),
        (
            {"language": "python", "completion": "x", "tests": ADD, "limits": {"timeout_s": 600}},
            422,
            "limits.timeout_s: at most 60",
        ),
        (
            {"language": "python", "completion": "x", "tests": ADD, "limits": {"timeout_s": -1}},
            422,
            "limits.timeout_s",
        ),
        ({"language": "python", "completion": "x", "tests": ADD, "policy": "nope"}, 422, "policy"),
        ({"language": "python", "completion": 3, "tests": ADD}, 422, "completion"),
    ],
)
def test_malformed_requests_are_422_naming_the_field(
    server: Server, body: dict[str, Any], status: int, needle: str
) -> None:
    response = post(server, "/score", body)
    assert response.status_code == status, response.text
    assert needle in response.text


def test_a_malformed_batch_item_is_named(server: Server) -> None:
    good = {"language": "python", "completion": "print(1)", "tests": ADD}
    bad = {"language": "python", "completion": "x", "tests": {"inputs": [], "outputs": []}}
    response = post(server, "/score_batch", {"items": [good, bad]})
    assert response.status_code == 422
    assert response.json()["field"].startswith("items[1].tests")


def test_malformed_json_is_422(server: Server) -> None:
    import httpx

    response = httpx.post(
        f"{server.url}/score", content=b"{not json", headers={"content-type": "application/json"}
    )
    assert response.status_code == 422


def test_a_body_over_the_limit_is_413(server: Server) -> None:
    big = {"language": "python", "completion": "#" * (3 * 1024 * 1024), "tests": ADD}
    response = post(server, "/score", big)
    assert response.status_code == 413, response.text
    assert "body over" in response.json()["detail"]


def test_health(server: Server) -> None:
    import httpx

    body = httpx.get(f"{server.url}/health").json()
    assert body["status"] == "ok" and body["runtime"]["available"]
    assert "python" in body["languages"] and "nodejs" in body["sandbox_fusion_languages"]


def _metric(text: str, name: str, **labels: str) -> float:
    """The value of one series, summed when several match the labels."""
    total = 0.0
    for line in text.splitlines():
        if not line.startswith(name + "{") and not line.startswith(name + " "):
            continue
        found = dict(re.findall(r'(\w+)="([^"]*)"', line.split(" ")[0]))
        if all(found.get(k) == v for k, v in labels.items()):
            total += float(line.rsplit(" ", 1)[1])
    return total


def test_metrics_count_requests_and_verdicts_over_both_workers(server: Server) -> None:
    import httpx

    before = httpx.get(f"{server.url}/metrics").text
    item = {"language": "python", "completion": "print(2)", "tests": ADD}
    for _ in range(6):  # spread over the two workers by the kernel
        assert post(server, "/score", item).status_code == 200
    text = httpx.get(f"{server.url}/metrics").text
    requests = "verifiers_service_requests_total"
    assert _metric(text, requests, endpoint="/score", code="200") - _metric(
        before, requests, endpoint="/score", code="200"
    ) == pytest.approx(6)
    verdicts = "verifiers_service_verdicts_total"
    assert _metric(text, verdicts, status="runtime_error") >= 6
    assert _metric(text, "verifiers_service_request_seconds_count", endpoint="/score") >= 6
    assert "verifiers_service_queue_depth" in text and "verifiers_service_in_flight" in text
    assert _metric(text, "verifiers_service_capacity") == pytest.approx(2 * 512)


def test_load_200_requests_16_at_once(
    server: Server, runtime: LocalRuntime, record_property: Any
) -> None:
    """Bounded load on loopback: every request gets its own answer, none lost or swapped."""
    import httpx

    count, concurrency = 200, 16

    def item(n: int) -> dict[str, Any]:
        return {
            "language": "python",
            "completion": f"print(int(input()) * {n})",
            "tests": {"inputs": ["3\n"], "outputs": [f"{3 * n}\n"]},
        }

    async def drive() -> list[tuple[int, httpx.Response]]:
        limit = asyncio.Semaphore(concurrency)
        async with httpx.AsyncClient(base_url=server.url, timeout=120) as client:

            async def one(n: int) -> tuple[int, httpx.Response]:
                async with limit:
                    return n, await client.post("/score", json=item(n))

            return await asyncio.gather(*(one(n) for n in range(count)))

    started = time.perf_counter()
    answers = asyncio.run(drive())
    elapsed = time.perf_counter() - started
    assert [n for n, _ in answers] == list(range(count))
    for n, response in answers:
        assert response.status_code == 200, response.text
        result = Result.model_validate_json(response.content)
        # Its own program, and the verdict on it: nothing swapped, duplicated or lost.
        assert result.code == item(n)["completion"]
        assert result.status is Status.PASSED, result.feedback
    throughput = count / elapsed
    record_property("service_requests_per_s", round(throughput, 1))
    print(f"\nload test: {count} /score requests, {concurrency} at once: {throughput:.1f}/s")


def test_extract_false_runs_the_completion_as_it_is(server: Server, runtime: LocalRuntime) -> None:
    code = 'print("""\n```python\nprint(1)\n```\n""".strip())'  # a fence inside a string
    tests = {"inputs": [""], "outputs": ["```python\nprint(1)\n```\n"]}
    body = {"language": "python", "completion": code, "tests": tests}
    extracted = Result.model_validate_json(post(server, "/score", body).content)
    as_is = Result.model_validate_json(post(server, "/score", {**body, "extract": False}).content)
    assert (extracted.status, as_is.status) == (Status.FAILED, Status.PASSED)


def test_extraction_options_reach_the_server(server: Server, runtime: LocalRuntime) -> None:
    tests = {
        "test": "def check(candidate):\n    assert candidate(1, 2) == 3\n",
        "entry_point": "add",
    }
    body = {
        "language": "python",
        "completion": "Here is my solution:\n\ndef add(a, b):\n    return a + b\n",
        "tests": tests,
    }
    statuses = [
        Result.model_validate_json(post(server, "/score", {**body, **extra}).content).status
        for extra in ({}, {"extraction": "whole"}, {"max_completion_chars": 10})
    ]
    assert statuses == [Status.PASSED, Status.SYNTAX_ERROR, Status.NO_CODE]
    assert post(server, "/score", {**body, "extraction": "nope"}).status_code == 422
    assert post(server, "/score", {**body, "max_completion_chars": 0}).status_code == 422
    remote = RemoteRuntime(server.url)
    for mode, status in (("auto", Status.PASSED), ("whole", Status.SYNTAX_ERROR)):
        result = verifiers.score(
            "python", body["completion"], tests, runtime=remote, extraction=mode
        )
        assert result.status is status, mode
