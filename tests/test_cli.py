"""The command line, run as a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from verifiers.runtimes import LocalRuntime

CLI = [sys.executable, "-m", "verifiers.cli"]
ADD = {"test": "def check(candidate):\n    assert candidate(1, 2) == 3\n", "entry_point": "add"}


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args], capture_output=True, text=True, input=stdin, timeout=300, check=False
    )


def rows() -> list[dict[str, object]]:
    return [
        {"id": "a", "completion": "def add(a, b):\n    return a + b", "tests": ADD},
        {"id": "b", "completion": "import os\nos.kill(1, 9)\nwhile True: os.fork()", "tests": ADD},
        {
            "id": "c",
            "completion": "print('no')",
            "tests": {"inputs": ["1"], "outputs": ["1"]},
            "language": "python",
        },
        {"id": "d", "completion": "def add(a, b):\n    return a + b", "tests": json.dumps(ADD)},
    ]


def test_score_jsonl_in_order(tmp_path: Path, runtime: LocalRuntime) -> None:
    source = tmp_path / "data.jsonl"
    source.write_text("\n".join(json.dumps(r) for r in rows()) + "\n")
    out = tmp_path / "results.jsonl"
    done = run("score", str(source), "-o", str(out), "--language", "python", "--timeout", "2")
    assert done.returncode == 0, done.stderr
    results = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["id"] for r in results] == ["a", "b", "c", "d"]
    assert [r["index"] for r in results] == [0, 1, 2, 3]
    assert [r["status"] for r in results] == ["passed", "runtime_error", "failed", "passed"]
    assert "pass@1" in done.stdout and "0.5000" in done.stdout


def test_score_parquet_in_and_out(tmp_path: Path, runtime: LocalRuntime) -> None:
    table = pa.Table.from_pylist(
        [
            {"lang": "python", "text": r["completion"], "spec": json.dumps(r["tests"])}
            for r in rows()
        ]
    )
    source = tmp_path / "data.parquet"
    pq.write_table(table, source)
    out = tmp_path / "results.parquet"
    done = run(
        "score",
        str(source),
        "-o",
        str(out),
        "--language-field",
        "lang",
        "--completion-field",
        "text",
        "--tests-field",
        "spec",
        "--timeout",
        "2",
    )
    assert done.returncode == 0, done.stderr
    back = pq.read_table(out).to_pylist()
    assert [r["status"] for r in back] == ["passed", "runtime_error", "failed", "passed"]
    assert json.loads(back[0]["result_json"])["tests"][0]["status"] == "passed"


def test_score_reports_a_malformed_row(tmp_path: Path) -> None:
    source = tmp_path / "bad.jsonl"
    source.write_text(
        json.dumps({"language": "python", "completion": "x", "tests": {"inputs": [1]}})
    )
    done = run("score", str(source))
    assert done.returncode == 2
    assert "row [0].tests.outputs" in done.stderr


def test_check_one_program(tmp_path: Path, runtime: LocalRuntime) -> None:
    program = tmp_path / "solution.md"
    program.write_text("```python\ndef add(a, b):\n    return a + b\n```")
    done = run("check", str(program), "--tests", json.dumps(ADD))
    assert done.returncode == 0, done.stderr
    assert "passed" in done.stdout
    tests_file = tmp_path / "tests.json"
    tests_file.write_text(json.dumps(ADD))
    done = run(
        "check", "-", "--tests", str(tests_file), "--json", stdin="def add(a, b):\n    return 0\n"
    )
    assert done.returncode == 1
    assert json.loads(done.stdout)["status"] == "failed"


def test_doctor(runtime: LocalRuntime) -> None:
    done = run("doctor")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "runtime local" in done.stdout and "bubblewrap" in done.stdout
    assert "language python" in done.stdout


def test_doctor_paths_lists_what_a_sandbox_reads(runtime: LocalRuntime) -> None:
    done = run("doctor", "--paths")
    assert done.returncode == 0, done.stdout + done.stderr
    listed = runtime.readable_paths()
    assert "/usr" in done.stdout
    assert all(path in done.stdout for path in listed["python"])
    assert "rust:" in done.stdout and "go:" in done.stdout


def test_demo(runtime: LocalRuntime) -> None:
    done = run("demo", "--problems", "6", "--timeout", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "all verdicts as expected" in done.stdout


def test_score_rerun_reuses_the_result_cache(tmp_path: Path, runtime: LocalRuntime) -> None:
    source = tmp_path / "data.jsonl"
    source.write_text("\n".join(json.dumps(r) for r in rows()) + "\n")
    cache = tmp_path / "cache.sqlite"
    args = ["score", str(source), "--language", "python", "--timeout", "2", "--cache", str(cache)]
    first = run(*args, "-o", str(tmp_path / "first.jsonl"))
    assert first.returncode == 0, first.stderr
    assert "0 rows reused" in first.stderr + first.stdout
    second = run(*args, "-o", str(tmp_path / "second.jsonl"))
    assert second.returncode == 0, second.stderr
    # Rows a and d share their work; all four come from the cache the second time.
    assert "4 rows reused" in second.stderr + second.stdout
    statuses = [
        [json.loads(line)["status"] for line in (tmp_path / name).read_text().splitlines()]
        for name in ("first.jsonl", "second.jsonl")
    ]
    assert statuses[0] == statuses[1]
