"""Checkers and interactors in any language that builds standalone programs.

A judge's language need not implement ``executable``: Java, JavaScript, Go and Rust judges
are built by the language's own stdin/stdout build (``checkers.program_executable``) and
run in the program's sandbox as the judge uid, like C, C++ and Python ones. Real
toolchains, real sandbox.
"""

from __future__ import annotations

from typing import Any

import pytest

import verifiers
from verifiers import Status
from verifiers.errors import SpecError
from verifiers.runtimes import LocalRuntime

#: A Kattis output validator in Java (the answer file, the output on stdin).
JAVA_VALIDATOR = """import java.io.*;
import java.util.*;
public class Validator {
    public static void main(String[] args) throws IOException {
        BufferedReader ans = new BufferedReader(new FileReader(args[1]));
        long want = Long.parseLong(ans.readLine().trim());
        Scanner out = new Scanner(System.in);
        if (!out.hasNextLong()) { System.exit(43); }
        long got = out.nextLong();
        if (got != want) {
            File message = new File(args[2], "judgemessage.txt");
            try (PrintWriter w = new PrintWriter(message)) {
                w.println("expected " + want + " got " + got);
            }
            System.exit(43);
        }
        System.exit(42);
    }
}
"""
#: The same in JavaScript, with a tolerance.
JS_VALIDATOR = """const fs = require('fs');
const [input, answer, feedback] = process.argv.slice(2);
const want = Number(fs.readFileSync(answer, 'utf8').trim());
const got = Number(fs.readFileSync(0, 'utf8').trim());
if (Math.abs(want - got) <= 1e-6 * Math.max(1, Math.abs(want))) process.exit(42);
fs.writeFileSync(feedback + '/judgemessage.txt', `expected ${want} got ${got}`);
process.exit(43);
"""
#: testlib checkers (input output answer; 0 accepted, 1 wrong answer) in Go and Rust.
GO_CHECKER = """package main
import ("fmt"; "os"; "strings")
func main() {
    a, _ := os.ReadFile(os.Args[3])
    o, _ := os.ReadFile(os.Args[2])
    if strings.TrimSpace(string(a)) == strings.TrimSpace(string(o)) { os.Exit(0) }
    fmt.Fprintln(os.Stderr, "wrong")
    os.Exit(1)
}
"""
RUST_CHECKER = """use std::fs;
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let ans = fs::read_to_string(&a[3]).unwrap();
    let out = fs::read_to_string(&a[2]).unwrap();
    std::process::exit(if ans.trim() == out.trim() { 0 } else { 1 });
}
"""
#: A testlib-style interactor in Java: the program guesses a number in [1, 100].
JAVA_INTERACTOR = """import java.io.*;
import java.util.*;
public class Interactor {
    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new FileReader(args[0]));
        int secret = Integer.parseInt(in.readLine().trim());
        BufferedReader prog = new BufferedReader(new InputStreamReader(System.in));
        for (int turn = 0; turn < 10; turn++) {
            String line = prog.readLine();
            if (line == null) { System.err.println("no guess"); System.exit(1); }
            int guess = Integer.parseInt(line.trim());
            if (guess == secret) { System.out.println("="); System.out.flush(); System.exit(0); }
            System.out.println(guess < secret ? "<" : ">");
            System.out.flush();
        }
        System.err.println("too many guesses");
        System.exit(1);
    }
}
"""
SEARCH = """lo, hi = 1, 100
while True:
    mid = (lo + hi) // 2
    print(mid, flush=True)
    reply = input()
    if reply == "=":
        break
    if reply == "<":
        lo = mid + 1
    else:
        hi = mid - 1
"""
SUM = "a, b = map(int, input().split())\nprint(a + b)"
PRODUCT = "a, b = map(int, input().split())\nprint(a * b)"


def judged(language: str, source: str, protocol: str, key: str = "checker") -> dict[str, Any]:
    spec: dict[str, Any] = {"inputs": ["1 2", "2 2"], "outputs": ["3", "4"]}
    spec[key] = {"language": language, "source": source, "protocol": protocol}
    return spec


@pytest.mark.parametrize(
    ("language", "source", "protocol"),
    [
        ("java", JAVA_VALIDATOR, "kattis"),
        ("javascript", JS_VALIDATOR, "kattis"),
        ("go", GO_CHECKER, "testlib"),
        ("rust", RUST_CHECKER, "testlib"),
    ],
    ids=["java", "javascript", "go", "rust"],
)
def test_a_checker_in_any_language_judges(
    runtime: LocalRuntime, language: str, source: str, protocol: str
) -> None:
    spec = judged(language, source, protocol)
    right, wrong = verifiers.score_batch(
        [
            {"language": "python", "completion": code, "tests": spec, "stop_on_failure": False}
            for code in (SUM, PRODUCT)
        ],
        runtime=runtime,
    )
    assert right.status is Status.PASSED, right.feedback
    # 1 * 2 is wrong, 2 * 2 is right: the checker decides each test on its own.
    assert wrong.status is Status.FAILED and not wrong.infra_error, wrong.feedback
    assert [t.passed for t in wrong.tests] == [False, True]
    assert "wrong answer" in wrong.tests[0].message
    if protocol == "kattis":  # the validator's judgemessage.txt is the feedback
        assert "expected 3 got 2" in wrong.tests[0].message


