"""JavaScript on Node.js: stdin/stdout programs, and programs with test code (HumanEval-X).

A program with tests is the code followed by the test code in one CommonJS
module, loaded by a harness (``_js_harness.js``) that makes ``console.assert``
throw and proves the tests ran to the end with the sandbox's nonce. Node has no
build step; a ``SyntaxError`` Node finds when loading code tree-sitter accepted
(ES module syntax in a CommonJS file, say) is a ``compile_error``.
"""

from __future__ import annotations

import json
import re
from importlib import resources

import tree_sitter

from verifiers.cases import CASE_KINDS, ONE_TEST, SUM_TESTS, Case, table
from verifiers.languages.common import (
    TreeSitterLanguage,
    judge_stdio,
    judge_verdict,
    limit_outcome,
    pin_toolchain,
    records,
    stderr_tail,
    verdict_record,
)
from verifiers.limits import Limits
from verifiers.parsing import TREE_SITTER_LIMIT, grammar, tree_sitter_check
from verifiers.program import ImageRecipe, ProcessResult, Program, ProgramTest, Step
from verifiers.protocols import TestOutcome
from verifiers.results import Status
from verifiers.specs import AssertScriptTests, CompareOptions, StdioTests, TestSpec
from verifiers.toolchains import binary_toolchain

#: Node.js: JavaScript programs (and the JavaScript regex flavour).
NODE = binary_toolchain(
    "node",
    "node",
    "{node}",
    ("--version",),
    "install Node.js 18 or newer (apt-get install nodejs)",
    ImageRecipe(
        family="node",
        packages={"nodejs": "18.20.4+dfsg-1~deb12u3"},
        labels={"{node}": "/usr/bin/node"},
    ),
)

#: What Node and V8 print when memory runs out.
MEMORY_MARKERS = (
    b"JavaScript heap out of memory",
    b"Fatal process out of memory",
    b"Allocation failed",
    b"Array buffer allocation failed",
)


