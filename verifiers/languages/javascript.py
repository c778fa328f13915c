"""JavaScript on Node.js: stdin/stdout programs, and programs with test code (HumanEval-X).

A program with tests is the code followed by the test code in one CommonJS
module, loaded by a harness (``_js_harness.js``) that makes ``console.assert``
throw and proves the tests ran to the end with the sandbox's nonce. Node has no
build step; a ``SyntaxError`` Node finds when loading code tree-sitter accepted
(ES module syntax in a CommonJS file, say) is a ``compile_error``.
"""

from __future__ import annotations

from importlib import resources

from verifiers.languages.common import (
    TreeSitterLanguage,
    judge_pass_record,
    judge_stdio,
    limit_outcome,
    pin_toolchain,
    records,
    stderr_tail,
)
from verifiers.limits import Limits
from verifiers.program import ProcessResult, Program, ProgramTest, Step
from verifiers.protocols import TestOutcome
from verifiers.results import Status
from verifiers.specs import AssertScriptTests, CompareOptions, StdioTests, TestSpec
from verifiers.toolchains import host_toolchain

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
    """

    name = "javascript"
    aliases = ("javascript", "js", "node", "nodejs", "jsx")
    grammar = "tree_sitter_javascript"

    def __init__(self, node: str | None = None) -> None:
        self._node = node
        self._harness = (
            resources.files("verifiers.languages").joinpath("_js_harness.js").read_bytes()
        )

    def toolchain(self) -> str:
        """Node's version on this host (for ``verifiers doctor``)."""
        return host_toolchain("node", self._node).description

    def build_program(
        self, code: str, spec: TestSpec, selected: list[int], limits: Limits
    ) -> Program:
        """One ``node`` run per test; the harness for programs with tests."""
        step_limits = limits.step_limits()
        heap = f"--max-old-space-size={max(16, limits.memory_mb * 3 // 4)}"
        files: dict[str, bytes] = {}
        tests = []
        if isinstance(spec, StdioTests):
            files["solution.js"] = code.encode("utf-8", errors="surrogateescape")
            for index in selected:
                stdin = spec.cases[index].input.encode("utf-8", errors="surrogateescape")
                step = Step(
                    argv=("{node}", heap, "{program_dir}/solution.js"),
                    limits=step_limits,
                    stdin=stdin,
                )
                tests.append(ProgramTest(index=index, step=step, meta={"mode": "stdio"}))
        else:
            assert isinstance(spec, AssertScriptTests)
            source = f"{code}\n;\n{spec.test}\n"
            files["program.js"] = source.encode("utf-8", errors="surrogateescape")
            files["harness.js"] = self._harness
            step = Step(
                argv=("{node}", heap, "{program_dir}/harness.js", "{program_dir}/program.js"),
                limits=step_limits,
            )
            tests.append(ProgramTest(index=0, step=step, meta={"mode": "assert"}))
        program = Program(files=files, tests=tuple(tests), toolchains=("node",))
        return pin_toolchain(program, "node", self._node)

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
        error = by_event.get("error", {})
        if b"SyntaxError:" in proc.stderr and (
            error.get("type") == "SyntaxError" or (test.meta["mode"] == "stdio" and not proc.stdout)
        ):
            return TestOutcome(Status.COMPILE_ERROR, stderr_tail(proc), fatal=True)
        if test.meta["mode"] == "stdio":
            assert isinstance(spec, StdioTests)
            return judge_stdio(spec, test.index, proc, compare)
        if error:
            return TestOutcome(Status.RUNTIME_ERROR, str(error.get("traceback") or error))
        return judge_pass_record(proc, by_event)
