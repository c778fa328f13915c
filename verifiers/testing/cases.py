"""The case table every language passes: one real program per kind of outcome.

A language's table maps each of :data:`CASE_KINDS` to programs (completions
with tests) and the status each must get. Tests run the tables on every
runtime; :func:`missing_kinds` tells which kinds a table does not cover.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from verifiers.limits import Limits
from verifiers.results import Status

#: Kinds of outcome every language's table covers.
CASE_KINDS = (
    "ok",
    "wrong_answer",
    "no_code",
    "syntax_error",
    "compile_error",
    "runtime_error",
    "timeout",
    "memory_limit",
    "output_flood",
    "early_exit",
    "kill_self",
    "kill_supervisor",
    "fork_bomb",
)


@dataclass(frozen=True)
class Case:
    """One program and the verdict it must get."""

    kind: str
    name: str
    completion: str
    tests: Any
    expected: Status
    limits: Limits = field(default_factory=lambda: Limits(timeout_s=2, memory_mb=256))
    passed: int | None = None


def missing_kinds(cases: list[Case]) -> set[str]:
    """Kinds of :data:`CASE_KINDS` a table has no case for."""
    return set(CASE_KINDS) - {c.kind for c in cases}


def _py(code: str) -> str:
    return f"```python\n{code}\n```"


_SUM = {"inputs": ["1 2\n", "10 20\n", "7 0\n"], "outputs": ["3\n", "30\n", "7\n"]}
_READ = "a, b = map(int, input().split())\n"
_QUICK = Limits(timeout_s=1, memory_mb=256)
_ADD = {"test": "def check(candidate):\n    assert candidate(1, 2) == 3\n", "entry_point": "add"}

PYTHON_CASES: list[Case] = [
    Case("ok", "stdio sum", _py(_READ + "print(a + b)"), _SUM, Status.PASSED, passed=3),
    Case("ok", "assert add", _py("def add(a, b):\n    return a + b"), _ADD, Status.PASSED),
    Case(
        "wrong_answer",
        "stdio difference",
        _py(_READ + "print(a - b)"),
        _SUM,
        Status.FAILED,
        passed=1,
    ),
    Case(
        "wrong_answer",
        "assert off by one",
        _py("def add(a, b):\n    return a + b + 1"),
        _ADD,
        Status.FAILED,
    ),
    Case("no_code", "prose", "I would add the two numbers.", _SUM, Status.NO_CODE, passed=0),
    Case("syntax_error", "unclosed paren", _py("print((1 + 2)"), _SUM, Status.SYNTAX_ERROR),
    Case("syntax_error", "python 2 print", _py("print 'hello'"), _SUM, Status.SYNTAX_ERROR),
    Case("compile_error", "return outside function", _py("return 5"), _SUM, Status.COMPILE_ERROR),
    Case("runtime_error", "exception", _py("raise ValueError('boom')"), _SUM, Status.RUNTIME_ERROR),
    Case(
        "runtime_error",
        "deep recursion",
        _py("def f(n):\n    return f(n + 1)\nf(0)"),
        _SUM,
        Status.RUNTIME_ERROR,
    ),
    Case("timeout", "busy loop", _py("while True:\n    pass"), _SUM, Status.TIMEOUT, limits=_QUICK),
    Case(
        "timeout", "sleep", _py("import time\ntime.sleep(60)"), _SUM, Status.TIMEOUT, limits=_QUICK
    ),
    Case(
        "timeout",
        "reads stdin forever",
        _py("import sys\nwhile True:\n    sys.stdin.read()"),
        _SUM,
        Status.TIMEOUT,
        limits=_QUICK,
    ),
    Case(
        "memory_limit",
        "huge allocation",
        _py("x = bytearray(4 * 1024 ** 3)"),
        _SUM,
        Status.MEMORY_LIMIT,
    ),
    Case(
        "memory_limit",
        "growing list",
        _py("x = []\nwhile True:\n    x.append(' ' * 10 ** 6)"),
        _SUM,
        Status.MEMORY_LIMIT,
    ),
    Case(
        "output_flood",
        "stdout flood",
        _py("while True:\n    print('x' * 10000)"),
        _SUM,
        Status.OUTPUT_LIMIT,
        limits=Limits(timeout_s=5, max_output_bytes=1 << 20),
    ),
    Case(
        "output_flood",
        "stderr flood",
        _py("import sys\nwhile True:\n    sys.stderr.write('x' * 10000)"),
        _SUM,
        Status.OUTPUT_LIMIT,
        limits=Limits(timeout_s=5, max_output_bytes=1 << 20),
    ),
    Case(
        "early_exit",
        "exit(0) before the asserts",
        _py("import sys\nsys.exit(0)\ndef add(a, b):\n    return a + b"),
        _ADD,
        Status.RUNTIME_ERROR,
    ),
    Case(
        "early_exit",
        "os._exit(0) inside the function",
        _py("import os\ndef add(a, b):\n    os._exit(0)"),
        _ADD,
        Status.RUNTIME_ERROR,
    ),
    Case("early_exit", "stdio exit(0) without output", _py("exit(0)"), _SUM, Status.FAILED),
    Case(
        "kill_self",
        "SIGKILL itself",
        _py("import os, signal\nos.kill(os.getpid(), 9)"),
        _SUM,
        Status.RUNTIME_ERROR,
    ),
    Case(
        "kill_supervisor",
        "signals the supervisor and goes on",
        _py(
            "import os\nfor sig in (9, 19, 15):\n    try:\n        os.kill(1, sig)\n"
            "    except OSError:\n        pass\n" + _READ + "print(a + b)"
        ),
        _SUM,
        Status.PASSED,
        passed=3,
    ),
    Case(
        "fork_bomb",
        "fork bomb",
        _py("import os\nwhile True:\n    os.fork()"),
        _SUM,
        Status.RUNTIME_ERROR,
        limits=Limits(timeout_s=3, memory_mb=256, max_processes=32),
    ),
]
