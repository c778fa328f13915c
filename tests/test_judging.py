"""Judging beyond a text compare: spec keys, per-problem limits, subtasks, built-in checkers,
checker and interactor programs (Python ones here; C++ ones on the shared datasets in
``test_cp_judges.py``), and checker faults, on the real sandbox."""

from __future__ import annotations

import pytest

import verifiers
from verifiers import SpecError, Status
from verifiers.compare import outputs_match
from verifiers.runtimes import LocalRuntime
from verifiers.specs import CompareOptions, StdioTests, parse_tests

SWAP = "a, b = map(int, input().split())\nprint(b, a)\n"
PAIRS = {"inputs": ["1 2\n", "3 4\n"], "outputs": ["1 2\n", "3 4\n"]}
QUICK = {"timeout_s": 3}

TESTLIB_PERMUTATION = r"""
import sys
given, output, answer = (open(p).read().split() for p in sys.argv[1:4])
if sorted(output) == sorted(answer):
    sys.exit(0)
sys.stderr.write(f"expected {' '.join(answer)} in any order, found {' '.join(output)}")
sys.exit(1)
"""
KATTIS_PERMUTATION = r"""
import os, sys
answer = open(sys.argv[2]).read().split()
output = sys.stdin.read().split()
if sorted(output) == sorted(answer):
    sys.exit(42)
with open(os.path.join(sys.argv[3], "judgemessage.txt"), "w") as f:
    f.write("not the numbers of the input")
sys.exit(43)
"""
CHECK_PERMUTATION = """\
def check(input, output, answer):
    return sorted(output.split()) == sorted(answer.split())
"""


def checker(source: str, protocol: str, **more: object) -> dict[str, object]:
    return {"language": "python", "source": source, "protocol": protocol, **more}


def score(runtime: LocalRuntime, code: str, tests: object, **options: object) -> verifiers.Result:
    return verifiers.score("python", code, tests, runtime=runtime, **options)


# --- spec keys --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ({**PAIRS, "time_limit": 2}, "tests.time_limit"),
        ({**PAIRS, "checkr": "tokens"}, "tests.checkr"),
        ({"test": "def check(c): pass", "entry_point": "f", "timeout": 1}, "tests.timeout"),
        ({"test_list": ["assert f(1) == 1"], "tests_imports": []}, "tests.tests_imports"),
        (
            {"fn_name": "f", "inputs": [[1]], "outputs": [1], "compare_mode": "x"},
            "tests.compare_mode",
        ),
        ({"tests": [{"input": "1", "output": "1"}], "memory": 64}, "tests.memory"),
        ([{"input": "1", "output": "1", "expected": "2"}], "tests[0].expected"),
        ({"positive": ["a"], "negative": ["b"], "flags": "i"}, "tests.flags"),
        ({"database": "x.sqlite", "gold_query": "SELECT 1", "strict": True}, "tests.strict"),
    ],
)
def test_an_unknown_key_is_a_spec_error_naming_it(raw: object, field: str) -> None:
    with pytest.raises(SpecError) as err:
        parse_tests(raw)
    assert err.value.field == field
    assert "unknown key" in str(err.value)


def test_fields_datasets_carry_are_accepted_and_ignored() -> None:
    he = {
        "task_id": "HumanEval/0",
        "prompt": "def f():\n",
        "canonical_solution": "    return 1\n",
        "test": "def check(c):\n    assert c() == 1\n",
        "entry_point": "f",
    }
    assert parse_tests(he).kind == "assert_script"
    mbpp = {
        "task_id": 2,
        "code": "x",
        "source_file": "y",
        "test_list": ["assert 1"],
        "test_imports": [],
    }
    assert parse_tests(mbpp).kind == "assert_list"
    kattis = [{"name": "sample/1", "input": "1\n", "answer": "2\n"}]
    spec = parse_tests(kattis)
    assert isinstance(spec, StdioTests) and spec.cases[0].output == "2\n"


def test_limits_and_subtasks_are_validated() -> None:
    for bad in (0, -1, 1000):
        with pytest.raises(SpecError) as err:
            parse_tests({**PAIRS, "time_limit_s": bad})
        assert err.value.field == "tests.time_limit_s"
    with pytest.raises(SpecError) as err:
        parse_tests({**PAIRS, "memory_limit_mb": 1})
    assert err.value.field == "tests.memory_limit_mb"
    with pytest.raises(SpecError) as err:
        parse_tests({**PAIRS, "subtasks": [{"points": 1, "tests": [0, 2]}]})
    assert err.value.field == "tests.subtasks[0].tests[1]"
    assert "does not exist" in str(err.value)
    with pytest.raises(SpecError) as err:
        parse_tests({**PAIRS, "subtasks": [{"points": 1, "tests": [1, 1]}]})
    assert err.value.field == "tests.subtasks[0].tests"
    with pytest.raises(SpecError) as err:
        parse_tests({**PAIRS, "subtasks": [{"points": 0, "tests": [1]}]})
    assert err.value.field == "tests.subtasks.0.points"


