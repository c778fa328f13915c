"""The soak benchmark on a small slice: every result accounted for, nothing leaked."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from verifiers.runtimes import LocalRuntime

BENCH = Path(__file__).resolve().parents[1] / "bench"
JUDGED = ("fds", "procs", "sandbox_procs", "orphans", "tmp_entries", "cgroups")


@pytest.mark.slow
@pytest.mark.timeout(420)
def test_soak_accounts_for_every_result_and_leaks_nothing(
    tmp_path: Path, runtime: LocalRuntime
) -> None:
    out = tmp_path / "soak.json"
    # A temporary directory of its own: other test runs on the machine cannot add
    # ``verifiers*`` entries to what the soak counts.
    private_tmp = tmp_path / "tmp"
    private_tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(private_tmp)}
    done = subprocess.run(
        [
            sys.executable,
            str(BENCH / "soak.py"),
            "--n",
            "600",
            "--batch",
            "100",
            "--checkpoint-every",
            "1",
            "--max-seconds",
            "240",
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=400,
        check=False,
        env=env,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-3000:]
    report = json.loads(out.read_text())
    assert report["ok"] and report["failures"] == []

    # Every item has a result, with the status its kind must get.
    assert report["items"] == report["results"] >= 200
    if not report["stopped_early"]:
        assert report["items"] == 600
    assert report["missing"] == 0 and report["unexpected"] == 0
    assert sum(report["statuses"].values()) == report["items"]
    assert sum(sum(k.values()) for k in report["by_kind"].values()) == report["items"]
    assert "sandbox_error" not in report["statuses"]
    # The mix reached every verdict a program can earn, and duplicates were verified once.
    assert set(report["statuses"]) == {
        "passed",
        "failed",
        "no_code",
        "syntax_error",
        "compile_error",
        "runtime_error",
        "timeout",
        "memory_limit",
        "output_limit",
    }
    assert report["duplicates"] > 0 and report["distinct"] < report["items"]

    # No growth from the warm-up checkpoint to any later one, not only to the last.
    points = report["checkpoints"]
    assert [p["label"] for p in points[:2]] == ["before", "warm-up"]
    assert points[-1]["label"] == "end"
    assert len(points) >= 4
    for point in points[2:]:
        for name in JUDGED:
            assert point[name] <= points[1][name], (name, point, points[1])
    assert all(report["growth"][name] <= 0 for name in JUDGED), report["growth"]
    # Once the idle warm sandboxes are closed, nothing of the SDK is left running.
    assert all(p["procs"] == p["sandbox_procs"] == p["orphans"] == 0 for p in points)
    assert all(p["cgroups"] == 0 for p in points), [p["cgroups"] for p in points]
    assert report["verifications_per_s"] > 0
