"""The warm JVM: every stdin/stdout test of a Java program in one JVM.

Each test loads the program's classes in a class loader of its own and runs ``main`` in a
thread group of its own (``_java_runner.java``), served by the supervisor's ``run_warm``.
What must hold: static state and input are the test's own, ``System.exit`` and threads mean
what they mean in a JVM of its own, the verdicts are those of a JVM per test, and a program
that reaches the runner's descriptors cannot answer a later test.
"""

from __future__ import annotations

import shutil
from typing import Any

import pytest

import verifiers
from verifiers.languages.java import JavaLanguage
from verifiers.runtimes.local import LocalRuntime

from ..conftest import need

RUNTIME = LocalRuntime()
SUMS = {"inputs": ["1 2\n", "3 4\n", "10 20\n"], "outputs": ["3\n", "7\n", "30\n"]}
PASSED = verifiers.Status.PASSED
ALL = {"policy": "partial", "stop_on_failure": False}


@pytest.fixture(scope="module")
def java() -> None:
    need(shutil.which("javac") is not None, "javac is not installed")


def _score(code: str, tests: dict[str, Any], warm: bool = True, **options: Any) -> verifiers.Result:
    verifier = verifiers.CodeVerifier(JavaLanguage(warm=warm), RUNTIME)
    return verifier.score(code, tests, limits={"timeout_s": 5}, **options)


def _main(body: str, head: str = "import java.util.*;\n") -> str:
    return f"{head}public class Main {{\n{body}\n}}\n"


def test_one_jvm_serves_the_tests_with_fresh_static_state(java: None) -> None:
    code = _main(
        "    static int calls = 0;\n"
        "    public static void main(String[] a) {\n"
        "        calls++;\n"
        '        System.out.println(ProcessHandle.current().pid() + " " + calls);\n'
        "    }"
    )
    tests = {"inputs": ["a\n", "b\n", "c\n"], "outputs": ["x\n"] * 3}
    warm = _score(code, tests, **ALL)
    assert len({t.actual.split()[0] for t in warm.tests}) == 1, [t.actual for t in warm.tests]
    assert all(t.actual.split()[1] == "1" for t in warm.tests)
    cold = _score(code, tests, warm=False, **ALL)
    assert len({t.actual.split()[0] for t in cold.tests}) == 3


READ_SUM = (
    "        Scanner s = new Scanner(System.in);\n        int x = s.nextInt() + s.nextInt();\n"
)


@pytest.mark.parametrize(
    ("name", "body", "status"),
    [
        (
            "passes",
            f"    public static void main(String[] a) {{\n{READ_SUM}"
            "        System.out.println(x);\n    }",
            "passed",
        ),
        (
            "exit after the answer",
            f"    public static void main(String[] a) {{\n{READ_SUM}"
            "        System.out.println(x);\n        System.exit(0);\n"
            '        System.out.println("never");\n    }',
            "passed",
        ),
        ("exit 3", "    public static void main(String[] a) { System.exit(3); }", "runtime_error"),
        (
            "throws",
            "    public static void main(String[] a) { throw new IllegalStateException(); }",
            "runtime_error",
        ),
        (
            "a thread answers after main",
            f"    public static void main(String[] a) {{\n{READ_SUM}"
            "        new Thread(() -> System.out.println(x)).start();\n    }",
            "passed",
        ),
        ("wrong", "    public static void main(String[] a) { System.out.println(0); }", "failed"),
        ("loops", "    public static void main(String[] a) { while (true) {} }", "timeout"),
        (
            "floods",
            # In 64 KiB prints: the cap is reached in a blink, even for a JVM on a busy
            # machine (8-byte prints made a cold JVM's test a timeout under load).
            "    public static void main(String[] a) {\n"
            '        String s = "x".repeat(65536);\n'
            "        while (true) System.out.print(s);\n    }",
            "output_limit",
        ),
    ],
)
def test_verdicts_match_a_jvm_per_test(java: None, name: str, body: str, status: str) -> None:
    code = _main(body)
    warm = _score(code, SUMS)
    cold = _score(code, SUMS, warm=False)
    assert warm.status.value == status, (name, warm.feedback)
    assert [t.status for t in warm.tests] == [t.status for t in cold.tests], name


def test_a_reply_forged_ahead_is_never_a_later_tests_answer(java: None) -> None:
    # Reflection spelled so that no cold-only rule applies: the program reaches the
    # runner's reply descriptor and writes the second test's right answer during the first.
    body = (
        "    public static void main(String[] a) throws Exception {\n"
        "        String d = new Scanner(System.in).next();\n"
        '        if (d.equals("first")) {\n'
        '            Class<?> k = Class.forName("java.io.File" + "Descriptor");\n'
        "            Object fd = k.getConstructor().newInstance();\n"
        '            java.lang.reflect.Field f = k.getDeclaredField("fd");\n'
        "            f.setAccessible(true);\n"
        "            f.setInt(fd, 6);\n"
        "            java.io.OutputStream o = (java.io.OutputStream) Class.forName(\n"
        '                "java.io.FileOutputStream").getConstructor(k).newInstance(fd);\n'
        '            byte[] out = "second\\n".getBytes();\n'
        '            byte[] head = ("{\\"exit_code\\": 0, \\"stdout_bytes\\": " + out.length\n'
        '                + ", \\"stderr_bytes\\": 0}").getBytes();\n'
        "            java.io.DataOutputStream w = new java.io.DataOutputStream(o);\n"
        "            w.writeInt(head.length);\n"
        "            w.write(head);\n"
        "            w.write(out);\n"
        "            w.flush();\n"
        '            System.out.println("first");\n'
        "        } else {\n"
        '            System.out.println("wrong");\n'
        "        }\n"
        "    }"
    )
    tests = {"inputs": ["first\n", "second\n"], "outputs": ["first\n", "second\n"]}
    result = _score(_main(body), tests, **ALL)
    # Never a pass; whether the second run reads as a wrong answer or as a crash depends
    # on when the first test's own reply lands, which the program decides.
    assert result.tests[1].status not in (PASSED, verifiers.Status.SANDBOX_ERROR), result.feedback
    assert result.status is not verifiers.Status.PASSED


def test_programs_that_need_the_real_descriptors_get_a_jvm_each(java: None) -> None:
    # Fast-input templates read FileDescriptor.in: a warm JVM cannot give them the test's.
    body = (
        "    public static void main(String[] a) throws Exception {\n"
        "        java.io.DataInputStream in = new java.io.DataInputStream(\n"
        "            new java.io.FileInputStream(java.io.FileDescriptor.in));\n"
        "        byte[] b = new byte[64];\n"
        "        int n = in.read(b);\n"
        '        String[] p = new String(b, 0, n).trim().split(" ");\n'
        "        System.out.println(Integer.parseInt(p[0]) + Integer.parseInt(p[1]));\n"
        "    }"
    )
    result = _score(_main(body), SUMS)
    assert result.status is verifiers.Status.PASSED, result.feedback