def test_checker_specs_are_validated() -> None:
    with pytest.raises(SpecError) as err:
        parse_tests({**PAIRS, "checker": "sorted_lines"})
    assert err.value.field == "tests.checker" and "unknown built-in checker" in str(err.value)
    with pytest.raises(SpecError) as err:
        parse_tests({**PAIRS, "checker": {"language": "python", "protocol": "testlib"}})
    assert err.value.field == "tests.checker"
    with pytest.raises(SpecError) as err:
        parse_tests({**PAIRS, "checker": {"language": "python", "source": "", "protocol": "x"}})
    assert err.value.field == "tests.checker.protocol"
    with pytest.raises(SpecError) as err:
        parse_tests(
            {
                **PAIRS,
                "checker": {"language": "cpp", "files": {"../x.h": ""}, "protocol": "testlib"},
            }
        )
    assert "relative path" in str(err.value)
    verifier = verifiers.get_verifier("python")
    for language, protocol, field in (
        ("cobol", "testlib", "tests.checker.language"),
        ("sql", "testlib", "tests.checker.language"),
        ("cpp", "function", "tests.checker.protocol"),
    ):
        spec = {**PAIRS, "checker": {"language": language, "source": "x", "protocol": protocol}}
        with pytest.raises(SpecError) as err:
            verifier.job("print(1)", spec)
        assert err.value.field == field
    with pytest.raises(SpecError) as err:
        verifier.job("print(1)", {**PAIRS, "checker": checker("def check(:", "function")})
    assert err.value.field == "tests.checker.source"


# --- built-in checkers --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected", "accepted", "rejected"),
    [
        ("unordered_lines", "a b\nc d\n", "c d\na b  \n", "a b\nd c\n"),
        ("unordered_tokens", "1 2 3\n", "3\n1 2", "1 2 2"),
        ("yes_no", "YES\n3\n", "yes 3", "yes 4"),
        ("float", "0.333333\n", "0.3333334", "0.3334"),
        ("tokens", "1  2\n", "1\n2", "1 2 3"),
    ],
)
def test_builtin_checkers(name: str, expected: str, accepted: str, rejected: str) -> None:
    spec = parse_tests({"inputs": [""], "outputs": [expected], "checker": name})
    assert isinstance(spec, StdioTests)
    assert outputs_match(expected, accepted, spec.compare)
    assert not outputs_match(expected, rejected, spec.compare)
    assert not outputs_match(expected, accepted, CompareOptions())


def test_float_checker_takes_its_tolerance() -> None:
    spec = parse_tests(
        {"inputs": [""], "outputs": ["1"], "checker": {"name": "float", "abs_tol": 0.5}}
    )
    assert isinstance(spec, StdioTests)
    assert outputs_match("1", "1.4", spec.compare) and not outputs_match("1", "1.6", spec.compare)


def test_builtin_checker_end_to_end(runtime: LocalRuntime) -> None:
    tests = {**PAIRS, "checker": "unordered_tokens"}
    assert score(runtime, SWAP, tests).status is Status.PASSED
    assert score(runtime, SWAP, PAIRS).status is Status.FAILED


# --- per-problem limits ------------------------------------------------------------------------

SLEEPY = "import time\ntime.sleep(1.5)\nprint(1)\n"


def test_the_problem_time_limit_overrides_limits(runtime: LocalRuntime) -> None:
    tests = {"inputs": [""], "outputs": ["1"]}
    r = score(runtime, SLEEPY, {**tests, "time_limit_s": 5}, limits={"timeout_s": 1})
    assert r.status is Status.PASSED
    r = score(runtime, SLEEPY, {**tests, "time_limit_s": 0.5}, limits={"timeout_s": 10})
    assert r.status is Status.TIMEOUT


def test_the_problem_memory_limit_overrides_limits(runtime: LocalRuntime) -> None:
    hog = "x = bytearray(300 * 1024 * 1024)\nprint(1)\n"
    tests = {"inputs": [""], "outputs": ["1"]}
    assert score(runtime, hog, tests, limits={"memory_mb": 1024}).status is Status.PASSED
    r = score(runtime, hog, {**tests, "memory_limit_mb": 128}, limits={"memory_mb": 1024})
    assert r.status is Status.MEMORY_LIMIT