#: A Rust testlib checker that parses the output as a number: a panic (exit 101) on garbage.
RUST_PARSING_CHECKER = """use std::fs;
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let ans: i64 = fs::read_to_string(&a[3]).unwrap().trim().parse().unwrap();
    let out: i64 = fs::read_to_string(&a[2]).unwrap().trim().parse().unwrap();
    std::process::exit(if ans == out { 0 } else { 1 });
}
"""


def test_a_judge_s_panic_is_no_verdict(runtime: LocalRuntime) -> None:
    # Rust's panic exits 101, which testlib's codes read as "partially correct, 85/100":
    # output that made the checker panic got 85% of every test. A crash status of the
    # judge's language is no verdict: the checker failed on the output, and as it accepts
    # the jury's answer, the output is wrong.
    spec = judged("rust", RUST_PARSING_CHECKER, "testlib")
    result = verifiers.score(
        "python", "print('x')", spec, runtime=runtime, policy="partial", stop_on_failure=False
    )
    assert result.status is Status.FAILED and not result.infra_error, result.feedback
    assert result.score == 0.0 and all(t.score in (None, 0.0) for t in result.tests)
    assert "crashed (exit status 101" in result.tests[0].message
    assert verifiers.score("python", SUM, spec, runtime=runtime).ok


def test_a_java_interactor_drives_the_program(runtime: LocalRuntime) -> None:
    spec = {
        "tests": [{"input": "37\n", "answer": ""}, {"input": "100\n", "answer": ""}],
        "interactor": {"language": "java", "source": JAVA_INTERACTOR, "protocol": "testlib"},
    }
    good = verifiers.score("python", SEARCH, spec, runtime=runtime)
    assert good.status is Status.PASSED, good.feedback
    # Ten wrong guesses: the interactor's wrong answer. The program ends cleanly when the
    # interactor hangs up (a crash on EOF in the same instant can be reaped first).
    linear = (
        "import sys\nfor g in range(1, 101):\n    print(g, flush=True)\n"
        "    if sys.stdin.readline().strip() in ('=', ''):\n        break\n"
    )
    bad = verifiers.score("python", linear, spec, runtime=runtime)
    assert bad.status is Status.FAILED and not bad.infra_error, bad.feedback


def test_a_java_checker_that_does_not_compile_is_a_judge_failure(runtime: LocalRuntime) -> None:
    # tree-sitter reads it, javac does not: the judge's fault, never the program's.
    broken = "public class V { public static void main(String[] a) { undefined(); } }"
    r = verifiers.score("python", SUM, judged("java", broken, "kattis"), runtime=runtime)
    assert r.status is Status.SANDBOX_ERROR and r.infra_error, r.feedback
    assert "does not build" in r.feedback


@pytest.mark.parametrize(
    ("language", "source", "field"),
    [
        ("sql", "SELECT 1;", "tests.checker.language"),
        ("regex", "a+", "tests.checker.language"),
        ("java", "public class V { void f( }", "tests.checker.source"),
    ],
)
def test_a_judge_no_language_can_run_is_a_spec_error(
    runtime: LocalRuntime, language: str, source: str, field: str
) -> None:
    with pytest.raises(SpecError) as raised:
        verifiers.score("python", SUM, judged(language, source, "kattis"), runtime=runtime)
    assert raised.value.field == field


def test_a_judge_built_by_its_language_names_its_main_file(runtime: LocalRuntime) -> None:
    spec = judged("java", JAVA_VALIDATOR, "kattis")
    spec["checker"] = {
        "language": "java",
        "files": {"V.java": JAVA_VALIDATOR},
        "protocol": "kattis",
    }
    with pytest.raises(SpecError) as raised:
        verifiers.score("python", SUM, spec, runtime=runtime)
    assert raised.value.field == "tests.checker.source"
    # A file may not take the name the build gives the source.
    spec["checker"] = {
        "language": "javascript",
        "source": JS_VALIDATOR,
        "files": {"solution.js": "x"},
        "protocol": "kattis",
    }
    with pytest.raises(SpecError) as raised:
        verifiers.score("python", SUM, spec, runtime=runtime)
    assert raised.value.field == "tests.checker.files"
