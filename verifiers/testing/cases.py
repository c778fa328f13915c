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


def missing_kinds(cases: list[Case], kinds: tuple[str, ...] = CASE_KINDS) -> set[str]:
    """Kinds (default :data:`CASE_KINDS`) a table has no case for."""
    return set(kinds) - {c.kind for c in cases}


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


def _fence(lang: str, code: str) -> str:
    return f"```{lang}\n{code}\n```"


_ONE = {"inputs": ["1 2\n"], "outputs": ["3\n"]}
_FLOOD = Limits(timeout_s=5, memory_mb=512, max_output_bytes=1 << 20)
_BOMB = Limits(timeout_s=3, memory_mb=256, max_processes=32)


def _table(lang: str, programs: dict[str, tuple[str, Any, Status]]) -> list[Case]:
    out = []
    for key, (code, tests, expected) in programs.items():
        kind, _, name = key.partition(":")
        limits = {"output_flood": _FLOOD, "fork_bomb": _BOMB}.get(
            kind, _QUICK if kind == "timeout" else Limits(timeout_s=2, memory_mb=256)
        )
        completion = code if kind == "no_code" else _fence(lang, code)
        out.append(Case(kind, name, completion, tests, expected, limits))
    return out


_JS_READ = (
    "const [a, b] = require('fs').readFileSync(0, 'utf8').trim().split(/\\s+/).map(Number);\n"
)
_JS_ADD = {"test": "console.assert(add(1, 2) === 3);\nconsole.assert(add(2, 2) === 4);\n"}

JAVASCRIPT_CASES = _table(
    "javascript",
    {
        "ok:stdio sum": (_JS_READ + "console.log(a + b);", _SUM, Status.PASSED),
        "ok:assert add": ("const add = (a, b) => a + b;", _JS_ADD, Status.PASSED),
        "wrong_answer:stdio difference": (_JS_READ + "console.log(a - b);", _SUM, Status.FAILED),
        "wrong_answer:console.assert fails": (
            "const add = (a, b) => a + b + 1;",
            _JS_ADD,
            Status.FAILED,
        ),
        "no_code:prose": ("Add them.", _SUM, Status.NO_CODE),
        "syntax_error:unbalanced": ("const x = (1 + ;", _SUM, Status.SYNTAX_ERROR),
        "compile_error:redeclared": (
            "let a = 1;\nlet a = 2;\nconsole.log(a);",
            _SUM,
            Status.COMPILE_ERROR,
        ),
        "runtime_error:throw": ("throw new Error('boom');", _SUM, Status.RUNTIME_ERROR),
        "timeout:busy loop": ("while (true) {}", _ONE, Status.TIMEOUT),
        "memory_limit:growing array": (
            "const a = [];\nwhile (true) a.push(new Array(1e6).fill(1));",
            _ONE,
            Status.MEMORY_LIMIT,
        ),
        "output_flood:stdout": (
            "const fs = require('fs');\nconst s = 'x'.repeat(10000);\n"
            "while (true) fs.writeSync(1, s);",
            _ONE,
            Status.OUTPUT_LIMIT,
        ),
        "early_exit:process.exit(0) before the tests": (
            "process.exit(0);\nconst add = (a, b) => 0;",
            _JS_ADD,
            Status.RUNTIME_ERROR,
        ),
        "early_exit:console.assert replaced": (
            "console.assert = () => {};\nconst add = (a, b) => 0;",
            _JS_ADD,
            Status.FAILED,
        ),
        "kill_self:SIGKILL": ("process.kill(process.pid, 'SIGKILL');", _SUM, Status.RUNTIME_ERROR),
        "kill_supervisor:signals PID 1 and goes on": (
            "for (const s of ['SIGKILL', 'SIGSTOP']) { try { process.kill(1, s); } catch (e) {} }\n"
            + _JS_READ
            + "console.log(a + b);",
            _SUM,
            Status.PASSED,
        ),
        "fork_bomb:daemons until spawning fails": (
            "const cp = require('child_process');\n"
            "for (;;) cp.execFileSync('sh', ['-c', 'sleep 100 &'], { stdio: 'ignore' });",
            _ONE,
            Status.RUNTIME_ERROR,
        ),
    },
)

