"""Python: syntax by CPython's parser, tests by a sandboxed harness.

Every test runs in its own process. By default (``fork=True``) the sandbox's
already running interpreter forks a child per test, with the harness and
common standard-library modules imported once: no interpreter start per test.
``fork=False`` starts a fresh interpreter per test instead (see
``bench/python_fork_vs_exec.py`` for the measured difference).
"""

from __future__ import annotations

import ast
import functools
import platform
import re
import sys
import textwrap
import traceback
import warnings
from collections.abc import Mapping
from importlib import resources
from typing import Any

from verifiers import jsonio
from verifiers.cases import CASE_KINDS, QUICK, SUM_TESTS, Case, fenced
from verifiers.compare import DecodeError, decode_value, describe_value, values_equal
from verifiers.errors import SpecError
from verifiers.languages.common import (
    judge_stdio,
    judge_verdict,
    limit_outcome,
    records,
    verdict_record,
)
from verifiers.limits import Limits
from verifiers.parsing import SyntaxIssue, cached_check, tree_sitter_check
from verifiers.program import Executable, ProcessResult, Program, ProgramTest, Step
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
#: The program's file name in the sandbox, and in the syntax errors found here.
SOLUTION_FILE = "solution.py"
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
#: Runs a judge program (a checker, an interactor) as a script, except that an uncaught
#: exception exits with status 121, which no judge protocol defines: a crashing checker is a
#: judge failure, never a verdict (Python's own status 1 is testlib's wrong answer).
#: An interactor whose program ended early meets a broken pipe: that is the protocol's
#: wrong answer (``VERIFIERS_BROKEN_PIPE_EXIT``), as an interactor reading the end would say.
JUDGE_RUNNER = """\
import os, runpy, sys, traceback
path = sys.argv[1]
sys.argv = sys.argv[1:]
sys.path.insert(0, os.path.dirname(path))
try:
    runpy.run_path(path, run_name="__main__")
except SystemExit:
    raise
except BrokenPipeError:
    code = os.environ.get("VERIFIERS_BROKEN_PIPE_EXIT")
    if code is None:
        traceback.print_exc()
    sys.stderr.write("the program ended before the interaction did\\n")
    sys.stderr.flush()
    os._exit(int(code) if code else 121)
except BaseException:
    traceback.print_exc()
    sys.stderr.flush()
    os._exit(121)
"""
#: Named preludes a spec can ask for with ``"prelude": "<name>"``.
PRELUDES = {"leetcode": LEETCODE_PRELUDE}


def _harness_source() -> bytes:
    return resources.files("verifiers.languages").joinpath("_python_harness.py").read_bytes()