# --- subtasks ----------------------------------------------------------------------------------

#: Right for inputs below 100 only.
SMALL_ONLY = "n = int(input())\nprint(n * 2 if n < 100 else 0)\n"
GROUPS = {
    "inputs": ["1", "2", "500", "600"],
    "outputs": ["2", "4", "1000", "1200"],
    "subtasks": [
        {"name": "small", "points": 30, "tests": [0, 1]},
        {"name": "large", "points": 70, "tests": [2, 3]},
    ],
}


def test_subtasks_score_groups_that_pass_whole(runtime: LocalRuntime) -> None:
    r = score(runtime, SMALL_ONLY, GROUPS, policy="partial")
    assert r.status is Status.FAILED
    assert r.score == pytest.approx(0.3)
    assert [(g.name, g.passed) for g in r.subtasks] == [("small", True), ("large", False)]
    assert "Subtasks: small 30/30, large 0/70" in r.feedback
    assert score(runtime, SMALL_ONLY, GROUPS, policy="binary").score == 0.0
    # One test of the large group passes: the group still scores nothing.
    half = "n = int(input())\nprint(n * 2 if n < 550 else 0)\n"
    assert score(runtime, half, GROUPS, policy="partial").score == pytest.approx(0.3)
    right = "print(int(input()) * 2)\n"
    r = score(runtime, right, GROUPS, policy="partial")
    assert r.status is Status.PASSED and r.score == 1.0
    assert score(runtime, right, GROUPS, policy="binary").score == 1.0


# --- checker programs ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "protocol"),
    [
        (TESTLIB_PERMUTATION, "testlib"),
        (KATTIS_PERMUTATION, "kattis"),
        (CHECK_PERMUTATION, "function"),
    ],
)
def test_a_checker_accepts_another_valid_answer(
    runtime: LocalRuntime, source: str, protocol: str
) -> None:
    tests = {**PAIRS, "checker": checker(source, protocol)}
    r = score(runtime, SWAP, tests)
    assert r.status is Status.PASSED, r.feedback
    assert score(runtime, SWAP, PAIRS).status is Status.FAILED  # a plain compare rejects it
    wrong = score(runtime, "print(5, 5)", tests)
    assert wrong.status is Status.FAILED and not wrong.infra_error
    ran = [t for t in wrong.tests if not t.not_run]  # binary stops at the first failure
    assert ran and all(t.actual.strip() == "5 5" for t in ran)
    if protocol == "testlib":
        assert "expected 1 2 in any order, found 5 5" in wrong.feedback
    if protocol == "kattis":
        assert "not the numbers of the input" in wrong.feedback
    # A program that crashes is the program's fault; its checker never runs.
    assert score(runtime, "raise SystemExit(2)", tests).status is Status.RUNTIME_ERROR


def test_partial_credit_from_a_checker(runtime: LocalRuntime) -> None:
    points = checker("import sys\nsys.stderr.write('points 0.25 partly')\nsys.exit(7)", "testlib")
    pc = checker("import sys\nsys.exit(16 + 40)", "testlib")
    share = checker("def check(i, o, a):\n    return 0.5\n", "function")
    for judge, expected in ((points, 0.25), (pc, 0.4), (share, 0.5)):
        r = score(
            runtime,
            "print(1)",
            {"inputs": ["1"], "outputs": ["1"], "checker": judge},
            policy="partial",
        )
        assert r.status is Status.FAILED and not r.infra_error
        assert r.tests[0].score == pytest.approx(expected)
        assert r.score == pytest.approx(expected)


@pytest.mark.parametrize(
    ("source", "protocol", "why"),
    [
        ("raise ValueError('checker bug')", "testlib", "status 121"),
        ("import sys\nsys.stderr.write('FAIL answer')\nsys.exit(3)", "testlib", "testlib's fail"),
        ("import sys\nsys.exit(9)", "testlib", "status 9"),
        ("import sys\nsys.exit(0)", "kattis", "not 42 or 43"),
        ("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)", "kattis", "SIGSEGV"),
        ("while True:\n    pass", "testlib", "time limit"),
        ("def check(i, o, a):\n    return 'yes'\n", "function", "status 3"),
        ("def check(i, o, a):\n    raise KeyError(1)\n", "function", "status"),
    ],
)
def test_a_checker_fault_is_not_the_program_s(
    runtime: LocalRuntime, source: str, protocol: str, why: str
) -> None:
    judge = checker(source, protocol, time_limit_s=1)
    r = score(runtime, "print(1)", {"inputs": ["1"], "outputs": ["1"], "checker": judge})
    assert r.status is Status.SANDBOX_ERROR and r.infra_error
    assert "Judge failure (not the program's fault)" in r.feedback
    assert why in r.feedback