_GO_SETUP = 'package main\n\nimport (\n    "testing"\n    "github.com/stretchr/testify/assert"\n)\n'
_GO_ADD = {
    "test": "func TestAdd(t *testing.T) {\n    assert.Equal(t, 3, Add(1, 2))\n}\n"
    "func TestAddZero(t *testing.T) {\n    assert.Equal(t, 2, Add(2, 0))\n}\n",
    "test_setup": _GO_SETUP,
}
_GO_MAIN = 'package main\n\nimport "fmt"\n\nfunc main() {\n    var a, b int\n    fmt.Scan(&a, &b)\n'

GO_CASES = _table(
    "go",
    {
        "ok:stdio sum": (_GO_MAIN + "    fmt.Println(a + b)\n}", _SUM, Status.PASSED),
        "ok:assert add": ("func Add(a, b int) int {\n    return a + b\n}", _GO_ADD, Status.PASSED),
        "wrong_answer:stdio difference": (
            _GO_MAIN + "    fmt.Println(a - b)\n}",
            _SUM,
            Status.FAILED,
        ),
        "wrong_answer:testify fails": (
            "func Add(a, b int) int {\n    return a * b\n}",
            _GO_ADD,
            Status.FAILED,
        ),
        "no_code:prose": ("Use fmt.Scan.", _SUM, Status.NO_CODE),
        "syntax_error:unbalanced": ("package main\n\nfunc main( {\n}", _SUM, Status.SYNTAX_ERROR),
        "compile_error:undefined": (
            'package main\n\nimport "fmt"\n\nfunc main() {\n    fmt.Println(x)\n}',
            _SUM,
            Status.COMPILE_ERROR,
        ),
        "runtime_error:index out of range": (
            "package main\n\nfunc main() {\n    var s []int\n    println(s[3])\n}",
            _SUM,
            Status.RUNTIME_ERROR,
        ),
        "timeout:busy loop": (
            "package main\n\nfunc main() {\n    for {\n    }\n}",
            _ONE,
            Status.TIMEOUT,
        ),
        "memory_limit:growing slice": (
            "package main\n\nfunc main() {\n    var keep [][]byte\n    for {\n"
            "        keep = append(keep, make([]byte, 1<<20))\n        keep[len(keep)-1][0] = 1\n"
            "    }\n}",
            _ONE,
            Status.MEMORY_LIMIT,
        ),
        "output_flood:stdout": (
            'package main\n\nimport (\n    "fmt"\n    "strings"\n)\n\nfunc main() {\n'
            '    s := strings.Repeat("x", 10000)\n    for {\n        fmt.Println(s)\n    }\n}',
            _ONE,
            Status.OUTPUT_LIMIT,
        ),
        "early_exit:os.Exit(0) in init": (
            'import "os"\n\nfunc init() {\n    os.Exit(0)\n}\n\nfunc Add(a, b int) int {\n'
            "    return 0\n}",
            _GO_ADD,
            Status.RUNTIME_ERROR,
        ),
        "early_exit:os.Exit(0) in the function": (
            'import "os"\n\nfunc Add(a, b int) int {\n    os.Exit(0)\n    return 0\n}',
            _GO_ADD,
            Status.RUNTIME_ERROR,
        ),
        "kill_self:SIGKILL": (
            'package main\n\nimport (\n    "os"\n    "syscall"\n)\n\n'
            "func main() {\n    syscall.Kill(os.Getpid(), syscall.SIGKILL)\n}",
            _SUM,
            Status.RUNTIME_ERROR,
        ),
        "kill_supervisor:signals PID 1 and goes on": (
            _GO_MAIN.replace('import "fmt"', 'import (\n    "fmt"\n    "syscall"\n)')
            + "    syscall.Kill(1, syscall.SIGKILL)\n    syscall.Kill(1, syscall.SIGSTOP)\n"
            "    fmt.Println(a + b)\n}",
            _SUM,
            Status.PASSED,
        ),
        "fork_bomb:start processes until it fails": (
            'package main\n\nimport "os/exec"\n\nfunc main() {\n    for {\n'
            '        if err := exec.Command("sleep", "100").Start(); err != nil {\n'
            "            panic(err)\n        }\n    }\n}",
            _ONE,
            Status.RUNTIME_ERROR,
        ),
    },
)

