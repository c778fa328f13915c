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
from verifiers.compare import values_equal
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


def test_an_integer_is_compared_with_a_float_exactly(runtime: LocalRuntime) -> None:
    # A float answer to an exact count once passed where it rounded to the expected integer
    # (2**53 + 1 became 2.0**53 before the comparison); an exact answer, as int or whole
    # Fraction or Decimal, passes.
    spec = {"fn_name": "binom", "inputs": [[64, 32], [100, 50]], "outputs": [0, 0]}
    spec["outputs"] = [math.comb(64, 32), math.comb(100, 50)]
    divided = (
        "import math\ndef binom(n, k):\n"
        "    return math.factorial(n) / (math.factorial(k) * math.factorial(n - k))\n"
    )
    results = verifiers.score_batch(
        [
            {"language": "python", "completion": c, "tests": spec}
            for c in (
                divided,
                divided.replace(" / ", " // "),
                "from fractions import Fraction\nimport math\ndef binom(n, k):\n"
                "    return Fraction(math.comb(n, k), 1)\n",
                "from decimal import Decimal, getcontext\nimport math\ngetcontext().prec = 60\n"
                "def binom(n, k):\n    return Decimal(math.comb(n, k))\n",
            )
        ],
        runtime=runtime,
        policy="partial",
    )
    assert [r.passed for r in results] == [0, 2, 2, 2], [r.feedback for r in results]
    close = {"fn_name": "half", "inputs": [[3]], "outputs": [1.5]}
    assert verifiers.score("python", "def half(n):\n    return n / 2\n", close).ok


def test_a_value_larger_than_the_expected_one_is_never_sent(runtime: LocalRuntime) -> None:
    # Shared rows make a few bytes on the channel and five million values once written out:
    # the judge stops at the expected value's size, so the host reads a sentence, not them.
    code = "def f(x):\n    row = [0] * 4900\n    return [row] * 1000\n"
    spec = {"fn_name": "f", "inputs": [[1], [2]], "outputs": [[[0] * 3] * 2, [1, 2]]}
    r = verifiers.score("python", code, spec, runtime=runtime, policy="partial")
    assert r.status is Status.FAILED and not r.infra_error, r.feedback
    assert all("holds more than" in t.message for t in r.tests), [t.message for t in r.tests]
    assert all(len(t.actual) <= 300 for t in r.tests)
    right = "def f(x):\n    return [[0] * 3] * 2 if x == 1 else [1, 2]\n"
    assert verifiers.score("python", right, spec, runtime=runtime).ok


def test_dict_keys_past_a_few_thousand_digits_are_compared_without_their_text() -> None:
    # Writing a 100,000-digit key as text takes quadratic time: such keys compare as numbers.
    with jsonio.big_ints():
        huge = 10**99_999 + 7
        assert values_equal({huge: 1}, {huge: 1})
        assert not values_equal({"1": 1}, {huge: 1})
        assert values_equal({"12": [1]}, {12: (1,)})


def test_a_set_built_to_hash_alike_costs_the_host_nothing(runtime: LocalRuntime) -> None:
    # Integers that are multiples of 2**61 - 1 all hash to 0: a set of thousands of them
    # took the host seconds to build on its event loop. It is the program's failure now.
    code = "def f():\n    return {j * (2**61 - 1) for j in range(1, 5001)}\n"
    spec = {"fn_name": "f", "inputs": [[]], "outputs": [list(range(10_000))]}
    r = verifiers.score("python", code, spec, runtime=runtime, limits={"timeout_s": 10})
    assert r.status is Status.FAILED and not r.infra_error, r.feedback
    assert "share one hash" in r.tests[0].message, r.tests[0].message