#: Checkers that read a count from the output without checking it (Library Checker's
#: tree/common_interval_decomposition_tree: `vector(M)` of a negative M aborts): they crash
#: on some wrong outputs and accept the jury's answer.
_COUNTS = "1 2\n"
FRAGILE = {
    "testlib": (
        "import sys\ngiven, output, answer = (open(p).read().split() for p in sys.argv[1:4])\n"
        "n = int(output[0])\nseen = [0] * n\nseen[n - 1] = 1\n"
        "sys.exit(0 if output == answer else 1)\n"
    ),
    "kattis": (
        "import sys\nanswer = open(sys.argv[2]).read().split()\noutput = sys.stdin.read().split()"
        "\nn = int(output[0])\nseen = [0] * n\nseen[n - 1] = 1\n"
        "sys.exit(42 if output == answer else 43)\n"
    ),
    "function": (
        "def check(given, output, answer):\n    n = int(output.split()[0])\n"
        "    seen = [0] * n\n    seen[n - 1] = 1\n    return output.split() == answer.split()\n"
    ),
}


@pytest.mark.parametrize("protocol", sorted(FRAGILE))
@pytest.mark.parametrize("output", ["-1 2", "0 2", "x"])
def test_an_output_that_crashes_the_checker_is_the_program_s_wrong_answer(
    runtime: LocalRuntime, protocol: str, output: str
) -> None:
    """A checker that fails on the output but accepts the jury's answer failed because of
    the output: the test is failed (the checker's words in the feedback, the crash in
    hack_suspected), not a dropped sample."""
    tests = {"inputs": ["1"], "outputs": [_COUNTS], "checker": checker(FRAGILE[protocol], protocol)}
    wrong = score(runtime, f"print({output!r})", tests)
    assert wrong.status is Status.FAILED and not wrong.infra_error, wrong.feedback
    assert "accepts the jury's answer" in wrong.feedback
    assert wrong.hack_suspected and "checker" in wrong.hack_suspected
    right = score(runtime, f"print({_COUNTS.strip()!r})", tests)
    assert right.status is Status.PASSED, right.feedback


def test_a_checker_is_run_on_the_answer_once_per_test(runtime: LocalRuntime) -> None:
    from verifiers.checkers import ANSWER_VERDICTS

    ANSWER_VERDICTS.clear()
    tests = {
        "inputs": ["1", "2"],
        "outputs": [_COUNTS, _COUNTS],
        "checker": checker(FRAGILE["testlib"], "testlib"),
    }
    for _ in range(3):  # a group of samples of one problem
        r = score(runtime, "print(-5)", tests, policy="partial")
        assert r.status is Status.FAILED and not r.infra_error
    assert len(ANSWER_VERDICTS) == 2  # once per test, not per sample


def test_a_checker_that_fails_on_the_jury_s_answer_too_is_the_judge_s(
    runtime: LocalRuntime,
) -> None:
    # It crashes on the answer as well: its failure is not the output's.
    broken = checker(FRAGILE["testlib"], "testlib")
    tests = {"inputs": ["1"], "outputs": ["-1\n"], "checker": broken}
    r = score(runtime, "print(-1)", tests)
    assert r.status is Status.SANDBOX_ERROR and r.infra_error
    assert "Judge failure (not the program's fault)" in r.feedback


def test_the_program_cannot_reach_the_judges_directory(runtime: LocalRuntime) -> None:
    probe = (
        "import glob, os\nfound = []\n"
        "for d in glob.glob('/tmp/.verifiers-judge-*'):\n"
        "    try:\n        os.listdir(d)\n        found.append('listed')\n"
        "    except PermissionError:\n        found.append('denied')\n"
        "print(' '.join(found) or 'none')\n"
    )
    tests = {"inputs": [""], "outputs": ["x"], "checker": checker(CHECK_PERMUTATION, "function")}
    r = score(runtime, probe, tests)
    assert r.tests[0].actual.strip() == "denied"