_RS_READ = (
    "use std::io::Read;\n\nfn main() {\n    let mut s = String::new();\n"
    "    std::io::stdin().read_to_string(&mut s).unwrap();\n"
    "    let v: Vec<i64> = s.split_whitespace().map(|x| x.parse().unwrap()).collect();\n"
)
_RS_ADD = {
    "test": "#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn test_add() {\n"
    "        assert_eq!(add(1, 2), 3);\n    }\n\n    #[test]\n    fn test_zero() {\n"
    "        assert_eq!(add(2, 0), 2);\n    }\n}\n"
}

RUST_CASES = _table(
    "rust",
    {
        "ok:stdio sum": (_RS_READ + '    println!("{}", v[0] + v[1]);\n}', _SUM, Status.PASSED),
        "ok:assert add": ("fn add(a: i32, b: i32) -> i32 {\n    a + b\n}", _RS_ADD, Status.PASSED),
        "wrong_answer:stdio difference": (
            _RS_READ + '    println!("{}", v[0] - v[1]);\n}',
            _SUM,
            Status.FAILED,
        ),
        "wrong_answer:assert_eq fails": (
            "fn add(a: i32, b: i32) -> i32 {\n    a * b\n}",
            _RS_ADD,
            Status.FAILED,
        ),
        "no_code:prose": ("Sum the numbers.", _SUM, Status.NO_CODE),
        "syntax_error:unbalanced": ("fn main( {\n}", _SUM, Status.SYNTAX_ERROR),
        "compile_error:type mismatch": (
            'fn main() {\n    let x: i32 = "a";\n}',
            _SUM,
            Status.COMPILE_ERROR,
        ),
        "runtime_error:index out of bounds": (
            'fn main() {\n    let v: Vec<i32> = Vec::new();\n    println!("{}", v[3]);\n}',
            _SUM,
            Status.RUNTIME_ERROR,
        ),
        "runtime_error:panic in the tested function": (
            "fn add(a: i32, b: i32) -> i32 {\n    let v: Vec<i32> = vec![];\n"
            "    v[(a + b) as usize]\n}",
            _RS_ADD,
            Status.RUNTIME_ERROR,
        ),
        "timeout:busy loop": ("fn main() {\n    loop {}\n}", _ONE, Status.TIMEOUT),
        "memory_limit:growing vector": (
            "fn main() {\n    let mut keep: Vec<Vec<u8>> = Vec::new();\n"
            "    loop {\n        keep.push(vec![1u8; 1 << 20]);\n    }\n}",
            _ONE,
            Status.MEMORY_LIMIT,
        ),
        "output_flood:stdout": (
            'use std::io::Write;\n\nfn main() {\n    let s = "x".repeat(10000);\n'
            "    let mut out = std::io::stdout();\n    loop {\n"
            "        if out.write_all(s.as_bytes()).is_err() {\n            break;\n        }\n"
            "    }\n}",
            _ONE,
            Status.OUTPUT_LIMIT,
        ),
        "early_exit:process::exit(0) in the function": (
            "fn add(a: i32, b: i32) -> i32 {\n    std::process::exit(0)\n}",
            _RS_ADD,
            Status.RUNTIME_ERROR,
        ),
        "kill_self:abort": (
            "fn main() {\n    std::process::abort();\n}",
            _SUM,
            Status.RUNTIME_ERROR,
        ),
        "kill_supervisor:signals PID 1 and goes on": (
            _RS_READ
            + '    let _ = std::process::Command::new("kill").args(["-9", "1"]).status();\n'
            '    println!("{}", v[0] + v[1]);\n}',
            _SUM,
            Status.PASSED,
        ),
        "fork_bomb:spawn until it fails": (
            'fn main() {\n    loop {\n        std::process::Command::new("sleep").arg("100")'
            ".spawn().unwrap();\n    }\n}",
            _ONE,
            Status.RUNTIME_ERROR,
        ),
    },
)


