"""SandboxFusion's /run_code, called by veRL's own sandbox_fusion reward and by the
sandbox-fusion client package, with verdicts checked against local verification."""

from __future__ import annotations

import importlib
import threading
from typing import Any

import pytest

import verifiers
from verifiers import Status
from verifiers.runtimes import LocalRuntime
from verifiers.testing.datasets import dataset

from ..conftest import need
from .conftest import Server, post


def _import(module: str, extra: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as err:
        need(False, f"{module} is not installed (pip install 'verifiers-sdk[{extra}]'): {err}")


def kattis(*submissions: str) -> list[dict[str, Any]]:
    rows = dataset("kattis_examples").rows()
    by_name = {r["submission"]: r for r in rows}
    return [by_name[name] for name in submissions]


def stdio(row: dict[str, Any]) -> dict[str, list[str]]:
    return {
        "inputs": [t["input"] for t in row["tests"]],
        "outputs": [t["output"] for t in row["tests"]],
    }


# --- veRL --------------------------------------------------------------------------------------


def test_verl_compute_score_equals_local_pass_rate(server: Server, runtime: LocalRuntime) -> None:
    """veRL's reward (Python, one /run_code per test) against our partial credit."""
    sandbox_fusion = _import("verl.utils.reward_score.sandbox_fusion", "integrations")
    for row in kattis("js.py", "sol.py"):  # oddecho: accepted, and 9 of 18
        tests = stdio(row)
        score, metadata = sandbox_fusion.compute_score(
            sandbox_fusion_url=f"{server.url}/run_code",
            concurrent_semaphore=threading.Semaphore(8),
            memory_limit_mb=1024,
            completion=f"```python\n{row['source']}\n```",
            test_cases=tests,
            continuous=False,
            timeout=10,
        )
        local = verifiers.score("python", row["source"], tests, policy="partial")
        assert all(m["api_request_error"] is None for m in metadata), metadata[0]
        assert score == pytest.approx(local.pass_rate), row["submission"]
        per_case = [m["status"] == "success" for m in metadata]
        assert per_case == [t.status is Status.PASSED for t in local.tests]
    assert local.pass_rate == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("submission", "language", "ours"),
    [
        ("different.go", "go", "go"),
        ("different.js", "nodejs", "javascript"),
        ("different.rs", "rust", "rust"),
    ],
)
def test_verl_check_correctness_in_compiled_and_other_languages(
    server: Server,
    runtime: LocalRuntime,
    submission: str,
    language: str,
    ours: str,
) -> None:
    utils = _import("verl.utils.reward_score.sandbox_fusion.utils", "integrations")
    [row] = kattis(submission)
    tests = stdio(row)
    results, metadata = utils.check_correctness(
        sandbox_fusion_url=f"{server.url}/run_code",
        in_outs=tests,
        generation=row["source"],
        timeout=20,
        language=language,
    )
    local = verifiers.score(ours, row["source"], tests, limits={"build_timeout_s": 120})
    assert results == [t.status is Status.PASSED for t in local.tests], metadata
    assert local.status is Status.PASSED
    # A program that does not compile is veRL's -4 (compile error), on every case.
    broken, _ = utils.check_correctness(
        sandbox_fusion_url=f"{server.url}/run_code",
        in_outs=tests,
        generation=row["source"] + "\n}}} this does not compile\n",
        timeout=20,
        language=language,
    )
    if language == "nodejs":
        assert broken == [-2] * len(tests["inputs"])  # node reports it when it runs
    else:
        assert broken == [-4] * len(tests["inputs"])


def test_verl_assert_cases_on_humaneval_equal_local_verdicts(
    server: Server, runtime: LocalRuntime
) -> None:
    """veRL's assert_case mode: the program is the solution plus the test code."""
    sandbox_fusion = _import("verl.utils.reward_score.sandbox_fusion", "integrations")
    rows = dataset("humaneval").rows()[:5]
    for row in rows:
        tests = {"test": row["test"], "entry_point": row["entry_point"]}
        check = f"{row['test']}\ncheck({row['entry_point']})\n"
        for body in (row["canonical_solution"], "    return None\n"):
            code = row["prompt"] + body
            score, _ = sandbox_fusion.compute_score(
                sandbox_fusion_url=f"{server.url}/run_code",
                concurrent_semaphore=None,
                memory_limit_mb=1024,
                completion=f"```python\n{code}\n```",
                test_cases={"assert_case": [check]},
                timeout=10,
            )
            local = verifiers.score("python", code, tests)
            assert score == local.score, (row["task_id"], body)


def test_run_code_for_a_language_it_does_not_serve_is_a_sandbox_error(server: Server) -> None:
    response = post(server, "/run_code", {"code": "int main(){}", "language": "cpp"})
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "SandboxError" and "cpp" in body["message"]


# --- the sandbox-fusion client package ----------------------------------------------------------


def test_sandbox_fusion_client_package(server: Server, runtime: LocalRuntime) -> None:
    _import("sandbox_fusion", "service")
    from sandbox_fusion import RunCodeRequest, SummaryMapping, run_code, summary_run_code_result

    mapping = SummaryMapping(
        CompileFailed="compile",
        CompileTimeout="compile_timeout",
        RunFailed="run",
        RunTimeout="timeout",
    )

    def run(**request: Any) -> Any:
        return run_code(RunCodeRequest(**request), endpoint=server.url, max_attempts=1)

    # stdout comes back whole, and the code is run as sent (no fence or <think> handling).
    code = (
        "import sys\ns = sys.stdin.read()\nprint(s.upper(), end='')\n"
        "print('```python <think>', file=sys.stderr)\nprint('x' * 1_000_000)\n"
    )
    done = run(code=code, language="python", stdin="abc\n")
    assert summary_run_code_result(done, mapping) == "Success"
    assert done.run_result.stdout == "ABC\n" + "x" * 1_000_000 + "\n"
    assert done.run_result.stderr == "```python <think>\n"
    assert done.run_result.return_code == 0 and done.compile_result is None

    failed = run(code="import sys\nprint('half')\nsys.exit(3)", language="python")
    assert summary_run_code_result(failed, mapping) == "run"
    assert failed.run_result.return_code == 3 and failed.run_result.stdout == "half\n"

    slow = run(code="while True: pass", language="python", run_timeout=1)
    assert summary_run_code_result(slow, mapping) == "timeout"

    go = run(
        code='package main\nimport "fmt"\nfunc main() { fmt.Println(40 + 2) }\n',
        language="go",
        compile_timeout=60,
    )
    assert summary_run_code_result(go, mapping) == "Success"
    assert go.run_result.stdout == "42\n" and go.compile_result.return_code == 0

    broken = run(code="package main\nfunc main() { x := }\n", language="go")
    assert summary_run_code_result(broken, mapping) == "compile"
    assert broken.run_result is None and broken.compile_result.return_code != 0

    node = run(
        code="console.log(require('fs').readFileSync(0, 'utf8').trim() * 2)",
        language="nodejs",
        stdin="21",
    )
    assert node.run_result.stdout == "42\n"