class JavaScriptLanguage(TreeSitterLanguage):
    """JavaScript (CommonJS) on the sandbox's Node.js.

    Args:
        node: A host ``node`` executable to pin (default: the runtime's ``node`` toolchain,
            which the local runtime finds on ``PATH`` and the Docker runtime in its image).
        warm: Run a stdin/stdout program's tests in one Node kept for it, its *warm
            runner* (``_js_runner.js``): each test calls the program's module function
            again, with its own ``process``, ``console``, ``require``, ``fs`` on the
            standard streams and timers, and what it changed of the shared builtins is
            put back (or retires the runner). Programs that match :data:`COLD_ONLY` (or
            use ES module syntax) start a ``node`` per test; ``warm=False`` does for all.
    """

    #: The kinds of outcome its case table covers (see :mod:`verifiers.cases`).
    case_kinds = CASE_KINDS

    def cases(self) -> list[Case]:
        """Real programs, one or more per kind of outcome, and the verdict each must get."""
        return _cases()

    name = "javascript"
    aliases = ("javascript", "js", "node", "nodejs", "jsx")
    grammar = "tree_sitter_javascript"
    toolchains = (NODE,)

    def __init__(self, node: str | None = None, warm: bool = True) -> None:
        self._node = node
        self._warm = warm
        here = resources.files("verifiers.languages")
        self._harness = here.joinpath("_js_harness.js").read_bytes()
        self._runner = here.joinpath("_js_runner.js").read_bytes()

    def toolchain(self) -> str:
        """Node's version on this host (for ``verifiers doctor``)."""
        return NODE.host(self._node).description

    def build_program(
        self, code: str, spec: TestSpec, selected: list[int], limits: Limits
    ) -> Program:
        """A warm Node for stdin/stdout tests (or a ``node`` each); the harness for tests with code.

        A stdin/stdout test runs in the program's warm runner (``Step.warm_argv``), except
        where a checker or an interactor judges it (the agent runs its ``argv`` then), the
        program needs a process of its own (:func:`node_per_test`) or has one test only
        (a runner starts in about the time a ``node`` does).
        """
        step_limits = limits.step_limits(runtime_reserve=True)
        heap_mb = max(16, limits.memory_mb * 3 // 4)
        heap = f"--max-old-space-size={heap_mb}"
        files: dict[str, bytes] = {}
        tests = []
        if isinstance(spec, StdioTests):
            files["solution.js"] = code.encode("utf-8", errors="surrogateescape")
            warm = None
            # One test: a runner would cost a Node's start and save nothing.
            if self._warm and len(selected) > 1 and not node_per_test(code):
                files["runner.js"] = self._runner
                runner = ("{program_dir}/runner.js", "{program_dir}/solution.js")
                warm = ("{node}", heap, *runner, str(limits.memory_mb))
            for index in selected:
                stdin = spec.cases[index].input.encode("utf-8", errors="surrogateescape")
                step = Step(
                    argv=("{node}", heap, "{program_dir}/solution.js"),
                    limits=step_limits,
                    stdin=stdin,
                    warm_argv=warm,
                )
                tests.append(ProgramTest(index=index, step=step, meta={"mode": "stdio"}))
        else:
            assert isinstance(spec, AssertScriptTests)
            # The program runs alone; the tests run in a judge of their own, which gets them
            # on its stdin (never in the program's files or process).
            files["solution.js"] = code.encode("utf-8", errors="surrogateescape")
            files["harness.js"] = self._harness
            names = ",".join(top_level_names(code))
            helpers, trusted = trusted_helpers(spec.declaration or spec.prompt)
            judge_input = {"test": spec.test, "helpers": helpers, "trusted": trusted}
            judge = Step(
                argv=("{node}", heap, "{program_dir}/harness.js", "judge"),
                limits=limits.judge_limits(),
                stdin=json.dumps(judge_input).encode("utf-8", errors="surrogateescape"),
            )
            step = Step(
                argv=(
                    "{node}",
                    heap,
                    "{program_dir}/harness.js",
                    "candidate",
                    "{program_dir}/solution.js",
                    names,
                ),
                limits=step_limits,
                judge=judge,
            )
            tests.append(ProgramTest(index=0, step=step, meta={"mode": "assert"}))
        program = Program(files=files, tests=tuple(tests), toolchains=(NODE,))
        return pin_toolchain(program, NODE, self._node)

    def interpret(
        self,
        test: ProgramTest,
        spec: TestSpec,
        proc: ProcessResult,
        limits: Limits,
        compare: CompareOptions | None,
    ) -> TestOutcome:
        """Limits, then Node's load-time syntax errors, then the answer."""
        by_event = records(proc.channel)
        limit = limit_outcome(proc, limits, by_event, MEMORY_MARKERS)
        if limit is not None:
            return limit
        if test.meta["mode"] == "stdio":
            if b"SyntaxError:" in proc.stderr and not proc.stdout:
                return TestOutcome(Status.COMPILE_ERROR, stderr_tail(proc), fatal=True)
            assert isinstance(spec, StdioTests)
            return judge_stdio(spec, test.index, proc, compare)
        verdict = verdict_record(proc.verdict)
        if verdict is not None and verdict.get("event") == "syntax_error":
            # Node found what tree-sitter accepted (a redeclared binding, an import).
            message = str(verdict.get("traceback") or verdict.get("message") or "SyntaxError")
            return TestOutcome(Status.COMPILE_ERROR, message, fatal=True)
        return judge_verdict(proc, verdict)


#: The modules the warm runner serves a test (its own ``fs``, ``process``, ``console`` and
#: timers; the rest shared, their state put back after each test): ``_js_runner.js``.
WARM_MODULES = (
    "fs|fs/promises|process|console|timers|timers/promises|assert|assert/strict|buffer"
    "|crypto|events|os|path|path/posix|perf_hooks|querystring|readline|readline/promises"
    "|stream|stream/promises|stream/web|string_decoder|url|util|util/types|zlib"
)

#: What sends a stdin/stdout program to a ``node`` per test: any other module named (child
#: processes, worker threads, vm, the module system, sockets, files of its own, packages),
#: process-wide state the warm runner cannot give each test its own of (handles on the
#: real streams, native bindings, finalizers that would run during a later test, global
#: bindings of eval), fs calls on descriptors it does not serve, and ES module syntax
#: (which Node 20.19+ runs as a module).
COLD_ONLY = re.compile(
    rf"\brequire\s*\(\s*(['\"`])(?!(?:node:)?(?:{WARM_MODULES})\1)"
    r"|\bimport\b|\bexport\b|\beval\b|\bFinalizationRegistry\b|\bWeakRef\b|\b_handle\b"
    r"|\bprocess\s*\.\s*(?:binding|_linkedBinding|dlopen|mainModule|reallyExit|_[A-Za-z]|chdir|umask"
    r"|set[ug]id|sete[ug]id|setgroups|initgroups|report|setUncaughtExceptionCaptureCallback"
    r"|hasUncaughtExceptionCaptureCallback|getActiveResourcesInfo|setSourceMapsEnabled"
    r"|permission|channel|send|disconnect|connected)"
    r"|\b(?:require|module)\s*\.\s*(?:cache|extensions|constructor|paths|children|parent|load|_)"
    r"|\b(?:openSync|createReadStream|createWriteStream|readvSync|writevSync|ftruncateSync"
    r"|fsyncSync|fdatasyncSync)\b|\bfs\s*\.\s*(?:open|read|write|readv|writev|fstat|close)\s*\("
    r"|/proc/(?!self/fd/0\b)|/dev/(?!stdin\b|fd/0\b)"
)

#: The syntax tree nodes an ``await`` inside is not top-level await.
_FUNCTIONS = frozenset(
    {
        "function_declaration",
        "function_expression",
        "function",
        "arrow_function",
        "method_definition",
        "generator_function_declaration",
        "generator_function",
    }
)


def node_per_test(code: str) -> bool:
    """Whether a stdin/stdout program's tests each need a ``node`` of their own.

    True for a program that names what :data:`COLD_ONLY` lists, or awaits at its top level
    (a ``SyntaxError`` in CommonJS on Node 18, an ES module on Node 20.19 and later, which
    detect module syntax: a warm runner could be either only by chance).
    """
    if COLD_ONLY.search(code):
        return True
    if not re.search(r"\bawait\b", code):
        return False
    root = (
        tree_sitter.Parser(grammar("tree_sitter_javascript"))
        .parse(code.encode("utf-8", errors="surrogatepass"))
        .root_node
    )
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type in _FUNCTIONS:
            continue
        if node.type == "await_expression" or (
            node.type == "for_in_statement" and any(c.type == "await" for c in node.children)
        ):
            return True
        stack.extend(node.children)
    return False


#: Where a top-level declaration starts in a HumanEval-X declaration.
_TOP_DECLARATION = re.compile(r"^(?:const|let|var|function|class|async function)\b", re.MULTILINE)


def trusted_helpers(declaration: str | None) -> tuple[str, list[str]]:
    """The helpers a HumanEval-X declaration (or prompt) defines before its entry point.

    The tests of some tasks call them (``encodeCyclic`` to make the input of
    ``decodeCyclic``, ``poly`` to check ``findZero``'s root): the judge runs this trusted
    copy itself, so that a program's own ``encodeCyclic = (s) => s`` never decides a test.
    The entry point's declaration is the last one, left open for the program to complete.
    """
    if not declaration:
        return "", []
    starts = [m.start() for m in _TOP_DECLARATION.finditer(declaration)]
    if len(starts) < 2:
        return "", []
    helpers = declaration[: starts[-1]]
    if len(helpers) > TREE_SITTER_LIMIT or tree_sitter_check(JavaScriptLanguage.grammar, helpers):
        return "", []
    return helpers, top_level_names(helpers)


def top_level_names(code: str) -> list[str]:
    """Names the program declares at its top level (functions, classes, variables)."""
    root = (
        tree_sitter.Parser(grammar("tree_sitter_javascript"))
        .parse(code.encode("utf-8", errors="surrogatepass"))
        .root_node
    )
    names: list[str] = []

    def add(node: tree_sitter.Node | None) -> None:
        if node is not None and node.type == "identifier" and node.text:
            names.append(node.text.decode("utf-8", errors="replace"))

    for top in root.named_children:
        child = top
        if top.type == "export_statement":
            child = top.child_by_field_name("declaration") or top
        if child.type in (
            "function_declaration",
            "generator_function_declaration",
            "class_declaration",
        ):
            add(child.child_by_field_name("name"))
        elif child.type in ("lexical_declaration", "variable_declaration"):
            for declarator in child.named_children:
                if declarator.type == "variable_declarator":
                    add(declarator.child_by_field_name("name"))
        elif child.type == "expression_statement":
            # `add = (a, b) => a + b` and `var`-less globals.
            expression = child.named_children[0] if child.named_children else None
            if expression is not None and expression.type == "assignment_expression":
                add(expression.child_by_field_name("left"))
    return list(dict.fromkeys(names))


# --- the case table ------------------------------------------------------------------------

_JS_READ = (
    "const [a, b] = require('fs').readFileSync(0, 'utf8').trim().split(/\\s+/).map(Number);\n"
)
_JS_ADD = {"test": "console.assert(add(1, 2) === 3);\nconsole.assert(add(2, 2) === 4);\n"}


def _cases() -> list[Case]:
    """One program per kind of outcome (see :mod:`verifiers.cases`)."""
    return table(
        "javascript",
        {
            "ok:stdio sum": (_JS_READ + "console.log(a + b);", SUM_TESTS, Status.PASSED),
            "ok:assert add": ("const add = (a, b) => a + b;", _JS_ADD, Status.PASSED),
            "wrong_answer:stdio difference": (
                _JS_READ + "console.log(a - b);",
                SUM_TESTS,
                Status.FAILED,
            ),
            "wrong_answer:console.assert fails": (
                "const add = (a, b) => a + b + 1;",
                _JS_ADD,
                Status.FAILED,
            ),
            "no_code:prose": ("Add them.", SUM_TESTS, Status.NO_CODE),
            "syntax_error:unbalanced": ("const x = (1 + ;", SUM_TESTS, Status.SYNTAX_ERROR),
            "compile_error:redeclared": (
                "let a = 1;\nlet a = 2;\nconsole.log(a);",
                SUM_TESTS,
                Status.COMPILE_ERROR,
            ),
            "runtime_error:throw": ("throw new Error('boom');", SUM_TESTS, Status.RUNTIME_ERROR),
            "timeout:busy loop": ("while (true) {}", ONE_TEST, Status.TIMEOUT),
            "memory_limit:growing array": (
                "const a = [];\nwhile (true) a.push(new Array(1e6).fill(1));",
                ONE_TEST,
                Status.MEMORY_LIMIT,
            ),
            "output_flood:stdout": (
                "const fs = require('fs');\nconst s = 'x'.repeat(10000);\n"
                "while (true) fs.writeSync(1, s);",
                ONE_TEST,
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
            "kill_self:SIGKILL": (
                "process.kill(process.pid, 'SIGKILL');",
                SUM_TESTS,
                Status.RUNTIME_ERROR,
            ),
            "kill_supervisor:signals PID 1 and goes on": (
                "for (const s of ['SIGKILL', 'SIGSTOP']) {\n"
                "  try { process.kill(1, s); } catch (e) {}\n}\n"
                + _JS_READ
                + "console.log(a + b);",
                SUM_TESTS,
                Status.PASSED,
            ),
            "fork_bomb:daemons until spawning fails": (
                "const cp = require('child_process');\n"
                "for (;;) cp.execFileSync('sh', ['-c', 'sleep 100 &'], { stdio: 'ignore' });",
                ONE_TEST,
                Status.RUNTIME_ERROR,
            ),
        },
    )