#: Kinds that apply to languages without processes of their own (queries, patterns): the
#: outcomes up to the output flood; the rest are attacks a query cannot make.
QUERY_KINDS = CASE_KINDS[: CASE_KINDS.index("output_flood") + 1]
PATTERN_KINDS = ("ok", "wrong_answer", "no_code", "syntax_error", "timeout")

_DB = {
    "database": {
        "schema": "CREATE TABLE singer(id INTEGER, name TEXT, age INTEGER);",
        "inserts": ["INSERT INTO singer VALUES (1, 'Ann', 30), (2, 'Bo', 41), (3, 'Cy', 52)"],
    },
    "gold_query": "SELECT name FROM singer WHERE age > 40",
}
_COUNTER = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c"

SQL_CASES = _table(
    "sql",
    {
        "ok:filter": ("SELECT name FROM singer WHERE age >= 41", _DB, Status.PASSED),
        "ok:bare query": ("SELECT s.name FROM singer AS s WHERE s.age > 40;", _DB, Status.PASSED),
        "wrong_answer:wrong filter": ("SELECT name FROM singer WHERE age > 20", _DB, Status.FAILED),
        "no_code:prose": ("I would look at the singer table.", _DB, Status.NO_CODE),
        "syntax_error:garbled": ("SELECT name FROM WHERE age >", _DB, Status.SYNTAX_ERROR),
        "compile_error:unknown table": ("SELECT name FROM singers", _DB, Status.COMPILE_ERROR),
        "compile_error:a write is refused": ("DELETE FROM singer", _DB, Status.COMPILE_ERROR),
        "compile_error:ATTACH is refused": (
            "ATTACH DATABASE '/etc/passwd' AS x",
            _DB,
            Status.COMPILE_ERROR,
        ),
        "runtime_error:integer overflow": (
            "SELECT abs(-9223372036854775807 - 1)",
            _DB,
            Status.RUNTIME_ERROR,
        ),
        "timeout:endless recursion": (_COUNTER + ") SELECT count(*) FROM c", _DB, Status.TIMEOUT),
        "memory_limit:huge string": (
            _COUNTER + " LIMIT 30) SELECT length(group_concat(zeroblob(50000000))) FROM c",
            _DB,
            Status.MEMORY_LIMIT,
        ),
        "output_flood:millions of rows": (
            _COUNTER + " LIMIT 10000000) SELECT hex(randomblob(64)) FROM c",
            _DB,
            Status.OUTPUT_LIMIT,
        ),
    },
)

_RE = {"positive": ["ab", "aab"], "negative": ["b", "abc"]}

REGEX_CASES = _table(
    "regex",
    {
        "ok:python": ("a+b", _RE, Status.PASSED),
        "ok:javascript": ("a+b", {**_RE, "flavor": "javascript"}, Status.PASSED),
        "ok:re2": ("a+b", {**_RE, "flavor": "re2"}, Status.PASSED),
        "ok:equivalent to the gold pattern": ("aa*b", {**_RE, "gold": "a+b"}, Status.PASSED),
        "wrong_answer:too loose": ("a*b", _RE, Status.FAILED),
        "wrong_answer:not equivalent": ("a+b?", {"gold": "a+b"}, Status.FAILED),
        "no_code:empty": ("", _RE, Status.NO_CODE),
        "syntax_error:unclosed group": ("(a+b", _RE, Status.SYNTAX_ERROR),
        "timeout:catastrophic backtracking": (
            "(a+)+$",
            {"positive": ["aaa"], "negative": ["a" * 40 + "!"], "mode": "search"},
            Status.TIMEOUT,
        ),
    },
)

#: Case tables by language name.
CASE_TABLES = {
    "python": PYTHON_CASES,
    "javascript": JAVASCRIPT_CASES,
    "go": GO_CASES,
    "rust": RUST_CASES,
    "sql": SQL_CASES,
    "regex": REGEX_CASES,
}
#: Kinds each table must cover (default: every kind of CASE_KINDS).
TABLE_KINDS = {"sql": QUERY_KINDS, "regex": PATTERN_KINDS}
