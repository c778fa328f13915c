"""Python: syntax by tree-sitter (confirmed by CPython's parser), tests by a sandboxed harness.

Every test runs in its own process. By default (``fork=True``) the sandbox's
already running interpreter forks a child per test, with the harness and
common standard-library modules imported once: no interpreter start per test.
``fork=False`` starts a fresh interpreter per test instead (see
``bench/python_fork_vs_exec.py`` for the measured difference).
"""

from __future__ import annotations

import ast
import functools
import json
import platform
import re
import sys
import textwrap
import warnings
from importlib import resources
from typing import Any

from verifiers.compare import DecodeError, decode_value, describe_value, values_equal
from verifiers.errors import SpecError
from verifiers.languages.common import (
    ended_early,
    forged,
    judge_pass_record,
    judge_stdio,
    limit_outcome,
    records,
)
from verifiers.limits import Limits
from verifiers.parsing import SyntaxIssue, cached_check, tree_sitter_check
from verifiers.program import ProcessResult, Program, ProgramTest, Step
from verifiers.protocols import TestOutcome
from verifiers.results import Status
from verifiers.specs import (
    AssertListTests,
    AssertScriptTests,
    CallTests,
    CompareOptions,
    ExpressionTests,
    StdioTests,
    TestSpec,
    parse_tests,
)

GRAMMAR = "tree_sitter_python"
HARNESS = "{program_dir}/harness.py"
#: Modules the sandbox may import once per program, before the tests, when the
#: program or its tests import them, so that forked tests share them. Only these:
#: a program must not be able to make the supervisor import arbitrary modules.
PRELOADABLE = frozenset(
    {
        "abc",
        "array",
        "ast",
        "bisect",
        "calendar",
        "cmath",
        "collections",
        "copy",
        "csv",
        "dataclasses",
        "datetime",
        "decimal",
        "difflib",
        "enum",
        "fractions",
        "functools",
        "hashlib",
        "heapq",
        "io",
        "itertools",
        "json",
        "math",
        "numbers",
        "operator",
        "queue",
        "random",
        "re",
        "statistics",
        "string",
        "struct",
        "sys",
        "textwrap",
        "time",
        "typing",
        "unicodedata",
        "unittest",
        "numpy",
        "scipy",
        "sympy",
        "sortedcontainers",
    }
)
#: Largest code CPython's parser checks in this process; bigger code is checked in the sandbox.
HOST_PARSE_LIMIT = 1 << 20

#: The imports and helpers LeetCode-style tests expect (LeetCodeDataset's conventions):
#: star imports of the usual modules, ``inf``, and linked-list and binary-tree helpers.
LEETCODE_PRELUDE = """\
import bisect, collections, functools, heapq, itertools, math, operator, random, re, string
from typing import *
from functools import *
from collections import *
from itertools import *
from heapq import *
from bisect import *
from string import *
from operator import *
from math import *

inf = float("inf")


class ListNode:
    def __init__(self, val=0, next=None):
        self.val = val
        self.next = next


def list_node(values):
    dummy = tail = ListNode()
    for value in values:
        tail.next = ListNode(value)
        tail = tail.next
    return dummy.next


def is_same_list(a, b):
    while a is not None and b is not None:
        if a.val != b.val:
            return False
        a, b = a.next, b.next
    return a is None and b is None


class TreeNode:
    def __init__(self, val=0, left=None, right=None):
        self.val = val
        self.left = left
        self.right = right


def tree_node(values):
    # Level order with None for missing children, as LeetCode prints trees.
    if not values or values[0] is None:
        return None
    root = TreeNode(values[0])
    queue = collections.deque([root])
    i = 1
    while queue and i < len(values):
        node = queue.popleft()
        if i < len(values) and values[i] is not None:
            node.left = TreeNode(values[i])
            queue.append(node.left)
        i += 1
        if i < len(values) and values[i] is not None:
            node.right = TreeNode(values[i])
            queue.append(node.right)
        i += 1
    return root


def is_same_tree(a, b):
    if a is None or b is None:
        return a is None and b is None
    return a.val == b.val and is_same_tree(a.left, b.left) and is_same_tree(a.right, b.right)
"""
#: Named preludes a spec can ask for with ``"prelude": "<name>"``.
PRELUDES = {"leetcode": LEETCODE_PRELUDE}


