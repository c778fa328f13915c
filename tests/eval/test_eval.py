"""``verifiers eval`` and ``verifiers report`` end to end, with real models and a real server.

Two tiny checkpoints are built here (examples/eval/tiny_models.py): a randomly initialised
2-layer model with a tokenizer trained on the spot, and the same model fine-tuned to answer
the first three MBPP problems. Generation runs on the CPU with transformers, and through
``transformers serve`` (Hugging Face's OpenAI-compatible server) for the openai backend.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import verifiers
from verifiers.eval.backends import Sampling, make_backend
from verifiers.eval.problems import load_problems
from verifiers.eval.runner import evaluate, read_rows, summarize

from ..conftest import need

REPO = Path(__file__).resolve().parents[2]
TINY = REPO / "examples" / "eval" / "tiny_models.py"
PROBLEMS = 5  # the first three are memorised by the trained checkpoint


def _tiny() -> ModuleType:
    spec = importlib.util.spec_from_file_location("tiny_models", TINY)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    need(importlib.util.find_spec("torch") is not None, "torch is not installed")
    need(importlib.util.find_spec("transformers") is not None, "transformers is not installed")
    out = tmp_path_factory.mktemp("tiny")
    base, trained = _tiny().build(out)
    return {"base": base, "trained": trained, "dir": out}


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
    }
    return subprocess.run(
        [sys.executable, "-m", "verifiers.cli", *args],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=cwd,
        env=env,
        check=False,
    )


def _eval(model: Path | str, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return _cli(
        "eval",
        "--model",
        str(model),
        "--dataset",
        "mbpp",
        "--limit",
        str(PROBLEMS),
        "--out",
        str(out),
        "--max-tokens",
        "200",
        *extra,
        cwd=out.parent,
    )


def _by_task(rows: list[dict[str, Any]]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for row in rows:
        out.setdefault(row["task_id"], []).append(row["result"]["status"])
    return out


@pytest.fixture(scope="module")
def runs(models: dict[str, Path]) -> dict[str, Path]:
    """Both checkpoints evaluated with the transformers backend through the CLI."""
    out = {}
    for name, extra in (
        ("base", ("--n", "4", "--k", "1,2,4", "--temperature", "0.8", "--seed", "1")),
        ("trained", ("--n", "2", "--k", "1,2", "--temperature", "0")),
    ):
        path = models["dir"] / f"{name}.jsonl"
        done = _eval(models[name], path, *extra)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
        assert "pass@1" in done.stdout
        out[name] = path
    return out


def test_transformers_backend_end_to_end(runs: dict[str, Path]) -> None:
    trained = read_rows(runs["trained"])
    base = read_rows(runs["base"])
    assert len(trained) == PROBLEMS * 2 and len(base) == PROBLEMS * 4
    # Every row has the completion and the full result.
    row = trained[0]
    assert row["completion"] and row["backend"] == "transformers"
    assert verifiers.Result.model_validate(row["result"]).language == "python"
    assert row["sampling"]["temperature"] == 0 and row["template"] != "server"
    # The fine-tuned checkpoint solves exactly what it memorised; random weights nothing.
    solved = {t for t, s in _by_task(trained).items() if "passed" in s}
    assert solved == {"2", "3", "4"}
    [group] = summarize(trained, [1, 2])
    assert group.pass_at_k == {1: pytest.approx(0.6), 2: pytest.approx(0.6)}
    assert group.breakdown["passed"] == 6
    [group] = summarize(base, [1, 2, 4])
    assert group.pass_at_k == {1: 0.0, 2: 0.0, 4: 0.0}
    assert sum(group.breakdown.values()) == PROBLEMS * 4
    assert "passed" not in group.breakdown


def test_overlapped_generation_and_verification_in_process(models: dict[str, Path]) -> None:
    problems = load_problems("mbpp", limit=4)
    backend = make_backend("transformers", str(models["trained"]))
    seen: list[tuple[int, int]] = []
    run = evaluate(
        problems,
        backend,
        Sampling(n=1, temperature=0, max_tokens=200),
        models["dir"] / "inproc.jsonl",
        ks=[1],
        batch_size=1,
        progress=lambda done, total: seen.append((done, total)),
    )
    assert run.rows == 4 and seen[-1] == (4, 4) and len(seen) == 4
    assert run.summary[0].pass_at_k[1] == pytest.approx(0.75)


@pytest.fixture(scope="module")
def server(models: dict[str, Path]) -> Iterator[str]:
    """``transformers serve`` with the trained checkpoint, on a free loopback port."""
    need(
        shutil.which("transformers", path=str(Path(sys.executable).parent)) is not None,
        "the transformers CLI is not installed",
    )
    need(importlib.util.find_spec("openai") is not None, "transformers serve needs openai")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    binary = str(Path(sys.executable).parent / "transformers")
    log = (models["dir"] / "serve.log").open("w")
    proc = subprocess.Popen(
        [binary, "serve", str(models["trained"]), "--host", "127.0.0.1", "--port", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert proc.poll() is None, (models["dir"] / "serve.log").read_text()[-2000:]
            time.sleep(0.5)
        else:
            pytest.fail("transformers serve did not start within 120 s")
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def test_openai_backend_against_a_real_server(
    server: str, models: dict[str, Path], runs: dict[str, Path]
) -> None:
    out = models["dir"] / "openai.jsonl"
    done = _eval(
        models["trained"],
        out,
        "--backend",
        "openai",
        "--base-url",
        server,
        "--n",
        "2",
        "--k",
        "1,2",
        "--temperature",
        "0",
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    rows = read_rows(out)
    assert len(rows) == PROBLEMS * 2 and rows[0]["backend"] == "openai"
    # Greedy decoding: the server's verdicts are the in-process backend's.
    assert _by_task(rows) == _by_task(read_rows(runs["trained"]))


def test_report_renders_in_headless_chromium(runs: dict[str, Path], tmp_path: Path) -> None:
    html = tmp_path / "report.html"
    done = _cli(
        "report",
        str(runs["base"]),
        str(runs["trained"]),
        "--html",
        str(html),
        "--k",
        "1,2",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    page = html.read_text()
    assert page.count('src="data:image/png;base64,') == 3  # pass@1, pass@2, verdicts
    # Self-contained: nothing for the browser to fetch.
    assert not re.search(r'(src|href)="(https?:)?//', page)
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    need(browser is not None, "chromium is not installed (apt-get install chromium)")
    assert browser is not None

    def chromium(*args: str) -> str:
        flags = ["--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=5000"]
        return subprocess.run(
            [str(browser), *flags, *args, html.as_uri()],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        ).stdout

    dom = chromium("--dump-dom")
    # Set by the page's script once loaded: the charts decoded to real images.
    assert 'data-charts="3"' in dom
    assert "solved by trained, not base" in dom
    for task in ("mbpp 2", "mbpp 3", "mbpp 4"):
        assert task in dom
    shot = tmp_path / "report.png"
    chromium("--window-size=1200,2400", f"--screenshot={shot}")
    assert shot.stat().st_size > 20_000


def test_malformed_options_are_clear_errors(tmp_path: Path) -> None:
    def bad(*args: str) -> subprocess.CompletedProcess[str]:
        return _cli("eval", "--model", "x", *args, cwd=tmp_path)

    done = bad("--dataset", "mbpp", "--n", "2", "--k", "1,5")
    assert done.returncode == 2 and "pass@5 needs at least 5 samples" in done.stderr
    done = bad("--dataset", "nope.jsonl")
    assert done.returncode == 2 and "neither a known dataset nor a file" in done.stderr
    done = bad("--dataset", "mbpp", "--backend", "openai", "--n", "1", "--k", "1")
    assert done.returncode == 2 and "base_url" in done.stderr
    done = bad("--dataset", "mbpp", "--backend", "vllm", "--n", "1", "--k", "1", "--limit", "1")
    # Without vLLM (as here, see docs/evaluation.md) the message says how to install it;
    # with it, model "x" cannot load: either way a clear error naming the backend.
    assert done.returncode == 3 and "vllm" in done.stderr.lower()
    assert "Traceback" not in done.stderr


def test_problem_files_in_both_layouts(tmp_path: Path) -> None:
    plain = tmp_path / "mine.jsonl"
    plain.write_text(
        json.dumps(
            {
                "task_id": "t1",
                "language": "python",
                "prompt": "Add two numbers.",
                "tests": {"fn_name": "add", "inputs": [[1, 2]], "outputs": [3]},
            }
        )
        + "\n"
    )
    [problem] = load_problems(str(plain))
    assert problem.messages == [{"role": "user", "content": "Add two numbers."}]
    assert problem.dataset == "mine" and problem.language == "python"
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"prompt": 3, "tests": {}, "language": "python"}) + "\n")
    with pytest.raises(verifiers.SpecError, match=r"bad\[0\]\.prompt"):
        load_problems(str(bad))