def _quiet_parse(code: str, mode: str = "exec", filename: str = "<unknown>") -> ast.AST:
    """``ast.parse`` without the SyntaxWarnings model code would print in this process."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(code, filename, mode=mode)


@cached_check
def _cpython_issue(code: str) -> SyntaxIssue | None:
    try:
        _quiet_parse(code, filename=SOLUTION_FILE)
    except SyntaxError as err:
        return SyntaxIssue(
            line=err.lineno or 1,
            column=err.offset or 1,
            message=err.msg,
            text=(err.text or "").rstrip("\n"),
            native=_as_python_prints(err),
        )
    except (ValueError, RecursionError, MemoryError) as err:  # null bytes, absurd nesting
        return SyntaxIssue(
            line=1, column=1, message=str(err) or type(err).__name__, native=_as_python_prints(err)
        )
    return None


#: Names in a program's source that make its stdin/stdout tests run in a process each
#: rather than in its warm runner: process-wide state one test would leave to the next
#: (threads, signals and timers, exit handlers, processes, the interpreter's modules and
#: builtins, resource limits, the environment, tracing), exits that skip the flush
#: (``os._exit``), or the output descriptors reopened by name (``/dev/stdout`` of a
#: memory file starts at its beginning). A fidelity rule, not a security one: what a
#: runner replies is the program's output and nothing more, whatever it runs.
COLD_ONLY = re.compile(
    r"thread|signal|alarm|setitimer|atexit|_exit|fork|spawn|subprocess|multiprocessing"
    r"|concurrent|asyncio|os\s*\.\s*(?:system|popen|exec|kill|environ|putenv|unsetenv|dup)"
    r"|sys\s*\.\s*(?:modules|settrace|setprofile|setswitchinterval|stdin\s*\.\s*close)"
    r"|builtins|importlib|ctypes|resource|faulthandler|tracemalloc|/dev/(?:std|fd)|/proc/"
)


def _as_python_prints(err: BaseException) -> str:
    """The error as ``python solution.py`` prints it (its last lines, at most 2000 characters)."""
    return "".join(traceback.format_exception_only(type(err), err))[-2000:]


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
        warm: Run a program's stdin/stdout tests (without a checker) in one process, its
            *warm runner*, forked once from the zygote: each test gets a new ``__main__``,
            new standard streams and memory files, and what it changed of the process
            (the working directory, the recursion limit, the collector) is restored or
            retires the runner. Programs that match :data:`COLD_ONLY` run a process per
            test. Needs ``fork``.
    """

    #: Python distributions its programs (or its harness) import in the sandbox.
    python_packages = ("numpy", "scipy", "sympy", "sortedcontainers")
    #: The kinds of outcome its case table covers (see :mod:`verifiers.cases`).
    case_kinds = CASE_KINDS

    def cases(self) -> list[Case]:
        """Real programs, one or more per kind of outcome, and the verdict each must get."""
        return _cases()

    name = "python"
    aliases = ("python", "py", "python3", "py3")
    #: Code inside prose is searched with CPython's parser, linear in the text (about 25 ms
    #: of CPU per 100 KB here, where tree-sitter's error recovery can take 500): the search
    #: may hand it as much text as the check takes at all, so that a big bare program with a
    #: comment that reads like a heading (``# answers by input``) is parsed whole, not cut.
    search_budget_chars = HOST_PARSE_LIMIT

    def __init__(
        self, *, fork: bool = True, preload: frozenset[str] = PRELOADABLE, warm: bool = True
    ) -> None:
        self.fork = fork
        self.preload = preload
        self.warm = warm
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
        """One step per selected test: the program's side, and (except stdio) its judge.

        The program's process gets the harness, the solution and, for LeetCode-style
        tests, the trusted prelude; the tests and their cases are judge files, held by the
        supervisor only (see ``_python_harness.py``).
        """
        judge_spec: dict[str, Any] = {}
        payloads: list[Any] = []
        stdins: list[bytes] = []
        prelude = None
        if isinstance(spec, StdioTests):
            judge_spec["mode"] = "stdio"
            payloads = [None] * len(selected)
            stdins = [
                spec.cases[i].input.encode("utf-8", errors="surrogateescape") for i in selected
            ]
        elif isinstance(spec, CallTests):
            judge_spec.update(mode="call", fn_name=spec.fn_name)
            payloads = [spec.inputs[i] for i in selected]
        elif isinstance(spec, ExpressionTests):
            judge_spec["mode"] = "expression"
            payloads = [spec.cases[i].expression for i in selected]
        elif isinstance(spec, AssertScriptTests):
            prelude = spec.prelude
            judge_spec.update(
                mode="assert",
                test=spec.test,
                entry_point=spec.entry_point,
                prelude=spec.prelude,
                prompt=spec.prompt,
            )
            payloads = [None] * len(selected)
        elif isinstance(spec, AssertListTests):
            prelude = spec.prelude
            head = "\n".join([*spec.imports, spec.setup or ""])
            # Every assert of the task decides which builtin-named function it tests.
            judge_spec.update(mode="assert", prelude=spec.prelude, tested="\n".join(spec.asserts))
            payloads = [f"{head}\n{spec.asserts[i]}\n" for i in selected]
        else:  # pragma: no cover - parse_tests only returns the kinds above
            raise SpecError("tests", f"python cannot run {type(spec).__name__}")
        if not isinstance(spec, StdioTests):
            # The modules the judge may import for a name of the program that holds one.
            judge_spec["importable"] = sorted(self.preload)
        stdio = judge_spec["mode"] == "stdio"
        program_args = ("{program_dir}", "stdio" if stdio else "serve")
        warm = (
            ("{program_dir}", "warm")
            if stdio and self.warm and not COLD_ONLY.search(code)
            else None
        )
        blob = bytearray()
        tests = []
        bounds: list[str] = []
        step_limits = limits.step_limits()
        for position, index in enumerate(selected):
            payload = payloads[position]
            data = b"" if payload is None else jsonio.dumps(payload).encode()
            bounds += [str(len(blob)), str(len(data))]
            judge = None
            if not stdio:
                expected = _expected(spec, index)
                nodes = () if expected is _NONE else (str(2 * _value_nodes(expected) + 64),)
                judge = Step(
                    argv=(bounds[-2], bounds[-1], *nodes),
                    limits=limits.judge_limits(),
                    kind="call",
                    module=HARNESS,
                    function="judge_main",
                )
            blob += data
            stdin = stdins[position] if stdins else b""
            if self.fork:
                step = Step(
                    argv=program_args,
                    limits=step_limits,
                    kind="call",
                    module=HARNESS,
                    function="candidate_main",
                    stdin=stdin,
                    judge=judge,
                    warm_argv=warm,
                )
            else:
                step = Step(
                    argv=("{python}", "-s", "-B", HARNESS, *program_args),
                    limits=step_limits,
                    stdin=stdin,
                    judge=judge,
                )
            meta = {"mode": judge_spec["mode"]}
            tests.append(ProgramTest(index=index, step=step, meta=meta))
        files = {
            "harness.py": self._harness,
            SOLUTION_FILE: code.encode("utf-8", errors="surrogateescape"),
            "candidate.json": jsonio.dumps({"prelude": prelude}).encode(),
        }
        judge_files = (
            {}
            if stdio
            else {
                "spec.json": jsonio.dumps(judge_spec).encode(),
                "cases.bin": bytes(blob),
            }
        )
        # The program is compiled once where programs are forked; the tests once where
        # judges are (compiling runs none of either).
        prepare = (
            (
                Step(
                    argv=("{program_dir}",),
                    limits=step_limits,
                    kind="call",
                    module=HARNESS,
                    function="candidate_prepare",
                ),
            )
            if self.fork
            else ()
        )
        judge_prepare = (
            ()
            if stdio
            else (
                Step(
                    argv=tuple(bounds),
                    limits=step_limits,
                    kind="call",
                    module=HARNESS,
                    function="judge_prepare",
                ),
            )
        )
        wanted = _imports(code)
        tested: frozenset[str] = frozenset()
        for source in (judge_spec.get("test"), prelude, *payloads[:1]):
            if isinstance(source, str):
                tested |= _imports(source)
        return Program(
            files=files,
            tests=tuple(tests),
            preload_modules=tuple(sorted((wanted | tested) & self.preload)) if self.fork else (),
            preload_entries=(HARNESS,) if self.fork else (),
            prepare=prepare,
            files_in_memory=self.fork,
            judge_files=judge_files,
            judge_entries=() if stdio else (HARNESS,),
            judge_modules=tuple(sorted(tested & self.preload)),
            judge_prepare=judge_prepare,
        )

    def executable(
        self, source: str | None, files: Mapping[str, bytes], limits: Limits, field: str
    ) -> Executable:
        """A Python program as a checker or interactor: run by the sandbox's interpreter.

        ``source`` is ``main.py`` beside ``files``; without it, the one Python file among
        ``files`` (or its ``main.py``) is the main file.

        Raises:
            SpecError: There is no main file to run, or two.
        """
        sources = dict(files)
        main = "main.py"
        if source is not None:
            if main in sources:
                raise SpecError(f"{field}.files", "main.py is the source's own name")
            sources[main] = source.encode("utf-8", "surrogateescape")
        elif main not in sources:
            found = [path for path in sources if path.endswith(".py")]
            if len(found) != 1:
                raise SpecError(f"{field}.source", "name the main Python file: give it as source")
            main = found[0]
        for path, data in sorted(sources.items()):
            if not path.endswith(".py"):
                continue
            issue = self.check_syntax(data.decode("utf-8", "surrogateescape"))
            if issue is not None:
                where = "source" if path in (main, "check.py") else f"files.{path}"
                raise SpecError(f"{field}.{where}", f"{path} does not parse: {issue.describe()}")
        return Executable(
            files=sources, run=("{python}", "-s", "-B", "-c", JUDGE_RUNNER, f"{{dir}}/{main}")
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
        """Judge one run: limits first, then the judge's verdict (stdio: the output)."""
        by_event = records(proc.channel)
        verdict = verdict_record(proc.verdict)
        if verdict is not None and verdict.get("event") == "error":
            # A MemoryError the judge saw come from the program is its memory limit.
            by_event.setdefault("error", verdict)
        limit = limit_outcome(proc, limits, by_event)
        if limit is not None:
            return limit
        syntax = (verdict or {}) if (verdict or {}).get("event") == "syntax_error" else None
        syntax = syntax or by_event.get("syntax_error")
        if syntax is not None:
            # The parser here accepted the code, so the compiler rejected it
            # ('return' outside a function, say): a compile error of the program.
            # Read as data a program may have written itself: every field bounded.
            issue = SyntaxIssue(
                line=_position(syntax.get("line")),
                column=_position(syntax.get("column")),
                message=str(syntax.get("message", "invalid syntax"))[:2000],
                text=str(syntax.get("text", ""))[:500],
                native=str(syntax.get("native") or "")[-2000:],
            )
            return TestOutcome(Status.COMPILE_ERROR, issue.describe(), fatal=True)
        if test.meta["mode"] == "stdio":
            error = by_event.get("error")
            if error is not None:
                return TestOutcome(Status.RUNTIME_ERROR, _error_text(error))
            assert isinstance(spec, StdioTests)
            return judge_stdio(spec, test.index, proc, compare)
        if verdict is not None and verdict.get("event") == "return":
            return self._judge_value(spec, test.index, verdict, compare)
        return judge_verdict(proc, verdict)

    def _judge_value(
        self,
        spec: TestSpec,
        index: int,
        returned: dict[str, Any],
        compare: CompareOptions | None,
    ) -> TestOutcome:
        hack = str(returned.get("hack") or "")[:2000]
        if "too_large" in returned:
            # The judge did not send it: it holds more values than the expected one could.
            bound = _position(returned.get("too_large"))
            shown = str(returned.get("shown") or "")[:300]
            message = f"wrong answer: the returned value holds more than {bound} values"
            return TestOutcome(Status.FAILED, message, shown, hack=hack)
        try:
            actual = decode_value(returned.get("value"))
        except (DecodeError, ValueError, TypeError, RecursionError) as err:
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
        return TestOutcome(Status.FAILED, "wrong answer", shown, hack=hack, returned=(actual,))


_NONE = object()


def _expected(spec: TestSpec, index: int) -> Any:
    """The value a call or expression test expects (``_NONE`` for other tests)."""
    if isinstance(spec, CallTests):
        return spec.outputs[index]
    if isinstance(spec, ExpressionTests):
        return spec.cases[index].expected
    return _NONE


def _value_nodes(value: Any) -> int:
    """How many values ``value`` holds, itself included (as the judge counts a return)."""
    count, todo = 0, [value]
    while todo:
        item = todo.pop()
        count += 1
        if isinstance(item, dict):
            for key, inner in item.items():
                todo += (key, inner)
        elif isinstance(item, list | tuple | set | frozenset):
            todo.extend(item)
        elif isinstance(item, complex):
            count += 2  # its parts, which the judge counts too
    return count


#: The fields of a statement that hold statements (an ``except`` clause's and a ``case``'s
#: body included): where an import can be.
_BODIES = ("body", "orelse", "finalbody", "handlers", "cases")


@functools.lru_cache(maxsize=512)
def _imports(source: str) -> frozenset[str]:
    """Top-level names of the modules a piece of code imports (tests repeat: cached).

    Only statements are visited (an import is one): walking every expression too took a
    third of the host's time per program.
    """
    if "import" not in source:
        return frozenset()
    try:
        tree = _quiet_parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return frozenset()
    names: set[str] = set()
    stack: list[Any] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.module and not node.level:
                names.add(node.module.split(".")[0])
        else:
            for field in _BODIES:
                stack.extend(getattr(node, field, ()))
    return frozenset(names)


@functools.lru_cache(maxsize=512)
def _check_trusted(source: str, field: str) -> None:
    try:
        ast.parse(source)
    except SyntaxError as err:
        raise SpecError(
            field, f"the test code does not parse: {err.msg} (line {err.lineno})"
        ) from None


def _position(value: Any) -> int:
    """A line or column of a record: a positive integer of sensible size, else 1."""
    return value if type(value) is int and 0 < value < 1 << 31 else 1


def _error_text(error: dict[str, Any]) -> str:
    trace = str(error.get("traceback") or "").strip()
    if trace:
        return trace
    return f"{error.get('type', 'Error')}: {error.get('message', '')}"


# --- the case table ------------------------------------------------------------------------


def _py(code: str) -> str:
    return fenced("python", code)


_READ = "a, b = map(int, input().split())\n"
_ADD = {"test": "def check(candidate):\n    assert candidate(1, 2) == 3\n", "entry_point": "add"}


def _cases() -> list[Case]:
    """One program per kind of outcome (see :mod:`verifiers.cases`)."""
    return [
        Case("ok", "stdio sum", _py(_READ + "print(a + b)"), SUM_TESTS, Status.PASSED, passed=3),
        Case("ok", "assert add", _py("def add(a, b):\n    return a + b"), _ADD, Status.PASSED),
        Case(
            "wrong_answer",
            "stdio difference",
            _py(_READ + "print(a - b)"),
            SUM_TESTS,
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
        Case(
            "no_code", "prose", "I would add the two numbers.", SUM_TESTS, Status.NO_CODE, passed=0
        ),
        Case(
            "syntax_error", "unclosed paren", _py("print((1 + 2)"), SUM_TESTS, Status.SYNTAX_ERROR
        ),
        Case(
            "syntax_error", "python 2 print", _py("print 'hello'"), SUM_TESTS, Status.SYNTAX_ERROR
        ),
        Case(
            "compile_error",
            "return outside function",
            _py("return 5"),
            SUM_TESTS,
            Status.COMPILE_ERROR,
        ),
        Case(
            "runtime_error",
            "exception",
            _py("raise ValueError('boom')"),
            SUM_TESTS,
            Status.RUNTIME_ERROR,
        ),
        Case(
            "runtime_error",
            "deep recursion",
            _py("def f(n):\n    return f(n + 1)\nf(0)"),
            SUM_TESTS,
            Status.RUNTIME_ERROR,
        ),
        Case(
            "timeout",
            "busy loop",
            _py("while True:\n    pass"),
            SUM_TESTS,
            Status.TIMEOUT,
            limits=QUICK,
        ),
        Case(
            "timeout",
            "sleep",
            _py("import time\ntime.sleep(60)"),
            SUM_TESTS,
            Status.TIMEOUT,
            limits=QUICK,
        ),
        Case(
            "timeout",
            "reads stdin forever",
            _py("import sys\nwhile True:\n    sys.stdin.read()"),
            SUM_TESTS,
            Status.TIMEOUT,
            limits=QUICK,
        ),
        Case(
            "memory_limit",
            "huge allocation",
            _py("x = bytearray(4 * 1024 ** 3)"),
            SUM_TESTS,
            Status.MEMORY_LIMIT,
        ),
        Case(
            "memory_limit",
            "growing list",
            _py("x = []\nwhile True:\n    x.append(' ' * 10 ** 6)"),
            SUM_TESTS,
            Status.MEMORY_LIMIT,
        ),
        Case(
            "output_flood",
            "stdout flood",
            _py("while True:\n    print('x' * 10000)"),
            SUM_TESTS,
            Status.OUTPUT_LIMIT,
            limits=Limits(timeout_s=5, max_output_bytes=1 << 20),
        ),
        Case(
            "output_flood",
            "stderr flood",
            _py("import sys\nwhile True:\n    sys.stderr.write('x' * 10000)"),
            SUM_TESTS,
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
        Case(
            "early_exit", "stdio exit(0) without output", _py("exit(0)"), SUM_TESTS, Status.FAILED
        ),
        Case(
            "kill_self",
            "SIGKILL itself",
            _py("import os, signal\nos.kill(os.getpid(), 9)"),
            SUM_TESTS,
            Status.RUNTIME_ERROR,
        ),
        Case(
            "kill_supervisor",
            "signals the supervisor and goes on",
            _py(
                "import os\nfor sig in (9, 19, 15):\n    try:\n        os.kill(1, sig)\n"
                "    except OSError:\n        pass\n" + _READ + "print(a + b)"
            ),
            SUM_TESTS,
            Status.PASSED,
            passed=3,
        ),
        Case(
            "fork_bomb",
            "fork bomb",
            _py("import os\nwhile True:\n    os.fork()"),
            SUM_TESTS,
            Status.RUNTIME_ERROR,
            limits=Limits(timeout_s=3, memory_mb=256, max_processes=32),
        ),
    ]