def _harness_source() -> bytes:
    return resources.files("verifiers.languages").joinpath("_python_harness.py").read_bytes()


def _quiet_parse(code: str, mode: str = "exec") -> ast.AST:
    """``ast.parse`` without the SyntaxWarnings model code would print in this process."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(code, mode=mode)


@cached_check
def _cpython_issue(code: str) -> SyntaxIssue | None:
    try:
        _quiet_parse(code)
    except SyntaxError as err:
        return SyntaxIssue(
            line=err.lineno or 1,
            column=err.offset or 1,
            message=err.msg,
            text=(err.text or "").rstrip("\n"),
        )
    except (ValueError, RecursionError, MemoryError) as err:  # null bytes, absurd nesting
        return SyntaxIssue(line=1, column=1, message=str(err) or type(err).__name__)
    return None


def _defines(code: str, name: str) -> bool:
    pattern = rf"^(?:async\s+def|def|class)\s+{re.escape(name)}\b|^{re.escape(name)}\s*[:=]"
    return re.search(pattern, code, re.MULTILINE) is not None


class PythonLanguage:
    """The Python language (CPython 3, the sandbox's interpreter).

    Args:
        fork: Fork the sandbox's running interpreter per test (fast) rather than
            start a new interpreter per test.
        preload: Modules the sandbox may import once per program (when the program or
            its tests import them) so that forked tests share them.
    """

    name = "python"
    aliases = ("python", "py", "python3", "py3")

    def __init__(self, *, fork: bool = True, preload: frozenset[str] = PRELOADABLE) -> None:
        self.fork = fork
        self.preload = preload
        self._harness = _harness_source()

    def toolchain(self) -> str:
        """What this language runs with here (for ``verifiers doctor``)."""
        from importlib.metadata import version

        tree_sitter_check(GRAMMAR, "pass\n")  # loads the grammar, or raises
        return (
            f"tree-sitter-python {version('tree-sitter-python')}; programs run on the "
            f"runtime's interpreter (local: {sys.executable}, {platform.python_version()}); "
            f"{'fork per test' if self.fork else 'interpreter per test'}"
        )

    # --- before running ---------------------------------------------------------------------

    def parse_tests(self, raw: Any) -> TestSpec:
        """Any of the code test formats (see :func:`verifiers.specs.parse_tests`)."""
        spec = parse_tests(raw)
        if isinstance(spec, AssertScriptTests | AssertListTests) and spec.prelude in PRELUDES:
            spec = spec.model_copy(update={"prelude": PRELUDES[spec.prelude]})
        if isinstance(spec, AssertScriptTests):
            _check_trusted(spec.test, "tests.test")
            if spec.prelude:
                _check_trusted(spec.prelude, "tests.prelude")
        elif isinstance(spec, AssertListTests):
            for n, line in enumerate(spec.asserts):
                _check_trusted(line, f"tests.asserts[{n}]")
            _check_trusted("\n".join(spec.imports), "tests.imports")
            if spec.setup:
                _check_trusted(spec.setup, "tests.setup")
            if spec.prelude:
                _check_trusted(spec.prelude, "tests.prelude")
        elif isinstance(spec, ExpressionTests):
            for n, case in enumerate(spec.cases):
                try:
                    ast.parse(case.expression, mode="eval")
                except SyntaxError as err:
                    raise SpecError(
                        f"tests[{n}][0]", f"not a Python expression: {err.msg}"
                    ) from None
        return spec

    def prepare(self, code: str, spec: TestSpec) -> str:
        """Put the spec's prompt before code that lacks the entry point (a bare function body).

        Other code indented as a whole (a markdown code block indented in prose) is
        dedented: at the top of a module, its first line could only be an error.
        """
        dedented = textwrap.dedent(code) if code[:1] in (" ", "\t") else code
        if (
            isinstance(spec, AssertScriptTests)
            and spec.prompt
            and spec.entry_point
            and not _defines(dedented, spec.entry_point)
        ):
            return spec.prompt + code
        return dedented

    def check_syntax(self, code: str, spec: TestSpec | None = None) -> SyntaxIssue | None:
        """CPython's parser; code over ``HOST_PARSE_LIMIT`` is left to the sandbox's compiler.

        CPython knows every Python 3 rule (tree-sitter accepts Python 2 ``print``
        statements and lags new syntax) and is linear in the code's size, where
        tree-sitter-python is quadratic in a run of comment lines inside a block (2,000
        such lines took 1.8 s, 4,000 took 7 s): a completion full of comments must not
        stall a training step. Bigger code is compiled in the sandbox, where a syntax
        error is a ``compile_error``.
        """
        if len(code) > HOST_PARSE_LIMIT:
            return None
        return _cpython_issue(code)

    def parses(self, text: str) -> bool:
        """Whether text is valid Python."""
        return self.check_syntax(text) is None

    def build_program(
        self, code: str, spec: TestSpec, selected: list[int], limits: Limits
    ) -> Program:
        """Harness, solution, spec and per-test cases; one step per selected test."""
        meta: dict[str, Any] = {}
        payloads: list[Any] = []
        stdins: list[bytes] = []
        if isinstance(spec, StdioTests):
            meta["mode"] = "stdio"
            payloads = [None] * len(selected)
            stdins = [
                spec.cases[i].input.encode("utf-8", errors="surrogateescape") for i in selected
            ]
        elif isinstance(spec, CallTests):
            meta.update(mode="call", fn_name=spec.fn_name)
            payloads = [spec.inputs[i] for i in selected]
        elif isinstance(spec, ExpressionTests):
            meta["mode"] = "expression"
            payloads = [spec.cases[i].expression for i in selected]
        elif isinstance(spec, AssertScriptTests):
            meta.update(
                mode="assert", test=spec.test, entry_point=spec.entry_point, prelude=spec.prelude
            )
            payloads = [None] * len(selected)
        elif isinstance(spec, AssertListTests):
            meta.update(mode="assert", prelude=spec.prelude)
            head = "\n".join([*spec.imports, spec.setup or ""])
            payloads = [f"{head}\n{spec.asserts[i]}\n" for i in selected]
        else:  # pragma: no cover - parse_tests only returns the kinds above
            raise SpecError("tests", f"python cannot run {type(spec).__name__}")
        blob = bytearray()
        tests = []
        step_limits = limits.step_limits()
        for position, index in enumerate(selected):
            payload = payloads[position]
            data = b"" if payload is None else json.dumps(payload).encode()
            offset = len(blob)
            blob += data
            args = ("{program_dir}", str(offset), str(len(data)))
            stdin = stdins[position] if stdins else b""
            if self.fork:
                step = Step(
                    argv=args,
                    limits=step_limits,
                    kind="call",
                    module=HARNESS,
                    function="main",
                    stdin=stdin,
                )
            else:
                step = Step(
                    argv=("{python}", "-s", "-B", HARNESS, *args), limits=step_limits, stdin=stdin
                )
            tests.append(ProgramTest(index=index, step=step, meta={"mode": meta["mode"]}))
        files = {
            "harness.py": self._harness,
            "solution.py": code.encode("utf-8", errors="surrogateescape"),
            "spec.json": json.dumps(meta).encode(),
            "cases.bin": bytes(blob),
        }
        # The agent compiles the program and its tests once, before forking the tests.
        bounds = [a for t in tests for a in t.step.argv[1:]]
        prepare = (
            (
                Step(
                    argv=("{program_dir}", *bounds),
                    limits=step_limits,
                    kind="call",
                    module=HARNESS,
                    function="prepare",
                ),
            )
            if self.fork
            else ()
        )
        wanted = _imports(code)
        for source in (meta.get("test"), meta.get("prelude"), *payloads[:1]):
            if isinstance(source, str):
                wanted |= _imports(source)
        return Program(
            files=files,
            tests=tuple(tests),
            preload_modules=tuple(sorted(wanted & self.preload)) if self.fork else (),
            preload_entries=(HARNESS,) if self.fork else (),
            prepare=prepare,
            files_in_memory=self.fork,
        )

    # --- judging ----------------------------------------------------------------------------

    def interpret_build(self, proc: ProcessResult, limits: Limits) -> TestOutcome:
        """Python has no build step."""
        return TestOutcome(Status.PASSED)

    def describe_test(self, spec: TestSpec, index: int) -> tuple[str, str]:
        """Input and expected output of a test, as text."""
        if isinstance(spec, StdioTests):
            case = spec.cases[index]
            return case.input, case.output
        if isinstance(spec, CallTests):
            args = ", ".join(describe_value(a, 2000) for a in spec.inputs[index])
            return f"{spec.fn_name}({args})", describe_value(spec.outputs[index], 2000)
        if isinstance(spec, ExpressionTests):
            pair = spec.cases[index]
            return pair.expression, describe_value(pair.expected, 2000)
        if isinstance(spec, AssertListTests):
            return spec.asserts[index], ""
        if isinstance(spec, AssertScriptTests):
            return (f"check({spec.entry_point})" if spec.entry_point else "test script"), ""
        return "", ""  # pragma: no cover

    def interpret(
        self,
        test: ProgramTest,
        spec: TestSpec,
        proc: ProcessResult,
        limits: Limits,
        compare: CompareOptions | None,
    ) -> TestOutcome:
        """Judge one run: limits first, then the harness's records, then the answer."""
        by_event = records(proc.channel)
        limit = limit_outcome(proc, limits, by_event)
        if limit is not None:
            return limit
        syntax = by_event.get("syntax_error")
        if syntax is not None:
            # The parser here accepted the code, so the compiler rejected it
            # ('return' outside a function, say): a compile error of the program.
            issue = SyntaxIssue(
                line=int(syntax.get("line") or 1),
                column=int(syntax.get("column") or 1),
                message=str(syntax.get("message", "invalid syntax")),
                text=str(syntax.get("text", "")),
            )
            return TestOutcome(Status.COMPILE_ERROR, issue.describe(), fatal=True)
        error = by_event.get("error")
        if error is not None:
            return TestOutcome(Status.RUNTIME_ERROR, _error_text(error))
        mode = test.meta["mode"]
        if mode == "stdio":
            assert isinstance(spec, StdioTests)
            return judge_stdio(spec, test.index, proc, compare)
        if "exit" in by_event:
            code = by_event["exit"].get("code")
            message = f"the program called exit({code}) before the test finished"
            return TestOutcome(Status.RUNTIME_ERROR, message, hack=message if code == 0 else "")
        if mode == "assert":
            return judge_pass_record(proc, by_event)
        return self._judge_value(spec, test.index, proc, by_event, compare)

    def _judge_value(
        self,
        spec: TestSpec,
        index: int,
        proc: ProcessResult,
        by_event: dict[str, dict[str, Any]],
        compare: CompareOptions | None,
    ) -> TestOutcome:
        returned = by_event.get("return")
        if returned is None:
            return TestOutcome(Status.RUNTIME_ERROR, ended_early(proc))
        if returned.get("nonce") != proc.nonce or not proc.nonce:
            return forged()
        try:
            actual = decode_value(returned.get("value"))
        except (DecodeError, ValueError, TypeError) as err:
            return TestOutcome(Status.FAILED, f"the returned value could not be read: {err}")
        if isinstance(spec, CallTests):
            expected = spec.outputs[index]
            opts = compare or spec.compare
            ok = values_equal(expected, actual, opts) or (
                spec.unwrap_single
                and isinstance(expected, list)
                and len(expected) == 1
                and values_equal(expected[0], actual, opts)
            )
        else:
            assert isinstance(spec, ExpressionTests)
            expected = spec.cases[index].expected
            ok = values_equal(expected, actual, compare or spec.compare)
        shown = describe_value(actual, 2000)
        if ok:
            return TestOutcome(Status.PASSED, actual=shown, returned=(actual,))
        return TestOutcome(Status.FAILED, "wrong answer", shown, returned=(actual,))


@functools.lru_cache(maxsize=512)
def _imports(source: str) -> frozenset[str]:
    """Top-level names of the modules a piece of code imports (tests repeat: cached)."""
    try:
        tree = _quiet_parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return frozenset()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return frozenset(names)


@functools.lru_cache(maxsize=512)
def _check_trusted(source: str, field: str) -> None:
    try:
        ast.parse(source)
    except SyntaxError as err:
        raise SpecError(
            field, f"the test code does not parse: {err.msg} (line {err.lineno})"
        ) from None


def _error_text(error: dict[str, Any]) -> str:
    trace = str(error.get("traceback") or "").strip()
    if trace:
        return trace
    return f"{error.get('type', 'Error')}: {error.get('message', '')}"