def test_feedback_files_are_read_without_following_links(runtime: LocalRuntime) -> None:
    # A checker's link to the supervisor's environment is not read back as its feedback.
    source = (
        "import os, sys\nfeedback = sys.argv[3]\n"
        "os.symlink('/proc/1/environ', os.path.join(feedback, 'teammessage.txt'))\n"
        "with open(os.path.join(feedback, 'judgemessage.txt'), 'w') as f:\n"
        "    f.write('plain words')\n"
        "sys.exit(43)\n"
    )
    tests = {"inputs": ["1"], "outputs": ["1"], "checker": checker(source, "kattis")}
    r = score(runtime, "print(1)", tests)
    assert r.status is Status.FAILED
    assert "plain words" in r.tests[0].message and "PATH=" not in r.tests[0].message


# --- interactors ---------------------------------------------------------------------------------

GUESSER = r"""
import sys
secret = int(open(sys.argv[1]).read())
for _ in range(12):
    line = sys.stdin.readline()
    if not line:
        sys.exit(43)
    guess = int(line)
    if guess == secret:
        print("correct", flush=True)
        sys.exit(42)
    print("lower" if guess > secret else "higher", flush=True)
sys.exit(43)
"""
BISECT = """
lo, hi = 1, 1000
while True:
    mid = (lo + hi) // 2
    print(mid, flush=True)
    reply = input()
    if reply == "correct":
        break
    if reply == "lower":
        hi = mid - 1
    else:
        lo = mid + 1
"""
GUESSING = {
    "inputs": ["17\n", "1000\n"],
    "outputs": ["", ""],
    "interactor": checker(GUESSER, "kattis"),
}


def test_an_interactor_judges_a_conversation(runtime: LocalRuntime) -> None:
    assert score(runtime, BISECT, GUESSING, limits=QUICK).status is Status.PASSED
    r = score(runtime, "print(1, flush=True)\nprint(1, flush=True)\n" * 10, GUESSING, limits=QUICK)
    assert r.status is Status.FAILED
    # No answer at all: the interactor waits, the program waits too: the time limit.
    r = score(runtime, "input()", GUESSING, limits=QUICK)
    assert r.status is Status.TIMEOUT
    # A wrong answer given first stands, whatever the program does next.
    wrong_then_hang = "print(0, flush=True)\nimport time\ntime.sleep(60)\n"
    loop = {
        **GUESSING,
        "interactor": checker("import sys\nsys.stdin.readline()\nsys.exit(43)", "kattis"),
    }
    assert score(runtime, wrong_then_hang, loop, limits=QUICK).status is Status.FAILED
    crash = "print(500, flush=True)\ninput()\nraise SystemExit(3)\n"
    assert score(runtime, crash, GUESSING, limits=QUICK).status is Status.RUNTIME_ERROR
    broken = {**GUESSING, "interactor": checker("import sys\nsys.exit(5)", "kattis")}
    r = score(runtime, BISECT, broken, limits=QUICK)
    assert r.status is Status.SANDBOX_ERROR and "Judge failure" in r.feedback


@pytest.mark.parametrize("leave", ["", "    os.setsid()\n"], ids=["child", "own session"])
def test_a_child_left_holding_the_pipes_is_killed_when_the_program_ends(
    runtime: LocalRuntime, leave: str
) -> None:
    # The child keeps the program's end of the pipes open: the interactor never read the
    # end of its output, timed out, and the wrong answer became a judge failure (a
    # sandbox_error, never the model's). Now the program's leftovers go when it ends.
    wrong = (
        f"import os, time\nprint(500, flush=True)\nif os.fork() == 0:\n{leave}    time.sleep(60)\n"
    )
    r = score(runtime, wrong, GUESSING, limits=QUICK, policy="partial")
    assert r.status is Status.FAILED and not r.infra_error, r.feedback
    assert all(t.status is Status.FAILED for t in r.tests)


def test_the_program_cannot_read_what_the_interactor_holds(runtime: LocalRuntime) -> None:
    interactor = (
        "import sys\nsys.stdin.readline()\nprint('go', flush=True)\n"
        "sys.exit(42 if sys.stdin.readline().strip() == 'safe' else 43)\n"
    )
    probe = r"""
import glob
print("ready", flush=True)
input()
seen = False
for path in glob.glob("/proc/[0-9]*/fd/*"):
    try:
        with open(path, "rb") as f:
            seen = seen or b"SECRET-ANSWER" in f.read(1 << 16)
    except OSError:
        pass
print("leaked" if seen else "safe", flush=True)
"""
    tests = {
        "inputs": ["SECRET-INPUT"],
        "outputs": ["SECRET-ANSWER"],
        "interactor": checker(interactor, "kattis"),
    }
    assert score(runtime, probe, tests, limits=QUICK).status is Status.PASSED
