"""The warm Node (``JavaScriptLanguage(warm=True)``): a program's stdin/stdout tests in one Node.

Each test runs in a worker thread of its own (``_js_runner.js``), served by the sandbox's
supervisor (``run_warm`` in ``runtimes/_agent.py``). What must hold: the program sees its
input however it reads it, tests do not see each other's state, the verdicts are those of
a Node per test, and a program that attacks its runner (kills it, forges a reply for a
later test, leaves a process behind) changes nothing but its own test.
"""

from __future__ import annotations

import shutil
from typing import Any

import pytest

import verifiers
from verifiers.languages.javascript import JavaScriptLanguage
from verifiers.runtimes.local import LocalRuntime

from ..conftest import need

INPUTS = ["1 2\n", "3 4\n", "10 20\n"]
SUMS = {"inputs": INPUTS, "outputs": ["3\n", "7\n", "30\n"]}
PASSED = verifiers.Status.PASSED
ALL = {"policy": "partial", "stop_on_failure": False}

READERS = {
    "readline": (
        "const rl = require('readline').createInterface({ input: process.stdin });\n"
        "let s = 0;\n"
        "rl.on('line', (l) => { for (const x of l.split(' ')) s += Number(x); });\n"
        "rl.on('close', () => console.log(s));\n"
    ),
    "readFileSync(0)": (
        "const d = require('fs').readFileSync(0, 'utf8');\n"
        "console.log(d.trim().split(/\\s+/).map(Number).reduce((a, b) => a + b, 0));\n"
    ),
    "/dev/stdin": (
        "const d = require('fs').readFileSync('/dev/stdin').toString();\n"
        "console.log(d.trim().split(/\\s+/).map(Number).reduce((a, b) => a + b, 0));\n"
    ),
    "stdin events": (
        "let d = '';\n"
        "process.stdin.setEncoding('utf8');\n"
        "process.stdin.on('data', (c) => (d += c));\n"
        "process.stdin.on('end', () => {\n"
        "  console.log(d.trim().split(/\\s+/).map(Number).reduce((a, b) => a + b, 0));\n"
        "});\n"
    ),
    "readSync loop": (
        "const fs = require('fs');\n"
        "const b = Buffer.alloc(3);\n"
        "let n, s = '';\n"
        "while ((n = fs.readSync(0, b, 0, b.length, null)) > 0) s += b.toString('utf8', 0, n);\n"
        "const sum = s.trim().split(/\\s+/).map(Number).reduce((a, c) => a + c, 0);\n"
        "fs.writeSync(1, String(sum) + '\\n');\n"
    ),
    "main module": (
        "function main() {\n"
        "  const d = require('fs').readFileSync(0, 'utf8');\n"
        "  process.stdout.write(String(d.split(/\\s+/).filter(Boolean).map(Number)"
        ".reduce((a, b) => a + b, 0)) + '\\n');\n"
        "}\n"
        "if (require.main === module) main();\n"
    ),
}


@pytest.fixture(scope="module")
def node() -> None:
    need(shutil.which("node") is not None, "node is not installed")


RUNTIME = LocalRuntime()


def _score(
    code: str,
    tests: dict[str, Any],
    warm: bool = True,
    runtime: LocalRuntime = RUNTIME,
    **options: Any,
) -> verifiers.Result:
    verifier = verifiers.CodeVerifier(JavaScriptLanguage(warm=warm), runtime)
    return verifier.score(code, tests, limits={"timeout_s": 5}, **options)


@pytest.mark.parametrize("reader", sorted(READERS))
def test_every_way_of_reading_stdin_works(node: None, reader: str) -> None:
    result = _score(READERS[reader], SUMS)
    assert result.status is verifiers.Status.PASSED, result.feedback


def test_one_process_serves_the_tests_and_none_sees_another(node: None) -> None:
    # The pid is the process's; the counter is the test's own global state.
    code = "globalThis.n = (globalThis.n || 0) + 1;\nconsole.log(process.pid + ' ' + n);\n"
    tests = {"inputs": INPUTS, "outputs": ["x\n"] * 3}
    warm = _score(code, tests, **ALL)
    pids = {t.actual.split()[0] for t in warm.tests}
    assert len(pids) == 1, [t.actual for t in warm.tests]
    assert all(t.actual.split()[1] == "1" for t in warm.tests)
    cold = _score(code, tests, warm=False, **ALL)
    assert len({t.actual.split()[0] for t in cold.tests}) == 3


@pytest.mark.parametrize(
    ("name", "code", "status"),
    [
        ("wrong", "console.log(0)", "failed"),
        ("throws", "throw new Error('boom')", "runtime_error"),
        ("exits 1", "process.exit(1)", "runtime_error"),
        ("loops", "while (true) {}", "timeout"),
        ("redeclares", "let a = 1;\nlet a = 2;\nconsole.log(a)", "compile_error"),
    ],
)
def test_verdicts_match_a_node_per_test(node: None, name: str, code: str, status: str) -> None:
    warm = _score(code, SUMS)
    cold = _score(code, SUMS, warm=False)
    assert warm.status.value == status, (name, warm.feedback)
    assert [t.status for t in warm.tests] == [t.status for t in cold.tests], name


