"""Big integers and deep values in specs and results, end to end on real sandboxes."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import verifiers
import verifiers.integrations.verl as verl
from verifiers import Status, jsonio
from verifiers.results import Result
from verifiers.runtimes import LocalRuntime

with jsonio.big_ints():
    BIG = math.factorial(2000)  # 5736 digits: over CPython's default of 4300
    BIG_TEXT = str(BIG)
FACT = "import math\n\ndef fact(n):\n    return math.factorial(n)\n"
PRINT_FACT = "import math\nprint(math.factorial(int(input())))\n"
CALL = {"fn_name": "fact", "inputs": [[2000]], "outputs": [BIG]}
HUMANEVAL = {
    "test": f"def check(candidate):\n    assert candidate(2000) == {BIG_TEXT}\n",
    "entry_point": "fact",
}
STDIO = {"inputs": ["2000\n"], "outputs": [BIG_TEXT + "\n"]}


def nest(levels: int) -> Any:
    value: Any = 1
    for _ in range(levels):
        value = [value]
    return value


def test_a_factorial_as_the_expected_value(runtime: LocalRuntime) -> None:
    limit = sys.get_int_max_str_digits()
    for tests, code in ((CALL, FACT), (HUMANEVAL, FACT), (STDIO, PRINT_FACT)):
        r = verifiers.score("python", code, tests, runtime=runtime)
        assert r.status is Status.PASSED, r.feedback
    # The caller's limit is theirs again afterwards.
    assert sys.get_int_max_str_digits() == limit
    wrong = verifiers.score("python", FACT.replace("(n)\n", "(n) + 1\n"), CALL, runtime=runtime)
    assert wrong.status is Status.FAILED
    # Shown by size: a test's excerpt is for reading, not for 5736 digits.
    assert "5736 digits" in wrong.tests[0].expected


def test_results_with_big_values_serialise(runtime: LocalRuntime) -> None:
    r = verifiers.score("python", FACT.replace("(n)\n", "(n) + 1\n"), CALL, runtime=runtime)
    back = Result.model_validate_json(r.model_dump_json())
    assert back == r
    assert json.loads(json.dumps(r.to_dict()))["status_failed"] == 1.0
    batch = verifiers.score_batch(
        [{"language": "python", "completion": FACT, "tests": t} for t in (CALL, HUMANEVAL)],
        runtime=runtime,
    )
    assert [b.status for b in batch] == [Status.PASSED, Status.PASSED]


def test_verl_ground_truth_with_a_big_integer(runtime: LocalRuntime) -> None:
    truth = jsonio.dumps(CALL)  # a JSON string, as veRL's parquet holds ground truths
    [row] = verl.compute_score_batch(["apps"], [FACT], [truth], None)
    assert row["score"] == 1.0 and row["spec_error"] == 0.0


def test_cli_jsonl_and_parquet_with_big_integers(tmp_path: Path, runtime: LocalRuntime) -> None:
    rows = [{"completion": FACT, "tests": CALL}, {"completion": PRINT_FACT, "tests": STDIO}]
    source = tmp_path / "data.jsonl"
    source.write_text("\n".join(jsonio.dumps(r) for r in rows) + "\n")
    cli = [sys.executable, "-m", "verifiers.cli", "score", "--language", "python"]
    out = tmp_path / "results.jsonl"
    done = subprocess.run(
        [*cli, str(source), "-o", str(out)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert [jsonio.loads(line)["status"] for line in out.read_text().splitlines()] == [
        "passed",
        "passed",
    ]
    table = pa.Table.from_pylist(
        [{"completion": r["completion"], "tests": jsonio.dumps(r["tests"])} for r in rows]
    )
    pq.write_table(table, tmp_path / "data.parquet")
    parquet = tmp_path / "results.parquet"
    done = subprocess.run(
        [*cli, str(tmp_path / "data.parquet"), "-o", str(parquet)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert [r["status"] for r in pq.read_table(parquet).to_pylist()] == ["passed", "passed"]


def test_deep_values(runtime: LocalRuntime) -> None:
    code = "def f():\n    v = 1\n    for _ in range({}):\n        v = [v]\n    return v\n"
    deep = {"fn_name": "f", "inputs": [[]], "outputs": [nest(150)]}
    assert verifiers.score("python", code.format(150), deep, runtime=runtime).ok
    wrong = code.format(150).replace("v = 1", "v = 2")
    assert verifiers.score("python", wrong, deep, runtime=runtime).status is Status.FAILED
    # A spec nested deeper than the SDK hashes and stores is refused, naming the field.
    with pytest.raises(verifiers.SpecError, match=r"tests: a value is nested more than 200"):
        verifiers.score("python", code.format(300), {**deep, "outputs": [nest(300)]})


def test_big_ints_only_raises_the_limit() -> None:
    limit = sys.get_int_max_str_digits()
    try:
        sys.set_int_max_str_digits(0)  # the caller's choice: unlimited
        with jsonio.big_ints():
            assert sys.get_int_max_str_digits() == 0
        sys.set_int_max_str_digits(5000)
        with jsonio.big_ints():
            with jsonio.big_ints():
                assert sys.get_int_max_str_digits() == jsonio.INT_DIGITS
            assert sys.get_int_max_str_digits() == jsonio.INT_DIGITS
        assert sys.get_int_max_str_digits() == 5000
        with pytest.raises(ValueError, match="integer string conversion"):
            str(10**6000)
    finally:
        sys.set_int_max_str_digits(limit)