def test_output_is_counted_as_it_is_written(node: None) -> None:
    # A worker's streams flush only when its event loop turns, so the cap is counted at
    # each write: a busy loop of writes is over the output limit. (A Node of its own
    # buffers a pipe's writes the same way and is killed at the time limit instead.)
    result = _score("while (true) process.stdout.write('x'.repeat(65536))", SUMS)
    assert result.status is verifiers.Status.OUTPUT_LIMIT, result.feedback


def test_a_program_that_kills_its_runner_fails_only_that_test(node: None) -> None:
    code = (
        "const d = require('fs').readFileSync(0, 'utf8').trim();\n"
        "if (d === 'die') process.kill(process.pid, 'SIGKILL');\n"
        "console.log(d);\n"
    )
    tests = {"inputs": ["a\n", "die\n", "b\n"], "outputs": ["a\n", "die\n", "b\n"]}
    result = _score(code, tests, **ALL)
    assert [t.status.value for t in result.tests] == ["passed", "runtime_error", "passed"]


def test_a_reply_forged_ahead_is_never_a_later_tests_answer(node: None) -> None:
    # The first test writes, on the runner's reply channel, a complete reply that carries
    # the second test's right answer, then answers its own test. The second test's own
    # run prints a wrong answer: it must fail.
    code = (
        "const fs = require('fs');\n"
        "const d = fs.readFileSync(0, 'utf8').trim();\n"
        "if (d === 'first') {\n"
        "  const out = Buffer.from('second\\n');\n"
        "  const head = Buffer.from(JSON.stringify({ exit_code: 0, stdout_bytes: out.length,"
        " stderr_bytes: 0 }));\n"
        "  const len = Buffer.alloc(4);\n"
        "  len.writeUInt32BE(head.length, 0);\n"
        "  fs.writeSync(6, Buffer.concat([len, head, out]));\n"
        "  console.log('first');\n"
        "} else {\n"
        "  console.log('wrong');\n"
        "}\n"
    )
    tests = {"inputs": ["first\n", "second\n"], "outputs": ["first\n", "second\n"]}
    result = _score(code, tests, **ALL)
    # Never a pass; whether the second run reads as a wrong answer or as a crash depends
    # on when the first test's own reply lands, which the program decides.
    assert result.tests[1].status not in (PASSED, verifiers.Status.SANDBOX_ERROR), result.feedback
    assert result.status is not verifiers.Status.PASSED


@pytest.mark.parametrize("garbage", ["'x'", "Buffer.from([0, 0, 0, 2, 123, 125])"])
def test_bytes_on_the_reply_channel_are_the_programs_crash(node: None, garbage: str) -> None:
    # A stray byte, or a whole well-formed frame of its own, written beside the runner's
    # reply: the runner's answer for that test is then garbage (the program's crash), and
    # the next test is served by a new runner.
    code = (
        "const fs = require('fs');\n"
        "const d = fs.readFileSync(0, 'utf8').trim();\n"
        f"if (d === 'meddle') fs.writeSync(6, {garbage});\n"
        "console.log(d);\n"
    )
    tests = {"inputs": ["meddle\n", "b\n"], "outputs": ["meddle\n", "b\n"]}
    result = _score(code, tests, **ALL)
    first, second = (t.status for t in result.tests)
    assert first not in (verifiers.Status.PASSED, verifiers.Status.SANDBOX_ERROR), result.feedback
    assert second is verifiers.Status.PASSED, result.feedback


def test_a_closed_reply_channel_fails_only_that_test(node: None) -> None:
    code = (
        "const fs = require('fs');\n"
        "const d = fs.readFileSync(0, 'utf8').trim();\n"
        "if (d === 'close') fs.closeSync(6);\n"
        "console.log(d);\n"
    )
    tests = {"inputs": ["a\n", "close\n", "b\n"], "outputs": ["a\n", "close\n", "b\n"]}
    result = _score(code, tests, **ALL)
    statuses = [t.status.value for t in result.tests]
    assert statuses[0] == "passed" and statuses[2] == "passed", result.feedback
    assert statuses[1] != "passed"
    assert statuses[1] != "sandbox_error"


def test_a_process_left_behind_is_killed_with_the_runner(node: None) -> None:
    code = (
        "const cp = require('child_process');\n"
        "const d = require('fs').readFileSync(0, 'utf8').trim();\n"
        "const opts = { detached: true, stdio: 'ignore' };\n"
        "if (d === 'spawn') cp.spawn('sleep', ['30'], opts).unref();\n"
        "console.log(process.pid);\n"
    )
    tests = {"inputs": ["spawn\n", "after\n"], "outputs": ["x\n", "x\n"]}
    result = _score(code, tests, runtime=LocalRuntime(), **ALL)
    first, second = (t.actual.strip() for t in result.tests)
    assert first.isdigit() and second.isdigit(), result.feedback
    assert first != second  # the runner went with the sleeping child; a new one served
